"""Pieces shared by every CLI module: consoles, the ``--json`` switch, the ``probe`` group."""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

import typer
from rich.console import Console

from contam.outputs import json_default

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

#: ``contam probe ...``: model-side detectors register their commands here.
probe_app = typer.Typer(
    name="probe",
    help="Model-side audit: ask a model and read its probabilities to decide if it memorized a benchmark.",
    no_args_is_help=True,
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout instead of tables.")]


def emit_json(data: Any) -> None:
    """Write ``data`` as JSON to stdout (records, numpy values and paths are converted)."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=json_default) + "\n")
    sys.stdout.flush()
