"""A code prompt's preamble -- imports, ``using`` and ``#include`` lines, the namespace -- which the
semantic level compares without.

A HumanEval or MBPP task ported to C#, Java or Go opens with a block the port's harness adds
(``using System.Collections.Generic;`` ... ``namespace Solution {``), often half of the 512
characters the encoder reads, and the same in every task of that port: it pulls every port of every
task toward every other (MBXP's C# ports met their Python sources at cosine .50-.56) and fills the
names a port is checked against with ``System``, ``Linq`` and ``Collections``. What a port keeps of
its source is the signature, the docstring and the examples, so both sides are compared without
the leading preamble (Python's ``from typing import List`` included, on the benchmark's side too).

>>> strip_preamble("using System;\\nusing System.Linq;\\n\\nnamespace Solution\\n{\\n    class Program\\n    {\\n        /// Count the vowels.")
('        /// Count the vowels.', 6)
>>> strip_preamble("from typing import List\\n\\n\\ndef f(x: List[int]) -> int:\\n    pass")
('def f(x: List[int]) -> int:\\n    pass', 1)
>>> strip_preamble("Janet's ducks lay 16 eggs per day.")
("Janet's ducks lay 16 eggs per day.", 0)
"""

from __future__ import annotations

import re
from dataclasses import replace

from contam.data import Item

__all__ = ["strip_preamble", "without_preamble"]

# One preamble line: an import of Python, Java, Kotlin, Scala, Go, JavaScript, Rust, PHP, C or C#,
# a package or namespace declaration, the harness's class (``Program``, ``Problem``, ``Solution``,
# ``Main``), or a lone brace that opens what the namespace or class wraps.
_LINE = re.compile(
    r"[ \t]*(?:using[ \t]+(?:namespace[ \t]+)?[\w.]+[ \t]*(?:=[ \t]*[\w.<>]+[ \t]*)?;|import[ \t]*\([^)]*\)|import[ \t]+[^\n]*|from[ \t]+[\w.]+[ \t]+import[ \t]+[^\n]*"
    r"|#[ \t]*include[ \t]*[<\"][^\n]*|package[ \t]+[\w.]+;?|namespace[ \t]+[\w.]+[ \t]*\{?|use[ \t]+[\w:{}, *]+;|extern[ \t]+crate[ \t]+\w+;"
    r"|<\?php|(?:const|var|let)[ \t]+\w+[ \t]*=[ \t]*require\([^\n]*|(?:(?:public|static|final)[ \t]+)*class[ \t]+(?:Program|Problem|Solution|Main)\b[^\n]*"
    r"|\{)[ \t]*(?:\n|\Z)"
)
_BLANK = re.compile(r"[ \t]*\n")


def strip_preamble(text: str) -> tuple[str, int]:
    """``text`` without its leading preamble lines (blank lines between them go too), and how many
    preamble lines were removed; a text that is only preamble is returned whole."""
    pos = n = 0
    while True:
        m = _BLANK.match(text, pos)
        if m and m.end() > pos:
            pos = m.end()
            continue
        m = _LINE.match(text, pos)
        if not m or m.end() == pos:
            break
        pos, n = m.end(), n + 1
    rest = text[pos:]
    return (rest, n) if n and rest.strip() else (text, 0)


def without_preamble(item: Item) -> Item:
    """``item`` with its question's preamble taken out (the same object when it has none)."""
    q, n = strip_preamble(item.question)
    return replace(item, question=q) if n else item
