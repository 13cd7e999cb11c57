"""Finding the ids and names inside free text (instructions, outputs, summaries) and renaming them.

The spans of a task's texts are found once per task; re-keying an instance then only
substitutes fresh values into the precomputed spans, which keeps generation fast.

>>> spans = find_spans("You are Yusuf Rossi in 19122. Order #W2378156.", "retail", extra={})
>>> [(s.cls, s.value) for s in spans]
[('name', 'Yusuf'), ('name', 'Rossi'), ('zip', '19122'), ('order', '#W2378156')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import ahocorasick

from contam.regen.rekey import SUBSTRING_CLASSES, KeyMap, originals

_EMAIL = re.compile(r"[A-Za-z0-9._+-]+@[A-Za-z0-9-]+\.[A-Za-z0-9.]+[A-Za-z]")
_CAPWORD = re.compile(r"\b[A-Z][a-z]+\b")
_FIVE = re.compile(r"(?<![\d.$])\d{5}(?![\d])")
_LAST4 = re.compile(r"(?<=ending in )\d{4}\b")
#: Classes whose matches must stand alone (not glued to letters/digits on either side).
_BOUNDED = {"product", "item", "tracking", "reservation", "flight", "order"}


@dataclass(frozen=True)
class Span:
    """``text[start:end]`` is ``value`` of class ``cls`` (``strip`` leading chars dropped, e.g. an order id written without ``#``)."""

    start: int
    end: int
    cls: str
    value: str
    strip: int = 0


@cache
def _exact_automaton(domain: str) -> ahocorasick.Automaton:
    auto = ahocorasick.Automaton()
    orig = originals(domain)
    for cls in SUBSTRING_CLASSES:
        for v in orig.by_class.get(cls, ()):
            auto.add_word(v, (cls, v, 0))
            if cls == "order" and v.startswith("#"):
                auto.add_word(v[1:], (cls, v, 1))  # "W2378156" written without the hash
    auto.make_automaton()
    return auto


def find_spans(text: str, domain: str, extra: dict[str, set[str]]) -> list[Span]:
    """Non-overlapping spans of ids, names, zips, emails and addresses in ``text``.

    ``extra`` adds task-specific values by class (addresses or zips a task's actions use,
    the last-fours of the task user's cards) that are not database originals.
    """
    orig = originals(domain)
    found: list[Span] = []
    for end, (cls, value, strip) in _exact_automaton(domain).iter(text):
        start = end - len(value) + 1 + strip
        if cls in _BOUNDED and ((start > 0 and text[start - 1].isalnum()) or (end + 1 < len(text) and text[end + 1].isalnum())):
            continue
        found.append(Span(start, end + 1, cls, value, strip))
    for m in _EMAIL.finditer(text):
        found.append(Span(m.start(), m.end(), "email", m.group()))
    names = orig.by_class.get("name", frozenset()) | extra.get("name", set())
    for m in _CAPWORD.finditer(text):
        if m.group() in names:
            found.append(Span(m.start(), m.end(), "name", m.group()))
    zips = orig.by_class.get("zip", frozenset()) | extra.get("zip", set())
    for m in _FIVE.finditer(text):
        if m.group() in zips:
            found.append(Span(m.start(), m.end(), "zip", m.group()))
    last4 = extra.get("last4", set())
    for m in re.finditer(r"\b\d{4}\b", text):
        if m.group() in last4 or _LAST4.match(text, m.start()):
            found.append(Span(m.start(), m.end(), "last4", m.group()))
    for cls in ("address1", "address2"):
        for v in extra.get(cls, ()):
            if not v.strip():
                continue
            for m in re.finditer(re.escape(v), text):
                found.append(Span(m.start(), m.end(), cls, v))
    # Longest match wins where spans overlap (an email contains a name, ...).
    found.sort(key=lambda s: (s.start, -(s.end - s.start)))
    out: list[Span] = []
    last_end = -1
    for s in found:
        if s.start >= last_end:
            out.append(s)
            last_end = s.end
    return out


def rewrite(text: str, spans: Sequence[Span], km: KeyMap) -> str:
    """``text`` with every span replaced by its fresh value under ``km``."""
    if not spans:
        return text
    parts, pos = [], 0
    for s in spans:
        parts.append(text[pos : s.start])
        parts.append(km.fwd(s.cls, s.value)[s.strip :])
        pos = s.end
    parts.append(text[pos:])
    return "".join(parts)
