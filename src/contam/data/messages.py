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


def text_field_error(path: str | os.PathLike[str] | None, line: int | None, field: str, value: Any) -> tuple[InputError, str]:
    """A text field that is missing (``value`` None) or not a string; the reason names the field."""
    if value is None:
        return InputError("text field is missing", path=path, line=line, field=field), f"missing field {field!r}"
    return InputError(
        f"text field is {type(value).__name__}, expected a string", path=path, line=line, field=field
    ), f"non-string field {field!r}"
