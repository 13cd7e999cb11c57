"""The BFCL half of ``contam regen`` (``--benchmark bfcl``): kept apart from the τ-bench command
module so that both can change without touching each other."""

from __future__ import annotations

import json
from pathlib import Path

from rich.table import Table

from contam.cli.common import console, emit_json
from contam.textsafe import escape


def run(seeds: str, tasks: str | None, out: Path | None, json_out: bool) -> None:
    """``contam regen --benchmark bfcl``: regenerate + audit, print the audit and the coverage."""
    from contam.errors import ConfigError
    from contam.regen.bfcl.job import run_bfcl
    from contam.regen.job import InvalidInstances, parse_range

    if out is None:
        raise ConfigError("--out is required to generate instances (or use a subcommand: equivariance)")
    try:
        summary = run_bfcl(parse_range(seeds, "--seeds"), out, parse_range(tasks, "--tasks") if tasks else None)
    except InvalidInstances:
        _print(json.loads((out / "summary.json").read_text()), out, json_out)
        raise
    _print(summary, out, json_out)


def _print(s: dict, out: Path, json_out: bool) -> None:
    if json_out:
        emit_json(s)
        return
    table = Table(title=f"BFCL multi-turn regen audit ({s['n_seeds']} seeds)")
    table.add_column("check")
    table.add_column("failed", justify="right")
    for check, n in s["failures"].items():
        table.add_row(check, str(n))
    console.print(table)
    cov = Table(title=f"coverage: {s['clean']} of {s['task_seeds']} (task, seed) regenerate with a clean audit ({s['coverage']:.1%})")
    cov.add_column("category")
    cov.add_column("clean / tasks", justify="right")
    for cat, v in s["by_category"].items():
        cov.add_row(cat, f"{v['clean']} / {v['tasks']}")
    console.print(cov)
    for reason, n in s["rejected_by_reason"].items():
        console.print(f"rejected {n}: {escape(reason)} — {escape(s['reasons'].get(reason, ''))}")
    console.print(f"instances: {s['n']}  invalid: {s['n_invalid']}  (rate {s['invalid_rate']:.4f})")
    # rejections.jsonl exists only once a task was rejected; name only what is on disk.
    names = [n for n in ("instances.jsonl", "audit.jsonl", "rejections.jsonl", "summary.json") if (out / n).exists()]
    console.print(f"written: {escape(str(out))}/{', '.join(names)}")


def equivariance(seeds: str, tasks: str | None, out: Path | None, json_out: bool) -> None:
    """``contam regen equivariance --benchmark bfcl``: paper 003's boundary table on BFCL."""
    from contam.outputs import ensure_dir, write_json
    from contam.regen.bfcl.equivariance import bfcl_experiment
    from contam.regen.bfcl.job import select_tasks
    from contam.regen.job import parse_range

    rows, meta = bfcl_experiment(parse_range(seeds, "--bfcl-seeds"), select_tasks(parse_range(tasks, "--tasks") if tasks else None))
    if out is not None:
        ensure_dir(out)
        write_json(out / "summary.json", {**meta, "rows": [r.to_dict() for r in rows]})
    if json_out:
        emit_json({**meta, "rows": [r.to_dict() for r in rows]})
        return
    table = Table(title=f"BFCL v4 multi-turn, held-out seeds {escape(seeds)}: pass rate of a perfectly leaked artifact", width=170)
    for col in ("leaked artifact", "adv.", "pass / n", "pass [95% CI]", "moved", "pass|moved [95% CI]", "regen holds?"):
        table.add_column(col, justify="left" if col in ("leaked artifact", "adv.", "regen holds?") else "right")
    for r in rows:
        table.add_row(
            escape(r.leaked_artifact),
            r.adversary,
            f"{r.passed} / {r.n}",
            f"{r.pass_all:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]",
            str(r.n_moved),
            f"{r.pass_moved:.3f} [{r.moved_ci_low:.3f}, {r.moved_ci_high:.3f}]",
            escape(r.regeneration_holds),
        )
    console.print(table)
    console.print(
        f"{meta['instances']} fresh instances of {meta['tasks']} tasks (rejected (task, seed): {meta['rejected']}); "
        "scored by BFCL's multi-turn checker (state after each turn, attribute-wise, and the turn's outputs); "
        "moved: the fresh goal differs from the shipped goal at some checked turn; 95% Wilson intervals."
    )
