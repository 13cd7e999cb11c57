"""Pieces shared by every CLI module: consoles, the ``--json`` switch, the ``probe`` group."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.errors import MarkupError
from rich.segment import Segment

from contam.outputs import json_default
from contam.textsafe import clean, escape, json_safe

__all__ = ["JsonFlag", "SafeConsole", "clean", "console", "emit_json", "err_console", "escape", "probe_app"]


class SafeConsole(Console):
    """The one console every command prints through: whatever a caller forgot to escape, no
    terminal control, bidi override or lone surrogate from user data reaches the terminal, and
    a stray ``[/]`` in a name cannot crash the print."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        try:
            super().print(*objects, **kwargs)
        except MarkupError:
            # Unescaped user text that looks like markup: print it as it is instead of failing.
            super().print(*objects, **{**kwargs, "markup": False})

    def _render_buffer(self, buffer: Any) -> str:
        # Text segments hold the (possibly user-supplied) characters; control segments are rich's own.
        return super()._render_buffer([s if s.control else Segment(clean(s.text), s.style, s.control) for s in buffer])


console = SafeConsole(highlight=False)
err_console = SafeConsole(stderr=True, highlight=False)

#: ``contam probe ...``: model-side detectors register their commands here.
probe_app = typer.Typer(
    name="probe",
    help="Model-side audit: ask a model and read its probabilities to decide if it memorized a benchmark.",
    no_args_is_help=True,
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout instead of tables.")]


def emit_json(data: Any) -> None:
    """Write ``data`` as JSON to stdout (records, numpy values and paths are converted)."""
    sys.stdout.write(json_safe(json.dumps(data, indent=2, ensure_ascii=False, default=json_default)) + "\n")
    sys.stdout.flush()
