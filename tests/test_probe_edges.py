"""Regression tests of issue 17, item 1: the model-side probes on small and messy inputs.

Each test reproduces one defect report (the repro the issue gives, or the smallest real case)
and was seen failing on the code before the fix.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from contam.cli.main import main
from contam.data import load_benchmark
from contam.errors import ConfigError
from contam.models.base import Completion
from contam.probe.cdd import CDD, CDDConfig
from contam.probe.cliff import performance_cliff
from contam.probe.guided import Guided, GuidedConfig, GuidedItem
from contam.probe.patches import parse_patch
from contam.probe.reconstruct import ReconstructConfig
from contam.probe.swe import PrefixCompletion, SweConfig, extract_code, predicted_path
from contam.probe.tsguess import TSGuessConfig
from contam.probe.zerocot import ItemMeasure, ZeroCoTConfig, ZeroCoTPair, ZeroCoTProbe
from contam.stats.tests import paired_bootstrap, paired_permutation


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    from contam.models import load

    return load("smollm2", cache=False)


# ----------------------------------------------------------------- swe.predicted_path
@pytest.mark.parametrize(
    "answer",
    [
        "In Django 3.2 the bug is in django/db/models/base.py",
        "Since v4.0 the bug is in django/db/models/base.py",
        "The model layer, i.e. django/db/models/base.py",
        "A core file, e.g. django/db/models/base.py, must change",
        "See https://github.com/django/django/blob/main/django/db/models/base.py#L10",
        "Docs at https://docs.djangoproject.com/en/3.2/ref/models/ say: edit django/db/models/base.py",
    ],
)
def test_predicted_path_skips_versions_abbreviations_and_urls(answer: str) -> None:
    assert predicted_path(answer, "django/django") == "django/db/models/base.py"


def test_predicted_path_prefers_known_files_and_says_which_rule() -> None:
    from contam.probe.swe import choose_path

    known = frozenset({"django/db/models/base.py", "django/db/models/query.py"})
    c = choose_path("Not django/utils/x.py but django/db/models/query.py", "django/django", known)
    assert (c.path, c.rule) == ("django/db/models/query.py", "known")
    assert c.candidates == ("django/utils/x.py", "django/db/models/query.py")
    assert choose_path("It is in base.py", "django/django", known) == choose_path("base.py", "django/django", known)
    assert choose_path("It is in base.py", "django/django", known).rule == "known-suffix"
    assert choose_path("In 3.2 see django/db/models/base.py", "django/django").rule == "extension"
    assert choose_path("the django/db/models package", "django/django").rule == "first"
    assert choose_path("no path, i.e. nothing", "django/django").rule == ""
    # a repository-name prefix that is part of the real path is kept when the path is known
    assert predicted_path("astropy/io/fits/card.py", "astropy/astropy", {"astropy/io/fits/card.py"}) == "astropy/io/fits/card.py"


# ----------------------------------------------------------------- performance cliff
def test_cliff_gives_no_verdict_on_two_items() -> None:
    r = performance_cliff([1, 1], [[0] * 5, [0] * 5])
    assert not r.flagged
    assert r.test.p_value >= 0.25  # the exact sign-flip floor at n = 2
    assert r.calibration.confidence < 0.52  # p = 0.25: a Bayes factor of 1.06, next to no evidence (was 1.0)
    assert "no verdict" in r.note and "2 items" in r.note


def test_cliff_guard_is_the_exact_sign_flip_floor() -> None:
    o = [1] * 12
    v = [[0, 0, 0, 0, 1]] * 12  # zero variance of the differences: the t-test says p = 0
    r = performance_cliff(o, v)
    assert r.test.p_value == pytest.approx(paired_permutation(o, [0.2] * 12).p_value)
    assert r.test.details["p_ttest"] == 0.0 and r.flagged and r.note == ""
    big = performance_cliff([1] * 20, [[0, 0, 0, 0, 1]] * 20)  # 20 items: the floor is 2^-20, not 0
    assert big.test.p_value == 2.0**-20 and big.calibration.confidence < 1.0


# ----------------------------------------------------------------- guided
def _guided_records(n: int) -> list[GuidedItem]:
    return [GuidedItem(f"original/{i}", str(i), "a", "b", "g", "n", 0.9 - 0.01 * i, 0.1) for i in range(n)]


def test_guided_p_never_below_the_exact_sign_flip_minimum() -> None:
    res = Guided(GuidedConfig()).analyze(_guided_records(10))
    assert res.test is not None
    assert res.test.p_value >= 2.0**-10
    assert res.test.details["p_bootstrap"] < 2.0**-10  # what the bootstrap alone said
    assert res.contaminated and res.test.method == "paired bootstrap"


# ----------------------------------------------------------------- zero-CoT
def _measure(v: float, i: int) -> ItemMeasure:
    return ItemMeasure(str(i), "1", "", None, 0, "", None, 0, 0, first_token_prob=v, all_token_prob=v, n_answer_tokens=1)


def test_zerocot_drops_pairs_that_are_zero_on_both_sides() -> None:
    rng = np.random.default_rng(3)
    o = list(np.round(rng.uniform(0.05, 0.6, 14), 3)) + [0.0] * 6
    r = list(np.round(rng.uniform(0.0, 0.4, 14), 3)) + [0.0] * 6
    pairs = [ZeroCoTPair(str(i), _measure(o[i], i), _measure(r[i], i)) for i in range(20)]
    cfg = ZeroCoTConfig(n_resamples=4000)
    gap = ZeroCoTProbe(cfg).analyze(pairs).metric("all_token_prob")
    assert gap is not None and gap.n == 14 and gap.test.details["n_both_zero_dropped"] == 6
    boot = paired_bootstrap(o[:14], r[:14], "greater", n_resamples=4000, seed=0)
    perm = paired_permutation(o[:14], r[:14], "greater", n_resamples=4000, seed=0)
    assert gap.test.p_value == pytest.approx(max(boot.p_value, perm.p_value))
    assert gap.original == pytest.approx(np.mean(o[:14]))


# ----------------------------------------------------------------- CDD cleaning
def test_clean_output_like_the_reference() -> None:
    from contam.probe.cdd import clean_output

    assert clean_output("  x = 1\n\n\n\nmore") == "x = 1"
    assert clean_output("answer 42\n```\nnoise") == "answer 42"
    assert clean_output("\n\nthe answer is 4.  \n") == "the answer is 4."
    # deviation: a leading fence keeps its content (the reference would keep nothing)
    assert clean_output("```python\nprint(1)\n```\nbye") == "print(1)"


def test_cdd_whitespace_differences_do_not_break_the_peak(model) -> None:  # type: ignore[no-untyped-def]
    cfg = CDDConfig.real_world(n_samples=4)
    item = load_benchmark("gsm8k")[0]
    greedy = Completion("The answer is 18.\n")
    samples = [
        Completion("The answer is 18."),
        Completion("  The answer is 18.\n\n\n\nNote: eggs"),
        Completion("The answer is 18.\n```"),
        Completion("The answer is 20."),
    ]
    rec = CDD(cfg)._record(model, item, "original", greedy, samples)
    assert rec.distances[:3] == (0, 0, 0) and rec.distances[3] > 0
    assert rec.peak == 0.75 and rec.contaminated


# ----------------------------------------------------------------- one code normaliser
def test_prefix_completion_counts_a_fenced_continuation() -> None:
    item = load_benchmark("swebench-verified")[0]
    fn = parse_patch(item.solution).defs[0]
    pc = PrefixCompletion(SweConfig())
    _, rest = pc.split(fn)
    body = "\n".join(rest)
    for answer in (body, f"```python\n{body}\n```", f"{body}\n```\nThat is the rest.", f"Here it is:\n```\n{body}\n```"):
        rec = pc.finish(item, fn, "k", answer)
        assert rec.hit, answer
        assert extract_code(answer).strip() == body.strip()


# ----------------------------------------------------------------- bad settings: ConfigError, exit 2
@pytest.mark.parametrize(
    "make",
    [
        lambda: CDDConfig(n_samples=0),
        lambda: CDDConfig(alpha=2.0),
        lambda: ReconstructConfig(n_samples=0),
        lambda: ReconstructConfig(part="nope"),
        lambda: TSGuessConfig(mode="nope"),
        lambda: GuidedConfig(split_low=0.9, split_high=0.1),
    ],
)
def test_bad_probe_settings_are_config_errors(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError):
        make()


def test_cli_cdd_samples_zero_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "cdd", "--samples", "0", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert "n_samples" in err or "samples" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_guarded_p_is_exact_at_tiny_n() -> None:
    # sanity of the floor the guards use: 2 positive pairs can never give p < 1/4
    assert paired_permutation([0.9, 0.8], [0.1, 0.2]).p_value == 0.25
    assert math.isclose(paired_permutation([1.0] * 10, [0.0] * 10).p_value, 2.0**-10, rel_tol=1e-9)


# ----------------------------------------------------------------- Min-K% on a model without BOS
def test_mink_skips_the_first_token_on_a_model_without_bos(model) -> None:  # type: ignore[no-untyped-def]
    from contam.probe.logprob import LogProbConfig, LogProbProbe, adds_bos, min_k_prob

    assert adds_bos(model) is False  # SmolLM2 has no BOS: the backend scores after <|im_start|>
    items = load_benchmark("gsm8k")[:3]
    ts = model.score([("", it.text) for it in items])
    assert all(t.logprobs[0] < -5 for t in ts)  # the first text token, out of context: about -10 nats
    auto = LogProbProbe(LogProbConfig()).measure(model, {"benchmark": items})
    keep = LogProbProbe(LogProbConfig(first_token="keep")).measure(model, {"benchmark": items})
    for a, k, t in zip(auto, keep, ts, strict=True):
        assert a.scores["mink"] == pytest.approx(min_k_prob(t.logprobs[1:], 0.2))  # the reference code's input_ids[1:]
        assert k.scores["mink"] == pytest.approx(min_k_prob(t.logprobs, 0.2))
        assert a.n_tokens == k.n_tokens - 1
    with pytest.raises(ConfigError):
        LogProbConfig(first_token="sometimes")


# ----------------------------------------------------------------- item 4: the zerocot training template
def test_zerocot_template_is_the_probe_prompt_with_the_answer(model) -> None:  # type: ignore[no-untyped-def]
    from contam.probe.contaminate import ContaminateConfig, render
    from contam.probe.zerocot import ZeroCoTConfig, ZeroCoTProbe

    item = load_benchmark("gsm8k")[0]
    doc = render(item, "zerocot", model)
    probe_prompt = ZeroCoTProbe(ZeroCoTConfig()).scoring_prompt(model, item.question, "prefill")
    assert doc == probe_prompt + "18} \\]"  # exactly what the probe forces, then the memorised answer
    assert ContaminateConfig(template="zerocot").template == "zerocot"
    with pytest.raises(ConfigError):
        ContaminateConfig(template="nope")
