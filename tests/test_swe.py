"""SWE-bench diagnostics: parsing of answers, the control-set format, the comparison, and real runs
of the embedded model on a few shipped SWE-bench Verified instances."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contam.data import load_benchmark
from contam.errors import InputError
from contam.outputs import JsonlCheckpoint
from contam.probe.patches import mentions_path, parse_patch
from contam.probe.swe import (
    FilePath,
    FuncRepro,
    PrefixCompletion,
    SweConfig,
    SweItem,
    compare,
    extract_code,
    lines_in_order,
    load_instances,
    predicted_path,
    starts_with_lines,
    summarize,
)
from contam.probe.textsim import ngram_overlap
from contam.stats.power import mde_unpaired
from contam.stats.tests import two_proportion_ztest


@pytest.fixture(scope="module")
def model():  # type: ignore[no-untyped-def]
    from contam.models import load

    return load("smollm2", cache=False)


@pytest.fixture(scope="module")
def verified() -> list:  # type: ignore[type-arg]
    return load_benchmark("swebench-verified")


def test_predicted_path_normalisation() -> None:
    assert predicted_path("astropy/modeling/separable.py") == "astropy/modeling/separable.py"
    assert predicted_path("The file is `b/src/x.py`.") == "src/x.py"
    assert predicted_path("astropy/astropy/io/fits/card.py", "astropy/astropy") == "io/fits/card.py"
    assert predicted_path("django/db/models/base.py", "django/django") == "django/db/models/base.py"
    assert predicted_path("no path here") == ""


def test_code_extraction_and_line_matching() -> None:
    assert extract_code("Here:\n```python\ndef f():\n    return 1\n```\nDone") == "def f():\n    return 1\n"
    assert extract_code("def g(): pass") == "def g(): pass"
    gold = ["    def f(self):", "", "        return 2"]
    assert lines_in_order(gold, "def f(self):\n    x = 1\n    return 2")
    assert not lines_in_order(gold, "return 2\ndef f(self):")
    assert starts_with_lines(["a = 1", "b = 2"], "\n  a = 1\nb = 2\nc = 3")
    assert not starts_with_lines(["a = 1", "b = 2"], "a = 1\nc = 3")


def _write(tmp: Path, rows: list[dict]) -> Path:  # type: ignore[type-arg]
    p = tmp / "control.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def test_control_set_format(tmp_path: Path, verified: list) -> None:  # type: ignore[type-arg]
    good = {"instance_id": "me__tool-1", "repo": "me/tool", "problem_statement": "crash", "patch": verified[0].solution}
    items = load_instances(_write(tmp_path, [good]))
    assert items[0].id == "me__tool-1" and items[0].metadata["repo"] == "me/tool"
    with pytest.raises(InputError, match=r"control\.jsonl:2: field 'problem_statement'"):
        load_instances(_write(tmp_path, [good, {**good, "instance_id": "x", "problem_statement": ""}]))
    with pytest.raises(InputError, match=r"control\.jsonl:1: field 'patch': .*unified diff"):
        load_instances(_write(tmp_path, [{**good, "patch": "not a diff"}]))
    with pytest.raises(InputError, match=r":2: field 'instance_id': duplicate"):
        load_instances(_write(tmp_path, [good, good]))


def _result(task: str, hits: int, n: int):  # type: ignore[no-untyped-def]
    recs = [SweItem(f"{task}/i{i}", f"i{i}", task, "r", "t", "", i < hits, float(i < hits)) for i in range(n)]
    return summarize(task, {}, recs)


def test_compare_uses_the_two_proportion_test_and_the_mde() -> None:
    bench, ctrl = _result("swe-filepath", 60, 100), _result("swe-filepath", 20, 50)
    c = compare(bench, ctrl)
    ref = two_proportion_ztest(60, 100, 20, 50, alternative="greater")
    assert c.gap == pytest.approx(0.2)
    assert c.test.p_value == pytest.approx(ref.p_value)
    assert c.mde == pytest.approx(mde_unpaired(2 * 100 * 50 / 150, baseline=0.4, two_sided=False))
    assert c.benchmark_rate == 0.6 and c.control_rate == 0.4
    with pytest.raises(InputError):
        compare(bench, _result("swe-filepath", 0, 0))


def test_filepath_on_real_instances(model, verified: list, tmp_path: Path) -> None:  # type: ignore[no-untyped-def,type-arg]
    items = verified[:2]
    ck_path = tmp_path / "items.jsonl"
    with JsonlCheckpoint(ck_path, key="key") as ck:
        res = FilePath(SweConfig(max_issue_chars=300)).run(model, items, checkpoint=ck)
    assert res.n == 2 and 0.0 <= res.rate <= 1.0
    for it, rec in zip(items, res.items, strict=True):
        gold = parse_patch(it.solution).files
        assert rec.target == " ".join(gold)
        assert rec.hit == (predicted_path(rec.answer, it.metadata["repo"]) in gold)
        assert rec.mentioned == any(mentions_path(it.question, f) for f in gold)
    assert res.n_filtered == sum(not r.mentioned for r in res.items)
    # resume: everything is read back from the checkpoint, identical
    with JsonlCheckpoint(ck_path, key="key") as ck:
        again = FilePath(SweConfig(max_issue_chars=300)).run(model, items, checkpoint=ck)
    assert again.items == res.items
    assert len(ck_path.read_text().splitlines()) == 2


def test_funcrepro_and_prefix_on_a_real_instance(model, verified: list) -> None:  # type: ignore[no-untyped-def,type-arg]
    item = verified[0]  # astropy__astropy-12907: _cstack
    fr = FuncRepro(SweConfig(max_issue_chars=600, max_new_tokens=32)).run(model, [item])
    rec = fr.items[0]
    assert rec.target == "astropy/modeling/separable.py::_cstack"
    assert 0.0 <= rec.score <= 1.0 and 0.0 <= rec.rouge_l <= 1.0
    pc = PrefixCompletion(SweConfig(max_new_tokens=24))
    fn = parse_patch(item.solution).defs[0]
    prefix, rest = pc.split(fn)
    assert prefix + rest == list(fn.first_block())[: len(prefix) + len(rest)]
    res = pc.run(model, [item])
    r = res.items[0]
    assert r.hit == starts_with_lines(rest, r.answer)
    assert res.n == 1 and res.hits == int(r.hit) and res.rate == float(r.hit)
    assert r.score == pytest.approx(ngram_overlap(r.answer, "\n".join(rest), n=5))
    # Planted positives: an answer that reproduces the gold text is a verbatim hit with full
    # overlap, and the run's rate counts it; the model's own answer above is scored the same way.
    key = f"{item.id}::{fn.path}::{fn.qualname}"
    planted = pc.finish(item, fn, key, "\n".join(rest) + "\n    # and more\n")
    assert planted.hit and planted.score == 1.0
    missed = pc.finish(item, fn, key, "pass\n")
    assert not missed.hit and missed.score == 0.0
    both = summarize("swe-prefix", {}, [planted, missed])
    assert (both.n, both.hits, both.rate) == (2, 1, 0.5)
    frepro = FuncRepro(SweConfig())
    gold = frepro.finish(item, fn, key, "```python\n" + "\n".join(fn.post_lines) + "\n```")
    assert gold.hit and gold.score == 1.0 and gold.rouge_l == pytest.approx(1.0)
    assert not frepro.finish(item, fn, key, "```python\ndef f():\n    return 1\n```").hit


def test_cli_filepath_with_a_control_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from contam.cli.main import main

    monkeypatch.setenv("CONTAM_CACHE", str(tmp_path / "cache.sqlite"))
    verified_ids = {x.id for x in load_benchmark("swebench-verified")}
    lite_only = next(x for x in load_benchmark("swebench-lite") if x.id not in verified_ids)
    row = {
        "instance_id": lite_only.id,
        "repo": lite_only.metadata["repo"],
        "problem_statement": lite_only.question,
        "patch": lite_only.solution,
    }
    control = _write(tmp_path, [row])
    out = tmp_path / "fp"
    args = ["probe", "swe-filepath", "--limit", "1", "--max-issue-chars", "300", "--control", str(control), "--out", str(out), "--json"]
    assert main(args) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["n"] == 1 and s["control"]["n"] == 1
    cmp = s["comparison"]
    assert cmp["gap"] == pytest.approx(s["rate"] - s["control"]["rate"])
    assert cmp["metric"] == "accuracy"
    mde = mde_unpaired(1.0, baseline=s["control"]["rate"], two_sided=False)
    assert (cmp["mde"] is None and mde != mde) or cmp["mde"] == pytest.approx(mde)
    assert len((out / "control_items.jsonl").read_text().splitlines()) == 1
    assert json.loads((out / "summary.json").read_text())["comparison"] == cmp
