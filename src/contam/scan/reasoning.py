"""Level 3 of the cascade: reasoning-pattern similarity between chains of thought.

Paper 001, Section 3.2 (Level 3) and Section 3.3: reasoning steps are parsed from a trace with
regular expressions and two traces are compared with

    sim_reasoning = α·StructSim + β·StepSim + γ·ArgSim        (α .4, β .3, γ .3; Table 3)

each part a weighted Jaccard similarity on n-gram sets:

* **StructSim** — the sequence of step *types* (``calc:*``, ``calc:+-``, ``for``, ``return``, ...),
  as 1- to 3-grams, longer n-grams weighing more: the shape of the solution.
* **StepSim** — step by step: every step's words (numbers and names masked) as word 1–2-grams,
  each step matched to its best counterpart in the other trace, averaged both ways.
* **ArgSim** — the arguments: numbers, operand/operator pairs (``48/2``), capitalised entities and,
  for code, identifiers.

Steps come from GSM8K calculator annotations (``<<48/2=24>>``), numbered steps (``1.`` / ``Step 2:``),
fenced or indented code (one statement a step), or, failing those, sentences that carry a number
or an equation.

>>> a = "She has 16 - 3 = <<16-3=13>>13 eggs.\\nShe makes 13 * 2 = $<<13*2=26>>26.\\n#### 26"
>>> b = "He has 20 - 5 = <<20-5=15>>15 apples.\\nHe earns 15 * 2 = $<<15*2=30>>30.\\n#### 30"
>>> [s.kind for s in extract_steps(a)]
['calc:-', 'calc:*', 'answer']
>>> sim = ReasoningScorer().similarity(extract_steps(a), extract_steps(b))
>>> sim.struct, sim.total > 0.4
(1.0, True)
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from contam.records import Record


@dataclass(frozen=True)
class ReasoningConfig:
    """Level-3 settings (paper 001 §3.2 eq. 4, §3.3, Table 3: α .4, β .3, γ .3).

    ``threshold`` is τ3; the paper gives no value, 0.6 is ours (calibrate it with
    :mod:`contam.scan.calibrate`). ``shortlist`` is how many benchmark items are compared exactly
    per candidate after a sparse pre-selection; ``min_steps`` skips traces too short to carry a
    pattern (a one-step chain matches half the benchmark).

    >>> ReasoningConfig().alpha + ReasoningConfig().beta + ReasoningConfig().gamma
    1.0
    """

    alpha: float = 0.4
    beta: float = 0.3
    gamma: float = 0.3
    threshold: float = 0.6
    struct_n: int = 3
    step_n: int = 2
    min_steps: int = 2
    shortlist: int = 20


@dataclass(frozen=True)
class Step(Record):
    """One reasoning step: its type, text, operators, numbers and named entities."""

    kind: str
    text: str
    ops: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    operands: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReasoningSim(Record):
    """The three parts and their weighted total (eq. 4)."""

    struct: float
    step: float
    arg: float
    total: float


_CALC_RE = re.compile(r"<<([^<>=]{1,400})=([^<>]{0,60})>>")
_NUMBERED_RE = re.compile(r"^\s*(?:step\s*\d+\s*[:.)]|\(?\d{1,2}[.)]\s|[-*•]\s)", re.IGNORECASE)
_FENCE_RE = re.compile(r"```[a-zA-Z0-9_+-]*\n(.*?)```", re.DOTALL)
_CODE_LINE_RE = re.compile(r"^\s*(def |class |return\b|for |while |if |elif |else:|import |from \S+ import|[A-Za-z_][\w.\[\], ]*\s*[+\-*/%]?=[^=])")
_NUM_RE = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?")
_INLINE_EQ_RE = re.compile(r"(\d[\d,.]*\s*(?:[-+*/×x÷]\s*\d[\d,.]*\s*)+)=\s*\$?\d")
_OP_RE = re.compile(r"\*\*|//|==|!=|<=|>=|[-+*/%<>×÷]")
_WORD_RE = re.compile(r"[A-Za-z_][A-Za-z_0-9']*")
_ENTITY_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}\b")
_CODE_KEYWORDS = ("def", "class", "return", "for", "while", "if", "elif", "else", "import", "from", "try", "except", "with", "yield", "assert", "raise")
_PY_KNOWN = frozenset(keyword.kwlist) | frozenset(dir(builtins)) | frozenset(("STR", "self"))
#: A name not after a dot: attributes and methods (``.split``) are API, not the author's names.
_PY_NAME_RE = re.compile(r"(?<![.\w])[A-Za-z_]\w*")
_STOP = frozenset(
    "the a an and or of to in on for at by with is are was were be it its he she they them his her their this that "
    "so then there has have had do does did as from into per each how many much what which if not".split()
)


def _norm_num(s: str) -> str:
    s = s.replace(",", "").strip()
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s or "0"


def _op_sig(expr: str) -> tuple[str, ...]:
    return tuple({"×": "*", "x": "*", "÷": "/"}.get(o, o) for o in _OP_RE.findall(expr))


def _operands(expr: str) -> tuple[str, ...]:
    """Operator-operand pairs: ``48/2`` gives ``48/``, ``/2`` — what the computation did to what."""
    toks = re.findall(r"\d[\d,.]*|\*\*|[-+*/]", expr.replace("×", "*").replace("÷", "/"))
    out: list[str] = []
    for i, t in enumerate(toks):
        if t[0].isdigit() and i + 1 < len(toks) and not toks[i + 1][0].isdigit():
            out.append(_norm_num(t) + toks[i + 1])
        if t[0].isdigit() and i > 0 and not toks[i - 1][0].isdigit():
            out.append(toks[i - 1] + _norm_num(t))
    return tuple(out)


def _entities(text: str) -> tuple[str, ...]:
    return tuple(e.lower() for e in _ENTITY_RE.findall(text))


def _make_step(kind: str, text: str, expr: str = "") -> Step:
    body = expr or text
    # The calculator annotation repeats the visible arithmetic; count each number once.
    text = _CALC_RE.sub(" ", text)
    return Step(
        kind=kind,
        text=text.strip(),
        ops=_op_sig(body) if expr or kind.startswith("calc") else (),
        numbers=tuple(_norm_num(n) for n in _NUM_RE.findall(text)),
        entities=_entities(text),
        operands=_operands(body) if expr else (),
    )


def _code_kind(line: str) -> str:
    s = line.strip()
    head = s.split(None, 1)[0].rstrip(":") if s else ""
    if head in _CODE_KEYWORDS:
        return head
    if re.match(r"[A-Za-z_][\w.\[\], ]*\s*[+\-*/%]=", s):
        return "augassign"
    if re.match(r"[A-Za-z_][\w.\[\], ]*\s*=[^=]", s):
        return "assign"
    return "call" if "(" in s else "expr"


def _code_steps(code: str) -> list[Step]:
    """One step per statement line. Identifiers are renamed ``v0, v1, ...`` by first appearance in
    the step text (so a consistently renamed clone reads the same) and kept as written in
    ``entities`` (so ArgSim still sees the names)."""
    canon: dict[str, str] = {}
    steps = []
    code = _DOCSTRING_RE.sub(" ", code)  # docstrings are prose, not steps
    for line in code.splitlines():
        s = line.strip()
        if not s or s.startswith("#") or s.startswith(('"""', "'''", ">>>")):
            continue
        kind = "code:" + _code_kind(s)
        bare = re.sub(r"'[^']*'|\"[^\"]*\"", " STR ", s)
        idents = tuple(w for w in _PY_NAME_RE.findall(bare) if w not in _PY_KNOWN)
        for w in idents:
            canon.setdefault(w, f"v{len(canon)}")
        text = _PY_NAME_RE.sub(lambda m: "v" if m.group(0) in canon else m.group(0), bare)
        steps.append(Step(kind=kind, text=text, ops=_op_sig(bare), numbers=tuple(_NUM_RE.findall(bare)), entities=tuple(w.lower() for w in idents)))
    return steps


