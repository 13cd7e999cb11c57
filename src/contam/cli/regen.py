"""``contam regen``: fresh τ-bench instances with a replay oracle, their audit, the shipped
replay report, and the equivariance experiment (paper 003)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from contam.cli.common import JsonFlag, console, emit_json
from contam.textsafe import escape

regen_app = typer.Typer(
    name="regen",
    help=(
        "Evergreen tool-agent tasks: regenerate τ-bench instances (re-keyed, branch-selected) with a replay oracle, "
        "audit every one, write them; exit 2 if any is invalid.\n\n"
        "Example: contam regen --domain retail --seeds 0:1000 --out fresh/"
    ),
    invoke_without_command=True,
)

Domain = Annotated[str, typer.Option("--domain", "-d", help="retail, airline, or all.")]
Benchmark = Annotated[str, typer.Option("--benchmark", help="taubench (default: --domain picks its domains) or bfcl (BFCL v4 multi-turn).")]


def _bfcl(benchmark: str) -> bool:
    from contam.errors import ConfigError

    if benchmark not in ("taubench", "bfcl"):
        raise ConfigError(f"--benchmark {benchmark!r}: choose taubench or bfcl")
    return benchmark == "bfcl"


Semantics = Annotated[
    str,
    typer.Option(
        "--semantics",
        help="Tool behaviour: tau-bench (τ-bench's own, quirks included; the default) or fixed (its arguable bugs corrected; "
        "see docs/fresh-instances.md). Recorded in every instance.",
    ),
]


@regen_app.callback()
def regen(
    ctx: typer.Context,
    domain: Domain = "retail",
    seeds: Annotated[str, typer.Option("--seeds", help="Seeds as A:B (B exclusive), a comma list, or one integer.")] = "0:10",
    tasks: Annotated[str | None, typer.Option("--tasks", help="Only these shipped task indices (A:B or a comma list).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output folder: instances.jsonl, audit.jsonl, summary.json.")] = None,
    semantics: Semantics = "tau-bench",
    json_out: JsonFlag = False,
    benchmark: Benchmark = "taubench",
) -> None:
    """Generate fresh instances for every (task, seed), audit each one, write them; exit 2 if any is invalid.

    Example: contam regen --domain retail --seeds 0:1000 --out fresh/
    Example: contam regen --benchmark bfcl --seeds 0:100 --out fresh-bfcl/
    """
    if ctx.invoked_subcommand is not None:
        return
    from contam.errors import ConfigError

    if _bfcl(benchmark):
        from contam.cli import regen_bfcl

        if semantics != "tau-bench":
            raise ConfigError("--semantics chooses τ-bench's tool behaviour; BFCL instances always use BFCL's own classes")

        return regen_bfcl.run(seeds, tasks, out, json_out)
    from contam.regen.job import InvalidInstances, domains_of, parse_range, run_regen

    if out is None:
        raise ConfigError("--out is required to generate instances (or use a subcommand: replay, equivariance)")
    try:
        summary = run_regen(
            domains_of(domain), parse_range(seeds, "--seeds"), out, parse_range(tasks, "--tasks") if tasks else None, semantics
        )
    except InvalidInstances:
        import json

        _print_audit(json.loads((out / "summary.json").read_text()), out, json_out)
        raise
    _print_audit(summary, out, json_out)


def _print_audit(s: dict, out: Path, json_out: bool) -> None:
    if json_out:
        emit_json(s)
        return
    table = Table(title=f"regen audit ({escape(', '.join(s['domains']))}, {s['n_seeds']} seeds)")
    table.add_column("check")
    table.add_column("failed", justify="right")
    for check, n in s["failures"].items():
        table.add_row(check, str(n))
    console.print(table)
    console.print(f"semantics: {escape(s.get('semantics', 'tau-bench'))}")
    console.print(f"instances: {s['n']}  invalid: {s['n_invalid']}  (rate {s['invalid_rate']:.4f})  by domain: {s['by_domain']}")
    console.print(f"written: {escape(str(out))}/instances.jsonl, audit.jsonl, summary.json")


@regen_app.command("replay")
def replay(
    domain: Domain = "all",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Folder for replay.jsonl (per task) + summary.json.")] = None,
    semantics: Semantics = "tau-bench",
    json_out: JsonFlag = False,
) -> None:
    """Replay every shipped task's reference actions: how many run clean, and each tool error by position.

    Example: contam regen replay --domain retail
    """
    from contam.regen.job import domains_of, replay_reports

    reports = replay_reports(domains_of(domain), out, semantics)
    if json_out:
        emit_json(reports)
        return
    for rep in reports:
        table = Table(title=f"{rep['domain']}: {rep['clean']} of {rep['tasks']} shipped references replay clean")
        table.add_column("task", justify="right")
        table.add_column("actions", justify="right")
        table.add_column("errors (position: tool → kind)")
        for r in rep["rows"]:
            if r["errors"]:
                table.add_row(
                    str(r["task_index"]),
                    str(r["n_actions"]),
                    escape("; ".join(f"{e['position']}: {e['tool']} → {e['kind']}" for e in r["errors"])),
                )
        console.print(table)


@regen_app.command("equivariance")
def equivariance(
    sql_seeds: Annotated[str, typer.Option("--sql-seeds", help="Regenerated SQLite worlds (A:B).")] = "1:51",
    tau_seeds: Annotated[str, typer.Option("--tau-seeds", help="Regenerated τ-bench seeds (A:B), both domains.")] = "1:11",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Folder for boundary.jsonl + summary.json.")] = None,
    json_out: JsonFlag = False,
    benchmark: Benchmark = "taubench",
    bfcl_seeds: Annotated[str, typer.Option("--bfcl-seeds", help="Held-out BFCL seeds (A:B).")] = "100:103",
    tasks: Annotated[str | None, typer.Option("--tasks", help="BFCL: only these task positions (0..799).")] = None,
) -> None:
    """The boundary table: which leaked artifact survives regeneration, scored which way, against which adversary.

    Example: contam regen equivariance --sql-seeds 1:51 --tau-seeds 1:11
    Example: contam regen equivariance --benchmark bfcl --bfcl-seeds 100:103
    """
    if _bfcl(benchmark):
        from contam.cli import regen_bfcl

        return regen_bfcl.equivariance(bfcl_seeds, tasks, out, json_out)
    from contam.outputs import JsonlCheckpoint, ensure_dir, write_json
    from contam.regen.equivariance import sql_experiment, taubench_experiment
    from contam.regen.job import parse_range

    rows = sql_experiment(parse_range(sql_seeds, "--sql-seeds")) + taubench_experiment(parse_range(tau_seeds, "--tau-seeds"))
    if out is not None:
        ensure_dir(out)
        with JsonlCheckpoint(out / "boundary.jsonl", key="leaked_artifact", resume=False) as ck:
            for r in rows:
                ck.write(r)
        write_json(out / "summary.json", {"rows": [r.to_dict() for r in rows]})
    if json_out:
        emit_json([r.to_dict() for r in rows])
        return
    table = Table(title="scored-target equivariance: pass rate of a perfectly leaked artifact on fresh instances", width=180)
    for col in (
        "substrate",
        "scored",
        "leaked artifact",
        "adv.",
        "n",
        "pass",
        "moved",
        "pass|moved",
        "flipped",
        "pass|flip",
        "regen holds?",
    ):
        table.add_column(col, justify="right" if col in ("n", "pass", "moved", "pass|moved", "flipped", "pass|flip") else "left")
    for r in rows:
        flip = f"{r.pass_flipped:.3f}" if r.pass_flipped is not None else "-"
        table.add_row(
            r.substrate,
            escape(r.scored_target),
            escape(r.leaked_artifact),
            r.adversary,
            str(r.n),
            f"{r.pass_all:.3f}",
            str(r.n_moved),
            f"{r.pass_moved:.3f}",
            str(r.n_flipped or "-"),
            flip,
            escape(r.regeneration_holds),
        )
    console.print(table)
    console.print(
        "moved: fresh instances whose goal differs from their initial state (SQL: whose answer changed); "
        "flipped: branch-selected instances whose re-derived program differs from the shipped one."
    )


@regen_app.command("grade")
def grade(
    instances: Annotated[Path, typer.Option("--instances", "-i", help="instances.jsonl written by `contam regen`.")],
    episodes: Annotated[Path, typer.Option("--episodes", "-e", help="JSONL: key, actions [{name, kwargs}], messages [str].")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for graded.jsonl (key, passed, ...) + summary.json.")],
    json_out: JsonFlag = False,
) -> None:
    """Grade an agent's episodes on regenerated instances (final-state hash + required outputs, as τ-bench).

    Example: contam regen grade --instances fresh/instances.jsonl --episodes runs/agent.jsonl --out runs/graded
    """
    from contam.regen.job import grade_episodes

    summary = grade_episodes(instances, episodes, out)
    if json_out:
        emit_json(summary)
        return
    console.print(
        f"graded {summary['episodes']} episodes: {summary['passed']} passed (rate {summary['pass_rate']:.3f}); "
        f"per episode: {escape(str(out))}/graded.jsonl (feed two of them to `contam stats mcnemar`)"
    )


def register(app: typer.Typer) -> None:
    """Add ``contam regen`` (with ``replay`` and ``equivariance``) to ``app``."""
    app.add_typer(regen_app, name="regen")
