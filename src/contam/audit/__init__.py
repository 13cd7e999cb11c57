"""``contam audit``: one command from a question (has this benchmark leaked into this dataset,
into this model?) to a verdict people can read and a pipeline can gate on.

>>> from contam.audit import AuditConfig, run_audit                       # doctest: +SKIP
>>> v = run_audit(AuditConfig(benchmarks=("gsm8k",), dataset="synth.jsonl", model="smollm2", out="runs/a1"))  # doctest: +SKIP
>>> [(x.benchmark, x.side, x.verdict) for x in v.verdicts]                 # doctest: +SKIP
[('gsm8k', 'data', 'contaminated'), ('gsm8k', 'model', 'inconclusive')]

The run folder holds every per-item record, so :func:`build_outputs` (``contam report RUN``)
rebuilds ``verdict.json``, ``report.html``, ``summary.md`` and the figures from it alone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from contam.audit.config import AuditConfig
from contam.audit.verdict import AuditVerdict, Claim, Limitation, SideVerdict, build_verdict

__all__ = [
    "AuditConfig",
    "AuditVerdict",
    "Claim",
    "Limitation",
    "SideVerdict",
    "build_outputs",
    "is_audit_run",
    "run_audit",
    "step_folders",
]


def is_audit_run(path: Path) -> bool:
    """Whether ``path`` is an audit run folder (it holds the ``audit.toml`` the audit wrote)."""
    from contam.audit.runner import CONFIG

    return path.is_dir() and (path / CONFIG).is_file()


def step_folders(run: Path, cfg: AuditConfig | None = None) -> list[Path]:
    """The results inside an audit run folder that ``contam report`` renders: the dataset scan,
    the decontamination logs, each benchmark's variant set and probes (those that finished)."""
    from contam.audit.runner import CONFIG, slug

    run = Path(run)
    cfg = cfg or AuditConfig.from_file(run / CONFIG)
    steps: list[Path] = []
    if (run / "data" / "scan" / "summary.json").exists():
        steps.append(run / "data" / "scan")
    steps += sorted(p for p in (run / "data").glob("*.log.jsonl")) if (run / "data").exists() else []
    for b in cfg.benchmarks:
        for name in ("reference", "zerocot", "cliff", "minkprob"):
            if (run / slug(b) / name / "summary.json").exists():
                steps.append(run / slug(b) / name)
    return steps


def run_audit(cfg: AuditConfig, *, fresh: bool = False, say: Callable[[str], None] = lambda s: None) -> AuditVerdict:
    """Run (or resume) every step of ``cfg`` in ``cfg.out`` and write the verdict and the report."""
    from contam.audit.runner import plan, prepare_run_folder, run_folder, run_steps

    steps = plan(cfg, run_folder(cfg))  # every input is checked before anything is written
    out, state = prepare_run_folder(cfg, fresh)
    seconds = run_steps(steps, out, state, say)
    return build_outputs(out, seconds=seconds)


def build_outputs(run: Path, seconds: dict[str, float] | None = None) -> AuditVerdict:
    """``verdict.json``, ``report.html``, ``report.md``, ``summary.md`` and ``figures/`` from the run folder's files."""
    import json

    from contam.audit.plots import figures
    from contam.audit.report import plain, render_html, render_summary, sections_html, write_text
    from contam.audit.runner import CONFIG, STATE
    from contam.outputs import write_json

    run = Path(run)
    cfg = AuditConfig.from_file(run / CONFIG)
    if seconds is None:
        try:
            seconds = json.loads((run / STATE).read_text(encoding="utf-8")).get("done", {})
        except (OSError, ValueError):
            seconds = {}
    verdict = build_verdict(run, cfg.to_dict(), cfg.fingerprint(), seconds)
    from contam.report.build import finite_json

    write_json(run / "verdict.json", finite_json(verdict.to_dict()))  # NaN -> null: strict JSON parsers read it
    figs, notes = figures(run, cfg.to_dict(), run / "figures")
    detail, built = sections_html(step_folders(run, cfg))
    # Control characters (terminal escapes, bidi overrides) are dropped from the whole page, the
    # step sections included: escaped HTML still carries them to anyone who cats the file.
    write_text(run / "report.html", plain(render_html(verdict, figs, notes, detail, run)))
    if built is not None:
        from contam.report.build import render

        md = render(built[0], "md", built[1])
        write_text(run / "report.md", plain(render_summary(verdict, str(run / "report.html"), figs) + "\n---\n\n" + md))
    write_text(run / "summary.md", render_summary(verdict, str(run / "report.html"), figs))
    return verdict
