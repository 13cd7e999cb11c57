"""The ``contam`` console script: a thin Typer layer over the Python API.

Each concern registers its commands from its own module; heavy libraries are imported inside
commands so ``contam --help`` stays instant. Errors a user can cause (:class:`ContamError`)
become one line on stderr and exit code 2.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from typing import Annotated

import typer

from contam import __version__
from contam.cli.common import clean, err_console, escape, probe_app
from contam.errors import as_contam_error

# Before torch is imported by any command: OpenMP threads that spin while waiting lose 2-3x of
# their throughput as soon as anything else runs on the machine; passive waiting costs ~nothing idle.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

app = typer.Typer(
    name="contam",
    help=(
        "Find out whether an evaluation benchmark has leaked, and make fresh instances a leak cannot help with.\n\n"
        "Start here: `contam audit` runs the whole audit in one command (scan, probes, verdict, report); "
        "`contam demo` runs one on the shipped data. The other commands run single steps."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich",
)

# Modules that add commands; each defines ``register(app)``. Order sets the help listing:
# ``audit``, where a new user starts, comes first.
COMMAND_MODULES = (
    "contam.cli.audit_run",
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
    """Entry point of the console script; returns the exit code.

    Exit codes: 0 success, 2 a usage error or an error the user can fix (bad input, bad option,
    full disk, ...: one line on stderr), 130 interrupted; anything else is a bug (a traceback).
    """
    from contam import interrupt

    args = list(sys.argv[1:] if argv is None else argv)
    interrupt.reset()
    interrupt.install()
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _note  # a deprecation a user can act on: one line, no source excerpt
            code = app(args=args, prog_name="contam", standalone_mode=False)
        if code == 130:  # Typer turns Ctrl-C (KeyboardInterrupt) into exit code 130, silently
            raise KeyboardInterrupt
    except typer.Exit as e:
        return e.exit_code
    except typer.Abort:
        err_console.print("aborted")
        return 130
    except typer.TyperException as e:
        # Usage errors (unknown option, missing argument, bad value): the usage line and the
        # message, exit 2. (Typer 0.29 raises its own vendored click's exceptions, not click's.)
        _show_usage_error(e)
        return int(getattr(e, "exit_code", 2) or 2)
    except KeyboardInterrupt:
        # The one interrupt handler: what the resumable loops kept, and the command that resumes.
        err_console.print(interrupt.interrupted_line(args), markup=False, highlight=False, soft_wrap=True)
        return 130
    except BrokenPipeError:
        # The reader of our stdout went away (`contam ... | head`): nothing left to say to it.
        _silence_stdout()
        return 141
    except Exception as e:
        err = as_contam_error(e)
        if err is None:
            raise  # a bug: keep the traceback
        print_error(err)
        return err.exit_code
    return code if isinstance(code, int) else 0


def print_error(err: BaseException) -> None:
    """The one-line ``error: ...`` message on stderr (user text escaped, newlines folded)."""
    text = " ".join(str(err).split("\n"))
    err_console.print(f"[bold red]error:[/] {escape(text)}", highlight=False, soft_wrap=True)


def _note(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: object = None, line: object = None) -> None:
    if issubclass(category, FutureWarning):
        err_console.print(f"note: {message}", markup=False, highlight=False, soft_wrap=True)
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno))


def _show_usage_error(e: typer.TyperException) -> None:
    show = getattr(e, "show", None)
    try:
        if show is None:
            raise ValueError
        show()
    except (UnicodeEncodeError, ValueError):  # a lone surrogate in the echoed argument
        sys.stderr.write(clean(f"Usage: contam --help\nError: {e.format_message()}") + "\n")


def _silence_stdout() -> None:
    # Python flushes stdout at exit and would report the broken pipe again; point it at devnull.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def run() -> None:  # console-script target
    sys.exit(main())
