"""The one table of bad-record messages, shared by the loaders and the scan job's fast JSONL path.

Both readers must say the same thing about the same line (a test scans one corpus both ways and
compares), so the wording and the ``skip_bad`` reason key of every problem a corpus record can
have are written once, here.

>>> err, reason = BAD_RECORD["not_object"].error("c.jsonl", 3, kind="list")
>>> str(err), reason
('c.jsonl:3: expected a JSON object, found list', 'expected a JSON object')
>>> text_field_error("c.jsonl", 9, "body", None)[1]
"missing field 'body'"
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from contam.errors import InputError


@dataclass(frozen=True)
class BadRecord:
    """One kind of bad corpus record: the message (a ``str.format`` template) and the key it is
    counted under in :class:`~contam.data.loaders.BadInputStats` when skipped."""

    reason: str
    message: str

    def error(self, path: str | os.PathLike[str] | None, line: int | None, field: str | None = None, **fmt: Any) -> tuple[InputError, str]:
        """The error to raise (or count) and its reason key."""
        return InputError(self.message.format(**fmt), path=path, line=line, field=field), self.reason


#: Every problem a JSONL corpus line can have, by name.
BAD_RECORD: dict[str, BadRecord] = {
    "too_large": BadRecord("record too large", "record is {mb:.0f} MB, over the {limit_mib} MiB limit"),
    "not_utf8": BadRecord("not valid UTF-8", "not valid UTF-8 (byte {start})"),
    "not_json": BadRecord("not valid JSON", "not valid JSON ({msg} at column {colno})"),
    "too_deep": BadRecord("nested too deeply", "JSON nested too deeply to read"),
    "not_object": BadRecord("expected a JSON object", "expected a JSON object, found {kind}"),
    "empty_text": BadRecord("empty text", "text is empty"),
}


def text_field_error(
    path: str | os.PathLike[str] | None, line: int | None, field: str, value: Any, rec: Any = None
) -> tuple[InputError, str]:
    """A text field that is missing (``value`` None) or not a string; the reason names the field.
    With the record ``rec``, the message says what to do (:func:`not_text`)."""
    if value is None:
        return InputError("text field is missing", path=path, line=line, field=field), f"missing field {field!r}"
    return InputError(not_text(field, value, rec, path), path=path, line=line, field=field), f"non-string field {field!r}"


def not_text(field: str, value: Any, rec: Any = None, path: str | os.PathLike[str] | None = None) -> str:
    """What a text field that holds no text is, and what to do: name the field that holds the
    text (the record's string fields are listed), or convert the column.

    >>> not_text("text", 7, {"text": 7, "body": "Hi"}, "c.parquet")
    "text field is int, expected a string (this Parquet file's 'text' column holds integers, not text): pass --text-field NAME with the field that holds the text (string fields here: 'body'), or store the column as strings"
    """
    kind = type(value).__name__
    what = {"int": "integers", "float": "numbers", "bool": "booleans", "list": "lists", "dict": "objects"}.get(kind, f"{kind} values")
    where = f" (this Parquet file's {field!r} column holds {what}, not text)" if str(path or "").endswith(".parquet") else ""
    strings = [k for k, v in rec.items() if isinstance(v, str)][:6] if isinstance(rec, dict) else []
    hint = f"string fields here: {', '.join(map(repr, strings))}" if strings else "this record has no string field"
    return f"text field is {kind}, expected a string{where}: pass --text-field NAME with the field that holds the text ({hint}), or store the column as strings"
