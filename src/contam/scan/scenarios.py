"""Labelled contamination scenarios S1–S4 with hard negatives (paper 001, Section 4.1).

From a benchmark, :func:`build_scenarios` makes synthetic training samples, every one labelled
with its scenario, the benchmark item it came from and the generator that made it:

* **S1 exact** — the item verbatim (question, options, solution).
* **S2 paraphrase** — an LLM backend's paraphrase kept only above a semantic-similarity floor
  (cosine ≥ ``floor`` to the original with the same numbers); otherwise, or without a model,
  the deterministic rule-based paraphraser (:mod:`contam.scan.paraphrase`), labelled
  ``rule-paraphrase``.
* **S3 semantic-near** — isomorphic variants: GSM8K numbers redrawn with recomputed answers
  (:mod:`contam.perturb` symbolic templates) and person names swapped; HumanEval functions and
  identifiers renamed with new docstring examples; MMLU stems with names/numbers changed and
  options shuffled.
* **S4 reasoning pattern** — a *new* question solved with the benchmark item's reasoning chain:
  a generic task statement, then the item's (re-numbered, re-named) solution steps. MMLU items
  have no chain, so MMLU has no S4.

Hard negatives are same-genre text not derived from any benchmark item: GSM8K train for GSM8K
test; for MMLU the benchmark is a seeded half of each subject and negatives come from the
other half; for HumanEval the benchmark is 100 seeded tasks and negatives are the other 64
tasks plus documented functions parsed (never run) from the Python standard library.

Source items are split 50/50 into ``calib`` and ``test`` (negatives too), so thresholds can be
calibrated on one split and reported on the other.

>>> s = build_scenarios("gsm8k", n=4, seed=0, scenarios=("S1",))    # doctest: +SKIP
>>> sorted({x.scenario for x in s.samples})                           # doctest: +SKIP
['S1', 'neg']
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from contam.data import Document, Item, load_benchmark
from contam.errors import ConfigError
from contam.records import Record
from contam.scan.paraphrase import LLMParaphraser, paraphrase_docstrings, rule_paraphrase, swap_names

SCENARIOS = ("S1", "S2", "S3", "S4")
BENCHMARKS = ("gsm8k", "humaneval", "mmlu")
#: The paper's MMLU subjects (§4.1) that are shipped.
MMLU_SUBJECTS = ("mmlu-abstract-algebra", "mmlu-sociology", "mmlu-high-school-us-history")
#: Standard-library modules whose documented functions serve as HumanEval hard negatives.
STDLIB_MODULES = (
    "textwrap",
    "statistics",
    "heapq",
    "bisect",
    "fractions",
    "colorsys",
    "calendar",
    "difflib",
    "shlex",
    "fnmatch",
    "posixpath",
    "base64",
    "html",
    "string",
    "random",
    "glob",
    "ipaddress",
    "quopri",
)


@dataclass(frozen=True)
class Sample(Record):
    """One labelled synthetic training sample."""

    id: str
    text: str
    label: int
    scenario: str
    source_id: str
    generator: str
    split: str
    benchmark: str

    def document(self) -> Document:
        return Document(id=self.id, text=self.text)


@dataclass(frozen=True)
class ScenarioSet(Record):
    """Samples plus the benchmark items a detector must index (``benchmark_ids``)."""

    benchmark: str
    seed: int
    benchmark_ids: tuple[str, ...]
    samples: tuple[Sample, ...]
    notes: dict[str, str] = field(default_factory=dict)

    def items(self) -> list[Item]:
        """The indexed benchmark items, in stored order."""
        wanted = set(self.benchmark_ids)
        pool = _pool(self.benchmark)
        return [it for it in pool if it.id in wanted]

    def select(self, scenario: str, split: str) -> list[Sample]:
        """Positives of ``scenario`` plus the negatives, of one split."""
        return [s for s in self.samples if s.split == split and (s.scenario == scenario or s.label == 0)]


def _pool(benchmark: str) -> list[Item]:
    if benchmark == "mmlu":
        return [it for spec in MMLU_SUBJECTS for it in load_benchmark(spec)]
    return load_benchmark(benchmark)


# -- S3 / S4 transformations -----------------------------------------------------------------
def gsm8k_variant(item: Item, seed: int) -> tuple[str, str] | None:
    """Question and recomputed solution of an isomorphic variant (numbers redrawn by
    :func:`contam.perturb.make_variant_set`, which audits the recomputed answer; names swapped
    here); ``None`` when the item cannot be templated."""
    from contam.perturb import make_variant_set

    vs = make_variant_set([item], variants=1, seed=seed)
    if not vs:
        return None
    rng = random.Random(f"{seed}:{item.id}:names")
    q, mapping = swap_names(vs[0].question, rng)
    s, _ = swap_names(vs[0].solution, rng, mapping)
    return q, s


_PY_NAME = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\b")
_PY_KEEP = frozenset(
    "False None True and as assert async await break class continue def del elif else except finally for from global if import in is "
    "lambda nonlocal not or pass raise return try while with yield self int str float list dict set tuple bool len range sorted "
    "enumerate zip map filter sum min max abs any all print isinstance reversed round ord chr List Dict Tuple Optional Any typing "
    "append extend pop insert join split strip lower upper replace keys values items count index sort reverse startswith endswith".split()
)


def rename_code(prompt: str, solution: str, entry: str, rng: random.Random) -> tuple[str, str]:
    """Rename the function and its parameters/locals consistently; new numbers in doctest examples."""
    names: dict[str, str] = {}
    try:
        tree = ast.parse(prompt + solution)  # parsed only, never executed
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                names.setdefault(node.name, "")
                for a in node.args.args:
                    names.setdefault(a.arg, "")
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.setdefault(node.id, "")
    except SyntaxError:
        names = {entry: ""}
    pool = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "zeta", "lam", "rho", "tau", "phi", "psi", "chi", "eta"]
    rng.shuffle(pool)
    for i, n in enumerate(sorted(k for k in names if k not in _PY_KEEP)):
        names[n] = ("fn_" if n == entry else "") + pool[i % len(pool)] + (str(i // len(pool)) if i >= len(pool) else "")

    def sub(text: str) -> str:
        return _PY_NAME.sub(lambda m: names.get(m.group(1)) or m.group(1), text)

    def renumber(text: str) -> str:
        return re.sub(r"(?<![\w.])(\d+)(?![\w.])", lambda m: str(int(m.group(1)) + rng.randint(1, 9)), text)

    return renumber(sub(prompt)), sub(solution)


def s4_text(item: Item, seed: int) -> str | None:
    """A new task solved with ``item``'s reasoning chain (see the module docstring)."""
    rng = random.Random(f"{seed}:{item.id}:s4")
    if item.benchmark.startswith("gsm8k"):
        v = gsm8k_variant(item, seed + 7919)
        if v is None:
            return None
        _, sol = v
        nums = re.findall(r"<<([^=<>]+)=", sol)
        if not nums:
            return None
        first = re.findall(r"\d+(?:\.\d+)?", nums[0])
        who = rng.choice(["A planner", "A clerk", "An analyst", "A student", "A coordinator"])
        q = f"{who} is working through a multi-step calculation that starts from {', '.join(first[:3])}. Show each step and give the final value."
        return q + "\n" + sol
    if item.benchmark == "humaneval":
        entry = str(item.metadata.get("entry_point", ""))
        prompt, body = rename_code(item.question, item.solution, entry, rng)
        if len([ln for ln in body.splitlines() if ln.strip()]) < 2:
            return None  # a one-line body is no reasoning chain
        sig = re.search(r"def\s+fn_\w+\s*\(([^)]*)\)", prompt)
        params = sig.group(1) if sig else "data"
        header = f'def solve({params}):\n    """Implement the routine described by the specification document."""\n'
        return header + body
    return None


