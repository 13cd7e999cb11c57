"""Level 3, third part: matching many traces against a benchmark, vectorised.

Comparing every candidate with every benchmark trace through :class:`ReasoningScorer` would cost
N×M Python similarity calls. :class:`ReasoningMatcher` shortlists items per candidate with a
sparse TF-IDF index over :func:`feature_tokens`, then computes eq. 4 for all shortlisted pairs
of a batch at once on integer-id sparse matrices (scipy's C++ kernels), the same doubles the
pair-at-a-time :class:`ReasoningScorer` gives, summed in the same order; large inputs are spread over processes.

>>> m = ReasoningMatcher().fit(["A = <<2*3=6>>6\\nB = <<6+1=7>>7\\n#### 7", "x <<9-4=5>>5\\n#### 5"])
>>> m.match(["C = <<2*3=6>>6\\nD = <<6+1=7>>7\\n#### 7"])[0].sim.struct
1.0
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contam.pool import usable_cores
from contam.records import Record
from contam.scan.reasoning.scorer import Features, ReasoningConfig, ReasoningScorer, ReasoningSim, features_and_tokens
from contam.scan.reasoning.steps import extract_steps
from contam.scan.reasoning.tfidf import StepTfidf, counts_csr

if TYPE_CHECKING:
    import numpy as np

#: Key → column id for struct n-grams, step word n-grams and arguments.
_Vocabs = tuple[dict[str, int], dict[str, int], dict[str, int]]


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
#: start-up (a fresh interpreter per worker) costs about what it saves. Measured on 2 busy cores while
#: each worker still imported scikit-learn (~2 s CPU; the TF-IDF no longer does, so the break-even is
#: now somewhat lower, not re-measured): 10k texts 4 s alone vs 5.5 s pooled; 50k 22-29 s vs 16.5 s.
_AUTO_PARALLEL_MIN = 25_000


class _Sparse:
    """Counters of many traces as one CSR matrix over a vocabulary, with each row's total weight
    (keys outside a fixed vocabulary still count in the total; they can never meet the other side)."""

    def __init__(self, counters: Sequence[Counter[str]], vocab: dict[str, int], grow: bool) -> None:
        self.matrix, self.tot = counts_csr(counters, vocab, grow)


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


def _pair_sims(
    cfg: ReasoningConfig, c: _Traces, items: _Traces, pi: np.ndarray, pj: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
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

    def __init__(self, config: ReasoningConfig, vec: StepTfidf, matrix: Any, items: _Traces, n_steps: np.ndarray, vocabs: _Vocabs) -> None:
        # ``matrix``: the benchmark traces' scipy CSR TF-IDF rows.
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
    n_items = st.matrix.shape[0]
    k = min(cfg.shortlist, n_items)
    steps = [extract_steps(t) for t in texts]
    n_real = [sum(1 for s in ss if s.kind != "answer") for ss in steps]
    out = [ReasoningMatch(-1, _NO_SIM, n) for n in n_real]
    # Rows are independent (TF-IDF, the product, argpartition), so only traces long enough to be
    # matched are shortlisted; their rows are the ones the whole batch would have produced.
    live = [i for i, n in enumerate(n_real) if n >= cfg.min_steps]
    if not live:
        return out
    ft = [features_and_tokens(steps[i], cfg) for i in live]
    q = st.vec.transform([t for _, t in ft])
    sims = (q @ st.matrix.T).toarray()  # live × M, freed every batch
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

        steps = [extract_steps(t) for t in traces]
        ft = [features_and_tokens(s, self.config) for s in steps]
        vec = StepTfidf()
        matrix = vec.fit_transform([t for _, t in ft])
        vocabs: _Vocabs = ({}, {}, {})
        items = _Traces([f for f, _ in ft], vocabs, grow=True)
        self._state = _State(self.config, vec, matrix, items, np.asarray([len(s) for s in steps], dtype=np.int64), vocabs)
        return self

    def _n_workers(self, n_texts: int, batch: int) -> int:
        n_chunks = -(-n_texts // batch)
        jobs = self.config.n_jobs
        if jobs is None:
            if n_texts < _AUTO_PARALLEL_MIN:
                return 1
            jobs = usable_cores()
        return max(1, min(jobs, n_chunks))

    def match(
        self, texts: Sequence[str], extra: Sequence[Sequence[int] | np.ndarray] | np.ndarray | None = None, batch: int = 1024
    ) -> list[ReasoningMatch]:
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
            warnings.warn(
                "level-3 worker processes failed; matching in this process (set ReasoningConfig(n_jobs=1) to skip them)",
                RuntimeWarning,
                stacklevel=2,
            )
            return [m for t, e in chunks for m in _match_chunk(self._state, t, e)]
