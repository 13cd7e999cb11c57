"""What a command says when Ctrl-C stops it: one line naming what is kept and how to resume.

Resumable loops do not print anything themselves: while a ``KeyboardInterrupt`` passes through
them they :func:`note_kept` what their checkpoint holds; the console script then prints
:func:`interrupted_line` once and exits 130.

>>> reset()
>>> note_kept("8 of 50 items kept in runs/zcp")
>>> interrupted_line(["probe", "zerocot", "--model", "smollm2", "--out", "runs/zcp"])
'interrupted: 8 of 50 items kept in runs/zcp; run the same command again to resume: contam probe zerocot --model smollm2 --out runs/zcp'
"""

from __future__ import annotations

import contextlib
import shlex
import signal
import threading
from collections.abc import Iterator, Sequence
from types import FrameType

#: What the interrupted loops kept, innermost first (reset by :func:`reset` at each command).
_kept: list[str] = []
#: Whether every interrupted loop can resume (one without a checkpoint cannot).
_resumable: list[bool] = []

#: Options that make a rerun start over instead of resuming: left out of the command to rerun.
_START_OVER = ("--fresh",)


#: Set by the Ctrl-C handler :func:`install` puts in place; :func:`check` raises on it.
_requested = threading.Event()


def reset() -> None:
    """Forget what an earlier command in this process noted."""
    _kept.clear()
    _resumable.clear()
    _requested.clear()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _requested.set()
    raise KeyboardInterrupt


def install() -> None:
    """Remember a Ctrl-C as well as raising it. Python runs the handler at the next bytecode, which
    may be inside a C library's callback into Python (llama.cpp's log hook): an exception raised there
    is printed and dropped, and the run went on to exit 0. :func:`check`, called as a loop advances,
    raises it again."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)


def check() -> None:
    """Raise ``KeyboardInterrupt`` if a Ctrl-C came and was swallowed (main thread only)."""
    if _requested.is_set() and threading.current_thread() is threading.main_thread():
        raise KeyboardInterrupt


def note_kept(what: str, resumable: bool = True) -> None:
    """Record what an interrupted loop kept (``"8 of 50 items kept in runs/zcp"``); ``resumable``
    False: it had nowhere to keep anything, so a rerun starts over."""
    _kept.append(what)
    _resumable.append(resumable)


@contextlib.contextmanager
def keeping(describe: object, resumable: bool = True) -> Iterator[None]:
    """Run the block; if Ctrl-C stops it, note ``describe()`` (or ``str(describe)``) and re-raise."""
    try:
        yield
    except KeyboardInterrupt:
        note_kept(str(describe() if callable(describe) else describe), resumable)
        raise


def resume_command(argv: Sequence[str]) -> str:
    """The command line to run again: ``argv`` without the options that would start over."""
    return shlex.join(["contam", *(a for a in argv if a not in _START_OVER)])


def interrupted_line(argv: Sequence[str]) -> str:
    """The one line an interrupted command prints: what is kept, outermost first, and the command to resume."""
    kept = "; ".join(reversed(_kept)) if _kept else "finished work is kept"
    if not all(_resumable):
        return f"interrupted: {kept}; give --out DIR to make a run resumable"
    how = (
        "run it again without " + ", ".join(o for o in _START_OVER if o in argv)
        if any(o in argv for o in _START_OVER)
        else "run the same command again"
    )
    return f"interrupted: {kept}; {how} to resume: {resume_command(argv)}"
