"""``contam stats``: power analysis and the exact McNemar test for two systems on common instances."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from contam.cli.common import JsonFlag, console, emit_json
from contam.textsafe import escape

stats_app = typer.Typer(
    name="stats",
    help="Statistics for evaluations: power, sample sizes, paired tests.\n\nExample: contam stats power --n 115",
    no_args_is_help=True,
)


@stats_app.command("power")
def power(
    n: Annotated[int, typer.Option("--n", help="Instances (per arm for the unpaired design; common instances when paired).")] = 115,
    alpha: Annotated[float, typer.Option("--alpha", help="Two-sided significance level.")] = 0.05,
    power_: Annotated[float, typer.Option("--power", help="Target power.")] = 0.8,
    baseline: Annotated[float, typer.Option("--baseline", help="Pass rate of the weaker system (unpaired design).")] = 0.5,
    gap: Annotated[float, typer.Option("--gap", help="Gap to size the experiment for (0.05 = 5 points).")] = 0.05,
    discordance: Annotated[
        float, typer.Option("--discordance", help="Paired design: share of instances where the systems disagree.")
    ] = 0.3,
    json_out: JsonFlag = False,
) -> None:
    """Minimum detectable effect for unpaired and paired designs, and the n a gap needs (paper 003 §6).

    Example: contam stats power --n 115 --baseline 0.5 --gap 0.05 --discordance 0.3
    """
    from contam.errors import ConfigError
    from contam.stats.power import power_report

    for name, v in (("--alpha", alpha), ("--power", power_), ("--baseline", baseline), ("--gap", gap), ("--discordance", discordance)):
        if not 0 < v < 1:
            raise ConfigError(f"{name} {v}: must lie strictly between 0 and 1")
    if n < 2:
        raise ConfigError(f"--n {n}: need at least 2 instances")
    if baseline + gap >= 1:
        raise ConfigError(f"--baseline {baseline} + --gap {gap} = {baseline + gap:g}: the stronger system's pass rate must stay below 1")
    if gap > discordance:
        raise ConfigError(
            f"--gap {gap} exceeds --discordance {discordance}: on common instances the gap is at most the share where the systems disagree"
        )
    rep = power_report(n, alpha, power_, baseline, gap, discordance)
    if json_out:
        emit_json(rep.to_dict())
        return
    table = Table(title=f"power at n={n}, α={alpha}, power={power_}")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    table.add_row("MDE unpaired (two-proportion z, Wald)", f"{100 * rep.mde_unpaired_wald:.1f} points at baseline {baseline}")
    table.add_row("MDE unpaired (Cohen's h, = statsmodels)", f"{100 * rep.mde_unpaired_arcsine:.1f} points")
    table.add_row("MDE paired (McNemar, Connor)", f"{100 * rep.mde_paired:.1f} points at discordance {discordance}")
    table.add_row(f"n per arm for a {100 * gap:.0f}-point gap (unpaired)", str(rep.n_unpaired_for_gap))
    table.add_row(f"n common instances for a {100 * gap:.0f}-point gap (paired)", str(rep.n_paired_for_gap))
    table.add_row(f"exact McNemar power at n={n} for the gap", f"{rep.exact_mcnemar_power_at_n:.3f}")
    console.print(table)


def _outcomes(path: Path, key: str, field: str) -> dict[str, bool]:
    from contam.errors import InputError

    out: dict[str, bool] = {}
    first_line: dict[str, int] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path=path) from None
    for ln, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError:
            raise InputError("not valid JSON", path=path, line=ln) from None
        if not isinstance(rec, dict) or key not in rec:
            raise InputError("missing", path=path, line=ln, field=key)
        val = rec.get(field)
        if val not in (True, False, 0, 1):
            raise InputError(f"expected true/false or 0/1, got {val!r}", path=path, line=ln, field=field)
        k = str(rec[key])
        if k in out:
            # A pair is one instance: two outcomes under one key would be merged silently.
            raise InputError(f"duplicate key {k!r} (first on line {first_line[k]})", path=path, line=ln, field=key)
        first_line[k] = ln
        out[k] = bool(val)
    return out


@stats_app.command("mcnemar")
def mcnemar(
    first: Annotated[Path, typer.Argument(help="JSONL of system A's outcomes: one line per instance.")],
    second: Annotated[Path, typer.Argument(help="JSONL of system B's outcomes on the same instances.")],
    key: Annotated[str, typer.Option("--key", help="Field naming the instance (e.g. regen's domain/task/seed key).")] = "key",
    field: Annotated[str, typer.Option("--field", help="Field holding pass/fail.")] = "passed",
    alternative: Annotated[str, typer.Option("--alternative", help="greater (A better), less, or two-sided.")] = "two-sided",
    json_out: JsonFlag = False,
) -> None:
    """Exact McNemar test for two systems graded on common (seeded) instances, paired by key.

    Example: contam stats mcnemar runs/a.jsonl runs/b.jsonl --key key --field passed
    """
    from contam.errors import ConfigError
    from contam.stats.tests import mcnemar_exact

    a, b = _outcomes(first, key, field), _outcomes(second, key, field)
    common = sorted(set(a) & set(b))
    if not common:
        raise ConfigError(f"{first} and {second} share no instance keys (field {key!r})")
    res = mcnemar_exact([float(a[k]) for k in common], [float(b[k]) for k in common], alternative=alternative)
    n10 = sum(a[k] and not b[k] for k in common)
    n01 = sum(b[k] and not a[k] for k in common)
    data = {
        "n_common": len(common),
        "only_first": n10,
        "only_second": n01,
        "pass_first": sum(a[k] for k in common) / len(common),
        "pass_second": sum(b[k] for k in common) / len(common),
        "alternative": alternative,
        **res.to_dict(),
    }
    if json_out:
        emit_json(data)
        return
    table = Table(title=f"exact McNemar: {escape(first.name)} vs {escape(second.name)}")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for k in ("n_common", "pass_first", "pass_second", "only_first", "only_second"):
        v = data[k]
        table.add_row(k, f"{v:.3f}" if isinstance(v, float) else str(v))
    table.add_row("p-value", f"{res.p_value:.4g}")
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add ``contam stats`` (power, mcnemar) to ``app``."""
    app.add_typer(stats_app, name="stats")
