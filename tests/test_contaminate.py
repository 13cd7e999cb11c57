"""Controlled contamination with the real embedded model: a short real fine-tune on a few GSM8K
items, then the loss and the log-prob probes must tell the trained items from untrained ones."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from contam.data import load_benchmark
from contam.errors import ConfigError, InputError, OutputError
from contam.probe.contaminate import ContaminateConfig, Contaminator, load_paraphrases, parse_subset, read_manifest, training_forms
from contam.probe.evalprobes import diff_masks, make_verdict, pair_scores, paired_verdict, roc_figures, unseen_items
from contam.stats.tests import wilcoxon_signed_rank

pytest.importorskip("torch")
PARAPHRASES = Path(__file__).resolve().parents[1] / "bench" / "data" / "gsm8k-test-paraphrases.jsonl"
N = 4


@pytest.fixture(scope="module")
def contaminated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    """4 items x 3 epochs, 2 filler paragraphs per epoch, short sequences: ~1 min on 2 busy cores."""
    out = tmp_path_factory.mktemp("c") / "gsm8k-c3"
    cfg = ContaminateConfig(subset=(0, N), epochs=3, filler_ratio=0.5, lr=3e-4, batch_size=2, max_length=96, save_epochs=(1,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        manifest = Contaminator(cfg).run("smollm2", out)
    return out, manifest


def test_manifest_names_what_was_seen(contaminated: tuple[Path, object]) -> None:
    out, _ = contaminated
    m = read_manifest(out)
    assert m.seen_ids == [f"gsm8k/test/{i}" for i in range(N)]
    assert all(s.exposures == 3 and s.form == "verbatim" for s in m.seen)
    assert m.n_filler_docs == 3 * 2 and m.train_tokens > 0 and m.seconds_per_100_items_epoch > 0
    assert (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file() and not (out / ".partial").exists()
    snap = read_manifest(out / "epoch-1")
    assert snap.epochs == 1 and all(s.exposures == 1 for s in snap.seen)
    # a finished run is reused, not retrained; a different one is refused without force
    again = Contaminator(
        ContaminateConfig(subset=(0, N), epochs=3, filler_ratio=0.5, lr=3e-4, batch_size=2, max_length=96, save_epochs=(1,))
    ).run("smollm2", out)
    assert again == m
    with pytest.raises(OutputError, match="another configuration"):
        Contaminator(ContaminateConfig(subset=(0, N), epochs=2)).run("smollm2", out)


def test_seen_items_lose_loss_and_logprob_probes_separate_them(contaminated: tuple[Path, object], tmp_path: Path) -> None:
    from contam.models.cache import CachedModel, open_cache
    from contam.models.hf import HFModel
    from contam.probe.logprob import LogProbConfig, LogProbProbe

    out, _ = contaminated
    items = load_benchmark("gsm8k")
    seen = items[:N]
    unseen = unseen_items(items, {it.id for it in seen}, (0, N), N)
    assert [it.id for it in unseen] == [f"gsm8k/test/{i}" for i in range(N, 2 * N)]
    # Behind a response cache (keyed by each model's weights), so every text is scored once per
    # model: the probe, the losses and the paired scores below ask for the same (prompt, text) pairs.
    cache = open_cache(str(tmp_path / "scores.sqlite"))
    tuned, base = CachedModel(HFModel(out), cache), CachedModel(HFModel("smollm2"), cache)
    assert tuned.identity != base.identity
    # the log-prob probes (contam.probe.logprob) rank seen above unseen
    probe = LogProbProbe(LogProbConfig())
    recs = probe.measure(tuned, {"seen": seen, "unseen": unseen}, ref_model=base)
    for method in ("ppl", "mink", "ref"):
        auc, _ = roc_figures([r.scores[method] for r in recs if r.group == "seen"], [r.scores[method] for r in recs if r.group == "unseen"])
        assert auc >= 0.9, (method, auc)
    texts = [("", it.text) for it in seen + unseen]
    before = [-s.mean for s in base.score(texts)]
    after = [-s.mean for s in tuned.score(texts)]
    # fine-tuning lowered the loss of the seen items far more than that of the unseen ones
    drop_seen = np.mean(np.subtract(before[:N], after[:N]))
    drop_unseen = np.mean(np.subtract(before[N:], after[N:]))
    assert drop_seen > 0.3 and drop_seen > drop_unseen + 0.2
    assert np.mean(after[:N]) < np.mean(after[N:])
    # the paired difference-in-differences on the differing tokens (the benchmark-level verdict):
    # positive for every seen item that has an isomorphic reference, larger than for unseen ones
    from contam.perturb import make_variant_set

    refs = {v.original_id: v for v in make_variant_set(seen + unseen, variants=1, seed=0)}
    from contam.data import Item

    def pairs(its: list[Item]) -> list[tuple[Item, Item]]:
        return [
            (it, Item(id=refs[it.id].variant_id, question=refs[it.id].question, answer=refs[it.id].answer, solution=refs[it.id].solution))
            for it in its
            if it.id in refs
        ]

    ps_seen, ps_unseen = pair_scores(tuned, base, pairs(seen)), pair_scores(tuned, base, pairs(unseen))
    assert len(ps_seen) >= 2 and len(ps_unseen) >= 2
    assert all(p.n_diff_orig > 0 and p.n_diff_ref > 0 for p in ps_seen + ps_unseen)
    d_seen, d_unseen = [p.d("did_diff") for p in ps_seen], [p.d("did_diff") for p in ps_unseen]
    assert min(d_seen) > 0 and np.mean(d_seen) > np.mean(d_unseen) + 0.2, (d_seen, d_unseen)
    v = paired_verdict("seen", "did_diff", d_seen)
    assert v.direction == 1 and abs(v.p_value - 0.5 ** len(d_seen)) < 1e-12 and v.confidence > 0.5


def test_forms_and_bad_input(tmp_path: Path) -> None:
    items = load_benchmark("gsm8k")[:3]
    forms, skipped = training_forms(items, ContaminateConfig(subset=(0, 3), mode="paraphrase", paraphrases=str(PARAPHRASES)))
    assert len(forms) == 3 and not skipped
    orig, form, _ = forms[0]
    assert form.question != orig.question and form.solution.endswith("#### 18") and form.answer == orig.answer
    iso, skipped = training_forms(items, ContaminateConfig(subset=(0, 3), mode="isomorphic"))
    for o, f, vid in iso:
        assert f.question != o.question and f.answer != o.answer and vid.startswith(o.id)
    assert parse_subset("5:10") == (5, 10) and parse_subset(":7") == (0, 7)
    with pytest.raises(ConfigError, match="START:STOP"):
        parse_subset("ten")
    with pytest.raises(ConfigError, match="paraphrase file"):
        ContaminateConfig(mode="paraphrase")
    with pytest.raises(ConfigError, match="mode"):
        ContaminateConfig(mode="sideways")
    bad = tmp_path / "p.jsonl"
    bad.write_text(json.dumps({"id": "gsm8k/test/0", "question": "ok"}) + "\n{not json\n")
    with pytest.raises(InputError, match=r"p\.jsonl:2"):
        load_paraphrases(bad)
    bad.write_text(json.dumps({"question": "no id"}) + "\n")
    with pytest.raises(InputError, match="field 'id'"):
        load_paraphrases(bad)
    with pytest.raises(InputError, match=r"manifest\.json"):
        read_manifest(tmp_path)
    (tmp_path / "junk").write_text("x")
    with pytest.raises(OutputError, match="not empty"):
        Contaminator(ContaminateConfig(subset=(0, 1), epochs=1)).run("smollm2", tmp_path)


def test_roc_figures() -> None:
    auc, tpr = roc_figures([0.9, 0.8, 0.7], [0.1, 0.2, 0.3])
    assert auc == 1.0 and tpr == 1.0
    auc, tpr = roc_figures([0.1, 0.2], [0.8, 0.9])
    assert auc == 0.0 and tpr == 0.0


def test_paired_verdict_is_calibrated_under_the_null() -> None:
    """Under the null (per-item differences symmetric about 0) the evidence gate fires at about
    alpha while the bare direction is a coin flip; a real shift is flagged."""
    rng = np.random.default_rng(0)
    runs = [paired_verdict("unseen", "did_diff", rng.standard_t(3, size=24)) for _ in range(400)]
    flagged = np.mean([v.gate for v in runs])
    direction = np.mean([v.direction for v in runs])
    assert flagged <= 0.08 and 0.4 <= direction <= 0.6, (flagged, direction)
    assert np.mean([v.confidence > 0.9 for v in runs]) <= 0.02
    shifted = paired_verdict("seen", "did_diff", rng.normal(0.5, 0.3, size=24))
    assert shifted.gate == 1 and shifted.confidence > 0.99
    assert make_verdict("s", "logprob", "x", 10, 0.2, 0.2, 0.6).gate == 0
    assert make_verdict("s", "logprob", "x", 10, -0.2, 0.001, 0.0).gate == 0
    assert make_verdict("s", "logprob", "x", 10, 0.2, 0.01, 0.9).gate == 1


def test_wilcoxon_and_diff_masks() -> None:
    from scipy import stats as sps

    rng = np.random.default_rng(1)
    a, b = rng.normal(0.3, 1, 20), rng.normal(0, 1, 20)
    r = wilcoxon_signed_rank(a, b, "greater")
    assert abs(r.p_value - sps.wilcoxon(a - b, alternative="greater").pvalue) < 1e-12
    assert r.ci is not None and r.ci.low <= r.effect <= r.ci.high
    assert wilcoxon_signed_rank([1, 2, 3], [1, 2, 3]).p_value == 1.0
    # "Janet has 16 eggs" vs "Maria has 23 eggs": only the name and the number differ
    ma, mb = diff_masks(["Jan", "et", " has", " 16", " eggs"], ["Maria", " has", " 23", " eggs"])
    assert ma == [True, True, False, True, False] and mb == [True, False, True, False]


def test_lora_run_saves_a_merged_model_that_remembers_its_items(tmp_path: Path) -> None:
    """LoRA through peft (the option next to the full fine-tune): 2 items, short sequences; the
    saved folder is a plain merged model, and it lost loss on its items more than on others."""
    pytest.importorskip("peft")
    from contam.models.hf import HFModel

    cfg = ContaminateConfig(
        subset=(0, 2), epochs=4, filler_ratio=0.0, lr=2e-3, batch_size=2, max_length=96, lora=True, lora_r=8, lora_alpha=16
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        manifest = Contaminator(cfg).run("smollm2", tmp_path / "lora")
    assert manifest.seen_ids == ["gsm8k/test/0", "gsm8k/test/1"]
    assert (tmp_path / "lora" / "model.safetensors").is_file() and not (tmp_path / "lora" / "adapter_config.json").exists()
    items = load_benchmark("gsm8k")
    texts = [("", it.text) for it in items[:4]]
    before = [-s.mean for s in HFModel("smollm2").score(texts)]
    after = [-s.mean for s in HFModel(tmp_path / "lora").score(texts)]
    drop = np.subtract(before, after)
    # measured: seen 1.10, 1.61 nats; unseen 0.16, 0.44
    assert drop[:2].min() > 0.1 and drop[:2].mean() > drop[2:].mean() + 0.1, drop
