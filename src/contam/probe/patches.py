"""Read a SWE-bench gold ``patch``: which files it touches and which Python functions it changes.

The unified diff is parsed by ``unidiff``; this module adds the Python-aware part: each changed
line is mapped to its innermost enclosing ``def``/``class``. SWE-bench diffs carry git's function
context in every hunk header (``@@ -243,6 +243,8 @@ def pixel_to_world_values(self, ...)``), which
names the *nearest preceding* definition, not necessarily the enclosing one, so definitions seen
inside the hunk's own lines win, and an unindented line inside the hunk ends the header's scope.

The file itself is not available (only the patch), so a changed function's *gold* text is its
post-image lines inside the patch: the context and added lines that the hunks show for it. That
is what the function-reproduction and prefix-completion diagnostics compare against.

>>> p = parse_patch('''diff --git a/m.py b/m.py
... --- a/m.py
... +++ b/m.py
... @@ -1,3 +1,3 @@ class A:
...      def f(self):
... -        return 1
... +        return 2
...      x = 3
... ''')
>>> p.files, [f.qualname for f in p.functions]
(('m.py',), ['A.f'])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from contam.errors import InputError
from contam.records import Record

if TYPE_CHECKING:
    from unidiff.patch import Hunk

_DEF = re.compile(r"^(\s*)(?:async\s+def|def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")


def _kind(definition: re.Match[str]) -> str:
    """``class`` or ``def`` (``async def`` included) for a :data:`_DEF` match."""
    return "class" if definition.group(0).lstrip().startswith("class") else "def"


@dataclass(frozen=True)
class ChangedFunction(Record):
    """A ``def`` (or, for class-body changes, a ``class``) that the patch modifies.

    ``post_lines`` are the function's post-image lines visible in the patch (context and added,
    in file order, hunks joined with nothing in between); ``added``/``removed`` the changed lines.
    """

    path: str
    name: str
    qualname: str
    kind: str  # "def" or "class"
    post_lines: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    first_line: int = 0  # first post-image line number shown for it
    post_numbers: tuple[int, ...] = ()  # post-image line number of each of ``post_lines``

    @property
    def gold(self) -> str:
        """The post-image text of the function as far as the patch shows it."""
        return "\n".join(self.post_lines)

    def first_block(self) -> tuple[str, ...]:
        """The leading run of post-image lines with consecutive line numbers (up to the first gap
        between hunks): a stretch of the real file with nothing missing."""
        if not self.post_numbers:
            return self.post_lines
        end = 1
        while end < len(self.post_numbers) and self.post_numbers[end] == self.post_numbers[end - 1] + 1:
            end += 1
        return self.post_lines[:end]


@dataclass(frozen=True)
class ParsedPatch(Record):
    """Files and functions a patch touches; ``module_level`` counts changed lines outside any def/class."""

    files: tuple[str, ...]
    functions: tuple[ChangedFunction, ...] = ()
    added_files: tuple[str, ...] = ()
    removed_files: tuple[str, ...] = ()
    module_level: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    @property
    def defs(self) -> tuple[ChangedFunction, ...]:
        """Changed functions and methods only (no class-body changes)."""
        return tuple(f for f in self.functions if f.kind == "def")


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _is_code(text: str) -> bool:
    """Lines that can open or close a scope: not blank, not a comment, not a decorator."""
    s = text.strip()
    return bool(s) and not s.startswith(("#", "@", ")", "]", "}"))


class _Acc:
    """Accumulates one function's lines across hunks."""

    def __init__(self, path: str, qualname: str, kind: str) -> None:
        self.path, self.qualname, self.kind = path, qualname, kind
        self.post: list[tuple[int, str]] = []
        self.added: list[str] = []
        self.removed: list[str] = []
        self.changed = False


def parse_patch(patch: str, *, source: str = "<patch>") -> ParsedPatch:
    """Parse a unified diff into files and changed functions.

    ``source`` names the input in the error raised when the text is not a diff.
    """
    from unidiff.errors import UnidiffParseError
    from unidiff.patch import PatchSet

    try:
        patch_set = PatchSet(patch)
    except UnidiffParseError as e:
        raise InputError(f"not a unified diff: {e}", path=source, field="patch") from None
    if not len(patch_set):
        raise InputError("not a unified diff: no file sections", path=source, field="patch")
    files: list[str] = []
    added_files: list[str] = []
    removed_files: list[str] = []
    accs: dict[tuple[str, str], _Acc] = {}
    module_level = 0
    for pf in patch_set:
        path = pf.path
        files.append(path)
        if pf.is_added_file:
            added_files.append(path)
        if pf.is_removed_file:
            removed_files.append(path)
        if not path.endswith(".py"):
            continue
        for hunk in pf:
            module_level += _walk_hunk(path, hunk, accs)
    functions = []
    for acc in accs.values():
        if not acc.changed:
            continue
        post = sorted(acc.post)
        name = acc.qualname.rsplit(".", 1)[-1]
        functions.append(
            ChangedFunction(
                path=acc.path,
                name=name,
                qualname=acc.qualname,
                kind=acc.kind,
                post_lines=tuple(t for _, t in post),
                added=tuple(acc.added),
                removed=tuple(acc.removed),
                first_line=post[0][0] if post else 0,
                post_numbers=tuple(n for n, _ in post),
            )
        )
    return ParsedPatch(
        files=tuple(dict.fromkeys(files)),
        functions=tuple(functions),
        added_files=tuple(added_files),
        removed_files=tuple(removed_files),
        module_level=module_level,
    )


