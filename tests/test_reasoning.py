"""Level 3 (reasoning-pattern) on real GSM8K and HumanEval chains."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from contam.data import load_benchmark
from contam.scan.reasoning import (
    ReasoningConfig,
    ReasoningMatcher,
    ReasoningScorer,
    extract_steps,
    weighted_jaccard,
)
from contam.scan.scenarios import s4_text


@pytest.fixture(scope="module")
def gsm8k() -> list:
    return load_benchmark("gsm8k")[:200]


def test_gsm8k_calculator_steps(gsm8k: list) -> None:
    sol = gsm8k[0].solution  # Janet's ducks: 16-3-4=9, 9*2=18
    steps = extract_steps(sol)
    assert [s.kind for s in steps] == ["calc:--", "calc:*", "answer"]
    assert {"16-", "-3", "-4"} <= set(steps[0].operands)
    # Every annotation of every item becomes one calc step.
    for it in gsm8k[:50]:
        n_ann = it.solution.count("<<")
        assert sum(s.kind.startswith("calc") for s in extract_steps(it.solution)) == n_ann


def test_numbered_code_and_fenced_steps() -> None:
    numbered = "Step 1: 3 + 4 = 7 apples.\nStep 2: 7 * 2 = 14 apples.\nStep 3: answer 14."
    assert [s.kind for s in extract_steps(numbered)] == ["numbered:+", "numbered:*", "numbered"]
    he = load_benchmark("humaneval")[0]
    kinds = [s.kind for s in extract_steps(he.question + he.solution)]
    assert kinds[:3] == ["code:from", "code:def", "code:for"] and "code:return" in kinds
    fenced = "Here is how:\n```python\nx = 1\nfor i in range(3):\n    x += i\nreturn x\n```\nDone, 3 steps."
    assert [s.kind for s in extract_steps(fenced)] == ["code:assign", "code:for", "code:augassign", "code:return"]


def test_weighted_jaccard_bounds() -> None:
    a, b = Counter({"x": 2, "y": 1}), Counter({"x": 2, "y": 1})
    assert weighted_jaccard(a, b) == 1.0
    assert weighted_jaccard(a, Counter({"z": 1})) == 0.0
    assert weighted_jaccard(Counter(), Counter()) == 0.0


def test_self_similarity_is_one_and_weights_follow_paper(gsm8k: list) -> None:
    cfg = ReasoningConfig()
    assert (cfg.alpha, cfg.beta, cfg.gamma) == (0.4, 0.3, 0.3)
    s = ReasoningScorer(cfg)
    steps = extract_steps(gsm8k[5].solution)
    sim = s.similarity(steps, steps)
    assert sim.struct == sim.step == sim.arg == sim.total == 1.0


def test_renamed_code_keeps_structure_and_steps() -> None:
    s = ReasoningScorer()
    a = extract_steps("def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n")
    b = extract_steps("def g(items):\n    acc = 0\n    for it in items:\n        acc += it\n    return acc\n")
    sim = s.similarity(a, b)
    assert sim.struct == 1.0 and sim.step == 1.0 and sim.arg < 0.5


def test_s4_chains_match_their_source_and_hard_negatives_stay_below(gsm8k: list) -> None:
    """Reasoning-transfer samples find their own source item above τ3; GSM8K train items
    (a fixed set of 150) do not reach τ3 against the same 200 test items."""
    m = ReasoningMatcher().fit([it.text for it in gsm8k])
    pairs = [(i, s4_text(it, 0)) for i, it in enumerate(gsm8k[:60])]
    pairs = [(i, t) for i, t in pairs if t and sum(1 for s in extract_steps(t) if s.kind != "answer") >= 2]
    assert len(pairs) >= 25
    res = m.match([t for _, t in pairs])
    right = sum(r.index == i for (i, _), r in zip(pairs, res, strict=True))
    above = sum(r.sim.total > 0.6 for r in res)
    assert right >= 0.9 * len(pairs) and above >= 0.85 * len(pairs)
    negs = m.match([it.text for it in load_benchmark("gsm8k-train")[:150]])
    assert sum(r.sim.total > 0.6 for r in negs) <= 3


def test_matcher_is_deterministic(gsm8k: list) -> None:
    m = ReasoningMatcher().fit([it.text for it in gsm8k[:80]])
    texts = [it.text for it in load_benchmark("gsm8k-train")[:40]]
    assert m.match(texts) == m.match(texts)


def test_short_traces_are_not_matched() -> None:
    m = ReasoningMatcher().fit(["a <<2+2=4>>4\nb <<4*3=12>>12\n#### 12"])
    r = m.match(["just <<2+2=4>>4\n#### 4"])[0]
    assert r.index == -1 and r.sim.total == 0.0


def test_batched_matcher_equals_pairwise_scorer(gsm8k: list) -> None:
    """The matcher's sparse-matrix eq. 4 gives the scorer's numbers exactly: with the shortlist as
    long as the benchmark, its best match is the first item of highest rounded total found by
    calling :meth:`ReasoningScorer.similarity_features` on every pair."""
    items = gsm8k[:120]
    m = ReasoningMatcher(ReasoningConfig(shortlist=len(items))).fit([it.text for it in items])
    texts = [it.text for it in load_benchmark("gsm8k-train")[:40]] + [s4_text(it, 0) or it.text for it in items[:20]]
    got = m.match(texts, batch=16)
    feats = [m.scorer.features(extract_steps(it.text)) for it in items]
    n_item_steps = [len(extract_steps(it.text)) for it in items]
    for text, g in zip(texts, got, strict=True):
        steps = extract_steps(text)
        fa = m.scorer.features(steps)
        best_j, best = -1, None
        for j, fb in enumerate(feats):
            if n_item_steps[j] < 2:
                continue
            sim = m.scorer.similarity_features(fa, fb)
            if sim.total > (best.total if best else 0.0):
                best_j, best = j, sim
        if sum(s.kind != "answer" for s in steps) < 2:
            assert g.index == -1
            continue
        assert g.index == best_j and g.sim == best
    assert sum(g.index >= 0 for g in got) >= 50


def test_process_pool_gives_the_single_process_matches(gsm8k: list) -> None:
    import numpy as np

    traces = [it.text for it in gsm8k]
    texts = [it.text for it in load_benchmark("gsm8k-train")[:150]] + [s4_text(it, 1) or it.text for it in gsm8k[:50]]
    extra = np.random.default_rng(0).integers(-1, len(traces), size=(len(texts), 5))
    one = ReasoningMatcher(ReasoningConfig(n_jobs=1)).fit(traces)
    two = ReasoningMatcher(ReasoningConfig(n_jobs=2)).fit(traces)
    assert two._n_workers(len(texts), 50) == 2 and one._n_workers(len(texts), 50) == 1
    assert ReasoningMatcher()._n_workers(len(texts), 50) == 1  # auto: small inputs stay in-process
    assert two.match(texts, extra=extra, batch=50) == one.match(texts, extra=extra, batch=50) == one.match(texts, extra=extra)


def test_unguarded_script_falls_back_to_one_process(tmp_path: Path) -> None:
    """Spawned workers re-run a script that lacks the ``__main__`` guard and die; match still
    answers, in the calling process, with a warning."""
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import warnings\n"
        "from contam.scan.reasoning import ReasoningConfig, ReasoningMatcher\n"
        "m = ReasoningMatcher(ReasoningConfig(n_jobs=2)).fit(['A = <<2*3=6>>6\\nB = <<6+1=7>>7\\n#### 7', 'x <<9-4=5>>5\\ny <<5*5=25>>25\\n#### 25'])\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    r = m.match(['C = <<2*3=6>>6\\nD = <<6+1=7>>7\\n#### 7', 'z <<9-4=5>>5\\nq <<5*5=25>>25\\n#### 25'] * 2, batch=2)\n"
        "print('RESULT', [x.index for x in r], any('worker processes failed' in str(x.message) for x in w))\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "RESULT [0, 1, 0, 1] True" in done.stdout