def _mmlu_variant(item: Item, rng: random.Random, with_answer: bool = True) -> str:
    q, _ = swap_names(item.question, rng)
    q = re.sub(r"(?<![\w.])(\d{1,3})(?![\w.])", lambda m: str(int(m.group(1)) + rng.randint(1, 5)), q)
    choices = list(item.choices)
    gold = item.answer_text
    rng.shuffle(choices)
    opts = "\n".join(f"{chr(65 + i)}. {c}" for i, c in enumerate(choices))
    return f"{q}\n{opts}\n{gold}" if with_answer else f"{q}\n{opts}"


def _variant_text(item: Item, seed: int, question_only: bool = False) -> str | None:
    rng = random.Random(f"{seed}:{item.id}:s3")
    if item.benchmark.startswith("gsm8k"):
        v = gsm8k_variant(item, seed)
        return None if v is None else (v[0] if question_only else v[0] + "\n" + v[1])
    if item.benchmark == "humaneval":
        p, s = rename_code(item.question, item.solution, str(item.metadata.get("entry_point", "")), rng)
        return p if question_only else p + s
    return _mmlu_variant(item, rng, with_answer=not question_only)


def _paraphrase_text(item: Item, seed: int) -> str:
    rng = random.Random(f"{seed}:{item.id}:s2")
    if item.benchmark == "humaneval":
        return paraphrase_docstrings(item.question, rng) + item.solution
    parts = [rule_paraphrase(item.question, rng, question=True)]
    if item.choices:
        parts.append("\n".join(f"{chr(65 + i)}. {rule_paraphrase(c, rng, question=False)}" for i, c in enumerate(item.choices)))
    body = item.solution or item.answer_text
    if body:
        parts.append(rule_paraphrase(body, rng, question=False))
    return "\n".join(parts)


