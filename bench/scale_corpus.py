"""A corpus of unique real text for the semantic level's cost at scale (issue 31, target 1).

3,030 documents by default, none repeated (a repeated paragraph is embedded once, so a corpus
built from a pool would flatter any cache):

* 2,000 paragraphs that are not maths: a tenth licence paragraphs of the installed distributions'
  licence files, then GitHub issue paragraphs (SWE-bench Lite and Verified problem statements,
  ``../shared/data/swebench``, MIT) and docstrings of the scientific Python stack installed in the
  venv (numpy, scipy, scikit-learn: BSD; past 10,000 paragraphs also torch, transformers, sympy,
  pandas, matplotlib) half and half, as far as the issues go;
* 1,000 GSM8K train solutions (``../shared/data/gsm8k/train.jsonl``, MIT): same genre as the
  benchmark, clean (past 7,473, the train questions too);
* 30 GPT-4 rephrasings of GSM8K test questions made by other people: MathCheck-GSM's "problem
  understanding" rewrites (``bench/data/independent/mathcheck_gsm``, not committed: no licence
  stated; fetched by its ``extract.py``), one per item.

Selection is by a hash of each text, so the same venv gives the same corpus.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SHARED = ROOT.parent.parent / "shared" / "data"
if not SHARED.is_dir():
    SHARED = ROOT.parent / "shared" / "data"

_WS = re.compile(r"\s+")


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def _paragraphs(text: str, lo: int = 120, hi: int = 1500) -> list[str]:
    out = []
    for p in re.split(r"\n\s*\n", text):
        p = p.strip()
        if lo <= len(p) <= hi and sum(c.isalpha() for c in p) > 0.5 * len(p):
            out.append(p)
    return out


def issue_paragraphs() -> list[str]:
    seen: dict[str, str] = {}
    for name in ("swebench_verified.jsonl", "swebench_lite.jsonl"):
        for line in (SHARED / "swebench" / name).read_text(encoding="utf-8").splitlines():
            for p in _paragraphs(json.loads(line)["problem_statement"]):
                seen.setdefault(_WS.sub(" ", p), p)
    return list(seen.values())


#: Packages whose docstrings are drawn on; the first three are enough for the default size.
PACKAGES = ("numpy", "scipy", "sklearn", "torch", "transformers", "sympy", "pandas", "matplotlib")


def docstring_paragraphs(packages: tuple[str, ...] = PACKAGES[:3]) -> list[str]:
    site = Path(sysconfig.get_paths()["purelib"])
    seen: dict[str, str] = {}
    for pkg in packages:
        for path in sorted((site / pkg).rglob("*.py")):
            if "tests" in path.parts:
                continue
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef, ast.Module)):
                    doc = ast.get_docstring(node)
                    if doc:
                        for p in _paragraphs(doc):
                            seen.setdefault(_WS.sub(" ", p), p)
    return list(seen.values())


def licence_paragraphs() -> list[str]:
    site = Path(sysconfig.get_paths()["purelib"])
    seen: dict[str, str] = {}
    for path in sorted(site.glob("*.dist-info/**/LICEN[CS]E*")):
        if path.is_file():
            for p in _paragraphs(path.read_text(encoding="utf-8", errors="replace")):
                seen.setdefault(_WS.sub(" ", p), p)
    return list(seen.values())


def _pick(texts: list[str], n: int, salt: str) -> list[str]:
    return sorted(texts, key=lambda t: _key(salt + t))[:n]


@dataclass
class ScaleCorpus:
    """Documents with their labels: ``truth[i]`` is the benchmark item a rephrasing comes from ('' = clean)."""

    texts: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    truth: list[str] = field(default_factory=list)
    rephrasing_source: str = "MathCheck-GSM problem-understanding rewrites (GPT-4) of GSM8K test questions"

    def add(self, text: str, kind: str, truth: str = "") -> None:
        self.texts.append(text)
        self.kinds.append(kind)
        self.truth.append(truth)


def build(paragraphs: int = 2000, solutions: int = 1000, rephrasings: int = 30) -> ScaleCorpus:
    c = ScaleCorpus()
    issues, lic = issue_paragraphs(), licence_paragraphs()
    docs = docstring_paragraphs(PACKAGES[:3] if paragraphs <= 10_000 else PACKAGES)
    n_lic = min(len(lic), paragraphs // 10)
    n_iss = min(len(issues), (paragraphs - n_lic) // 2)
    n_doc = min(len(docs), paragraphs - n_lic - n_iss)
    chosen = _pick(lic, n_lic, "lic") + _pick(docs, n_doc, "doc") + _pick(issues, n_iss, "issue")
    kinds = ["licence"] * n_lic + ["docstring"] * n_doc + ["issue"] * (len(chosen) - n_lic - n_doc)
    mc = ROOT / "data" / "independent" / "mathcheck_gsm" / "variants.jsonl"
    if not mc.is_file():
        raise SystemExit(f"{mc} is missing: run bench/data/independent/mathcheck_gsm/extract.py (not committed: no licence stated)")
    rows = [json.loads(line) for line in mc.read_text(encoding="utf-8").splitlines()]
    by_source: dict[str, dict] = {}
    for r in sorted(rows, key=lambda r: _key(r["text"])):
        if r.get("subtype") == "mathcheck_problem_understanding":
            by_source.setdefault(r["source"], r)  # one rewrite per GSM8K item
    gold = [(r["text"], r["source"]) for r in list(by_source.values())[:rephrasings]]
    train = [json.loads(line) for line in (SHARED / "gsm8k" / "train.jsonl").read_text(encoding="utf-8").splitlines()]
    # Solutions first; past the 7,473 of them, the questions (a corpus of 100k needs both).
    sols = _pick([r["answer"] for r in train], solutions, "sol")
    sols += _pick([r["question"] for r in train], solutions - len(sols), "q")
    seen: set[str] = set()
    for t, k in zip(chosen, kinds, strict=True):
        if t not in seen:
            seen.add(t)
            c.add(t, k)
    for t in sols:
        c.add(t, "gsm8k-train-solution")
    for t, src in gold:
        c.add(t, "rephrasing", src)
    return c


if __name__ == "__main__":
    c = build()
    from collections import Counter

    print(len(c.texts), Counter(c.kinds), c.rephrasing_source)
