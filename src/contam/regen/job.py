"""Batch jobs behind ``contam regen``: generate + audit many instances, the shipped replay report.

>>> parse_range("0:3", "--seeds")
[0, 1, 2]
>>> parse_range("5,7", "--seeds")
[5, 7]
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from contam.errors import ConfigError, ContamError
from contam.outputs import JsonlCheckpoint, ensure_dir, write_json
from contam.progress import track
from contam.regen.audit import Auditor, AuditReport, AuditRow
from contam.regen.generate import generate_full, world_map
from contam.regen.replay import ReplayOracle
from contam.regen.world import DOMAINS, load_tasks


class InvalidInstances(ContamError):
    """At least one generated instance failed its audit (the run still wrote everything)."""


def parse_range(spec: str, what: str) -> list[int]:
    """``"a:b"`` (b exclusive), ``"a,b,c"`` or ``"n"`` as a list of non-negative ints."""
    try:
        if ":" in spec:
            a, b = spec.split(":", 1)
            out = list(range(int(a), int(b)))
        else:
            out = [int(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{what} {spec!r}: expected A:B, a comma list, or one integer") from None
    if not out or min(out) < 0:
        raise ConfigError(f"{what} {spec!r}: expected a non-empty range of non-negative integers")
    return out


def domains_of(domain: str) -> tuple[str, ...]:
    if domain == "all":
        return DOMAINS
    if domain not in DOMAINS:
        raise ConfigError(f"--domain {domain!r}: choose retail, airline or all")
    return (domain,)


def _jobs(domains: tuple[str, ...], seeds: list[int], tasks: list[int] | None) -> Iterator[tuple[str, int, int]]:
    # Seed-major order: every task of a seed shares the seed's map, built once.
    for seed in seeds:
        for d in domains:
            n = len(load_tasks(d))
            for i in tasks if tasks is not None else range(n):
                if i >= n:
                    raise ConfigError(f"--tasks: {d} has tasks 0..{n - 1}, not {i}")
                yield d, i, seed


def run_regen(domains: tuple[str, ...], seeds: list[int], out: str | Path, tasks: list[int] | None = None) -> dict[str, Any]:
    """Generate and audit every (domain, task, seed); write ``instances.jsonl``, ``audit.jsonl``
    and ``summary.json`` under ``out`` (resumable); raise :class:`InvalidInstances` if any failed."""
    out = ensure_dir(out)
    auditor = Auditor()
    jobs = list(_jobs(domains, seeds, tasks))
    with JsonlCheckpoint(out / "instances.jsonl", key="key") as inst_ck, JsonlCheckpoint(out / "audit.jsonl", key="key") as audit_ck:
        done = inst_ck.done & audit_ck.done
        for d, i, seed in track(jobs, "regenerating + auditing", total=len(jobs)):
            key = f"{d}/{i}/{seed}"
            if key in done:
                continue
            km = world_map(d, seed)
            inst, skm, deriv = generate_full(d, i, seed, km)
            row = auditor.check(inst, skm, deriv, km)
            rec = inst.to_dict()
            rec["key"] = inst.key
            rec["valid"] = row.valid
            inst_ck.write(rec)
            arec = row.to_dict()
            arec["valid"] = row.valid
            audit_ck.write(arec)
        wanted = {f"{d}/{i}/{s}" for d, i, s in jobs}
        rows = [AuditRow.from_dict(r) for r in audit_ck.records if r.get("key") in wanted]
    report = AuditReport.of(rows)
    summary = {"domains": list(domains), "seeds": [min(seeds), max(seeds)], "n_seeds": len(seeds), **report.to_dict(),
               "invalid_rate": report.invalid_rate, "instances": str(out / "instances.jsonl"), "audit": str(out / "audit.jsonl")}
    write_json(out / "summary.json", summary)
    if report.n_invalid:
        raise InvalidInstances(f"{report.n_invalid} of {report.n} instances failed the audit "
                               f"({', '.join(f'{k}: {v}' for k, v in report.failures.items() if v)}); see {out / 'audit.jsonl'}")
    return summary


def replay_report(domain: str) -> dict[str, Any]:
    """Replay every shipped task's reference actions on a fresh copy of the shipped world.

    Reports how many run clean and, per task, the position and kind of every tool error —
    the faithfulness baseline that re-keyed instances must reproduce.
    """
    oracle = ReplayOracle(domain)
    rows = []
    for t in load_tasks(domain):
        run = oracle.replay(t["actions"])
        rows.append({"task_index": t["index"], "n_actions": len(t["actions"]), "clean": run.clean,
                     "errors": [{"position": k, "tool": t["actions"][k]["name"], "kind": e, "message": run.observations[k]}
                                for k, e in enumerate(run.errors) if e],
                     "pattern": list(run.errors), "goal_hash": run.goal_hash})
    clean = sum(r["clean"] for r in rows)
    return {"domain": domain, "tasks": len(rows), "clean": clean, "with_errors": len(rows) - clean, "rows": rows}


def replay_reports(domains: tuple[str, ...], out: str | Path | None = None) -> list[dict[str, Any]]:
    reports = [replay_report(d) for d in domains]
    if out is not None:
        out = ensure_dir(out)
        with JsonlCheckpoint(out / "replay.jsonl", key="key", resume=False) as ck:
            for rep in reports:
                for r in rep["rows"]:
                    ck.write({"key": f"{rep['domain']}/{r['task_index']}", "domain": rep["domain"], **r})
        write_json(out / "summary.json", [{k: v for k, v in rep.items() if k != "rows"} for rep in reports])
    return reports
