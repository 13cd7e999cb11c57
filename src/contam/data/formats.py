"""The record formats synthetic-data and fine-tuning pipelines write, read without hand conversion.

=========  ==========================================================  =====================
format     a record                                                    turns (role)
=========  ==========================================================  =====================
text       ``{"text": "..."}`` (``--text-field`` names the field)      one (``text``)
chat       ``{"messages": [{"role": ..., "content": ...}, ...]}``        one per message (its role)
           (OpenAI / Hugging Face chat; ``content`` a string or a
           list of ``{"type": "text", "text": ...}`` parts)
sharegpt   ``{"conversations": [{"from": ..., "value": ...}, ...]}``     one per message
           (``human`` reads ``user``, ``gpt`` ``assistant``)
alpaca     ``{"instruction": ..., "input": ..., "output": ...}``         instruction, input:
                                                                       ``user``; output:
                                                                       ``assistant``
pair       ``{"prompt": ..., "response": ...}`` (or ``completion``)    ``user``, ``assistant``
=========  ==========================================================  =====================

``auto`` detects the format of a file from its first valid record (:func:`detect`); every
later record must have the same shape, or the error names file, line and field.

A record becomes one :class:`RecordText`: the text of its selected turns (``roles``) joined by
a blank line, and the turn map (:class:`TurnSpan`: turn index, role, where it lies in the
joined text, and the JSON path of the field it came from). :func:`locate` turns an offset span
of the joined text back into (turn, offsets inside the turn), which is what every flag's
evidence names; :func:`set_turn_text` writes a changed turn back into the record, in its own
format (for ``contam decontaminate --mode mask``).

>>> rec = {"messages": [{"role": "system", "content": "Be brief."},
...                     {"role": "user", "content": "What is 2+2?"},
...                     {"role": "assistant", "content": "4"}]}
>>> fmt = detect(rec)
>>> rt = record_text(rec, fmt, roles=("user", "assistant"))
>>> fmt, rt.text, [(t.turn, t.role, t.start, t.end) for t in rt.turns]
('chat', 'What is 2+2?\\n\\n4', [(1, 'user', 0, 12), (2, 'assistant', 14, 15)])
>>> locate(rt.turns, (8, 15))
[(1, 'user', (8, 12), (8, 12)), (2, 'assistant', (0, 1), (14, 15))]
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contam.data.messages import not_text
from contam.errors import ConfigError, InputError

FORMATS = ("auto", "text", "chat", "sharegpt", "alpaca", "pair")
#: What joins the turns of a record into one document (a blank line: no word runs across it).
JOIN = "\n\n"

#: ShareGPT speaker names, read as the chat roles.
SHAREGPT_ROLES = {"human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant", "chatgpt": "assistant", "bard": "assistant",
                  "bing": "assistant", "system": "system", "tool": "tool", "function": "tool", "function_call": "assistant", "observation": "tool"}  # fmt: skip
#: The fields of an Alpaca record, in order, with their roles.
ALPACA_FIELDS = (("instruction", "user"), ("input", "user"), ("output", "assistant"))
#: The reply field a prompt/response pair may use, in order of preference.
PAIR_REPLY = ("response", "completion", "output", "answer")


@dataclass(frozen=True)
class TurnSpan:
    """One turn of a record inside its joined text: ``turn`` its index in the record (message
    index; 0, 1, 2 for Alpaca's instruction, input, output), ``role``, ``start``/``end`` in the
    joined text, ``path`` the JSON path of the string it came from."""

    turn: int
    role: str
    start: int
    end: int
    path: tuple[str | int, ...]


@dataclass(frozen=True)
class RecordText:
    """The text a record is scanned as, and where each of its turns lies in it."""

    text: str
    turns: tuple[TurnSpan, ...]


def parse_roles(roles: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``"user,assistant"`` -> ``("user", "assistant")``; empty or ``all`` -> None (every turn)."""
    if roles is None:
        return None
    parts = [r.strip().lower() for r in (roles.split(",") if isinstance(roles, str) else roles) if r and r.strip()]
    if not parts or "all" in parts:
        return None
    return tuple(SHAREGPT_ROLES.get(r, r) for r in parts)


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ConfigError(f"unknown --format {fmt!r}: choose {', '.join(FORMATS)}")
    return fmt


def detect(rec: Any, text_field: str = "text") -> str | None:
    """The format of one record, or None if it has none of the known shapes.

    A record with the text field as a string is ``text`` (so plain corpora read as before);
    then ``messages`` (chat), ``conversations`` (ShareGPT), ``instruction`` + ``output``
    (Alpaca), ``prompt`` + a reply (pair).

    >>> detect({"conversations": [{"from": "human", "value": "hi"}]}), detect({"prompt": "a", "response": "b"}), detect({"x": 1})
    ('sharegpt', 'pair', None)
    """
    if not isinstance(rec, dict):
        return None
    if isinstance(_get(rec, text_field), str):
        return "text"
    if isinstance(rec.get("messages"), list):
        return "chat"
    if isinstance(rec.get("conversations"), list):
        return "sharegpt"
    if "instruction" in rec and "output" in rec:
        return "alpaca"
    if "prompt" in rec and any(k in rec for k in PAIR_REPLY):
        return "pair"
    return None


def _get(rec: dict[str, Any], dotted: str) -> Any:
    cur: Any = rec
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _bad(msg: str, path: str | os.PathLike[str] | None, line: int | None, field: str) -> InputError:
    return InputError(msg, path=path, line=line, field=field)


def turns_of(
    rec: dict[str, Any], fmt: str, *, text_field: str = "text", path: str | os.PathLike[str] | None = None, line: int | None = None
) -> list[tuple[int, str, tuple[str | int, ...], str]]:
    """Every turn of ``rec`` read as ``fmt``: ``(turn index, role, JSON path, text)``.

    Raises :class:`InputError` naming the field when the record does not have the format's shape.
    """
    out: list[tuple[int, str, tuple[str | int, ...], str]] = []
    if fmt == "text":
        text = _get(rec, text_field)
        if not isinstance(text, str):
            raise _bad("text field is missing" if text is None else not_text(text_field, text, rec, path), path, line, text_field)
        return [(0, "text", tuple(text_field.split(".")), text)]
    if fmt in ("chat", "sharegpt"):
        key, role_key, text_key = ("messages", "role", "content") if fmt == "chat" else ("conversations", "from", "value")
        msgs = rec.get(key)
        if not isinstance(msgs, list):
            raise _bad(
                f"{fmt} record: {key!r} is " + ("missing" if msgs is None else f"{type(msgs).__name__}, expected a list of messages"),
                path,
                line,
                key,
            )
        for i, m in enumerate(msgs):
            where = f"{key}[{i}]"
            if not isinstance(m, dict):
                raise _bad(f"{fmt} message is {type(m).__name__}, expected an object with {role_key!r} and {text_key!r}", path, line, where)
            role = m.get(role_key)
            if not isinstance(role, str):
                raise _bad(f"{fmt} message has no {role_key!r} string", path, line, f"{where}.{role_key}")
            role = role.strip().lower()
            if fmt == "sharegpt":
                role = SHAREGPT_ROLES.get(role, role)
            content = m.get(text_key)
            if isinstance(content, str):
                out.append((i, role, (key, i, text_key), content))
            elif isinstance(content, list):  # OpenAI content parts: the text ones
                for j, part in enumerate(content):
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        out.append((i, role, (key, i, text_key, j, "text"), part["text"]))
            elif content is not None:  # null content: a tool-call message, nothing to read
                raise _bad(f"{fmt} message {text_key!r} is {type(content).__name__}, expected a string", path, line, f"{where}.{text_key}")
        return out
    if fmt == "alpaca":
        if not isinstance(rec.get("instruction"), str):
            raise _bad(
                "alpaca record: 'instruction' is " + ("missing" if rec.get("instruction") is None else "not a string"),
                path,
                line,
                "instruction",
            )
        for i, (name, role) in enumerate(ALPACA_FIELDS):
            value = rec.get(name)
            if value is None:
                continue
            if not isinstance(value, str):
                raise _bad(f"alpaca record: {name!r} is {type(value).__name__}, expected a string", path, line, name)
            out.append((i, role, (name,), value))
        return out
    if fmt == "pair":
        prompt = rec.get("prompt")
        if not isinstance(prompt, str):
            raise _bad(
                "pair record: 'prompt' is " + ("missing" if prompt is None else f"{type(prompt).__name__}, expected a string"),
                path,
                line,
                "prompt",
            )
        out.append((0, "user", ("prompt",), prompt))
        reply = next((k for k in PAIR_REPLY if k in rec), None)
        if reply is None:
            raise _bad(f"pair record has no reply field ({', '.join(PAIR_REPLY)})", path, line, "response")
        if not isinstance(rec[reply], str):
            raise _bad(f"pair record: {reply!r} is {type(rec[reply]).__name__}, expected a string", path, line, reply)
        out.append((1, "assistant", (reply,), rec[reply]))
        return out
    raise ConfigError(f"unknown format {fmt!r}: choose {', '.join(FORMATS[1:])}")


def record_text(
    rec: dict[str, Any],
    fmt: str,
    *,
    roles: tuple[str, ...] | None = None,
    text_field: str = "text",
    path: str | os.PathLike[str] | None = None,
    line: int | None = None,
) -> RecordText:
    """The record's selected turns (``roles``; None: all) joined by :data:`JOIN`, with the turn map."""
    parts: list[str] = []
    spans: list[TurnSpan] = []
    at = 0
    for turn, role, jpath, text in turns_of(rec, fmt, text_field=text_field, path=path, line=line):
        if (roles is not None and fmt != "text" and role not in roles) or (not text and fmt != "text"):
            continue  # an unselected role, or an empty turn (Alpaca's "input": "")
        if parts:
            at += len(JOIN)
        parts.append(text)
        spans.append(TurnSpan(turn, role, at, at + len(text), jpath))
        at += len(text)
    return RecordText(JOIN.join(parts), tuple(spans))


def locate(turns: Sequence[TurnSpan], span: tuple[int, int]) -> list[tuple[int, str, tuple[int, int], tuple[int, int]]]:
    """The turns an offset span of the joined text falls in: ``(turn, role, span inside the
    turn, the piece of the span in the joined text)``, one entry per turn it touches (a match
    that runs from the question into the answer names both)."""
    a, b = span
    out = []
    for t in turns:
        lo, hi = max(a, t.start), min(b, t.end)
        if lo < hi or (a == b and t.start <= a <= t.end):
            out.append((t.turn, t.role, (lo - t.start, hi - t.start), (lo, hi)))
    return out


def set_turn_text(rec: dict[str, Any], jpath: tuple[str | int, ...], value: str) -> None:
    """Write ``value`` at ``jpath`` in ``rec`` (the record keeps its own format)."""
    cur: Any = rec
    for k in jpath[:-1]:
        cur = cur[k]
    cur[jpath[-1]] = value


class FormatReader:
    """Reads one file's records as :class:`RecordText`, with ``auto`` fixed by the first valid record.

    >>> r = FormatReader("auto", roles=("user",), path="sft.jsonl")
    >>> r.read({"instruction": "Add 2 and 2.", "input": "", "output": "4"}, 1).text, r.format
    ('Add 2 and 2.', 'alpaca')
    """

    def __init__(
        self,
        fmt: str = "auto",
        *,
        roles: tuple[str, ...] | None = None,
        text_field: str = "text",
        path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.format = check_format(fmt)
        self.roles, self.text_field, self.path = roles, text_field, path

    def read(self, rec: Any, line: int) -> RecordText:
        if self.format == "auto":
            found = detect(rec, self.text_field)
            if found is None and _get(rec, self.text_field) is not None:  # the field is there but holds no text
                raise InputError(
                    not_text(self.text_field, _get(rec, self.text_field), rec, self.path), path=self.path, line=line, field=self.text_field
                )
            if found is None:
                keys = ", ".join(sorted(rec)[:8]) if isinstance(rec, dict) else type(rec).__name__
                raise InputError(
                    f"cannot tell the record format (fields: {keys}): expected a {self.text_field!r} string, 'messages' (chat), "
                    "'conversations' (sharegpt), 'instruction'+'output' (alpaca) or 'prompt'+'response' (pair); or pass --format/--text-field",
                    path=self.path,
                    line=line,
                    field=self.text_field,
                )
            self.format = found
        return record_text(rec, self.format, roles=self.roles, text_field=self.text_field, path=self.path, line=line)
