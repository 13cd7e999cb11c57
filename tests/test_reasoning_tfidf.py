"""The level-3 shortlist's TF-IDF (``contam.scan.reasoning.tfidf``) equals scikit-learn's
``TfidfVectorizer(analyzer=identity, sublinear_tf=True)`` on real traces, and a scan that only
reads the reasoning level no longer imports scikit-learn."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np

from contam.data import load_benchmark
from contam.scan.reasoning.scorer import ReasoningConfig, features_and_tokens
from contam.scan.reasoning.steps import extract_steps
from contam.scan.reasoning.tfidf import StepTfidf


def _tokens(texts: list[str]) -> list[list[str]]:
    cfg = ReasoningConfig()
    return [features_and_tokens(extract_steps(t), cfg)[1] for t in texts]


def _identity(toks: list[str]) -> list[str]:
    return toks


def test_equals_scikit_learn_on_gsm8k_traces() -> None:
    from sklearn.feature_extraction.text import TfidfVectorizer

    bench = _tokens([it.text for it in load_benchmark("gsm8k")[:400]])
    # Candidates: train traces (unknown tokens to drop), one empty list, one of unknown tokens only.
    cands = [*_tokens([it.text for it in load_benchmark("gsm8k-train")[:300]]), [], ["no-such-token"]]
    ours, ref = StepTfidf(), TfidfVectorizer(analyzer=_identity, sublinear_tf=True, norm="l2")  # pyright: ignore[reportArgumentType]
    # scikit-learn's returns are unannotated.
    m_ref: Any = ref.fit_transform(bench)
    m_ours = ours.fit_transform(bench)
    assert list(ours.vocabulary) == list(ref.get_feature_names_out())
    np.testing.assert_allclose(ours.idf, ref.idf_, rtol=1e-15)
    np.testing.assert_allclose(m_ours.toarray(), m_ref.toarray(), rtol=0, atol=1e-15)
    q_ref: Any = ref.transform(cands)
    q_ours = ours.transform(cands)
    np.testing.assert_allclose(q_ours.toarray(), q_ref.toarray(), rtol=0, atol=1e-15)
    assert not q_ours.toarray()[-2:].any()
    # What the shortlist reads: each candidate's similarities to every benchmark trace and their order.
    s_ours, s_ref = (q_ours @ m_ours.T).toarray(), (q_ref @ m_ref.T).toarray()
    np.testing.assert_allclose(s_ours, s_ref, rtol=0, atol=1e-12)
    assert (np.argsort(-s_ours, axis=1, kind="stable")[:, :10] == np.argsort(-s_ref, axis=1, kind="stable")[:, :10]).mean() > 0.999


def test_reasoning_fit_and_match_import_no_scikit_learn() -> None:
    code = (
        "import sys\n"
        "from contam.data import load_benchmark\n"
        "from contam.scan.reasoning import ReasoningMatcher\n"
        "m = ReasoningMatcher().fit([it.text for it in load_benchmark('gsm8k')[:50]])\n"
        "m.match([it.text for it in load_benchmark('gsm8k-train')[:20]])\n"
        "print('sklearn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
