"""Reading SWE-bench model answers: the file path an answer names (:func:`choose_path`,
:func:`predicted_path`), the code it holds (:func:`extract_code`), and line-level matching of
code against the gold lines (:func:`lines_in_order`, :func:`starts_with_lines`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from contam.records import Record

_FENCE_LINE = re.compile(r"^[ \t]*```[\w+.#-]*[ \t]*$", re.M)


#: Words with dots that are not file names: abbreviations a path regex would otherwise take.
_NOT_FILES = frozenset({"i.e", "e.g", "etc", "vs", "cf", "a.k.a", "et.al", "approx", "no"})
#: Path-like tokens: runs of path characters holding a ``/`` or a ``.`` (``django/db/models/base.py``,
#: ``base.py``, ``django/db``), with URLs handled first.
_CANDIDATE = re.compile(r"[A-Za-z0-9_.\-~]+(?:/[A-Za-z0-9_.\-~]+)+/?|[A-Za-z0-9_\-~]+(?:\.[A-Za-z0-9_\-~]+)+")
_URL = re.compile(r"https?://[^\s`'\"<>()\[\]]+")
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9_+\-]{0,9}$")


@dataclass(frozen=True)
class PathChoice(Record):
    """Which file path a model answer names, and why.

    ``rule``: ``known`` (the candidate is one of the repository's files the benchmark's patches
    name), ``known-suffix`` (it is the unique known file ending with the candidate), ``extension``
    (the first candidate whose last part has a file extension; one with a directory first),
    ``first`` (the first path-like candidate: no extension anywhere), or ``""`` (no candidate).
    ``candidates``: every normalised path-like token of the answer, in order.
    """

    path: str
    rule: str
    candidates: tuple[str, ...] = ()


def _normalise(p: str, repo: str) -> list[str]:
    """Spellings of one candidate; the first is the one used without known files: no ``./``, no
    diff-style ``a/``/``b/``, no leading ``owner/name/``. Later ones (the literal token, and
    without a leading ``name/``) only count when they are a known file."""
    p = p.strip("/").rstrip(".,;:")
    while p.startswith("./"):
        p = p[2:]
    literal, default = p, p
    for pre in ("a/", "b/", f"{repo}/" if repo else ""):
        if pre and default.startswith(pre) and len(default) > len(pre):
            default = default[len(pre) :]
    out = [default, literal]
    name = repo.split("/")[-1] if repo else ""
    if name and literal.startswith(f"{name}/") and len(literal) > len(name) + 1:
        out.append(literal[len(name) + 1 :])
    return list(dict.fromkeys(out))


def _url_path(url: str, repo: str) -> str:
    """The repository path inside a GitHub URL (``.../blob/<ref>/PATH``, ``.../tree/<ref>/PATH``);
    other URLs name no repository file."""
    m = re.search(r"github\.com/[^/]+/[^/]+/(?:blob|tree|raw)/[^/]+/([^#?]+)", url)
    if m:
        return m.group(1)
    m = re.search(r"raw\.githubusercontent\.com/[^/]+/[^/]+/[^/]+/([^#?]+)", url)
    return m.group(1) if m else ""


def _has_ext(p: str) -> bool:
    last = p.rsplit("/", 1)[-1]
    return bool(_EXT.search(last)) and last.casefold().rstrip(".") not in _NOT_FILES and not last.startswith(".")


def path_candidates(answer: str, repo: str = "") -> list[list[str]]:
    """Every path-like token of ``answer`` in order, each as its list of spellings
    (:func:`_normalise`). URLs give the repository path inside them, or nothing; version numbers
    (``3.2``, ``v4.0``) and abbreviations (``i.e.``, ``e.g.``) are not paths."""
    text = answer.replace("\\", "/")
    found: list[tuple[int, str]] = []
    for m in _URL.finditer(text):
        inner = _url_path(m.group(0), repo)
        if inner:
            found.append((m.start(), inner))
    text = _URL.sub(lambda m: " " * len(m.group(0)), text)
    for m in _CANDIDATE.finditer(text):
        tok = m.group(0).rstrip(".")
        last = tok.rsplit("/", 1)[-1]
        if "/" not in tok and (not _has_ext(tok) or re.fullmatch(r"v?\d+(?:\.\d+)*[a-z]?\d*", last, re.I)):
            continue  # a bare dotted word without a real extension: a version, a number, an abbreviation
        if last.casefold() in _NOT_FILES:
            continue
        found.append((m.start(), tok))
    return [_normalise(t, repo) for _, t in sorted(found, key=lambda x: x[0])]


def choose_path(answer: str, repo: str = "", known: frozenset[str] | set[str] | None = None) -> PathChoice:
    """The file path an answer names, from **every** path-like candidate (not the first match).

    Preference: a spelling that is one of the repository's ``known`` files (the files the
    benchmark's gold patches touch in that repository); else the unique known file that ends with
    a candidate; else the first candidate with a file extension (one with a directory first);
    else the first candidate. ``rule`` says which preference chose.

    >>> choose_path("In Django 3.2 the bug is in django/db/models/base.py", "django/django").path
    'django/db/models/base.py'
    >>> choose_path("See base.py, i.e. models", "django/django", {"django/db/models/base.py"}).rule
    'known-suffix'
    """
    cands = path_candidates(answer, repo)
    flat = tuple(dict.fromkeys(sp[0] for sp in cands))
    if not cands:
        return PathChoice("", "", ())
    if known:
        for spellings in cands:
            for sp in spellings:
                if sp in known:
                    return PathChoice(sp, "known", flat)
        for spellings in cands:
            hits = {k for k in known for sp in spellings if _has_ext(sp) and k.endswith("/" + sp)}
            if len(hits) == 1:
                return PathChoice(hits.pop(), "known-suffix", flat)
    with_ext = [sp[0] for sp in cands if _has_ext(sp[0])]
    if with_ext:
        return PathChoice(next((p for p in with_ext if "/" in p), with_ext[0]), "extension", flat)
    return PathChoice(cands[0][0], "first", flat)


def predicted_path(answer: str, repo: str = "", known: frozenset[str] | set[str] | None = None) -> str:
    """The file path a model answer names, normalised (no ``./``, ``a/``/``b/`` or ``owner/name/``
    prefix); see :func:`choose_path` for the rules.

    >>> predicted_path("The bug is in `./django/db/models/base.py`.", "django/django")
    'django/db/models/base.py'
    >>> predicted_path("In Django 3.2 the bug is in django/db/models/base.py", "django/django")
    'django/db/models/base.py'
    """
    return choose_path(answer, repo, known).path


def extract_code(answer: str) -> str:
    """The code in a model answer; the one normaliser of function reproduction **and** prefix
    completion, so a fenced continuation counts the same as a bare one.

    The first fence line opens a block when nothing but blanks precede it, when it carries a
    language tag (```` ```python ````), or when the text before it ends with a colon ("Here is the
    function:"); the block's content is the code (up to its closing fence or the end). Otherwise
    the fence closes code the answer began bare (a continuation that ends its imagined block),
    and the code is the text before it. No fence: the answer itself.

    >>> extract_code("```python\\n    return x\\n```\\nDone")
    '    return x\\n'
    >>> extract_code("    return x\\n```\\nMore prose")
    '    return x\\n'
    """
    m = _FENCE_LINE.search(answer)
    if not m:
        return answer
    before = answer[: m.start()]
    tag = m.group(0).strip()[3:]
    if before.strip() and not tag and not before.rstrip().endswith(":"):
        return before
    rest = answer[m.end() + 1 :]
    end = _FENCE_LINE.search(rest)
    return rest[: end.start()] if end else rest


def _lines(text: str | Sequence[str]) -> list[str]:
    seq = text.splitlines() if isinstance(text, str) else list(text)
    return [ln.strip() for ln in seq if ln.strip()]


def lines_in_order(gold: Sequence[str], output: str) -> bool:
    """Every non-blank gold line (indentation ignored) occurs in ``output``, in order.

    >>> lines_in_order(["def f():", "    return 1"], "def f():\\n    x = 0\\n    return 1")
    True
    """
    want, have = _lines(gold), iter(_lines(output))
    return bool(want) and all(any(w == h for h in have) for w in want)


def starts_with_lines(gold: Sequence[str], output: str) -> bool:
    """The output's first non-blank lines are the gold lines (indentation ignored)."""
    want, have = _lines(gold), _lines(output)
    return bool(want) and have[: len(want)] == want
