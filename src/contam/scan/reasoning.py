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
from typing import TYPE_CHECKING

from contam.records import Record

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class ReasoningConfig:
    """Level-3 settings (paper 001 §3.2 eq. 4, §3.3, Table 3: α .4, β .3, γ .3).

    ``threshold`` is τ3; the paper gives no value, 0.6 is ours (calibrate it with
    :mod:`contam.scan.calibrate`). ``shortlist`` is how many benchmark items are compared exactly
    per candidate after a sparse pre-selection; ``min_steps`` skips traces too short to carry a
    pattern (a one-step chain matches half the benchmark). ``n_jobs`` is how many processes
    :meth:`ReasoningMatcher.match` uses: ``None`` means all cores for inputs of 25,000 texts or
    more and one below (a worker costs a second or two to start), ``1`` never more; the results
    do not depend on it. Workers are spawned, so a script calling ``match`` with more than one
    needs the usual ``if __name__ == "__main__":`` guard (without it, matching falls back to one
    process with a warning).

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
    n_jobs: int | None = None


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
    """All 1..n_max-grams of ``seq``, an n-gram weighing ``n`` (longer shared runs count more).
    Each length is counted by ``Counter``'s C loop (this runs for every step of every trace)."""
    c: Counter[str] = Counter()
    for n in range(1, n_max + 1):
        grams = seq if n == 1 else ["\x1f".join(seq[i : i + n]) for i in range(len(seq) - n + 1)]
        for g, v in Counter(grams).items():
            c[g] += v * (n if weight_by_n else 1)
    return c


def _step_words(step: Step) -> list[str]:
    out = []
    for w in _WORD_RE.findall(_NUM_RE.sub(" 0 ", step.text)):
        lw = w.lower()
        if lw in _STOP:
            continue
        out.append("<ent>" if lw in step.entities else lw)
    return out


Features = tuple[Counter[str], list[Counter[str]], Counter[str]]
#: Key → column id for struct n-grams, step word n-grams and arguments.
_Vocabs = tuple[dict[str, int], dict[str, int], dict[str, int]]


def _features_and_tokens(steps: Sequence[Step], config: ReasoningConfig) -> tuple[Features, list[str]]:
    """The features eq. 4 compares (struct n-grams, per-step word n-grams, argument multiset) and
    the flat tokens of the sparse shortlist index, in one pass: the step words, the costliest
    part, are found once. :meth:`ReasoningScorer.features` and :func:`feature_tokens` are its halves."""
    words = [_step_words(s) for s in steps]
    kinds = [s.kind for s in steps]
    struct = ngram_counter(kinds, config.struct_n)
    per_step = [ngram_counter(w, config.step_n) for s, w in zip(steps, words, strict=True) if s.kind != "answer"]
    args: Counter[str] = Counter()
    toks = ["k:" + k for k in kinds] + ["kk:" + a + ">" + b for a, b in pairwise(kinds)]
    for s, w in zip(steps, words, strict=True):
        nums = ["n:" + n for n in s.numbers]
        ops = ["o:" + o for o in s.operands]
        ents = ["e:" + e for e in s.entities]
        args.update(nums)
        args.update(ops)
        args.update(ents)
        toks += nums + ops + ents
        toks += ["w:" + x for x in w]
    return (struct, per_step, args), toks


class ReasoningScorer:
    """Compares two step lists with eq. 4.

    >>> s = ReasoningScorer()
    >>> s.similarity(extract_steps("x = 1\\ny = x + 2\\nreturn y"), extract_steps("a = 1\\nb = a + 2\\nreturn b")).struct
    1.0
    """

    def __init__(self, config: ReasoningConfig | None = None) -> None:
        self.config = config or ReasoningConfig()

    def features(self, steps: Sequence[Step]) -> Features:
        """Pre-computed (struct n-grams, per-step word n-grams, argument multiset) of a trace."""
        return _features_and_tokens(steps, self.config)[0]

    def similarity(self, a: Sequence[Step], b: Sequence[Step]) -> ReasoningSim:
        return self.similarity_features(self.features(a), self.features(b))

    def similarity_features(self, fa: Features, fb: Features) -> ReasoningSim:
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
    return _features_and_tokens(steps, ReasoningConfig())[1]


@dataclass(frozen=True)
class ReasoningMatch(Record):
    """A candidate's best benchmark match at level 3 (``index`` into the fitted items, -1 if none)."""

    index: int
    sim: ReasoningSim
    n_steps: int


