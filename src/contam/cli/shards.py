"""``contam merge`` and ``contam verify``: the run folders of a sharded scan reduced into one,
and a run checked against its manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from contam.cli.common import JsonFlag, check_out_folder, console, emit_json, err_console


def merge(
    run_dirs: Annotated[list[Path], typer.Argument(help="The --out folders of the tasks of one sharded scan.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the merged summary.json and manifest.json.")],
    fail_above: Annotated[float | None, typer.Option("--fail-above", help="Exit 1 when the merged flag rate exceeds RATE.")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Reduce the per-shard summaries of several run folders into one summary and manifest.

    Example: contam merge runs/cc-0 runs/cc-1 runs/cc-2 --out runs/cc
    """
    from contam.cli.scan import check_rate, gate_on_rate
    from contam.scan.shards import merge_runs

    check_rate(fail_above)
    check_out_folder(out, "merge", inputs=run_dirs)
    s = merge_runs(run_dirs, out)
    if json_out:
        emit_json(s)
    else:
        console.print(
            f"{s['shards']:,} shard(s) from {len(run_dirs)} run(s): {s['documents']:,} documents, {s['flagged']:,} flagged "
            f"({100 * s['flag_rate']:.3f}%), {s['items_flagged']:,} items matched; {len(s['bad_shards'])} bad shard(s)\n"
            f"wrote {escape(str(out / 'summary.json'))} and {escape(str(out / 'manifest.json'))}"
        )
    gate_on_rate(s["flag_rate"], fail_above)


def verify(
    run_dir: Annotated[Path, typer.Argument(help="The --out folder of a scan, decontaminate or merge.")],
    outputs_only: Annotated[
        bool, typer.Option("--outputs-only", help="Check the outputs only (the inputs are elsewhere or gone).")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Check every input shard (size, sha256) and every output (sha256) against manifest.json;
    exit 1 when anything differs or is missing.

    Example: contam verify runs/cc
    """
    from contam.scan.shards import verify_run

    r = verify_run(run_dir, inputs=not outputs_only)
    if json_out:
        emit_json(r)
    elif r["ok"]:
        console.print(f"ok: {r['checked']} file(s) match {escape(r['manifest'])}")
    else:
        for p in r["problems"]:
            err_console.print(escape(p), highlight=False, soft_wrap=True)
    if not r["ok"]:
        from contam.errors import CheckFailed

        raise CheckFailed(f"{len(r['problems'])} of {r['checked']} file(s) differ from {r['manifest']}")


def register(app: typer.Typer) -> None:
    """Add ``merge`` and ``verify`` to ``app``."""
    app.command("merge")(merge)
    app.command("verify")(verify)
