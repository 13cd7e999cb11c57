"""Griffe extension for the API reference: make contam's plain docstrings read well as Markdown.

contam's docstrings are prose with doctest examples and Sphinx roles, not Google sections.
Rendered as Markdown as they are, a ``>>>`` line would become a triple blockquote and
``:func:`name``` would show its role. This extension, named in ``mkdocs.yml``, rewrites the
docstring text only for the docs build (the source and the doctests are untouched):

- each run of doctest lines (``>>>`` up to the next blank line) becomes a ``pycon`` code block;
- ``:role:`target``` becomes ```target``` (a ``~`` prefix keeps only the last dotted part).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const|ref|term):`(~?)([^`]+)`")


def _role(m: re.Match[str]) -> str:
    target = m.group(2)
    if m.group(1):
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def fence_doctests(text: str) -> str:
    """Wrap every run of doctest lines in a fenced ``pycon`` block at the run's indentation.

    >>> print(fence_doctests("Example:\\n\\n>>> 1 + 1\\n2\\n\\nDone."))
    Example:
    <BLANKLINE>
    ```pycon
    >>> 1 + 1
    2
    ```
    <BLANKLINE>
    Done.
    """
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith("```"):
            in_fence = not in_fence
        if not in_fence and stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i])
                i += 1
            out += [f"{indent}```pycon", *block, f"{indent}```"]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class DoctestBlocks(griffe.Extension):
    """Rewrite each docstring's doctests into code blocks and its Sphinx roles into code spans."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(_ROLE.sub(_role, obj.docstring.value))
