"""The data layer on the real shipped benchmarks and on bad input."""

from __future__ import annotations

import gzip
import json

import pytest

from contam.data import BENCHMARKS, FieldMap, load_benchmark, load_items, read_documents
from contam.data.loaders import BadInputStats
from contam.errors import ConfigError, InputError
from contam.outputs import JsonlCheckpoint, atomic_write


def test_builtin_benchmarks_have_documented_counts() -> None:
    for name, info in BENCHMARKS.items():
        items = load_benchmark(name)
        assert len(items) == info.records, name
        assert len({i.id for i in items}) == len(items)


def test_gsm8k_fields() -> None:
    item = load_benchmark("gsm8k")[0]
    assert item.question.startswith("Janet’s ducks lay 16 eggs")
    assert item.answer == "18"
    assert "<<" in item.solution and item.solution.rstrip().endswith("#### 18")


def test_mmlu_answer_text_is_gold_option() -> None:
    item = load_benchmark("mmlu-sociology")[0]
    assert item.answer == "C" and len(item.choices) == 4
    assert item.answer_text == item.choices[2]


def test_unknown_benchmark() -> None:
    with pytest.raises(ConfigError, match="unknown benchmark 'gsm9k'"):
        load_benchmark("gsm9k")


def test_item_roundtrip() -> None:
    item = load_benchmark("mmlu")[5]
    assert type(item).from_dict(json.loads(json.dumps(item.to_dict()))) == item


def test_bad_jsonl_names_file_line(tmp_path) -> None:
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"text": "ok"}\n{"text": broken\n{"txt": "x"}\n' + b'{"text": "\xff\xfe"}\n')
    with pytest.raises(InputError, match=r"c.jsonl:2: not valid JSON"):
        list(read_documents(p))
    stats = BadInputStats()
    docs = list(read_documents(p, skip_bad=True, stats=stats))
    assert [d.text for d in docs] == ["ok"] and stats.skipped == 3
    p2 = tmp_path / "m.jsonl"
    p2.write_text('{"text": "a"}\n{"body": "b"}\n')
    with pytest.raises(InputError, match=r"m.jsonl:2: field 'text': text field is missing"):
        list(read_documents(p2))


def test_gzip_and_csv_and_duplicate_ids(tmp_path) -> None:
    gz = tmp_path / "b.jsonl.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write('{"id": "x", "question": "q1", "answer": "1"}\n{"id": "x", "question": "q2"}\n')
    with pytest.raises(InputError, match="duplicate item id 'x'"):
        load_items(gz)
    csvp = tmp_path / "b.csv"
    csvp.write_text("prompt,target\nWhat is 2+2?,4\n")
    items = load_items(csvp)
    assert items[0].question == "What is 2+2?" and items[0].answer == "4"
    items = load_items(csvp, fields=FieldMap(question="target"))
    assert items[0].question == "4"


def test_atomic_write_keeps_old_file_on_error(tmp_path) -> None:
    p = tmp_path / "out.txt"
    p.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(p) as fh:
        fh.write("new")
        raise RuntimeError("boom")
    assert p.read_text() == "old"
    assert [f.name for f in tmp_path.iterdir()] == ["out.txt"]


def test_atomic_write_gives_the_mode_a_plain_open_would(tmp_path) -> None:
    import os

    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    with atomic_write(tmp_path / "atomic.txt") as fh:
        fh.write("x")
    assert (tmp_path / "atomic.txt").stat().st_mode & 0o777 == plain.stat().st_mode & 0o777
    assert os.stat(tmp_path / "atomic.txt").st_mode & 0o077 != 0 or plain.stat().st_mode & 0o077 == 0


def test_checkpoint_drops_torn_tail(tmp_path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text('{"id": "a"}\n{"id": "b"}\n{"id": "c", "x": ')
    ck = JsonlCheckpoint(p)
    assert ck.done == {"a", "b"}
    ck.write({"id": "c"})
    ck.close()
    assert p.read_text().splitlines() == ['{"id": "a"}', '{"id": "b"}', '{"id":"c"}']