def _header_qualname(path: str, name: str, accs: dict[tuple[str, str], _Acc]) -> str:
    """The qualified name a hunk header's bare ``def name`` most likely stands for: one seen
    earlier in the same file (``Class.name``) when there is one."""
    for p, qual in reversed(list(accs)):
        if p == path and (qual == name or qual.endswith("." + name)):
            return qual
    return name


def _walk_hunk(path: str, hunk: Hunk, accs: dict[tuple[str, str], _Acc]) -> int:
    """Assign each line of one hunk to its enclosing defs/classes; returns module-level changes.

    Post-image lines count for every enclosing scope (a method's lines are part of its class's
    text too); a changed line marks only the innermost scope as changed.
    """
    header = _DEF.match(hunk.section_header or "")
    header_live = header is not None  # until a dedent shows the hunk left it
    header_qual = _header_qualname(path, header.group(2), accs) if header else ""
    header_kind = _kind(header) if header else "def"
    body_indent: int | None = None  # smallest indent seen inside the header's scope
    stack: list[tuple[int, str, str]] = []  # (indent, qualname, kind) of in-hunk definitions
    module_level = 0
    for line in hunk:
        text = line.value.rstrip("\n").rstrip("\r")
        is_def = _DEF.match(text)
        if _is_code(text) or is_def:
            ind = _indent(text)
            while stack and stack[-1][0] >= ind:
                stack.pop()
            if header_live and not stack:
                # The header names the nearest definition *above* the hunk. An unindented line
                # leaves it; so does a def shallower than the body lines seen so far (a sibling
                # method, not a nested function), or a def opening the hunk under a def header.
                sibling = is_def and header_kind == "def" and (body_indent is None or ind < body_indent)
                if ind == 0 or sibling:
                    header_live = False
                else:
                    body_indent = ind if body_indent is None else min(body_indent, ind)
            if is_def:
                parent = stack[-1][1] if stack else (header_qual if header_live else "")
                qual = f"{parent}.{is_def.group(2)}" if parent else is_def.group(2)
                kind = _kind(is_def)
                stack.append((ind, qual, kind))
        scopes = ([(header_qual, header_kind)] if header_live else []) + [(q, k) for _, q, k in stack]
        if not scopes:
            if line.is_added or line.is_removed:
                module_level += 1
            continue
        for qual, kind in scopes:
            acc = accs.setdefault((path, qual), _Acc(path, qual, kind))
            if line.target_line_no is not None:  # context or added: part of the post-image
                acc.post.append((line.target_line_no, text))
        inner = accs[(path, scopes[-1][0])]
        if line.is_added:
            inner.added.append(text)
            inner.changed = True
        elif line.is_removed:
            inner.removed.append(text)
            inner.changed = True
    return module_level


def mentions_path(text: str, path: str) -> bool:
    """Whether an issue text already names ``path``: the full path, or its file name as a word
    (``separable.py``), or its dotted module path (``astropy.modeling.separable``). Paper 002
    filters such instances out of the file-path accuracy.

    >>> mentions_path("see astropy/modeling/separable.py", "astropy/modeling/separable.py")
    True
    >>> mentions_path("in `separable.py` the", "astropy/modeling/separable.py")
    True
    >>> mentions_path("from astropy.modeling.separable import x", "astropy/modeling/separable.py")
    True
    >>> mentions_path("the separability matrix", "astropy/modeling/separable.py")
    False
    >>> mentions_path("edit __init__.py", "sympy/core/__init__.py"), mentions_path("in core/__init__.py", "sympy/core/__init__.py")
    (False, True)
    """
    if path in text:
        return True
    parts = path.split("/")
    # a bare "__init__.py" names no file in particular: ask for its folder too
    base = "/".join(parts[-2:]) if parts[-1] == "__init__.py" and len(parts) > 1 else parts[-1]
    if re.search(rf"(?<![\w.]){re.escape(base)}(?!\w)", text):
        return True
    if path.endswith(".py"):
        module = path[:-3].replace("/", ".")
        if module.endswith(".__init__"):
            module = module[: -len(".__init__")]
        parts = module.split(".")
        # the dotted path from the package root, and without a leading src/lib folder
        for start in range(0, min(2, len(parts) - 1)):
            dotted = ".".join(parts[start:])
            if "." in dotted and re.search(rf"(?<![\w.]){re.escape(dotted)}(?![\w])", text):
                return True
    return False
