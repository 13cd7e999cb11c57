"""Pieces shared by every CLI module: consoles, the ``--json`` switch, the ``probe`` group."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.errors import MarkupError
from rich.segment import Segment

from contam.outputs import json_default
from contam.textsafe import clean, escape, json_safe

__all__ = [
    "JsonFlag",
    "SafeConsole",
    "check_out_folder",
    "clean",
    "console",
    "emit_json",
    "err_console",
    "escape",
    "probe_app",
    "renamed_option",
]


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


# soft_wrap: a message line (a warning, "wrote PATH") stays one line, greppable, and a long path is
# never cut in two at the terminal width; tables still fit the terminal.
console = SafeConsole(highlight=False, soft_wrap=True)
err_console = SafeConsole(stderr=True, highlight=False, soft_wrap=True)

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


def renamed_option(old: str, new: str, old_value: Any, value: Any, why: str = "") -> Any:
    """The value of option ``new``, or of its hidden deprecated spelling ``old`` when only that
    was given (with a one-line note on stderr); both given is an error unless they agree."""
    from contam.errors import ConfigError

    if old_value is None:
        return value
    if value is not None and value != old_value:
        raise ConfigError(f"{old} is the old name of {new}; give only {new}")
    err_console.print(f"note: {old} is deprecated here; use {new}" + (f" ({why})" if why else ""), markup=False, highlight=False)
    return old_value


def check_out_folder(out: Path, command: str, *, inputs: Sequence[Path] = (), same: Sequence[str] = ()) -> None:
    """Refuse an ``--out`` folder whose results another command wrote (writing there would
    replace its ``summary.json`` or ``manifest.json``), or that is one of the command's own inputs.

    ``same`` lists the kinds (``contam.report.inputs.classify`` names, manifest commands) that
    ``command`` itself writes: a rerun into its own folder is allowed.
    """
    from contam.errors import ConfigError

    resolved = out.resolve()
    for p in inputs:
        if p.resolve() == resolved:
            raise ConfigError(f"--out {out} is also an input of `contam {command}`: writing there would overwrite it; choose another --out")
    if not out.is_dir():
        return
    accept = {command, *same}
    if (out / "audit.toml").is_file():
        raise ConfigError(f"--out {out} is an audit run folder: choose another --out for `contam {command}`")
    owner = _owner(out)
    if owner is not None and owner not in accept:
        whose = "a summary.json that is no contam result" if owner == "unknown" else f"the results of `contam {owner}`"
        raise ConfigError(f"--out {out} holds {whose}: `contam {command}` would replace them; choose another --out")


def _owner(folder: Path) -> str | None:
    """The command whose results ``folder`` holds (``unknown`` for a summary.json of no contam command)."""
    try:
        m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        if isinstance(m, dict) and isinstance(m.get("command"), str):
            return m["command"]
    except (OSError, ValueError):
        pass
    p = folder / "summary.json"
    if not p.is_file():
        return None
    from contam.report.inputs import classify

    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "unknown"
    return classify(data) or "unknown"