# -- negatives ---------------------------------------------------------------------------------
def stdlib_functions(limit: int, seed: int) -> list[Item]:
    """Documented functions of the standard library as programming tasks (source parsed, never run)."""
    import importlib.util

    out: list[Item] = []
    for mod in STDLIB_MODULES:
        spec = importlib.util.find_spec(mod)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        src = Path(spec.origin).read_text(encoding="utf-8")
        for node in ast.parse(src).body:
            if not isinstance(node, ast.FunctionDef) or node.name.startswith("_") or not ast.get_docstring(node):
                continue
            seg = ast.get_source_segment(src, node) or ""
            doc_node = node.body[0]
            end = doc_node.end_lineno - node.lineno + 1 if doc_node.end_lineno else 1
            lines = seg.splitlines()
            prompt, body = "\n".join(lines[:end]) + "\n", "\n".join(lines[end:]) + "\n"
            if 2 <= len(lines) - end <= 40:
                out.append(Item(id=f"stdlib/{mod}.{node.name}", question=prompt, solution=body, benchmark="stdlib"))
    random.Random(seed).shuffle(out)
    return out[:limit]


def _split(ids: Sequence[str], seed: int, salt: str) -> dict[str, str]:
    order = sorted(ids)
    random.Random(f"{seed}:{salt}").shuffle(order)
    half = len(order) // 2
    return {x: ("calib" if i < half else "test") for i, x in enumerate(order)}


