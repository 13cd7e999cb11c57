"""The one option vocabulary of every ``contam probe`` command (issue 17).

Every probe command takes the same options, with the same meaning:

* ``--limit N`` (``-n``): the first N benchmark items (lm-evaluation-harness's word); ``--n`` is a
  hidden alias kept for old scripts.
* ``--variants PATH``: an isomorphic variant set written by ``contam perturb`` (JSONL file or its
  folder): each original item paired with its variant(s).
* ``--control SPEC``: a clean benchmark or post-cutoff set (a benchmark name or file; SWE-bench
  format for the ``swe-*`` commands): an unpaired comparison set.
* ``--ref-model SPEC``: a second model (a base checkpoint, or a reference model that predates the
  benchmark).
* ``--seed``, ``--out DIR`` (resumable), ``--json``.

``--reference`` used to mean a variant set in one command and a control benchmark in another; it
is a hidden, deprecated alias of whichever of the two the command meant. A command that has no use
for one of the shared options says so in one line (exit 2) instead of ignoring it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contam.cli.common import JsonFlag, err_console
from contam.errors import ConfigError

__all__ = [
    "SHARED_OPTIONS",
    "ControlOpt",
    "JsonFlag",
    "LimitOpt",
    "NAlias",
    "OutOpt",
    "RefModelOpt",
    "ReferenceAlias",
    "SeedOpt",
    "VariantsOpt",
    "limit_of",
    "not_used",
    "reference_alias",
]

LimitOpt = Annotated[int, typer.Option("--limit", "-n", min=0, help="Use the first N benchmark items (0 = all).")]
NAlias = Annotated[int | None, typer.Option("--n", hidden=True, min=0, help="Deprecated alias of --limit.")]
VariantsOpt = Annotated[
    Path | None,
    typer.Option(
        "--variants", help="Isomorphic reference set written by `contam perturb` (JSONL file or its folder): each item's variant(s)."
    ),
]
ControlOpt = Annotated[
    str | None, typer.Option("--control", "-c", help="Clean control set: a benchmark name or file (clean or post-cutoff items), unpaired.")
]
RefModelOpt = Annotated[
    str | None,
    typer.Option(
        "--ref-model",
        help="A second model spec: the model's base checkpoint, or a reference model (e.g. gemma3-270m, extra contam[gemma]).",
    ),
]
ReferenceAlias = Annotated[
    str | None,
    typer.Option("--reference", "-r", hidden=True, help="Deprecated: use --variants (a perturb set) or --control (a clean set)."),
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed for sampling, resampling and per-item random choices.")]
OutOpt = Annotated[
    Path | None, typer.Option("--out", "-o", help="Folder for items.jsonl + summary.json; rerun with the same folder to resume.")
]

#: The options every ``contam probe`` command shows in ``--help`` (a test over the Typer app checks them).
SHARED_OPTIONS = ("--limit", "--variants", "--control", "--ref-model", "--seed", "--out", "--json")


def limit_of(limit: int, n_alias: int | None) -> int:
    """``--limit``, or the deprecated ``--n`` when only that was given."""
    if n_alias is not None:
        if limit and limit != n_alias:
            raise ConfigError(f"--n is an old name of --limit; give one of them (got --limit {limit} and --n {n_alias})")
        return n_alias
    return limit


def reference_alias(reference: str | None, means: str, current: str | Path | None) -> str | None:
    """Fold the deprecated ``--reference`` into the option it meant in this command (``means``:
    ``--variants`` or ``--control``), with a one-line notice on stderr."""
    if reference is None:
        return None if current is None else str(current)
    if current is not None:
        raise ConfigError(f"--reference is an old name of {means}; give only {means}")
    err_console.print(f"note: --reference is deprecated here; it means {means}")
    return reference


def not_used(command: str, **given: object) -> None:
    """One clear error for a shared option this probe has no use for (never silently ignored)."""
    bad = [f"--{k.replace('_', '-')}" for k, v in given.items() if v not in (None, "", False)]
    if bad:
        raise ConfigError(
            f"`contam probe {command}` does not use {', '.join(bad)} (see docs/model-side.md for which probe takes which set)"
        )
