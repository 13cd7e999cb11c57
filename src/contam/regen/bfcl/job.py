"""``contam regen --benchmark bfcl``: regenerate + audit every (task, seed), resumably.

Same outputs and conventions as the τ-bench job (:func:`contam.regen.job.run_regen`):
``instances.jsonl`` (one regenerated instance a line), ``audit.jsonl`` (one audit row per
instance; the checkpoint that decides what is done on resume), ``rejections.jsonl`` (a task at a
seed no draw regenerates, with its reason code) and ``summary.json`` (audit totals plus the
coverage by category and reason), all written atomically or appended line by line.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from contam.errors import ConfigError, OutputError
from contam.outputs import JsonlCheckpoint, ensure_dir
from contam.progress import track
from contam.regen.audit import AuditRow, RegenAuditReport
from contam.regen.bfcl.audit import audit
from contam.regen.bfcl.reseed import REASONS, BfclRejection, Generated, generate
from contam.regen.bfcl.world import CATEGORIES, load_tasks


def select_tasks(tasks: list[int] | None = None, category: str | None = None) -> list[str]:
    """Task ids: all 800, or one category's, optionally only the given indices (``--tasks``)."""
    rows = [t for t in load_tasks() if category in (None, "all", t.category)]
    if category not in (None, "all") and category not in CATEGORIES:
        raise ConfigError(f"--category {category!r}: choose {', '.join(CATEGORIES)} or all")
    if tasks is not None:
        n = len(rows)
        for i in tasks:
            if i >= n:
                raise ConfigError(f"--tasks: the selection has tasks 0..{n - 1}, not {i}")
        rows = [rows[i] for i in tasks]
    return [t.id for t in rows]


def coverage(rows: list[AuditRow], rejections: list[dict[str, Any]]) -> dict[str, Any]:
    """Clean-audit coverage overall and by category, and the rejections by reason."""
    by_cat: dict[str, dict[str, int]] = {c: {"tasks": 0, "clean": 0} for c in CATEGORIES}
    for r in rows:
        cat = r.domain.split("/", 1)[1]
        by_cat[cat]["tasks"] += 1
        by_cat[cat]["clean"] += int(r.valid)
    for r in rejections:
        by_cat[r["category"]]["tasks"] += 1
    total = len(rows) + len(rejections)
    clean = sum(r.valid for r in rows)
    return {
        "task_seeds": total,
        "clean": clean,
        "coverage": clean / total if total else 0.0,
        "by_category": {c: v for c, v in by_cat.items() if v["tasks"]},
        "rejected_by_reason": dict(Counter(r["reason"] for r in rejections).most_common()),
        "reasons": {k: REASONS[k] for k in sorted({r["reason"] for r in rejections})},
    }


def run_bfcl(seeds: list[int], out: str | Path, tasks: list[int] | None = None, category: str | None = None) -> dict[str, Any]:
    """Regenerate and audit every (task, seed); write the four outputs under ``out`` (resumable).

    Raises :class:`contam.regen.job.InvalidInstances` if a written instance fails its audit
    (a rejection is not a failure: nothing is written for it but its reason)."""
    from contam.regen.job import finish_run, write_checked

    out = ensure_dir(out)
    ids = select_tasks(tasks, category)
    jobs = [(tid, s) for s in seeds for tid in ids]
    inst_path = out / "instances.jsonl"
    with JsonlCheckpoint(out / "audit.jsonl", key="key") as audit_ck, JsonlCheckpoint(out / "rejections.jsonl", key="key") as rej_ck:
        done = set(audit_ck.done) | set(rej_ck.done)
        from contam.regen.job import keep_done

        keep_done(inst_path, set(audit_ck.done))
        try:
            inst_fh = open(inst_path, "a", encoding="utf-8")
        except OSError as e:
            raise OutputError(f"cannot write {inst_path}: {e.strerror or e}") from None
        with inst_fh:
            for tid, seed in track(jobs, "regenerating + auditing BFCL", total=len(jobs)):
                if f"bfcl/{tid}/{seed}" in done:
                    continue
                g = generate(tid, seed)
                if isinstance(g, BfclRejection):
                    rej_ck.write(g.to_dict())
                    continue
                assert isinstance(g, Generated)
                row = audit(g)
                write_checked(inst_fh, audit_ck, g.instance.to_dict(), row)
        wanted = {f"bfcl/{t}/{s}" for t, s in jobs}
        rows = [AuditRow.from_dict(r) for r in audit_ck.records if r.get("key") in wanted]
        rejs = [r for r in rej_ck.records if r.get("key") in wanted]
    report = RegenAuditReport.of(rows)
    summary = {
        "benchmark": "bfcl",
        "domains": sorted({r.domain for r in rows}),
        "seeds": [min(seeds), max(seeds)],
        "n_seeds": len(seeds),
        **report.to_dict(),
        "invalid_rate": report.invalid_rate,
        **coverage(rows, rejs),
        "instances": str(inst_path),
        "audit": str(out / "audit.jsonl"),
        "rejections": str(out / "rejections.jsonl"),
    }
    return finish_run(out, report, summary)