def build_scenarios(
    benchmark: str,
    n: int | None = None,
    seed: int = 0,
    scenarios: Sequence[str] = SCENARIOS,
    paraphraser: LLMParaphraser | None = None,
    question_only: bool = False,
) -> ScenarioSet:
    """Labelled samples for ``benchmark`` (``gsm8k``, ``humaneval`` or ``mmlu``); ``n`` source
    items per scenario (paper: 150 / 100 / 200) and as many hard negatives. ``paraphraser``: an
    :class:`~contam.scan.paraphrase.LLMParaphraser` for S2 (rule-based without one).
    ``question_only``: samples (and negatives) hold the question / prompt without any solution,
    the harder setting of synthetic *prompts*; S4 needs a chain and is left out."""
    if benchmark not in BENCHMARKS:
        raise ConfigError(f"scenarios are built for {', '.join(BENCHMARKS)}, not {benchmark!r}")
    bad = [s for s in scenarios if s not in SCENARIOS]
    if bad:
        raise ConfigError(f"unknown scenario(s) {bad}: choose from {', '.join(SCENARIOS)}")
    if question_only:
        scenarios = tuple(sc for sc in scenarios if sc != "S4")
    rng = random.Random(seed)
    pool = _pool(benchmark)
    notes = {
        "negatives": "",
        "S2": "rule-based paraphrase" if paraphraser is None else "LLM paraphrase above a cosine floor, rule-based fallback",
    }
    if benchmark == "gsm8k":
        n = n or 150
        bench_items = pool
        negs = rng.sample(load_benchmark("gsm8k-train"), n)
        notes["negatives"] = "GSM8K train items (same genre, not derived from test)"
    elif benchmark == "mmlu":
        n = n or 200
        by_subject: dict[str, list[Item]] = {}
        for it in pool:
            by_subject.setdefault(str(it.metadata.get("subject")), []).append(it)
        bench_items, rest = [], []
        for subj in sorted(by_subject):
            # Items sharing a source passage (US history) stay on one side: a negative quoting a
            # benchmark item's passage would contain benchmark text.
            groups: dict[str, list[Item]] = {}
            for it in by_subject[subj]:
                groups.setdefault(it.question[:120], []).append(it)
            keys = sorted(groups)
            rng.shuffle(keys)
            half = len(by_subject[subj]) // 2
            for key in keys:
                side = bench_items if sum(1 for x in bench_items if x.metadata.get("subject") == subj) < half else rest
                side += groups[key]
        negs = rng.sample(rest, min(n, len(rest)))
        notes["negatives"] = (
            "other questions of the same MMLU subjects (the benchmark is a seeded half of each subject; items sharing a passage stay together)"
        )
    else:
        n = n or 100
        shuffled = pool[:]
        rng.shuffle(shuffled)
        bench_items, rest = shuffled[:100], shuffled[100:]
        negs = (rest + stdlib_functions(max(0, n - len(rest)), seed))[:n]
        notes["negatives"] = "HumanEval tasks outside the 100-task benchmark, then documented Python stdlib functions"
    sources = rng.sample(bench_items, min(n, len(bench_items)))
    src_split = _split([it.id for it in sources], seed, "pos")
    neg_split = _split([it.id for it in negs], seed, "neg")
    samples: list[Sample] = []
    para_texts: dict[str, tuple[str, str]] = {}
    if "S2" in scenarios and paraphraser is not None:
        para_texts = paraphraser.paraphrase_items([_bare(it) if question_only else it for it in sources], seed)
    for it in sources:
        sp = src_split[it.id]
        base = _bare(it) if question_only else it
        for sc in scenarios:
            gen = {"S1": "exact", "S3": "isomorphic", "S4": "reasoning-transfer"}.get(sc, "rule-paraphrase")
            if sc == "S1":
                text: str | None = base.text
            elif sc == "S2":
                text = None
                if it.id in para_texts:
                    text, gen = para_texts[it.id]
                if text is None:
                    text, gen = _paraphrase_text(base, seed), "rule-paraphrase"
            elif sc == "S3":
                text = _variant_text(it, seed, question_only)
            else:
                text = s4_text(it, seed)
            if text:
                samples.append(Sample(f"{sc}/{it.id}", text, 1, sc, it.id, gen, sp, benchmark))
    for it in negs:
        samples.append(
            Sample(
                f"neg/{it.id}",
                (_bare(it) if question_only else it).text,
                0,
                "neg",
                it.id,
                "hard-negative:" + it.benchmark,
                neg_split[it.id],
                benchmark,
            )
        )
    if question_only:
        notes["parts"] = "question only (no solutions)"
    return ScenarioSet(benchmark, seed, tuple(it.id for it in bench_items), tuple(samples), notes)


def _bare(item: Item) -> Item:
    """The item without its solution or answer: what a synthetic prompt would copy."""
    return replace(item, solution="", answer="")