_NO_SIM = ReasoningSim(0.0, 0.0, 0.0, 0.0)
#: Candidates scored exactly at once: bounds the step-pair matrices (~16 step pairs × ~30 items each).
_EXACT_BATCH = 256
#: With ``n_jobs=None``, inputs at least this long are spread over all cores: below it the pool's
#: start-up (a fresh interpreter per worker importing scikit-learn, ~2 s CPU) costs about what it saves
#: (measured on 2 busy cores: 10k texts 4 s alone vs 5.5 s pooled; 50k 22-29 s vs 16.5 s).
_AUTO_PARALLEL_MIN = 25_000


def _identity(toks: list[str]) -> list[str]:
    # A module-level analyzer (not a lambda) so the fitted vectorizer pickles into worker processes.
    return toks


class _Sparse:
    """Counters of many traces as one CSR matrix over a vocabulary, with each row's total weight
    (keys outside a fixed vocabulary still count in the total; they can never meet the other side)."""

    def __init__(self, counters: Sequence[Counter[str]], vocab: dict[str, int], grow: bool) -> None:
        import numpy as np
        from scipy.sparse import csr_matrix

        indptr = [0]
        indices: list[int] = []
        data: list[int] = []
        tot: list[int] = []
        for c in counters:
            t = 0
            for key, v in c.items():
                t += v
                j = vocab.setdefault(key, len(vocab)) if grow else vocab.get(key)
                if j is not None:
                    indices.append(j)
                    data.append(v)
            tot.append(t)
            indptr.append(len(indices))
        self.tot = np.asarray(tot, dtype=np.int64)
        # Built after the loop: when growing, the vocabulary (the column count) is complete only now.
        self.matrix = csr_matrix(
            (np.asarray(data, dtype=np.int64), np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
            shape=(len(counters), len(vocab)),
        )
        self.matrix.sort_indices()  # canonical form: scipy's fast element-wise minimum


def _min_sums(a: _Sparse, ai: np.ndarray, b: _Sparse, bi: np.ndarray) -> np.ndarray:
    """Σ_k min(a[ai[r], k], b[bi[r], k]) for every r: sparse row gathers and an element-wise
    minimum in scipy's C++ kernels instead of Python loops over Counter keys."""
    import numpy as np

    if len(ai) == 0:
        return np.zeros(0, dtype=np.int64)
    m = a.matrix[ai].minimum(b.matrix[bi])
    return np.asarray(m.sum(axis=1), dtype=np.int64).ravel()


def _jaccard(num: np.ndarray, tot_a: np.ndarray, tot_b: np.ndarray) -> np.ndarray:
    """Weighted Jaccard from Σmin and the totals: Σmax = Σa + Σb − Σmin. The sums are exact
    integers, so the quotient is the same double :func:`weighted_jaccard` returns."""
    import numpy as np

    den = tot_a + tot_b - num
    out = np.zeros(len(num), dtype=np.float64)
    nz = den > 0
    out[nz] = num[nz] / den[nz]
    return out


def _ordered_sums(vals: np.ndarray, seg: np.ndarray, pos: np.ndarray, n_seg: int) -> np.ndarray:
    """Per-segment sums added left to right in ``pos`` order, as Python's ``sum`` does (numpy's
    pairwise summation can differ in the last bit, and eq. 4 is rounded to 6 places after)."""
    import numpy as np

    acc = np.zeros(n_seg, dtype=np.float64)
    if len(vals) == 0:
        return acc
    order = np.argsort(pos, kind="stable")
    cuts = np.flatnonzero(np.diff(pos[order])) + 1
    for g in np.split(order, cuts):  # one position at a time; each segment appears once in it
        acc[seg[g]] += vals[g]
    return acc


class _Traces:
    """Compiled features of many traces: struct, argument and per-step matrices plus each trace's
    first row among the step rows."""

    def __init__(self, feats: Sequence[Features], vocabs: _Vocabs, grow: bool) -> None:
        import numpy as np

        self.struct = _Sparse([f[0] for f in feats], vocabs[0], grow)
        self.step = _Sparse([c for f in feats for c in f[1]], vocabs[1], grow)
        self.arg = _Sparse([f[2] for f in feats], vocabs[2], grow)
        self.n_per = np.asarray([len(f[1]) for f in feats], dtype=np.int64)
        self.step_off = np.cumsum(self.n_per) - self.n_per


def _pair_sims(cfg: ReasoningConfig, c: _Traces, items: _Traces, pi: np.ndarray, pj: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Unrounded (struct, step, arg, total) of eq. 4 for candidate ``pi[k]`` vs item ``pj[k]``,
    every pair at once; the same doubles :meth:`ReasoningScorer.similarity_features` computes."""
    import numpy as np

    struct = _jaccard(_min_sums(c.struct, pi, items.struct, pj), c.struct.tot[pi], items.struct.tot[pj])
    arg = _jaccard(_min_sums(c.arg, pi, items.arg, pj), c.arg.tot[pi], items.arg.tot[pj])
    # Step alignment: every (candidate step p, item step q) of every pair k, laid out k, p, q.
    na, nb = c.n_per[pi], items.n_per[pj]
    sizes = na * nb
    n_pairs = len(pi)
    k_of = np.repeat(np.arange(n_pairs), sizes)
    local = np.arange(len(k_of)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    nbk = nb[k_of]
    p = local // np.maximum(nbk, 1)
    q = local - p * nbk
    ra = c.step_off[pi][k_of] + p
    rb = items.step_off[pj][k_of] + q
    num = _min_sums(c.step, ra, items.step, rb)
    m = _jaccard(num, c.step.tot[ra], items.step.tot[rb])
    step = np.zeros(n_pairs, dtype=np.float64)
    if len(m):
        # Best item step for each candidate step (runs of nb along q), then the mean over p.
        rs = np.flatnonzero(q == 0)
        row_best = np.maximum.reduceat(m, rs)
        ab = _ordered_sums(row_best, k_of[rs], p[rs], n_pairs)
        # Best candidate step for each item step: reorder to k, q, p.
        order = np.lexsort((p, q, k_of))
        cs = np.flatnonzero(p[order] == 0)
        col_best = np.maximum.reduceat(m[order], cs)
        ba = _ordered_sums(col_best, k_of[order][cs], q[order][cs], n_pairs)
        ok = sizes > 0
        step[ok] = (ab[ok] / na[ok] + ba[ok] / nb[ok]) / 2
    total = cfg.alpha * struct + cfg.beta * step + cfg.gamma * arg
    return struct, step, arg, total


class _State:
    """What matching needs from a fit, and all a worker process receives."""

    def __init__(self, config: ReasoningConfig, vec: object, matrix: object, items: _Traces, n_steps: np.ndarray, vocabs: _Vocabs) -> None:
        self.config = config
        self.vec = vec
        self.matrix = matrix
        self.items = items
        self.n_steps = n_steps
        self.vocabs = vocabs


def _match_chunk(st: _State, texts: Sequence[str], extra: Sequence[Sequence[int]] | None) -> list[ReasoningMatch]:
    """Level 3 for one batch: sparse TF-IDF shortlist, then eq. 4 on every shortlisted pair."""
    import numpy as np

    cfg = st.config
    n_items = st.matrix.shape[0]  # type: ignore[attr-defined]
    k = min(cfg.shortlist, n_items)
    steps = [extract_steps(t) for t in texts]
    n_real = [sum(1 for s in ss if s.kind != "answer") for ss in steps]
    out = [ReasoningMatch(-1, _NO_SIM, n) for n in n_real]
    # Rows are independent (TF-IDF, the product, argpartition), so only traces long enough to be
    # matched are shortlisted; their rows are the ones the whole batch would have produced.
    live = [i for i, n in enumerate(n_real) if n >= cfg.min_steps]
    if not live:
        return out
    ft = [_features_and_tokens(steps[i], cfg) for i in live]
    q = st.vec.transform([t for _, t in ft])  # type: ignore[attr-defined]
    sims = (q @ st.matrix.T).toarray()  # type: ignore[attr-defined]  # live × M, freed every batch
    top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k else np.zeros((len(live), 0), dtype=np.int64)
    pos = np.take_along_axis(sims, top, axis=1) > 0
    valid = (st.n_steps >= cfg.min_steps).tolist()
    for lo in range(0, len(live), _EXACT_BATCH):
        rows = range(lo, min(lo + _EXACT_BATCH, len(live)))
        cands = _Traces([ft[r][0] for r in rows], st.vocabs, grow=False)
        pi: list[int] = []
        pj: list[int] = []
        for a, r in enumerate(rows):
            js = set(top[r][pos[r]].tolist())
            if extra is not None:
                js.update(int(j) for j in extra[live[r]] if j >= 0)
            for j in sorted(js):
                if valid[j]:
                    pi.append(a)
                    pj.append(j)
        if not pi:
            continue
        pia, pja = np.asarray(pi, dtype=np.int64), np.asarray(pj, dtype=np.int64)
        struct, step, arg, total = _pair_sims(cfg, cands, st.items, pia, pja)
        # Per candidate, the first pair (items in index order) with the highest rounded total above
        # 0. Rounding is monotone, so only totals within 1e-6 of the candidate's maximum can tie
        # with it after rounding: round those alone.
        starts = np.flatnonzero(np.r_[True, pia[1:] != pia[:-1]])
        seg_max = np.maximum.reduceat(total, starts)
        near = np.flatnonzero(total >= np.repeat(seg_max, np.diff(np.r_[starts, len(pia)])) - 2e-6).tolist()
        best: dict[int, tuple[int, float]] = {}
        for kk in near:
            a = pi[kk]
            t = round(float(total[kk]), 6)
            if t > best.get(a, (-1, 0.0))[1]:
                best[a] = (kk, t)
        for a, (kk, t) in best.items():
            i = live[rows[a]]
            sim = ReasoningSim(round(float(struct[kk]), 6), round(float(step[kk]), 6), round(float(arg[kk]), 6), t)
            out[i] = ReasoningMatch(pj[kk], sim, n_real[i])
    return out


_WORKER_STATE: _State | None = None


def _init_worker(st: _State) -> None:
    global _WORKER_STATE
    _WORKER_STATE = st


def _worker_chunk(args: tuple[list[str], list[list[int]] | None]) -> list[ReasoningMatch]:
    assert _WORKER_STATE is not None
    return _match_chunk(_WORKER_STATE, args[0], args[1])


class ReasoningMatcher:
    """Level 3 over a whole benchmark: ``fit(traces)`` then ``match(texts)``.

    Comparing every candidate with every benchmark trace in Python would cost N×M similarity
    calls, so a sparse TF-IDF index over :func:`feature_tokens` picks ``shortlist`` items per
    candidate (in batches, never a dense N×M matrix), and eq. 4 is computed exactly on those
    (plus any ids the caller adds, e.g. the semantic level's nearest neighbours). The exact part
    runs on integer-id sparse matrices for all shortlisted pairs of a batch at once (the same
    numbers as :class:`ReasoningScorer`, to the last bit); large inputs are spread over worker
    processes (``ReasoningConfig.n_jobs``), results in input order.

    >>> m = ReasoningMatcher().fit(["A = <<2*3=6>>6\\nB = <<6+1=7>>7\\n#### 7", "x <<9-4=5>>5\\n#### 5"])
    >>> m.match(["C = <<2*3=6>>6\\nD = <<6+1=7>>7\\n#### 7"])[0].index
    0
    """

    def __init__(self, config: ReasoningConfig | None = None) -> None:
        self.config = config or ReasoningConfig()
        self.scorer = ReasoningScorer(self.config)

    def fit(self, traces: Sequence[str]) -> ReasoningMatcher:
        import numpy as np
        from sklearn.feature_extraction.text import TfidfVectorizer

        steps = [extract_steps(t) for t in traces]
        ft = [_features_and_tokens(s, self.config) for s in steps]
        self._features = [f for f, _ in ft]
        self._n_steps = [len(s) for s in steps]
        self._vec = TfidfVectorizer(analyzer=_identity, sublinear_tf=True, norm="l2")
        self._matrix = self._vec.fit_transform([t for _, t in ft])
        vocabs: _Vocabs = ({}, {}, {})
        items = _Traces(self._features, vocabs, grow=True)
        self._state = _State(self.config, self._vec, self._matrix, items, np.asarray(self._n_steps, dtype=np.int64), vocabs)
        return self

    def _n_workers(self, n_texts: int, batch: int) -> int:
        import os

        n_chunks = -(-n_texts // batch)
        jobs = self.config.n_jobs
        if jobs is None:
            if n_texts < _AUTO_PARALLEL_MIN:
                return 1
            jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        return max(1, min(jobs, n_chunks))

    def match(self, texts: Sequence[str], extra: Sequence[Sequence[int]] | None = None, batch: int = 1024) -> list[ReasoningMatch]:
        """Best benchmark trace for each text (``extra[i]``: more item indices to compare exactly)."""
        chunks = [
            (list(texts[s : s + batch]), None if extra is None else [[int(j) for j in row] for row in extra[s : s + batch]])
            for s in range(0, len(texts), batch)
        ]
        workers = self._n_workers(len(texts), batch)
        if workers <= 1:
            return [m for t, e in chunks for m in _match_chunk(self._state, t, e)]
        import multiprocessing
        import warnings
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        # spawn, not fork: the caller may hold threads (torch, OpenMP) that a forked child would inherit mid-lock.
        ctx = multiprocessing.get_context("spawn")
        try:
            with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker, initargs=(self._state,)) as ex:
                return [m for part in ex.map(_worker_chunk, chunks) for m in part]
        except BrokenProcessPool:
            # Typically a calling script without an ``if __name__ == "__main__":`` guard, which
            # spawned workers re-run; the answer does not depend on the processes, so go on here.
            warnings.warn("level-3 worker processes failed; matching in this process (set ReasoningConfig(n_jobs=1) to skip them)", RuntimeWarning, stacklevel=2)
            return [m for t, e in chunks for m in _match_chunk(self._state, t, e)]
