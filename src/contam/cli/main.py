"""The ``contam`` console script: a thin Typer layer over the Python API.

Each concern registers its commands from its own module; heavy libraries are imported inside
commands so ``contam --help`` stays instant. Errors a user can cause (:class:`ContamError`)
become one line on stderr and exit code 2.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Annotated

import click
import typer

from contam import __version__
from contam.cli.common import err_console, probe_app
from contam.errors import ContamError

# Before torch is imported by any command: OpenMP threads that spin while waiting lose 2-3x of
# their throughput as soon as anything else runs on the machine; passive waiting costs ~nothing idle.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

app = typer.Typer(
    name="contam",
    help="Find out whether an evaluation benchmark has leaked, and make fresh instances a leak cannot help with.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich",
)

# Modules that add commands; each defines ``register(app)``. Order sets the help listing.
COMMAND_MODULES = (
    "contam.cli.scan",
    "contam.cli.shards",
    "contam.cli.audit",
    "contam.cli.models",
    "contam.cli.perturb",
    "contam.cli.probe",
    "contam.cli.probe_gen",
    "contam.cli.contaminate",
    "contam.cli.regen",
    "contam.cli.stats",
    "contam.cli.report",
    "contam.cli.demo",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"contam {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """contam: data-side scans, model-side probes, and fresh benchmark instances."""


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)
app.add_typer(probe_app, name="probe")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    try:
        app(args=argv, prog_name="contam", standalone_mode=False)
    except ContamError as e:
        err_console.print(f"[bold red]error:[/] {e}", markup=True, highlight=False, soft_wrap=True)
        return e.exit_code
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.exceptions.Abort:
        err_console.print("aborted")
        return 130
    except click.ClickException as e:
        e.show()
        return e.exit_code
    except KeyboardInterrupt:
        err_console.print("interrupted: finished work is kept; run the same command again to resume")
        return 130
    return 0


def run() -> None:  # console-script target
    sys.exit(main())
