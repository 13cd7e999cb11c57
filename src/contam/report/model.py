"""The neutral section model every renderer returns and both writers (HTML, Markdown) read.

A renderer turns one result (a plain dict read from what a command wrote) into a
:class:`Section`: a headline in words, paragraphs, tables and excerpts, all made of
:class:`Run` pieces of *unescaped* text. Escaping is the writers' job, done once, for every run.

>>> s = SectionBuilder("Scan", kind="scan", source="runs/scan1")
>>> s.headline("12 documents flagged, ", code("gsm8k/test/7"))
>>> s.table(["item", "score"], [[code("gsm8k/test/7"), "1.00"]])
>>> sec = s.build()
>>> [type(b).__name__ for b in sec.blocks]
['Paragraph', 'Table']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from contam.records import Record

#: Inline styles a :class:`Run` may carry; writers map each to their own markup.
STYLES = ("", "strong", "em", "code", "mark")


@dataclass(frozen=True)
class Run(Record):
    """A piece of text with one style (``""``, ``strong``, ``em``, ``code`` or ``mark``)."""

    text: str
    style: str = ""


Inline = tuple[Run, ...]
Cellish = str | Run | Sequence[Run | str] | int | float | None


@dataclass(frozen=True)
class Paragraph(Record):
    """A paragraph; ``role`` is ``headline`` (the verdict in words), ``text`` or ``note``."""

    runs: Inline
    role: str = "text"


@dataclass(frozen=True)
class Table(Record):
    """A table of inline cells; ``align`` holds ``l`` or ``r`` per column."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Inline, ...], ...]
    caption: str = ""
    align: tuple[str, ...] = ()


@dataclass(frozen=True)
class Excerpt(Record):
    """A quoted piece of source text (a corpus document, a model answer) under a label;
    the evidence spans are runs with style ``mark``. ``beside`` (under ``beside_label``) is what
    it is compared with, shown next to it (a flagged record beside the benchmark item)."""

    label: Inline
    runs: Inline
    beside_label: Inline = ()
    beside: Inline = ()


Block = Paragraph | Table | Excerpt


@dataclass(frozen=True)
class Section(Record):
    """One recognized result, rendered.

    ``status`` is a one-word summary for the table of contents (``flagged``, ``evidence``,
    ``no evidence``, ``clean``, ``failures``, ``info``); ``figures`` are the headline numbers
    the merged JSON keeps next to the raw result.
    """

    title: str
    kind: str
    source: str
    status: str
    blocks: tuple[Block, ...]
    figures: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Report(Record):
    """Everything one ``contam report`` call shows."""

    title: str
    sections: tuple[Section, ...]
    skipped: tuple[str, ...] = ()
    version: str = ""


def text(s: str) -> Run:
    return Run(str(s))


def strong(s: str) -> Run:
    return Run(str(s), "strong")


def em(s: str) -> Run:
    return Run(str(s), "em")


def code(s: str) -> Run:
    return Run(str(s), "code")


def mark(s: str) -> Run:
    return Run(str(s), "mark")


def inline(value: Cellish) -> Inline:
    """Any cell value as runs: strings and numbers become plain text, ``None`` a dash."""
    if value is None:
        return (Run("—"),)
    if isinstance(value, Run):
        return (value,)
    if isinstance(value, str):
        return (Run(value),)
    if isinstance(value, bool):
        return (Run("yes" if value else "no"),)
    if isinstance(value, (int, float)):
        return (Run(num(value)),)
    return tuple(r if isinstance(r, Run) else Run(str(r)) for r in value)


