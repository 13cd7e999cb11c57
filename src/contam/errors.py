"""The one exception family for errors a user can cause.

The CLI turns any :class:`ContamError` into a one-line message on stderr and exit code 2;
everything else is a bug and stays a traceback.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator
from os import PathLike
from typing import Any


class ContamError(Exception):
    """Base class of every error caused by input, configuration or environment."""

    exit_code = 2


class InputError(ContamError):
    """Bad input data, located as precisely as we can: file, line and field.

    >>> str(InputError("not valid JSON", path="corpus.jsonl", line=7))
    'corpus.jsonl:7: not valid JSON'
    >>> str(InputError("missing", path="b.jsonl", line=3, field="question"))
    "b.jsonl:3: field 'question': missing"
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | PathLike[str] | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        super().__init__(self._render())

    def __reduce__(self) -> tuple[Any, ...]:
        # Keep path, line and field across processes (the default pickling keeps only the text).
        return _input_error, (self.message, self.path, self.line, self.field)

    def _render(self) -> str:
        where = ""
        if self.path is not None:
            where = self.path + (f":{self.line}" if self.line is not None else "") + ": "
        elif self.line is not None:
            where = f"line {self.line}: "
        what = f"field {self.field!r}: " if self.field else ""
        return f"{where}{what}{self.message}"


def _input_error(message: str, path: str | None, line: int | None, field: str | None) -> InputError:
    return InputError(message, path=path, line=line, field=field)


class ConfigError(ContamError):
    """An invalid option, unknown name or impossible combination of settings."""


class ModelError(ContamError):
    """A model could not be loaded or called (bad spec, server down, no log-probs, ...)."""


class OutputError(ContamError):
    """An output could not be written (unwritable folder, disk full, ...)."""


class WorkerDied(ContamError):
    """A worker process died (killed, or out of memory). Not the input's fault: a scan keeps
    its checkpoint, and running the same scan again resumes from it."""

    def __init__(self) -> None:
        super().__init__(
            "a scan worker process died (killed, or out of memory?); run the same scan again to resume from its last checkpoint"
        )


# Errors of the environment that a user causes or fixes (a full disk, a folder where a file was
# meant, a path without permission) and input a parser chokes on deep inside: the one place that
# turns them into a ContamError, so every command reports them as one line and exit code 2.
_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def as_contam_error(exc: BaseException) -> ContamError | None:
    """The :class:`ContamError` a user-caused low-level failure stands for, or None for a bug.

    >>> str(as_contam_error(OSError(errno.ENOSPC, "No space left on device", "out/flags.jsonl")))
    'out/flags.jsonl: disk full (No space left on device); finished work is kept, free some space and run the same command again'
    >>> as_contam_error(KeyError("x")) is None
    True
    """
    if isinstance(exc, ContamError):
        return exc
    if isinstance(exc, OSError) and not isinstance(exc, (ConnectionError, TimeoutError)):
        where = f"{exc.filename}: " if exc.filename else ""
        why = exc.strerror or str(exc)
        if exc.errno in _DISK_FULL:
            return OutputError(f"{where}disk full ({why}); finished work is kept, free some space and run the same command again")
        if exc.errno == errno.EISDIR:
            return OutputError(f"{where}is a folder, expected a file")
        if exc.errno == errno.ENOTDIR:
            return OutputError(f"{where}a part of the path is a file, expected a folder")
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return OutputError(f"{where}permission denied ({why})")
        if exc.errno == errno.ENOENT:
            return InputError("no such file or folder", path=exc.filename) if exc.filename else None
        return None
    if isinstance(exc, RecursionError):
        return InputError("nested too deeply to read (JSON nesting over Python's recursion limit)")
    if type(exc).__module__ == "sqlite3":
        msg = str(exc)
        if "full" in msg:
            return OutputError(f"response cache: {msg}; free some space (or set CONTAM_CACHE to another disk) and run again")
        if "locked" in msg or "readonly" in msg or "unable to open" in msg or "malformed" in msg or "not a database" in msg:
            return OutputError(f"response cache: {msg} (set CONTAM_CACHE to another file, or use --no-cache)")
        return None
    if type(exc).__name__ == "ZstdError":
        return InputError(f"corrupt or truncated zstd data ({exc})")
    return None


@contextlib.contextmanager
def reading(
    path: str | PathLike[str] | None, *, line: int | None = None, field: str | None = None, what: str = "unexpected content"
) -> Iterator[None]:
    """Code that interprets the content of a user's file: a type or value it did not expect
    (a string where a number should be, a missing key, a list where an object should be) is
    bad input of that file, reported as one located :class:`InputError`, not a traceback.

    >>> with reading("runs/scan1/summary.json", field="documents"):   # doctest: +ELLIPSIS
    ...     int("many")
    Traceback (most recent call last):
    ...
    contam.errors.InputError: runs/scan1/summary.json: field 'documents': unexpected content (ValueError: invalid literal for int() with base 10: 'many')
    """
    try:
        yield
    except ContamError:
        raise
    except RecursionError:
        raise InputError("nested too deeply to read", path=path, line=line, field=field) from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, ZeroDivisionError) as e:
        detail = str(e) if not isinstance(e, KeyError) else f"missing {e}"
        raise InputError(f"{what} ({type(e).__name__}: {detail[:200]})", path=path, line=line, field=field) from None


class CheckFailed(ContamError):
    """A check the user asked for failed: the flag rate is over ``--fail-above``, or ``contam
    verify`` found a difference. Exit code 1, distinct from 2 (bad input or settings)."""

    exit_code = 1
