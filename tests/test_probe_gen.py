"""Generation probes with the real embedded model on small n, and their CLI (resume, --json, errors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contam.cli.main import main
from contam.data import load_benchmark
from contam.errors import ConfigError
from contam.probe.cdd import CDD, CDDConfig, completion_tokens, peak_share
from contam.probe.guided import Guided, GuidedConfig, GuidedResult
from contam.probe.reconstruct import Reconstruct, ReconstructConfig
from contam.probe.textsim import rouge_l, token_edit_distance
from contam.probe.tsguess import MASK, TSGuess, TSGuessConfig, choose_keyword, pos_tags


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    from contam.models import load

    return load("smollm2", cache=False)


def test_peak_share_is_normalised_and_token_level() -> None:
    assert peak_share([0, 1, 2, 10], max_length=40, alpha=0.05) == 0.75  # radius 2 tokens
    assert peak_share([0, 1, 2, 10], max_length=40, alpha=0.0) == 0.25  # real-world: exact only
    assert peak_share([], max_length=10, alpha=0.05) == 0.0
    assert CDDConfig.real_world().alpha == 0.0 and CDDConfig.real_world().xi == 0.2
    with pytest.raises(ConfigError):
        CDDConfig(n_samples=0)


def test_cdd_greedy_samples_make_a_full_peak(model) -> None:  # type: ignore[no-untyped-def]
    # Sampling at temperature 0 reproduces the greedy answer: every distance 0, peak 1, flagged.
    item = load_benchmark("gsm8k")[0]
    rec = CDD(CDDConfig(n_samples=3, temperature=0.0, max_tokens=16)).score_item(model, item)
    assert rec.distances == (0, 0, 0) and rec.peak == 1.0 and rec.contaminated
    assert rec.token_source == "model" and 0 < rec.max_length <= 16


def test_cdd_sampled_distances_are_token_edit_distances(model) -> None:  # type: ignore[no-untyped-def]
    item = load_benchmark("gsm8k")[1]
    cfg = CDDConfig(n_samples=3, max_tokens=16, seed=3)
    rec = CDD(cfg).score_item(model, item)
    prompt = [{"role": "user", "content": item.question}]
    greedy = model.generate([prompt], max_new_tokens=16, temperature=0.0)[0][0]
    samples = model.generate([prompt], max_new_tokens=16, temperature=0.8, n=3, seed=3)[0]
    g = completion_tokens(model, greedy)[0][:16]
    want = tuple(token_edit_distance(completion_tokens(model, s)[0][:16], g) for s in samples)
    assert rec.distances == want
    assert rec.peak == peak_share(list(want), max_length=rec.max_length, alpha=cfg.alpha)
    assert rec.contaminated == (rec.peak > cfg.xi)


def test_reconstruct_against_a_reference_set(model) -> None:  # type: ignore[no-untyped-def]
    items, ref = load_benchmark("gsm8k")[:1], load_benchmark("gsm8k-train")[:1]
    res = Reconstruct(ReconstructConfig(n_samples=2, max_new_tokens=16)).run(model, items, reference=ref)
    assert res.n == {"original": 1, "reference": 1}
    for r in res.items:
        assert (
            r.prefix + r.rest == load_benchmark(f"gsm8k{'-train' if r.group == 'reference' else ''}")[int(r.id.rsplit("/", 1)[1])].question
        )
        assert len(r.prefix.split()) == round(0.4 * len((r.prefix + r.rest).split()))
        assert r.max_rouge_l == pytest.approx(rouge_l(r.best, r.rest.strip()))
    assert res.rouge_test is not None and 0.0 <= res.rouge_test.p_value <= 1.0
    assert res.verbatim_test is not None


def test_reconstruct_flags_a_planted_positive(model) -> None:  # type: ignore[no-untyped-def]
    # Planted positive: a text every language model has seen (counting) is continued nearly
    # verbatim from its first 40%; a random string of the same shape is not. Greedy (one sample).
    from contam.data import Item

    counting = Item(id="count", question="1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20")
    noise = Item(id="noise", question="zq7 lup 93x fen wob 8rt qal vim 4ky dro pex 2hu gaz 71m")
    res = Reconstruct(ReconstructConfig(n_samples=1)).run(model, [counting], control=[noise])
    seen, unseen = res.items
    assert seen.rest.split()[0] == "9," and seen.best.split()[:4] == ["9,", "10,", "11,", "12,"]
    assert seen.max_rouge_l > 0.8 > 0.2 > unseen.max_rouge_l
    assert res.mean_rouge_l["original"] > res.mean_rouge_l["reference"]
    assert res.rouge_test is not None and res.rouge_test.effect == 1.0  # AUC: original above reference
    assert res.note == ""  # a clean control set: no caveat


def test_tsguess_keyword_is_a_tagged_content_word() -> None:
    assert pos_tags(["The", "farmer", "sells", "fresh", "eggs"]) == ["DT", "NN", "VBZ", "JJ", "NNS"]
    q = "The farmer sells fresh eggs at the market."
    span = choose_keyword(q, item_id="x")
    assert span is not None and q[span[0] : span[1]] in {"farmer", "eggs", "market"}  # nouns first
    assert choose_keyword(q, item_id="x") == span  # deterministic
    assert choose_keyword("Is it so?") is None


def test_tsguess_both_modes_with_the_model(model) -> None:  # type: ignore[no-untyped-def]
    mm = load_benchmark("mmlu")[:1]
    res = TSGuess(TSGuessConfig(mode="choice")).run(model, mm, reference=load_benchmark("mmlu-sociology")[:1])
    assert res.n == {"original": 1, "reference": 1} and res.test is not None
    assert res.test.effect == pytest.approx(res.exact_rate["original"] - res.exact_rate["reference"])
    rec = res.items[0]
    gold = ord(mm[0].answer) - 65
    assert rec.masked in mm[0].choices and rec.masked != mm[0].choices[gold]  # a wrong option is hidden
    assert MASK in rec.prompt and rec.masked not in rec.prompt.split("Options:")[1].split("\n\n")[0].split(": ")
    q = TSGuess(TSGuessConfig(mode="question", max_new_tokens=8)).run(model, load_benchmark("gsm8k")[:1])
    r = q.items[0]
    assert MASK in r.prompt and r.masked and 0.0 <= r.rouge_l <= 1.0
    # a non-MC item cannot run in choice mode: skipped, not an error
    s = TSGuess(TSGuessConfig(mode="choice")).run(model, load_benchmark("gsm8k")[:1])
    assert s.skipped == 1 and s.n["original"] == 0


def test_guided_vs_general(model) -> None:  # type: ignore[no-untyped-def]
    cfg = GuidedConfig.for_benchmark("gsm8k", max_new_tokens=12, n_resamples=2000, min_items=2)
    assert cfg.dataset == "GSM8K" and cfg.split == "test"
    items = load_benchmark("gsm8k")[:2]
    g = Guided(cfg)
    guided_prompt, general_prompt = g.prompts(items[0], "First")
    assert "test split of the GSM8K dataset" in guided_prompt and "GSM8K" not in general_prompt
    res = g.run(model, items)
    assert res.n == 2 and res.test is not None
    assert res.test.effect == pytest.approx(res.mean_guided - res.mean_general)
    assert res.contaminated == (res.test.p_value < 0.05 and res.mean_guided > res.mean_general)
    assert res.note == ""
    # below the default minimum of 10 items there is no verdict, whatever the p-value
    small = GuidedResult(config={"min_items": 10}, items=(), mean_guided=0.9, mean_general=0.1, n=2, test=res.test, contaminated=False)
    assert "no verdict" in small.note


def test_cli_cdd_writes_resumes_and_prints_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CONTAM_CACHE", str(tmp_path / "cache.sqlite"))
    out = tmp_path / "run"
    args = ["probe", "cdd", "--benchmark", "gsm8k", "--limit", "1", "--samples", "2", "--max-tokens", "8", "--out", str(out), "--json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["n"] == {"original": 1} and first["config"]["n_samples"] == 2
    lines = (out / "items.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["key"] == "original/gsm8k/test/0"
    assert json.loads((out / "summary.json").read_text())["mean_peak"] == first["mean_peak"]
    assert main(args) == 0  # resumed: nothing recomputed, same answer
    assert json.loads(capsys.readouterr().out)["mean_peak"] == first["mean_peak"]
    assert len((out / "items.jsonl").read_text().splitlines()) == 1
    # a larger --limit extends the same run: the finished item is kept, one more is added
    assert main([*args[:4], "--limit", "2", *args[6:]]) == 0
    capsys.readouterr()
    grown = (out / "items.jsonl").read_text().splitlines()
    assert len(grown) == 2 and grown[0] == lines[0]
    # other settings into the same folder: a clear error, exit 2
    assert main([*args[:-3], "--samples", "3", "--out", str(out)]) == 2
    assert "other settings" in capsys.readouterr().err


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "ts-guess", "--mode", "nope", "--limit", "1"]) == 2
    assert "mode" in capsys.readouterr().err
    bad = tmp_path / "c.jsonl"
    bad.write_text('{"instance_id": "a", "problem_statement": "x"}\n', encoding="utf-8")
    assert main(["probe", "swe-filepath", "--control", str(bad), "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert "c.jsonl:1: field 'patch'" in err and "Traceback" not in err


def test_cli_subsets_first_or_seeded_random() -> None:
    from contam.cli.probe_gen import _items

    first = _items("swebench-verified", 5)
    assert [x.id for x in first] == [x.id for x in load_benchmark("swebench-verified")[:5]]
    assert {x.metadata["repo"] for x in first} == {"astropy/astropy"}  # why --shuffle exists
    a, b = _items("swebench-verified", 20, 0), _items("swebench-verified", 20, 0)
    assert [x.id for x in a] == [x.id for x in b] and len({x.metadata["repo"] for x in a}) > 1
    assert [x.id for x in _items("swebench-verified", 20, 1)] != [x.id for x in a]


def test_run_items_batches_resumes_and_keeps_order(tmp_path: Path) -> None:
    from dataclasses import dataclass

    from contam.outputs import JsonlCheckpoint
    from contam.probe.itemloop import run_items
    from contam.records import Record

    @dataclass(frozen=True)
    class Rec(Record):
        key: str
        v: int

    calls: list[list[int]] = []

    def batch(chunk: list[int]) -> list[Rec]:
        calls.append(list(chunk))
        return [Rec(f"k{x}", x * x) for x in chunk]

    path = tmp_path / "ck.jsonl"
    with JsonlCheckpoint(path, key="key") as ck:
        ck.write(Rec("k1", 1).to_dict())
        ck.write(Rec("k3", 9).to_dict())
    with JsonlCheckpoint(path, key="key") as ck:
        out = run_items([0, 1, 2, 3, 4], lambda x: batch([x])[0], Rec, key=lambda x: f"k{x}", checkpoint=ck, batch=batch, batch_size=2)
    assert [r.v for r in out] == [0, 1, 4, 9, 16]
    assert calls == [[0, 2], [4]]  # only the missing items, two at a time
    assert len(path.read_text().splitlines()) == 5


def test_batched_scoring_equals_one_by_one(model) -> None:  # type: ignore[no-untyped-def]
    items = load_benchmark("gsm8k")[2:4]
    probe = TSGuess(TSGuessConfig(mode="question", max_new_tokens=8))
    assert probe.score_batch(model, items) == [probe.score_item(model, it) for it in items]
    cdd = CDD(CDDConfig(n_samples=2, max_tokens=8, seed=5))
    assert cdd.score_batch(model, items) == [cdd.score_item(model, it) for it in items]
    # Both items go out in one call. (The llama.cpp backend can answer a prompt differently when
    # the very same prompt was its previous call, as it reuses the cached prefix; this order never
    # repeats a prompt back to back.)
    rec = Reconstruct(ReconstructConfig(n_samples=2, seed=5, max_new_tokens=12))
    pair = items
    assert rec.score_batch(model, pair) == [rec.score_item(model, it) for it in pair]


@pytest.mark.slow
def test_cdd_with_the_paper_defaults(model) -> None:  # type: ignore[no-untyped-def]
    cfg = CDDConfig()
    assert (cfg.n_samples, cfg.temperature, cfg.max_tokens, cfg.alpha, cfg.xi) == (50, 0.8, 100, 0.05, 0.01)
    res = CDD(cfg).run(model, load_benchmark("humaneval")[:2])
    for r in res.items:
        assert len(r.distances) == 50 and 0 < r.max_length <= 100
        assert all(0 <= d <= r.max_length for d in r.distances)
    assert 0.0 <= res.flagged["original"] <= 1.0


def test_reconstruct_against_variants_says_a_clean_control_is_stronger(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    # A numbers-changed variant keeps its item's opening words: a memorised item reconstructs it too
    # (bench/evasive.py, 10 verbatim exposures: seen vs unseen AUROC .91, seen vs variants p .45).
    from contam.cli.main import main

    assert main(["perturb", "-b", "gsm8k", "--limit", "1", "--out", str(tmp_path / "v")]) == 0
    capsys.readouterr()
    assert main(["probe", "reconstruct", "-b", "gsm8k", "--variants", str(tmp_path / "v"), "--limit", "1", "--samples", "1"]) == 0
    assert "a clean --control set is the stronger comparison" in capsys.readouterr().err
    assert main(["probe", "reconstruct", "-b", "gsm8k", "--control", "gsm8k-train", "--limit", "1", "--samples", "1"]) == 0
    assert "--control set is the stronger" not in capsys.readouterr().err