_DOCSTRING_RE = re.compile(r'("""|\'\'\')(.*?)\1', re.DOTALL)


def _looks_like_code(text: str) -> bool:
    lines = [ln for ln in _DOCSTRING_RE.sub(" ", text).splitlines() if ln.strip()]
    if not lines:
        return False
    hits = sum(1 for ln in lines if _CODE_LINE_RE.match(ln))
    return hits >= 2 and hits >= 0.3 * len(lines)


def extract_steps(text: str) -> list[Step]:
    """Reasoning steps of a trace (see the module docstring for the rules, first match wins).

    >>> [s.kind for s in extract_steps("1. Add 2 and 3 to get 5.\\n2. Multiply: 5 * 4 = 20.")]
    ['numbered', 'numbered:*']
    """
    fences = _FENCE_RE.findall(text)
    if fences:
        return [s for block in fences for s in _code_steps(block)]
    if _CALC_RE.search(text):
        steps = []
        for line in text.splitlines():
            calcs = _CALC_RE.findall(line)
            if calcs:
                for expr, _val in calcs:
                    steps.append(_make_step("calc:" + "".join(_op_sig(expr)), line, expr))
            elif line.strip().startswith("####"):
                steps.append(_make_step("answer", line))
        return steps
    if _looks_like_code(text):
        return _code_steps(text)
    lines = [ln for ln in re.split(r"\n+", text) if ln.strip()]
    numbered = [ln for ln in lines if _NUMBERED_RE.match(ln)]
    if len(numbered) >= 2:
        return [_sentence_step("numbered", ln) for ln in numbered]
    sentences = [s for ln in lines for s in re.split(r"(?<=[.!?])\s+", ln) if s.strip()]
    return [_sentence_step("sent", s) for s in sentences if _NUM_RE.search(s) or "=" in s]


