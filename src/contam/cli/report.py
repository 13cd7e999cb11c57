"""``contam report``: one readable, self-contained report (HTML, Markdown or JSON) from the
outputs contam's commands wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from contam.cli.common import console, err_console
from contam.textsafe import clean, escape


def report(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Result folders or files: an audit run folder, a scan/probe/perturb/regen/eval folder, a summary.json, "
            "a --json dump, a decontamination *.log.jsonl, or a folder holding several."
        ),
    ],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File to write (atomically); stdout without.")] = None,
    fmt: Annotated[str | None, typer.Option("--format", "-f", help="html, md or json (default: from --out's suffix, else html).")] = None,
    title: Annotated[str, typer.Option("--title", help="Report title.")] = "contam report",
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=1, help="Rows per per-item table (first flagged documents, log entries, ...).")
    ] = 10,
    skip_unknown: Annotated[
        bool, typer.Option("--skip-unknown", help="Skip inputs that are not contam results, with a warning, instead of failing.")
    ] = False,
) -> None:
    """Turn what scan, decontaminate, perturb, probe, eval-*, regen, stats and audit wrote into one report to hand on.

    An audit run folder alone rebuilds its own report, summary, verdict and figures (with --out
    or --format, that report is also written there or printed); among other inputs it stands for
    the steps it ran.

    Every verdict is shown with its test, p-value and interval (or power); all text is escaped.

    Example: contam report runs/scan1 runs/zcp ref/ --format html --out report.html
    """
    from contam.audit import build_outputs, is_audit_run, step_folders
    from contam.report.build import build_report, check_out_not_input, format_for, render
    from contam.report.data_side import RenderOptions

    audits = [p for p in paths if is_audit_run(p)]
    if len(paths) == 1 and audits and out is None and fmt is None:
        # An audit run folder: rebuild its verdict, report, summary and figures from its per-item records.
        v = build_outputs(paths[0])
        console.print(f"rebuilt {escape(str(paths[0] / 'report.html'))}, summary.md, verdict.json (overall: {v.worst})")
        return
    kind = format_for(out, fmt)
    if out is not None:
        check_out_not_input(out, paths)
    if len(paths) == 1 and audits:
        # The audit's own report (rebuilt in the run folder), in the format asked for.
        run = paths[0]
        build_outputs(run)
        page = {"html": "report.html", "md": "report.md" if (run / "report.md").exists() else "summary.md", "json": "verdict.json"}[kind]
        _emit((run / page).read_text(encoding="utf-8"), kind, out, f"the audit's {page}")
        return
    # Among other inputs, an audit run folder stands for the steps it ran (scan, probes, ...).
    paths = [q for p in paths for q in (step_folders(p) if p in audits else [p])]
    rep, results = build_report(
        paths,
        title=title,
        options=RenderOptions(max_rows=max_rows),
        skip_unknown=skip_unknown,
        warn=lambda m: err_console.print(f"warning: {escape(m)}", highlight=False),
    )
    text = render(rep, kind, results)
    _emit(text, kind, out, f"{len(rep.sections)} section(s): {', '.join(s.kind for s in rep.sections)}")


def _emit(text: str, kind: str, out: Path | None, what: str) -> None:
    """The report on stdout, or written atomically to ``out``."""
    import sys

    if out is None:
        from contam.textsafe import json_safe

        # A terminal gets no raw control or bidi characters from the results' text (JSON escapes:
        # in the JSON format they keep its value; in HTML/Markdown they show as text).
        sys.stdout.write(json_safe(text) if kind == "json" else clean(text))
        return
    from contam.outputs import atomic_write

    with atomic_write(out) as fh:
        fh.write(text)
    console.print(f"wrote {escape(str(out))} ({kind}, {escape(what)})")


def register(app: typer.Typer) -> None:
    """Add ``contam report`` to ``app``."""
    app.command("report")(report)