class SectionBuilder:
    """Collects the blocks of one :class:`Section` in order."""

    def __init__(self, title: str, *, kind: str, source: str, status: str = "info") -> None:
        self.title, self.kind, self.source, self.status = title, kind, source, status
        self.blocks: list[Block] = []
        self.figures: dict[str, Any] = {}

    def headline(self, *runs: Run | str) -> None:
        self.blocks.append(Paragraph(inline(runs), "headline"))

    def para(self, *runs: Run | str) -> None:
        self.blocks.append(Paragraph(inline(runs), "text"))

    def note(self, *runs: Run | str) -> None:
        self.blocks.append(Paragraph(inline(runs), "note"))

    def table(self, columns: Sequence[str], rows: Iterable[Sequence[Cellish]], caption: str = "", align: str = "") -> None:
        """Add a table; ``align`` is one letter per column (``l``/``r``), default: left first, right after."""
        rows_t = tuple(tuple(inline(c) for c in r) for r in rows)
        if not rows_t:
            return
        al = tuple(align) if align else ("l",) + ("r",) * (len(columns) - 1)
        self.blocks.append(Table(tuple(columns), rows_t, caption, al))

    def excerpt(
        self, label: Sequence[Run | str], runs: Sequence[Run], *, beside_label: Sequence[Run | str] = (), beside: Sequence[Run] = ()
    ) -> None:
        self.blocks.append(Excerpt(inline(label), tuple(runs), inline(beside_label), tuple(beside)))

    def build(self) -> Section:
        return Section(self.title, self.kind, self.source, self.status, tuple(self.blocks), dict(self.figures))


# ---- numbers in words ---------------------------------------------------------------------------


def _bad(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def num(x: Any, digits: int = 3) -> str:
    """``0.4751 -> '0.475'``, ``1565 -> '1,565'``, NaN/None -> ``'—'``."""
    if _bad(x):
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        if x != 0 and abs(x) < 10 ** (-digits):
            return f"{x:.1e}"
        return f"{x:,.{digits}f}"
    return str(x)


def pval(p: Any) -> str:
    """A p-value as people write it: ``0.609``, ``0.0042``, ``3.1e-07``."""
    if _bad(p):
        return "—"
    p = float(p)
    if p >= 0.01:
        return f"{p:.3f}"
    if p >= 0.0001:
        return f"{p:.4f}"
    return f"{p:.1e}"


def pct(x: Any, digits: int = 1) -> str:
    return "—" if _bad(x) else f"{100 * float(x):.{digits}f}%"


def interval(ci: dict[str, Any] | None, digits: int = 3, percent: bool = False) -> str:
    """``{'low': .2, 'high': .6, 'confidence': .95} -> '95% CI [0.200, 0.600]'`` (``''`` without one)."""
    if not ci or _bad(ci.get("low")) or _bad(ci.get("high")):
        return ""
    f = (lambda v: pct(v, 1)) if percent else (lambda v: f"{float(v):+.{digits}f}" if float(ci["low"]) < 0 else f"{float(v):.{digits}f}")
    conf = ci.get("confidence", 0.95)
    return f"{100 * float(conf):.0f}% CI [{f(ci['low'])}, {f(ci['high'])}]"


def wilson(k: int, n: int) -> dict[str, Any] | None:
    """Wilson 95% interval of ``k/n`` as a plain dict (``None`` when ``n`` is 0)."""
    if not n:
        return None
    from contam.stats.intervals import wilson_interval

    return wilson_interval(int(k), int(n)).to_dict()


def test_words(test: dict[str, Any] | None, digits: int = 3) -> str:
    """One clause naming a test and its figures: ``'one-sided Mann-Whitney U, p = 0.609, 95% CI [...]'``."""
    if not test:
        return "no test"
    alt = test.get("alternative")
    side = {"greater": "one-sided", "less": "one-sided (less)", "two-sided": "two-sided"}.get(str(alt), "")
    parts = [f"{side} {test.get('method', 'test')}".strip(), f"p = {pval(test.get('p_value'))}"]
    if not _bad(test.get("statistic")):
        parts.insert(1, f"statistic {num(test.get('statistic'), digits)}")
    ci = interval(test.get("ci"), digits)
    if ci:
        parts.append(ci)
    if test.get("n"):
        parts.append(f"n = {num(test['n'])}")
    return ", ".join(parts)


def evidence_status(p: Any, effect: Any, alpha: float = 0.05) -> tuple[str, str]:
    """``(status, words)`` for a one-sided test toward contamination at ``alpha``."""
    if _bad(p):
        return "info", "No verdict (no test could be run)"
    if not _bad(effect) and float(effect) > 0 and float(p) < alpha:
        return "evidence", f"Evidence of contamination (p < {alpha:g})"
    if not _bad(effect) and float(effect) <= 0:
        return "no evidence", "No evidence of contamination (no effect in its direction)"
    return "no evidence", f"No significant evidence of contamination (p ≥ {alpha:g})"
