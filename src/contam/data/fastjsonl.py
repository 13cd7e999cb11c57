"""The scan job's fast path through raw JSONL: a block of lines in, the texts to scan out.

:func:`~contam.data.loaders.read_documents` parses a corpus one line at a time and builds a
:class:`~contam.data.items.Document` per line. The scan job cannot afford that on a few GB: it
hands each worker a raw block of lines and :func:`parse_block` checks a clean block with C-level
calls (orjson, or the compiled :mod:`contam.data.jsonl_check` pass of the prefilter, which lets
it parse only the lines the scorer needs). Any doubt and the block is redone line by line with
the loaders' exact messages (:mod:`contam.data.messages`, one table for both readers), so a
bad line reads the same whichever path met it.

What a parse needs to know and what it notes for the caller travels in a :class:`ParseContext`,
passed explicitly (no module state is written, so a parent and its workers cannot step on
each other).

>>> from collections import Counter
>>> from contam.data import BadInputStats
>>> ctx = ParseContext(source="c.jsonl", text_field="text", skip_bad=True)
>>> stats, counts = BadInputStats(), Counter()
>>> texts, make, _, n = parse_block(ctx, b'{"text": "one"}\\n{"text": 2}\\n{"id": "x", "text": "three"}\\n', 1, stats, counts)
>>> [make(i).id for i in range(len(texts))], n, stats.reasons
(['1', 'x'], 3, {"non-string field 'text'": 1})
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from contam.data.items import Document
from contam.data.jsonl_check import BLANK, CLEAN
from contam.data.loaders import MAX_RECORD_BYTES, BadInputStats, get_field
from contam.data.messages import BAD_RECORD, text_field_error
from contam.errors import InputError

if TYPE_CHECKING:
    from contam.scan.prefilter import Prefilter

try:  # orjson parses corpus lines 3-4x faster than the standard library
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - orjson is a pinned dependency
    _fast_loads = json.loads

#: How many bad-input examples a block keeps (as :class:`BadInputStats` does for a run).
MAX_EXAMPLES = 5


@dataclass
class ParseContext:
    """The settings of a parse and what it notes for its caller.

    ``line_ids`` are the lines whose document id is their line number (no id field) and
    ``errors`` the first skipped errors: a worker numbers a block's lines from 1, and the parent
    renumbers both once it knows where the block starts. :meth:`new_block` clears them.
    """

    source: str
    text_field: str = "text"
    id_field: str | None = None
    skip_bad: bool = False
    line_ids: set[int] = field(default_factory=set)
    errors: list[InputError] = field(default_factory=list)

    def new_block(self) -> None:
        self.line_ids, self.errors = set(), []

    def reject(self, err: InputError, reason: str, stats: BadInputStats) -> None:
        """Raise ``err``, or under ``skip_bad`` count it (and keep it as an example)."""
        if not self.skip_bad:
            raise err
        stats.add(err, reason)
        if len(self.errors) < MAX_EXAMPLES:
            self.errors.append(err)

    def document(self, key: Any, text: str, line: int) -> Document:
        """The Document of a corpus line; without an id its line number is its id (noted)."""
        if key is None:
            self.line_ids.add(line)
            return Document(id=str(line), text=text, source=self.source, line=line)
        return Document(id=str(key), text=text, source=self.source, line=line)


def check_documents(
    ctx: ParseContext, docs: list[Document], stats: BadInputStats, counts: Counter[str], count_bytes: bool = True
) -> list[Document]:
    """``docs`` without empty texts, which are bad input (a corpus line with nothing to scan is
    almost always a field-mapping mistake)."""
    out: list[Document] = []
    for d in docs:
        if count_bytes:
            counts["bytes"] += len(d.text.encode("utf-8", "surrogatepass"))
        counts["documents"] += 1
        if not d.text.strip():
            counts["empty"] += 1
            ctx.reject(*BAD_RECORD["empty_text"].error(d.source, d.line, field=ctx.text_field), stats)
            continue
        out.append(d)
    return out


def parse_block(
    ctx: ParseContext,
    block: bytes,
    first_line: int,
    stats: BadInputStats,
    counts: Counter[str],
    prefilter: Prefilter | None = None,
) -> tuple[list[str], Callable[[int], Document], np.ndarray | None, int]:
    """The texts of a block of raw JSONL lines, with the loader's checks and messages, a
    function making the Document of the i-th text (only candidates need one), with a
    ``prefilter`` the candidates when the block was clean (else None: the caller asks), and
    the block's number of lines."""
    src, tf, idf = ctx.source, ctx.text_field, ctx.id_field
    simple = "." not in tf
    texts: list[str] = []
    recs: list[dict[str, Any]] = []
    line_of: list[int] = []
    counts["bytes"] += len(block)
    if simple and block and len(block) <= MAX_RECORD_BYTES:
        # Fast path for a clean block, checked with C-level calls; any doubt and the loop
        # below redoes the block line by line with the exact messages. With a prefilter, it
        # cuts the raw bytes first (sound once every line has parsed) and finds the line ends.
        picked = None
        fast_recs: list[Any] = []
        cand_odd: tuple[np.ndarray, np.ndarray] | None = None  # the prefilter's candidate and odd lines
        try:
            if prefilter is not None:
                cand, odd, ends, one_value_each, status = prefilter.candidates_jsonl(block, field=tf, max_line_bytes=MAX_RECORD_BYTES)
                cand_odd = (cand, odd)
                n_clean = int(np.count_nonzero(status == CLEAN))
                if n_clean and n_clean + int(np.count_nonzero(status == BLANK)) == len(ends):
                    # Every line checked in the compiled pass (a JSON object whose text field is a
                    # string with something to scan; or blank): only the lines the exact scorer or
                    # the odd-line rule needs are parsed.
                    counts["documents"] += n_clean
                    make_checked, picked = _checked_lines(ctx, block, ends, cand, odd, first_line, prefilter)
                    return [], make_checked, picked, len(ends)
                if not one_value_each:  # some line ends inside a JSON value: it cannot parse alone
                    raise ValueError("a line ends inside a value")
                # Every line ends outside any JSON value, so a raw newline can stand for the comma
                # of one JSON array: one parse for the block. As many values as lines then means
                # one value a line, each parsed whole (else the loop below says which is bad).
                joined = bytearray(len(block) + 2)  # "[" + the lines + "]", one copy
                joined[0], joined[-1] = 0x5B, 0x5D
                joined[1:-1] = block
                commas = np.frombuffer(joined, dtype=np.uint8)
                commas[ends[ends < len(block)] + 1] = 0x2C  # the newlines, found by the prefilter's pass
                if block.endswith(b"\n"):
                    commas[len(block)] = 0x20  # no value after the last line
                fast_recs = _fast_loads(joined)
                if len(fast_recs) != len(ends):
                    raise ValueError("not one value a line")
            else:
                lines = block.split(b"\n")
                if not lines[-1]:
                    lines.pop()  # the block ends with a newline: no line after it
                fast_recs = list(map(_fast_loads, lines))
            fast_texts = list(map(itemgetter(tf), fast_recs))
        except (ValueError, KeyError, TypeError, IndexError):
            fast_texts = []
        if (
            fast_texts
            and set(map(type, fast_recs)) == {dict}
            and set(map(type, fast_texts)) == {str}
            and all(fast_texts)
            and not any(map(str.isspace, fast_texts))
        ):
            counts["documents"] += len(fast_texts)
            if prefilter is not None and cand_odd is not None:
                picked = prefilter.candidates_of_odd(*cand_odd, fast_texts)

            def make_fast(i: int) -> Document:
                key = get_field(fast_recs[i], idf) if idf else fast_recs[i].get("id")
                return ctx.document(key, fast_texts[i], first_line + i)

            return fast_texts, make_fast, picked, len(fast_recs)
    lines = block.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the block ends with a newline: no line after it
    n_docs = 0
    for lineno, raw in enumerate(lines, start=first_line):
        if len(raw) > MAX_RECORD_BYTES:
            ctx.reject(*BAD_RECORD["too_large"].error(src, lineno, mb=len(raw) / 1e6, limit_mib=MAX_RECORD_BYTES // 2**20), stats)
            continue
        try:
            rec = _fast_loads(raw)
        except ValueError:  # blank, or orjson's terse errors: let the standard library say what and where
            if raw.isspace() or not raw:
                continue
            rec = _slow_loads(ctx, raw, lineno, stats)
            if rec is _BAD:
                continue
        if type(rec) is not dict:
            ctx.reject(*BAD_RECORD["not_object"].error(src, lineno, kind=type(rec).__name__), stats)
            continue
        text = rec.get(tf) if simple else get_field(rec, tf)
        if type(text) is not str:
            if isinstance(text, str):  # a str subclass cannot come out of a JSON parser, but be exact
                text = str(text)
            else:
                ctx.reject(*text_field_error(src, lineno, tf, text, rec), stats)
                continue
        n_docs += 1
        if not text or text.isspace():
            # Empty texts are bad input (a corpus line with nothing to scan is almost always a field-mapping mistake).
            counts["empty"] += 1
            ctx.reject(*BAD_RECORD["empty_text"].error(src, lineno, field=tf), stats)
            continue
        texts.append(text)
        recs.append(rec)
        line_of.append(lineno)
    counts["documents"] += n_docs

    def make(i: int) -> Document:
        key = get_field(recs[i], idf) if idf else recs[i].get("id")
        return ctx.document(key, texts[i], line_of[i])

    return texts, make, None, len(lines)


def _checked_lines(
    ctx: ParseContext,
    block: bytes,
    ends: np.ndarray,
    cand: np.ndarray,
    odd: np.ndarray,
    first_line: int,
    prefilter: Prefilter,
) -> tuple[Callable[[int], Document], np.ndarray]:
    """For a block whose every line the compiled check passed: parse only the candidate and odd
    lines, and return the function making the Document of a line and the candidate lines."""
    tf, idf = ctx.text_field, ctx.id_field
    recs: dict[int, dict[str, Any]] = {}
    for i in np.union1d(cand, odd).tolist():
        start = int(ends[i - 1]) + 1 if i else 0
        recs[i] = _fast_loads(block[start : int(ends[i])])
    picked = cand
    if len(odd):
        texts = [""] * len(ends)
        for i in odd.tolist():
            texts[i] = recs[i][tf]
        picked = prefilter.candidates_of_odd(cand, odd, texts)

    def make(i: int) -> Document:
        rec = recs[i]
        key = get_field(rec, idf) if idf else rec.get("id")
        return ctx.document(key, rec[tf], first_line + i)

    return make, picked


_BAD = object()


def _slow_loads(ctx: ParseContext, raw: bytes, lineno: int, stats: BadInputStats) -> Any:
    """Parse a line orjson refused with the standard library, for its exact message (or its
    leniency: lone surrogates); ``_BAD`` after reporting bad input."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        ctx.reject(*BAD_RECORD["not_utf8"].error(ctx.source, lineno, start=e.start), stats)
    except json.JSONDecodeError as e:
        ctx.reject(*BAD_RECORD["not_json"].error(ctx.source, lineno, msg=e.msg, colno=e.colno), stats)
    except RecursionError:
        ctx.reject(*BAD_RECORD["too_deep"].error(ctx.source, lineno), stats)
    except ValueError as e:  # an integer of more digits than Python converts
        ctx.reject(*BAD_RECORD["not_json"].error(ctx.source, lineno, msg=str(e).split(";")[0], colno=1), stats)
    return _BAD