def _sentence_step(prefix: str, text: str) -> Step:
    m = _INLINE_EQ_RE.search(text)
    if m:
        return _make_step(f"{prefix}:" + "".join(_op_sig(m.group(1))), text, m.group(1))
    if text.strip().startswith("####"):
        return _make_step("answer", text)
    return _make_step(prefix, text)


def weighted_jaccard(a: Counter[str], b: Counter[str]) -> float:
    """Σ min(a, b) / Σ max(a, b) over the union of keys; 0 when both are empty.

    >>> weighted_jaccard(Counter({"x": 2, "y": 1}), Counter({"x": 1, "z": 1}))
    0.25
    """
    keys = a.keys() | b.keys()
    den = sum(max(a[k], b[k]) for k in keys)
    return sum(min(a[k], b[k]) for k in keys) / den if den else 0.0


def ngram_counter(seq: Sequence[str], n_max: int, weight_by_n: bool = True) -> Counter[str]:
    """All 1..n_max-grams of ``seq``, an n-gram weighing ``n`` (longer shared runs count more)."""
    c: Counter[str] = Counter()
    for n in range(1, n_max + 1):
        for i in range(len(seq) - n + 1):
            c["\x1f".join(seq[i : i + n])] += n if weight_by_n else 1
    return c


def _step_words(step: Step) -> list[str]:
    out = []
    for w in _WORD_RE.findall(_NUM_RE.sub(" 0 ", step.text)):
        lw = w.lower()
        if lw in _STOP:
            continue
        out.append("<ent>" if lw in step.entities else lw)
    return out


class ReasoningScorer:
    """Compares two step lists with eq. 4.

    >>> s = ReasoningScorer()
    >>> s.similarity(extract_steps("x = 1\\ny = x + 2\\nreturn y"), extract_steps("a = 1\\nb = a + 2\\nreturn b")).struct
    1.0
    """

    def __init__(self, config: ReasoningConfig | None = None) -> None:
        self.config = config or ReasoningConfig()

    def features(self, steps: Sequence[Step]) -> tuple[Counter[str], list[Counter[str]], Counter[str]]:
        """Pre-computed (struct n-grams, per-step word n-grams, argument multiset) of a trace."""
        cfg = self.config
        struct = ngram_counter([s.kind for s in steps], cfg.struct_n)
        per_step = [ngram_counter(_step_words(s), cfg.step_n) for s in steps if s.kind != "answer"]
        args: Counter[str] = Counter()
        for s in steps:
            args.update("n:" + n for n in s.numbers)
            args.update("o:" + o for o in s.operands)
            args.update("e:" + e for e in s.entities)
        return struct, per_step, args

    def similarity(self, a: Sequence[Step], b: Sequence[Step]) -> ReasoningSim:
        return self.similarity_features(self.features(a), self.features(b))

    def similarity_features(
        self, fa: tuple[Counter[str], list[Counter[str]], Counter[str]], fb: tuple[Counter[str], list[Counter[str]], Counter[str]]
    ) -> ReasoningSim:
        cfg = self.config
        struct = weighted_jaccard(fa[0], fb[0])
        step = _aligned_step_sim(fa[1], fb[1])
        arg = weighted_jaccard(fa[2], fb[2])
        total = cfg.alpha * struct + cfg.beta * step + cfg.gamma * arg
        return ReasoningSim(struct=round(struct, 6), step=round(step, 6), arg=round(arg, 6), total=round(total, 6))


