"""One options record per scan (:class:`ScanOptions`): its constraints, and the shapes it writes
into run folders, which must stay those of earlier versions so their runs still resume."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import asdict

import pytest

import contam.scan.job as job
from contam.constraints import Constraint
from contam.data import load_benchmark, load_benchmarks
from contam.data.webtext import build_demo_corpus
from contam.errors import ConfigError
from contam.scan.hierarchy import Thresholds
from contam.scan.job import _run_key, run_scan
from contam.scan.ngram import NGramConfig
from contam.scan.options import ScanOptions, check_levels, load_thresholds, parse_levels
from contam.scan.shard_manifest import index_hash
from contam.scan.shards import _fingerprint

_CASES = list(ScanOptions._constraints)


def test_the_defaults_are_the_commands_defaults() -> None:
    o = ScanOptions()
    assert o.config == NGramConfig() == NGramConfig.gpt3()
    assert (o.text_field, o.id_field, o.skip_bad, o.keep_all, o.levels, o.workers) == ("text", None, False, False, ("token",), 0)
    assert (o.thresholds, o.embedder, o.on_bad_shard, o.clean, o.mask, o.engine, o.ray_address) == (
        None, "minilm", "fail", None, "[CONTAMINATED]", "local", "auto",
    )  # fmt: skip


@pytest.mark.parametrize("name", _CASES)
def test_a_bad_value_is_one_line_config_error(name: str) -> None:
    constraint: Constraint = ScanOptions._constraints[name]
    bad = constraint.bad_value()
    assert not constraint.accepts(bad)
    with pytest.raises(ConfigError) as e:
        dataclasses.replace(ScanOptions(), **{name: bad})
    assert "\n" not in str(e.value) and repr(bad) in str(e.value)


def test_the_messages_are_the_commands_own() -> None:
    with pytest.raises(ConfigError, match=r"^--engine 'spark': choose local or ray$"):
        ScanOptions(engine="spark")
    with pytest.raises(ConfigError, match=r"^--on-bad-shard 'maybe': choose fail or skip$"):
        ScanOptions(on_bad_shard="maybe")
    with pytest.raises(ConfigError, match=r"^unknown mode 'shred': choose drop or mask$"):
        ScanOptions(clean="shred")
    with pytest.raises(ConfigError, match=r"^ScanOptions\.workers \(--workers\): -1 is not an integer in \[0, inf\)$"):
        ScanOptions(workers=-1)
    with pytest.raises(ConfigError, match=r"unknown level\(s\) \['lexical'\]"):
        ScanOptions(levels=("lexical",))
    with pytest.raises(ConfigError, match="unknown level"):
        ScanOptions(levels=())


def test_build_takes_the_fields_as_keywords() -> None:
    base = ScanOptions(workers=2, levels=["token", "semantic"])  # type: ignore[arg-type]  # a list from a caller
    assert base.levels == ("token", "semantic")
    assert ScanOptions.build(base) is base
    assert ScanOptions.build(base, keep_all=True) == dataclasses.replace(base, keep_all=True)
    assert ScanOptions.build(None, config=None, skip_bad=True) == ScanOptions(skip_bad=True)
    with pytest.raises(TypeError):
        ScanOptions.build(None, threshold=0.3)


def test_resolved_is_what_runs() -> None:
    o = ScanOptions(levels=("all", "token"), thresholds=Thresholds(token=1.5))
    r = o.resolved()
    assert r.levels == check_levels(("all",)) == ("token", "semantic", "reasoning")
    assert r.config.threshold == 1.0 and o.config.threshold == 0.5  # clamped into (0, 1]; the record keeps what was given
    assert r.resolved() == r and not o.token_only and ScanOptions(levels=("token", "token")).token_only
    assert parse_levels(" token, ,semantic ") == ("token", "semantic")


def test_load_thresholds_picks_the_benchmark(tmp_path) -> None:
    path = tmp_path / "thresholds.json"
    path.write_text(json.dumps({"gsm8k": {"token": 0.4, "semantic": 0.9}, "mmlu": {"token": 0.7}}))
    assert load_thresholds(None, ["gsm8k"]) is None and load_thresholds("", ["gsm8k"]) is None
    assert load_thresholds(path, ["gsm8k"]).token == 0.4  # type: ignore[union-attr]
    assert load_thresholds(str(path), ["data/mmlu.jsonl"], token=0.3).token == 0.3  # type: ignore[union-attr]


# -- the shapes earlier versions wrote: spelled out here as their code spelled them ----------------


def _old_run_key(corpus, items, config, levels, text_field, id_field, skip_bad, keep_all, thresholds, embedder):
    """The run key as ``_run_key`` built it before the options record (``levels`` already checked)."""
    st = corpus.stat()
    digest = hashlib.sha256("\n".join(f"{i.id}\t{len(i.question)}\t{len(i.answer_text)}" for i in items).encode()).hexdigest()
    rest = (text_field, id_field, skip_bad, keep_all, thresholds.to_dict() if thresholds is not None else None,
            embedder if levels != ("token",) else None)  # fmt: skip
    return {
        "corpus": str(corpus.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "items": digest,
        "config": json.loads(json.dumps(asdict(config))), "levels": list(levels), "options": json.loads(json.dumps(rest)),
    }  # fmt: skip


def test_the_run_key_is_the_one_earlier_versions_wrote(tmp_path) -> None:
    corpus = tmp_path / "c.jsonl"
    build_demo_corpus(corpus, seed=1)
    items = load_benchmark("gsm8k")[:50]
    config = NGramConfig.llama2(threshold=0.4, batch_bytes=1 << 16)
    plain = ScanOptions(config=config, workers=3, keep_all=True, id_field="doc")
    assert _run_key(corpus, items, plain) == _old_run_key(corpus, items, config, ("token",), "text", "doc", False, True, None, "minilm")
    th = Thresholds(token=0.3, semantic=0.8)
    cascade = ScanOptions(levels=("all",), thresholds=th, embedder="st:model", skip_bad=True)
    old = _old_run_key(
        corpus, items, NGramConfig(threshold=0.3), ("token", "semantic", "reasoning"), "text", None, True, False, th, "st:model"
    )
    assert _run_key(corpus, items, cascade) == old


def test_a_checkpoint_written_before_the_options_record_resumes(tmp_path, monkeypatch) -> None:
    """A run cut short, whose ``.scan-state.json`` key is spelled as earlier versions spelled it,
    resumes from its checkpoint and ends with the flags of an uninterrupted scan."""
    corpus = tmp_path / "c.jsonl"
    build_demo_corpus(corpus, seed=4)
    items = load_benchmarks(["gsm8k", "humaneval"])
    config = NGramConfig(batch_bytes=24 << 10)
    calls = {"n": 0}
    real = job.collect_chunk

    def cut_short(*args, **kw):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt  # as a Ctrl-C: the checkpoint stays
        return real(*args, **kw)

    monkeypatch.setattr(job, "collect_chunk", cut_short)
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_scan(corpus, items, out, config=config, workers=1, checkpoint_s=0)
    monkeypatch.setattr(job, "collect_chunk", real)
    state_path = out / ".scan-state.json"
    state = json.loads(state_path.read_text(encoding="utf-8"))
    assert state["next_line"] > 1
    state["key"] = _old_run_key(corpus, items, config, ("token",), "text", None, False, False, None, "minilm")
    state_path.write_text(json.dumps(state, indent=2), encoding="utf-8")
    resumed = run_scan(corpus, items, out, ScanOptions(config=config, workers=1))
    assert resumed["resumed_at_line"] == state["next_line"] and resumed["documents"] == 200
    fresh = run_scan(corpus, items, tmp_path / "fresh", config=config, workers=1)
    assert (out / "flags.jsonl").read_bytes() == (tmp_path / "fresh" / "flags.jsonl").read_bytes()
    assert (resumed["flagged"], resumed["flags"], resumed["by_part"]) == (fresh["flagged"], fresh["flags"], fresh["by_part"])


def test_the_manifest_settings_are_the_ones_earlier_versions_wrote() -> None:
    th = Thresholds(token=0.45)
    config = NGramConfig.gpt3(stopgram_df=0.05)
    o = ScanOptions(config=config, keep_all=True, levels=("all",), workers=4, thresholds=th, on_bad_shard="skip", clean="mask", mask="XX")
    # One-file scan: the settings as given, in the order `contam scan` recorded them, less workers.
    assert list(o.manifest_settings().items()) == [
        ("config", asdict(config)), ("text_field", "text"), ("id_field", None), ("skip_bad", False), ("keep_all", True),
        ("levels", ["all"]), ("thresholds", th.to_dict()), ("embedder", "minilm"),
    ]  # fmt: skip
    # Sharded run: the resolved settings of every shard, then the thresholds.
    resolved = dataclasses.replace(config, threshold=0.45)
    assert list(o.shard_settings().items()) == [
        ("config", asdict(resolved)), ("text_field", "text"), ("id_field", None), ("skip_bad", False), ("keep_all", True),
        ("levels", ["token", "semantic", "reasoning"]), ("embedder", "minilm"), ("on_bad_shard", "skip"), ("clean", "mask"),
        ("mask", "XX"), ("thresholds", th.to_dict()),
    ]  # fmt: skip


def test_the_shard_fingerprint_is_the_one_earlier_versions_wrote() -> None:
    items = load_benchmark("gsm8k")[:20]
    th = Thresholds(token=0.6)
    o = ScanOptions(skip_bad=True, workers=2, thresholds=th, clean="drop").resolved()
    shard_options = {"config": asdict(o.config), "text_field": "text", "id_field": None, "skip_bad": True, "keep_all": False,
                     "levels": ["token"], "embedder": "minilm", "on_bad_shard": "fail", "clean": "drop", "mask": "[CONTAMINATED]"}  # fmt: skip
    raw = json.dumps([index_hash(items, o.config), shard_options, th.to_dict()], sort_keys=True, default=str)
    assert _fingerprint(items, o) == hashlib.sha256(raw.encode()).hexdigest()
    assert _fingerprint(items, dataclasses.replace(o, workers=7, engine="ray")) == _fingerprint(items, o)  # how it ran is no part of it
