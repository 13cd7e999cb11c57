"""Making text from user data safe to show: on a terminal, in rich markup, and in JSON lines.

Corpus ids, benchmark text, file names and model output are untrusted. Echoed raw they can move
the cursor or recolour the terminal (ESC sequences, C1 controls), reverse what follows (bidi
overrides, "Trojan Source"), crash an encoder (a lone surrogate such as ``\\ud800``, which JSON
allows as an escape but UTF-8 cannot hold), or be read as rich markup (``[red]``, ``[/]``).

:func:`clean` spells each such character as a visible ``\\uXXXX`` escape (the same spelling is
a valid JSON string escape, so it can be applied to JSON text too); :func:`escape` also escapes
rich markup. :func:`json_safe` makes a JSON document's text encodable while keeping its value.

>>> clean("id\\x1b[31m\\u202eevil\\ud800")
'id\\\\u001b[31m\\\\u202eevil\\\\ud800'
>>> escape("[red]x[/]")
'\\\\[red]x\\\\[/]'
"""

from __future__ import annotations

import re

# Controls except tab and newline, DEL, C1 controls, bidi embeddings/overrides/isolates and
# marks, the line/paragraph separators, and surrogates (only ever lone in a Python str).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# In JSON text made by json.dumps the C0 controls are already escaped; the rest may appear raw.
_UNSAFE_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _u(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def clean(text: str) -> str:
    """``text`` with terminal controls, bidi controls and lone surrogates spelled ``\\uXXXX``."""
    return _UNSAFE.sub(_u, text)


def escape(text: object) -> str:
    """:func:`clean`, then rich markup escaped: safe inside any ``console.print`` f-string."""
    from rich.markup import escape as rich_escape

    return rich_escape(clean(str(text)))


def json_safe(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with the characters :func:`clean`
    would change written as JSON escapes: the parsed value is unchanged, the text can be encoded
    as UTF-8 and printed on a terminal."""
    if text.isascii():
        return text
    return _UNSAFE_JSON.sub(_u, text)


def no_surrogates(text: str) -> str:
    """JSON text with lone surrogates written as escapes (the only change; cheap when there are none)."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(_u, text)


_CREDENTIALS = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s#?]*@")


def redact_url(text: str) -> str:
    """``text`` with the ``user:password@`` of any URL in it replaced by ``***@``.

    >>> redact_url("openai:http://me:sk-123@host:8000/v1#m")
    'openai:http://***@host:8000/v1#m'
    """
    return _CREDENTIALS.sub(r"\1***@", text)