def _aligned_step_sim(a: list[Counter[str]], b: list[Counter[str]]) -> float:
    """Mean over each trace's steps of the best weighted Jaccard with a step of the other, both ways."""
    if not a or not b:
        return 0.0
    m = [[weighted_jaccard(x, y) for y in b] for x in a]
    ab = sum(max(row) for row in m) / len(a)
    ba = sum(max(m[i][j] for i in range(len(a))) for j in range(len(b))) / len(b)
    return (ab + ba) / 2


def feature_tokens(steps: Sequence[Step]) -> list[str]:
    """Flat tokens for the sparse shortlist index: step kinds, kind bigrams, numbers, operand pairs, entities."""
    kinds = [s.kind for s in steps]
    toks = ["k:" + k for k in kinds] + ["kk:" + a + ">" + b for a, b in pairwise(kinds)]
    for s in steps:
        toks += ["n:" + n for n in s.numbers] + ["o:" + o for o in s.operands] + ["e:" + e for e in s.entities]
        toks += ["w:" + w for w in _step_words(s)]
    return toks


@dataclass(frozen=True)
class ReasoningMatch(Record):
    """A candidate's best benchmark match at level 3 (``index`` into the fitted items, -1 if none)."""

    index: int
    sim: ReasoningSim
    n_steps: int


class ReasoningMatcher:
    """Level 3 over a whole benchmark: ``fit(traces)`` then ``match(texts)``.

    Comparing every candidate with every benchmark trace in Python would cost N×M similarity
    calls, so a sparse TF-IDF index over :func:`feature_tokens` picks ``shortlist`` items per
    candidate (in batches, never a dense N×M matrix), and eq. 4 is computed exactly on those
    (plus any ids the caller adds, e.g. the semantic level's nearest neighbours).

    >>> m = ReasoningMatcher().fit(["A = <<2*3=6>>6\\nB = <<6+1=7>>7\\n#### 7", "x <<9-4=5>>5\\n#### 5"])
    >>> m.match(["C = <<2*3=6>>6\\nD = <<6+1=7>>7\\n#### 7"])[0].index
    0
    """

    def __init__(self, config: ReasoningConfig | None = None) -> None:
        self.config = config or ReasoningConfig()
        self.scorer = ReasoningScorer(self.config)

    def fit(self, traces: Sequence[str]) -> ReasoningMatcher:
        from sklearn.feature_extraction.text import TfidfVectorizer

        steps = [extract_steps(t) for t in traces]
        self._features = [self.scorer.features(s) for s in steps]
        self._n_steps = [len(s) for s in steps]
        self._vec = TfidfVectorizer(analyzer=lambda toks: toks, sublinear_tf=True, norm="l2")
        self._matrix = self._vec.fit_transform([feature_tokens(s) for s in steps])
        return self

    def match(self, texts: Sequence[str], extra: Sequence[Sequence[int]] | None = None, batch: int = 1024) -> list[ReasoningMatch]:
        """Best benchmark trace for each text (``extra[i]``: more item indices to compare exactly)."""
        import numpy as np

        cfg = self.config
        out: list[ReasoningMatch] = []
        k = min(cfg.shortlist, self._matrix.shape[0])
        for start in range(0, len(texts), batch):
            chunk = texts[start : start + batch]
            steps = [extract_steps(t) for t in chunk]
            q = self._vec.transform([feature_tokens(s) for s in steps])
            sims = (q @ self._matrix.T).toarray()  # batch × M, freed every batch
            top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k else np.zeros((len(chunk), 0), dtype=int)
            for i, st in enumerate(steps):
                real = [s for s in st if s.kind != "answer"]
                if len(real) < cfg.min_steps:
                    out.append(ReasoningMatch(-1, ReasoningSim(0.0, 0.0, 0.0, 0.0), len(real)))
                    continue
                cands = {int(j) for j in top[i] if sims[i, j] > 0}
                if extra is not None:
                    cands.update(int(j) for j in extra[start + i] if j >= 0)
                fa = self.scorer.features(st)
                best = ReasoningMatch(-1, ReasoningSim(0.0, 0.0, 0.0, 0.0), len(real))
                for j in sorted(cands):
                    if self._n_steps[j] < cfg.min_steps:
                        continue
                    sim = self.scorer.similarity_features(fa, self._features[j])
                    if sim.total > best.sim.total:
                        best = ReasoningMatch(j, sim, len(real))
                out.append(best)
        return out
