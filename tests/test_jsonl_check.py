"""The compiled JSON-line check may only be stricter than the parser (orjson), never laxer:
whatever it calls clean, the parser accepts as an object with a non-blank string text field."""

from __future__ import annotations

import json
import random

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from contam.data.jsonl_check import BLANK, CLEAN, UNSURE, check_jsonl


def parser_says_clean(line: bytes, field: str = "text") -> bool:
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    text = rec.get(field) if type(rec) is dict else None
    return type(text) is str and bool(text) and not text.isspace()


def assert_never_laxer(lines: list[bytes], field: str = "text") -> list[int]:
    block = b"\n".join(lines)
    lines = block.split(b"\n")
    if not lines[-1]:
        lines.pop()  # the block ends with a newline: no line after it
    status = check_jsonl(block, field).tolist()
    assert len(status) == len(lines)
    for line, s in zip(lines, status, strict=True):
        if s == CLEAN:
            assert parser_says_clean(line, field), line
        elif s == BLANK:
            assert line.isspace() or not line, line
    return status


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _json_values, max_size=4), st.text(), st.booleans(), st.booleans())
@example({}, "\u2003\u00a0", False, False)
@example({"a": [[[]]]}, "x\ud83d\ude00", True, True)
def test_valid_records_are_clean_exactly_when_the_parser_takes_their_text(rec, text, ascii_only, first) -> None:
    rec = {"text": text, **rec} if first else {**rec, "text": text}
    line = json.dumps(rec, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    status = assert_never_laxer([line])
    escaped_key = any("\\" in json.dumps(k, ensure_ascii=ascii_only) for k in rec)
    if not escaped_key and not any(0xD800 <= ord(c) < 0xE000 for c in text):
        # Nothing the check leaves to the parser on purpose: it must agree both ways.
        assert (status[0] == CLEAN) == parser_says_clean(line)


@settings(max_examples=1500, deadline=None)
@given(
    st.binary(max_size=40),
    st.integers(0, 200),
    st.sampled_from([b"", b"\\", b'"', b"}", b"\xed\xa0\x80", b"\\ud800", b"1e999", b"\x00", b"\t"]),
)
def test_mutated_lines_are_never_called_clean_wrongly(noise, at, token) -> None:
    base = json.dumps({"id": 7, "text": "Weng earns $12 an hour.\nShe did 50 minutes", "n": [1, -2.5e3, True, None]}).encode()
    at = at % (len(base) + 1)
    assert_never_laxer([base[:at] + token + noise + base[at:], base[:at] + noise + base[at + 1 :], base[:at]])


def test_random_byte_flips_of_real_lines() -> None:
    rng = random.Random(0)
    base = [
        json.dumps({"id": i, "text": t, "meta": {"k": [i, 0.5, None]}}, ensure_ascii=a).encode()
        for i, (t, a) in enumerate([("Janet’s ducks lay 16 eggs per day.", False), ("naïve café – “quoted”\n\tend", True), ("x", False)])
    ]
    seen = {CLEAN: 0, UNSURE: 0}
    for _ in range(20000):
        line = bytearray(rng.choice(base))
        for _ in range(rng.randint(1, 3)):
            line[rng.randrange(len(line))] = rng.randrange(256)
        s = assert_never_laxer([bytes(line)])[0]
        seen[s] = seen.get(s, 0) + 1
    assert seen[CLEAN] and seen[UNSURE]  # both outcomes occur: the flips do reach the check


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"text": "a"}', CLEAN),
        (b' \t{"text" : "a" } \r', CLEAN),
        (b'{"text": "\\u00e9t\\u00e9"}', CLEAN),
        (b'{"text": "\\ud83d\\ude00"}', CLEAN),
        (b'{"text": "\\ud800"}', UNSURE),  # a lone surrogate: the parser decides
        (b'{"text": "\\u2003\\n\\t "}', UNSURE),  # only spaces
        (b'{"text": ""}', UNSURE),
        (b'{"text": "a", "text": "b"}', UNSURE),  # twice
        (b'{"te\\u0078t": "a"}', UNSURE),  # an escaped key could spell the field
        (b'{"a": {"text": 1}, "text": "a"}', CLEAN),  # only the top level counts
        (b'{"text": "a", "n": 1e400}', UNSURE),
        (b'{"text": "a", "n": 01}', UNSURE),
        (b'{"text": "a", "n": [1e+100, -0.5E-400, 12345678901234567890123, 0.0e0]}', CLEAN),
        (b'{"text": "a", "n": 9.9e307}', CLEAN),
        (b'{"text": "a", "n": 10e307}', UNSURE),  # 1e308 and up: the parser decides
        (b'{"text": "a",}', UNSURE),
        (b'{"text": "a"} x', UNSURE),
        (b'\xef\xbb\xbf{"text": "a"}', UNSURE),
        (b'{"text": "\xc3\x28"}', UNSURE),  # invalid UTF-8
        (b'{"text": "\xed\xa0\x80"}', UNSURE),  # an encoded surrogate
        (b'{"text": "a\x7f"}', CLEAN),
        (b'["text", "a"]', UNSURE),
        (b"   ", BLANK),
        (b"[" * 80 + b"]" * 80, UNSURE),
    ],
)
def test_cases(line: bytes, expected: int) -> None:
    assert check_jsonl(line).tolist() == [expected]
    assert_never_laxer([line])


def test_field_name_and_size_limit() -> None:
    line = json.dumps({"body": "hello", "text": 3}).encode()
    assert check_jsonl(line, "body").tolist() == [CLEAN]
    assert check_jsonl(line, "text").tolist() == [UNSURE]
    assert check_jsonl(line, "body", max_bytes=len(line) - 1).tolist() == [UNSURE]
    assert check_jsonl(b"").tolist() == []
