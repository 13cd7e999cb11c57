"""What ``decontaminate --mode mask`` may leave of a flagged record: never an answer that gives
the item away.

Masking a flagged span (or a flagged turn) is not enough when the record still holds the item's
answer elsewhere: a chat whose user turn was masked but whose assistant turn still ends in
``#### 18`` teaches the model the benchmark's answer. So after masking, the record's remaining
text is searched for each flagged item's answer (:func:`answer_keys`). In a conversation the
turns of the flagged question–answer exchange that still hold it are masked too (question and
answer together, :func:`exchange`); if the answer is left anywhere else, or the record is plain
text, or the item's answer is unknown here, the record is dropped instead. The log says which.

>>> from contam.data import Item
>>> keys = answer_keys(Item("gsm8k/test/5", "How many eggs?", answer="1,200"))
>>> keys, find_answer("They sold 1200 eggs.", keys), find_answer("They sold 12000 eggs.", keys)
(('1,200',), '1,200', None)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from contam.data import Item

#: Answers longer than this (a worked solution, a code body) are left to the matched spans:
#: searching for them verbatim says nothing a scan did not.
MAX_KEY_CHARS = 80

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def answer_keys(item: Item) -> tuple[str, ...]:
    """The strings whose presence gives ``item`` away: its short gold answer, or for multiple
    choice the text of the gold option (a lone letter says nothing without the options).

    >>> answer_keys(Item("m/1", "Capital of France?", answer="B", choices=("Rome", "Paris")))
    ('Paris',)
    """
    a = item.answer.strip()
    if item.choices and len(a) == 1 and "A" <= a.upper() <= chr(64 + len(item.choices)):
        a = item.choices[ord(a.upper()) - 65].strip()
    return (a,) if a and len(a) <= MAX_KEY_CHARS else ()


def _pattern(key: str) -> re.Pattern[str]:
    if _NUMBER.fullmatch(key):  # 1,200 and 1200 are the same answer; 12000 is not
        digits = key.replace(",", "")
        return re.compile(r"(?<![\w.])" + re.escape(digits) + r"(?![\w]|[.,]\d)")
    return re.compile(r"(?<!\w)" + re.escape(key) + r"(?!\w)", re.IGNORECASE)


def find_answer(text: str, keys: Iterable[str]) -> str | None:
    """The first of ``keys`` found in ``text`` (numbers compared without thousands separators)."""
    plain = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    for k in keys:
        if _pattern(k).search(plain if _NUMBER.fullmatch(k) else text):
            return k
    return None


def exchange(roles: Sequence[str], flagged: Iterable[int]) -> set[int]:
    """Positions (in record order) of the question–answer exchanges holding the ``flagged``
    positions: from the user turn that opens each one to the turn before the next user turn.

    >>> sorted(exchange(["system", "user", "assistant", "user", "assistant"], [1]))
    [1, 2]
    >>> sorted(exchange(["system", "user", "assistant", "user", "assistant"], [4]))
    [3, 4]
    >>> sorted(exchange(["user", "user", "assistant"], [0]))
    [0, 1, 2]
    """
    opens = [r == "user" and (i == 0 or roles[i - 1] != "user") for i, r in enumerate(roles)]  # Alpaca: instruction + input
    out: set[int] = set()
    for k in flagged:
        start = next((i for i in range(k, -1, -1) if opens[i]), k)
        stop = next((i for i in range(k + 1, len(roles)) if opens[i]), len(roles))
        out.update(range(start, stop))
    return out


def keys_for(item_ids: Iterable[str], book: dict[str, tuple[str, ...]] | None) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """Answer keys of each flagged item (``book``: :func:`answer_book`), and the items not known
    here (their answers cannot be checked)."""
    keys: dict[str, tuple[str, ...]] = {}
    unknown: list[str] = []
    for i in item_ids:
        if book is None or i not in book:
            unknown.append(i)
        else:
            keys[i] = book[i]
    return keys, unknown


def answer_book(items: Iterable[Item]) -> dict[str, tuple[str, ...]]:
    """Every item's :func:`answer_keys`, by id (an item without a short answer maps to ``()``)."""
    return {it.id: answer_keys(it) for it in items}


#: What a scan folder keeps of its benchmarks for ``decontaminate --mode mask``: every item's answer
#: keys, so a scan against a benchmark file can be cleaned where that file is not.
ANSWERS = "answers.json"


def write_answers(folder: Path, items: Iterable[Item]) -> None:
    """Keep ``items``' answer book in a scan's output ``folder`` (:data:`ANSWERS`)."""
    from contam.outputs import write_json

    write_json(folder / ANSWERS, {k: list(v) for k, v in answer_book(items).items()})


def read_answers(scan: str | os.PathLike[str]) -> dict[str, tuple[str, ...]] | None:
    """The answer book a scan folder kept (:data:`ANSWERS`), or None (a scan from before it)."""
    try:
        raw = json.loads((Path(scan) / ANSWERS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(raw, dict):
        return None
    return {str(k): tuple(str(x) for x in v) for k, v in raw.items() if isinstance(v, list)}


def left_answer(text: str, keys: dict[str, tuple[str, ...]]) -> tuple[str, str] | None:
    """``(item id, answer)`` of the first flagged item whose answer is still in ``text``."""
    for item_id, ks in keys.items():
        k = find_answer(text, ks)
        if k is not None:
            return item_id, k
    return None


def dropped(log: dict[str, Any], why: str) -> dict[str, Any]:
    """The decontamination entry of a record dropped instead of masked, saying why."""
    log["action"] = f"dropped ({why})"
    return {"line": None, "log": log}


def load_items(benchmarks: Sequence[str]) -> dict[str, Item]:
    """The items of the benchmarks a scan names (those that can be loaded here), by id: for scan
    folders without :data:`ANSWERS`."""
    from contam.data import load_benchmark
    from contam.errors import ContamError

    out: dict[str, Item] = {}
    for name in benchmarks:
        if name.startswith("hf:"):
            continue  # nothing is downloaded to clean a corpus: its flags' answers count as unknown
        try:
            out.update((it.id, it) for it in load_benchmark(name))
        except (ContamError, OSError, ValueError):
            continue  # not loadable here: its flags' answers count as unknown
    return out
