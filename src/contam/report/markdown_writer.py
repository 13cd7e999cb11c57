"""Markdown writer (GitHub-flavoured): everything escaped, tables that stay tables.

Text runs escape every character Markdown or inline HTML could act on (backslash, backtick,
``* _ [ ] < > | ~ & # $``), so benchmark text such as ``<script>``, ``**bold**`` or
``| pipe |`` shows as written and cannot break a table row. Newlines inside a run become
``<br>`` (a line break that stays inside its cell, paragraph or quote). Code runs use a
backtick fence longer than any backtick run inside them.

>>> md_text("a | b *c* <script>")
'a \\\\| b \\\\*c\\\\* \\\\<script\\\\>'
>>> md_code("x`y")
'`` x`y ``'
"""

from __future__ import annotations

import re

from contam.report.model import Excerpt, Inline, Paragraph, Report, Section, Table

_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#$])")
# a paragraph that starts like a list item, quote, heading or thematic break would change meaning
_LEADING = re.compile(r"^(\s*)([-+=]|\d+[.)])")


def md_text(s: str) -> str:
    """Escape plain text; newlines become ``<br>``."""
    s = _SPECIAL.sub(r"\\\1", str(s)).replace("\r\n", "\n").replace("\r", "\n")
    return s.replace("\n", "<br>")


def md_code(s: str, table: bool = False) -> str:
    """A code span that cannot end early: fence longer than any backtick run. In a table cell
    pipes are escaped so the row keeps its columns (GFM reads ``\\|`` there as ``|``)."""
    s = str(s).replace("\r", " ").replace("\n", " ")
    if table:
        s = s.replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if longest or s.startswith(" ") or s.endswith(" ") else ""
    return f"{fence}{pad}{s}{pad}{fence}" if s else ""


def _wrap(mark: str, t: str, raw: str) -> str:
    """Emphasis around escaped text ``t`` (whitespace moved outside, where Markdown wants it)."""
    if not raw.strip():
        return t
    lead = t[: len(t) - len(t.lstrip())]
    trail = t[len(t.rstrip()) :]
    return f"{lead}{mark}{t.strip()}{mark}{trail}"


def runs_md(runs: Inline, table: bool = False, block_start: bool = False) -> str:
    """Inline runs as Markdown; ``block_start`` also escapes a leading list/heading marker."""
    out = []
    for r in runs:
        if r.style == "code":
            out.append(md_code(r.text, table))
            continue
        t = md_text(r.text)
        if r.style in ("strong", "mark"):
            t = _wrap("**", t, r.text)
        elif r.style == "em":
            t = _wrap("*", t, r.text)
        out.append(t)
    s = "".join(out)
    return _lead(s) if block_start else s


def _lead(s: str) -> str:
    """Escape a leading list, heading-underline or ordered-list marker (text that starts a block)."""
    return _LEADING.sub(lambda m: m.group(1) + "\\" + m.group(2), s, count=1)


def _table(t: Table) -> str:
    al = t.align or ("l",) * len(t.columns)
    head = "| " + " | ".join(md_text(c) for c in t.columns) + " |"
    sep = "|" + "|".join("---:" if (al[i] if i < len(al) else "l") == "r" else ":---" for i in range(len(t.columns))) + "|"
    rows = ["| " + " | ".join(runs_md(c, table=True) or " " for c in row) + " |" for row in t.rows]
    cap = [f"*{md_text(t.caption)}*", ""] if t.caption else []
    return "\n".join([*cap, head, sep, *rows])


def _block(b: Paragraph | Table | Excerpt) -> str:
    if isinstance(b, Paragraph):
        body = runs_md(b.runs, block_start=True)
        return f"> {body}" if b.role == "headline" else (f"*{body}*" if b.role == "note" and body.strip() else body)
    if isinstance(b, Table):
        return _table(b)
    one = f"{runs_md(b.label, block_start=True)}\n\n> {runs_md(b.runs, block_start=True)}"
    return one if not b.beside else f"{one}\n\n{runs_md(b.beside_label, block_start=True)}\n\n> {runs_md(b.beside, block_start=True)}"


def _section(i: int, s: Section) -> str:
    out = [f"## {i}. {md_text(s.title)} — {md_text(s.status)}", "", f"from {md_code(s.source)} ({md_text(s.kind)})"]
    for b in s.blocks:
        out += ["", _block(b)]
    return "\n".join(out)


def render_markdown(report: Report) -> str:
    """The whole report as one Markdown document."""
    lines = [f"# {md_text(report.title)}", "", f"{md_text(report.version)} · {len(report.sections)} result(s)", ""]
    for i, s in enumerate(report.sections, 1):
        lines.append(f"{i}. {_lead(md_text(s.title))} — **{md_text(s.status)}**")
    if report.skipped:
        lines += ["", "Left out: " + "; ".join(md_text(x) for x in report.skipped)]
    for i, s in enumerate(report.sections, 1):
        lines += ["", _section(i, s)]
    return "\n".join(lines) + "\n"
