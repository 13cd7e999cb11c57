"""Batch jobs behind ``contam regen``: generate + audit many instances, the shipped replay report.

>>> parse_range("0:3", "--seeds")
[0, 1, 2]
>>> parse_range("5,7", "--seeds")
[5, 7]
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from contam.errors import ConfigError, ContamError, OutputError
from contam.outputs import JsonlCheckpoint, atomic_write, dumps_line, ensure_dir, write_json
from contam.progress import track
from contam.regen.audit import Auditor, AuditRow, RegenAuditReport
from contam.regen.generate import generate_full, world_map
from contam.regen.replay import ReplayOracle
from contam.regen.world import DEFAULT_SEMANTICS, DOMAINS, check_semantics, load_tasks


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


def _same_semantics(path: Path, semantics: str) -> None:
    """Refuse to resume into ``instances.jsonl`` written under other semantics (goals would mix)."""
    import json

    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            first = fh.readline()
    except OSError:
        return  # no instances yet
    try:
        had = json.loads(first).get("semantics", DEFAULT_SEMANTICS)
    except (json.JSONDecodeError, AttributeError):
        return  # a torn file: keep_done trims it
    if had != semantics:
        raise ConfigError(f"{path} holds instances generated with --semantics {had}; write --semantics {semantics} to another --out")


def keep_done(path: Path, done: set[str]) -> None:
    """Drop instance lines whose audit row is missing (a run killed between the two writes)."""
    import json

    if not path.exists():
        return
    with open(path, encoding="utf-8", errors="replace") as src, atomic_write(path) as dst:
        for raw in src:
            if not raw.endswith("\n"):
                break
            try:
                key = json.loads(raw).get("key")
            except (json.JSONDecodeError, AttributeError):
                break
            if key in done:
                dst.write(raw)


def run_regen(
    domains: tuple[str, ...], seeds: list[int], out: str | Path, tasks: list[int] | None = None, semantics: str = DEFAULT_SEMANTICS
) -> dict[str, Any]:
    """Generate and audit every (domain, task, seed); write ``instances.jsonl``, ``audit.jsonl``
    and ``summary.json`` under ``out`` (resumable); raise :class:`InvalidInstances` if any failed.
    ``semantics`` (``tau-bench`` or ``fixed``) is recorded in every instance and the summary; a
    folder holding instances of the other semantics is refused rather than mixed.

    Instances stream to disk and are not kept in memory (a 1,000-seed run is ~115,000 of them);
    the audit checkpoint (small rows) decides what is done on resume.
    """
    check_semantics(semantics)
    out = ensure_dir(out)
    auditor = Auditor()
    jobs = list(_jobs(domains, seeds, tasks))
    inst_path = out / "instances.jsonl"
    _same_semantics(inst_path, semantics)
    with JsonlCheckpoint(out / "audit.jsonl", key="key") as audit_ck:
        done = set(audit_ck.done)
        keep_done(inst_path, done)
        try:
            inst_fh = open(inst_path, "a", encoding="utf-8")
        except OSError as e:
            raise OutputError(f"cannot write {inst_path}: {e.strerror or e}") from None
        with inst_fh:
            for d, i, seed in track(jobs, "regenerating + auditing", total=len(jobs)):
                if f"{d}/{i}/{seed}" in done:
                    continue
                km = world_map(d, seed)
                inst, skm, deriv = generate_full(d, i, seed, km, semantics)
                row = auditor.check(inst, skm, deriv, km)
                rec = inst.to_dict()
                rec["key"] = inst.key
                write_checked(inst_fh, audit_ck, rec, row)
        wanted = {f"{d}/{i}/{s}" for d, i, s in jobs}
        rows = [AuditRow.from_dict(r) for r in audit_ck.records if r.get("key") in wanted]
    report = RegenAuditReport.of(rows)
    summary = {
        "domains": list(domains),
        "seeds": [min(seeds), max(seeds)],
        "n_seeds": len(seeds),
        "semantics": semantics,
        **report.to_dict(),
        "invalid_rate": report.invalid_rate,
        "instances": str(inst_path),
        "audit": str(out / "audit.jsonl"),
    }
    return finish_run(out, report, summary)


def write_checked(inst_fh: IO[str], audit_ck: JsonlCheckpoint, rec: dict[str, Any], row: AuditRow) -> None:
    """Append one instance and then its audit row, both marked with the row's validity.

    The instance goes first and is flushed: the audit file is the checkpoint, so a row there
    always has its instance on disk (both benchmarks' jobs write through here).
    """
    rec["valid"] = row.valid
    inst_fh.write(dumps_line(rec) + "\n")
    inst_fh.flush()
    arec = row.to_dict()
    arec["valid"] = row.valid
    audit_ck.write(arec)


def finish_run(out: Path, report: RegenAuditReport, summary: dict[str, Any]) -> dict[str, Any]:
    """Write ``summary.json`` atomically, then raise :class:`InvalidInstances` if any instance failed.

    The summary is written first so that a failed run still says what failed (both benchmarks' jobs end here).
    """
    write_json(out / "summary.json", summary)
    if report.n_invalid:
        raise InvalidInstances(
            f"{report.n_invalid} of {report.n} instances failed the audit "
            f"({', '.join(f'{k}: {v}' for k, v in report.failures.items() if v)}); see {out / 'audit.jsonl'}"
        )
    return summary


def replay_report(domain: str, semantics: str = DEFAULT_SEMANTICS) -> dict[str, Any]:
    """Replay every shipped task's gold actions on a fresh copy of the shipped world.

    Reports how many run clean and, per task, the position and kind of every tool error —
    the faithfulness baseline that re-keyed instances must reproduce.
    """
    oracle = ReplayOracle(domain, semantics=semantics)
    rows = []
    for t in load_tasks(domain):
        run = oracle.replay(t["actions"])
        rows.append(
            {
                "task_index": t["index"],
                "n_actions": len(t["actions"]),
                "clean": run.clean,
                "errors": [
                    {"position": k, "tool": t["actions"][k]["name"], "kind": e, "message": run.observations[k]}
                    for k, e in enumerate(run.errors)
                    if e
                ],
                "pattern": list(run.errors),
                "goal_hash": run.goal_hash,
            }
        )
    clean = sum(r["clean"] for r in rows)
    return {"domain": domain, "semantics": semantics, "tasks": len(rows), "clean": clean, "with_errors": len(rows) - clean, "rows": rows}


def replay_reports(domains: tuple[str, ...], out: str | Path | None = None, semantics: str = DEFAULT_SEMANTICS) -> list[dict[str, Any]]:
    reports = [replay_report(d, semantics) for d in domains]
    if out is not None:
        out = ensure_dir(out)
        with JsonlCheckpoint(out / "replay.jsonl", key="key", resume=False) as ck:
            for rep in reports:
                for r in rep["rows"]:
                    ck.write({"key": f"{rep['domain']}/{r['task_index']}", "domain": rep["domain"], **r})
        write_json(out / "summary.json", [{k: v for k, v in rep.items() if k != "rows"} for rep in reports])
    return reports


def _read_jsonl(path: str | Path, need: tuple[str, ...]) -> list[dict[str, Any]]:
    import json

    from contam.errors import InputError

    rows = []
    try:
        fh = open(path, encoding="utf-8-sig")  # -sig: a byte-order mark opening the file is not data
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path=path) from None
    with fh:
        lines = enumerate(fh, 1)
        while True:
            try:
                ln, raw = next(lines)
            except StopIteration:
                break
            except UnicodeDecodeError as e:
                raise InputError(f"not valid UTF-8 (byte {e.start})", path=path, line=len(rows) + 1) from None
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError as e:
                raise InputError(f"not valid JSON ({e.msg} at column {e.colno})", path=path, line=ln) from None
            except RecursionError:
                raise InputError("JSON nested too deeply to read", path=path, line=ln) from None
            if not isinstance(rec, dict):
                raise InputError("expected a JSON object", path=path, line=ln)
            for f in need:
                if f not in rec:
                    raise InputError("missing", path=path, line=ln, field=f)
            rec["_line"] = ln
            rows.append(rec)
    return rows


def grade_episodes(instances: str | Path, episodes: str | Path, out: str | Path | None = None) -> dict[str, Any]:
    """Grade agent episodes against regenerated instances, τ-bench style.

    ``episodes`` is JSONL with ``key`` (an instance key, ``domain/task/seed``), ``actions``
    (the agent's tool calls, ``[{"name", "kwargs"}]``) and optionally ``messages`` (what the agent
    said). Each episode is replayed on a fresh copy of its instance's world; it passes when the
    final-state hash equals the instance's goal hash and every required output was said. Writes
    ``graded.jsonl`` (``key``, ``passed``, ...) — the input of ``contam stats mcnemar``.
    """
    from contam.errors import reading
    from contam.regen.generate import Instance

    insts = {}
    for r in _read_jsonl(instances, ("key", "domain", "task_index", "seed", "goal_hash")):
        with reading(instances, line=r["_line"], what="not an instance `contam regen` wrote"):
            insts[r["key"]] = Instance.from_dict(r)
    rows = []
    for ep in track(_read_jsonl(episodes, ("key", "actions")), "grading episodes"):
        with reading(episodes, line=ep["_line"], what="not an episode that can be graded"):
            rows.append(_grade_one(ep, insts, instances, episodes))
    summary = {
        "episodes": len(rows),
        "passed": sum(r["passed"] for r in rows),
        "pass_rate": sum(r["passed"] for r in rows) / len(rows) if rows else float("nan"),
    }
    if out is not None:
        out = ensure_dir(out)
        with JsonlCheckpoint(out / "graded.jsonl", key="key", resume=False) as ck:
            for r in rows:
                ck.write(r)
        write_json(out / "summary.json", summary)
    return summary


def _grade_one(ep: dict[str, Any], insts: dict[str, Any], instances: str | Path, episodes: str | Path) -> dict[str, Any]:
    """One episode's grade row (see :func:`grade_episodes`)."""
    from contam.errors import InputError
    from contam.regen.generate import world_state
    from contam.regen.rekey import map_digest
    from contam.regen.replay import outputs_found, run_actions

    if not isinstance(ep["key"], str):
        raise InputError(f"expected a string, found {type(ep['key']).__name__}", path=episodes, line=ep["_line"], field="key")
    inst = insts.get(ep["key"])
    if inst is None:
        raise InputError(f"no instance {ep['key']!r} in {instances}", path=episodes, line=ep["_line"], field="key")
    acts = ep["actions"]
    if not isinstance(acts, list) or not all(isinstance(a, dict) and isinstance(a.get("name"), str) for a in acts):
        raise InputError("expected a list of {name, kwargs} objects", path=episodes, line=ep["_line"], field="actions")
    msgs = ep.get("messages") or []
    if not isinstance(msgs, list) or not all(isinstance(m, str) for m in msgs):
        raise InputError("expected a list of strings", path=episodes, line=ep["_line"], field="messages")
    km = world_map(inst.domain, inst.seed)
    if inst.world.get("map_digest") not in (None, map_digest(km)):
        raise InputError(
            "the instance's world map differs from this generator's at its seed (another contam version?)",
            path=instances,
            field="world.map_digest",
        )
    run = run_actions(inst.domain, world_state(inst, km), acts)
    found = list(outputs_found(inst.outputs, msgs, inst.semantics))
    match = run.goal_hash == inst.goal_hash
    return {
        "key": inst.key,
        "passed": match and all(found),
        "state_match": match,
        "outputs_found": found,
        "tool_errors": sum(bool(e) for e in run.errors),
    }
