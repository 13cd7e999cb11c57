"""Figure code inside a problem's text: what the semantic level compares without it.

Competition-math benchmarks (MATH, AoPS problems) embed their figures as Asymptote code between
``[asy]`` and ``[/asy]`` (or LaTeX's ``asy`` environment), and some as TikZ (``\\begin{tikzpicture}`` … ``\\end{tikzpicture}``).
The code is drawing instructions (coordinates, pens, labels), often longer than the problem
itself, so it dominates the text's embedding, fills the numbers a paraphrase is checked against with
coordinates, and pushes the problem past the embedder's first 512 characters. Rewrites keep it,
drop it, or (LLM rewrites, seen in BenBench's ChatGPT rewrites of MATH) add a figure of their own.
The problem statement is what a paraphrase preserves, so both sides are compared without figures.

>>> strip_figures("Find $x$. [asy] draw((0,0)--(1,1)); label(\\"$x$\\", (0.5,0.5)); [/asy] In degrees.")
('Find $x$. In degrees.', 1)
>>> strip_figures("No figure here.")
('No figure here.', 0)
"""

from __future__ import annotations

import re
from dataclasses import replace

from contam.data import Item

__all__ = ["strip_figures", "without_figures"]

# An unclosed block (a text cut short) runs to the end: what follows "[asy]" is code either way.
_FIGURE = re.compile(
    r"\[asy\].*?(?:\[/asy\]|\Z)|\\begin\{(asy|tikzpicture)\}.*?(?:\\end\{\1\}|\Z)",
    re.S | re.I,
)
_CUE = re.compile(r"\[asy\]|\\begin\{(?:asy|tikzpicture)\}", re.I)


def strip_figures(text: str) -> tuple[str, int]:
    """``text`` without its Asymptote and TikZ figure code, and how many figures were removed.

    The spaces around a removed figure collapse to one, so the problem reads on as it would in print.
    """
    if not _CUE.search(text):  # almost every text: one scan
        return text, 0
    out, n = _FIGURE.subn(" ", text)
    out = re.sub(r"[ \t]{2,}", " ", out)
    out = re.sub(r"[ \t]+(\n|$)", r"\1", out)
    out = re.sub(r"[ \t]+([.,;:?!])", r"\1", out)
    return out.strip(), n


def without_figures(item: Item) -> Item:
    """``item`` with the figure code taken out of its question and solution (the same object when it
    has none, so the common case costs nothing)."""
    q, nq = strip_figures(item.question)
    s, ns = strip_figures(item.solution) if item.solution else (item.solution, 0)
    if not (nq or ns):
        return item
    return replace(item, question=q or item.question, solution=s)
