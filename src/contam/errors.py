"""The one exception family for errors a user can cause.

The CLI turns any :class:`ContamError` into a one-line message on stderr and exit code 2;
everything else is a bug and stays a traceback.
"""

from __future__ import annotations

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
        super().__init__("a scan worker process died (killed, or out of memory?); run the same scan again to resume from its last checkpoint")


class CheckFailed(ContamError):
    """A check the user asked for failed: the flag rate is over ``--fail-above``, or ``contam
    verify`` found a difference. Exit code 1, distinct from 2 (bad input or settings)."""

    exit_code = 1
