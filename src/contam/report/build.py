"""From result paths to one report: recognize, render each result, write HTML, Markdown or JSON.

Here on the ``--json`` output of ``contam stats power`` (``demo-out/`` or any scan and probe
folders work the same way):

>>> import json, tempfile
>>> from pathlib import Path
>>> from contam.report import build_report, render
>>> from contam.stats.power import power_report
>>> path = Path(tempfile.mkdtemp()) / "power.json"
>>> _ = path.write_text(json.dumps(power_report(n=115).to_dict()))
>>> report, results = build_report([path])
>>> [r.kind for r in results], report.sections[0].title
(['power'], 'Power: n = 115, α = 0.05, power 0.8')
>>> print(render(report, "md").splitlines()[0])
# contam report
>>> render(report, "html").startswith("<!DOCTYPE html>")
True
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from contam.errors import ConfigError, reading
from contam.report import data_side as ds
from contam.report import model_side as ms
from contam.report.data_side import RenderOptions
from contam.report.html_writer import render_html
from contam.report.inputs import Result, load_inputs
from contam.report.markdown_writer import render_markdown
from contam.report.model import Report, Section

Renderer = Callable[[Result, RenderOptions], Section]

#: kind (as :func:`contam.report.inputs.classify` names it) -> renderer
RENDERERS: dict[str, Renderer] = {
    "scan": ds.render_scan,
    "decontaminate": ds.render_decontaminate,
    "perturb": ds.render_perturb,
    "scenarios": ds.render_scenarios,
    "eval-detectors": ds.render_eval_detectors,
    "regen": ds.render_regen,
    "regen-replay": ds.render_regen_replay,
    "grade": ds.render_grade,
    "equivariance": ds.render_equivariance,
    "minkprob": ms.render_minkprob,
    "zerocot": ms.render_zerocot,
    "cliff": ms.render_cliff,
    "cdd": ms.render_grouped,
    "reconstruct": ms.render_grouped,
    "ts-guess": ms.render_grouped,
    "guided": ms.render_guided,
    "swe-filepath": ms.render_swe,
    "swe-funcrepro": ms.render_swe,
    "swe-prefix": ms.render_swe,
    "eval-probes": ms.render_eval_probes,
    "eval-probes-sweep": ms.render_eval_probes_sweep,
    "power": ms.render_power,
    "mcnemar": ms.render_mcnemar,
    "contaminate": ms.render_contaminate,
}

FORMATS = ("html", "md", "json")


def _version() -> str:
    from contam import __version__

    return f"contam {__version__}"


def build_report(
    paths: Sequence[str | os.PathLike[str]],
    *,
    title: str = "contam report",
    options: RenderOptions | None = None,
    skip_unknown: bool = False,
    warn: Callable[[str], None] | None = None,
) -> tuple[Report, list[Result]]:
    """Recognize every result at ``paths`` and render each into a section, in the order given.

    Returns the report and the results it was made from (for the JSON merge).
    """
    notes: list[str] = []

    def note(msg: str) -> None:
        notes.append(msg)
        if warn:
            warn(msg)

    results = load_inputs([Path(p) for p in paths], warn=note, skip_unknown=skip_unknown)
    if not results:
        raise ConfigError("no contam results to report on (every input was skipped)")
    opt = options or RenderOptions()
    sections = []
    for r in results:
        # A result file edited by hand or made by another tool may hold wrong types: say which file.
        with reading(_source_file(r.path), what=f"not a {r.kind} result contam can read"):
            sections.append(RENDERERS[r.kind](r, opt))
    return Report(title, tuple(sections), tuple(notes), _version()), results


def _source_file(path: str) -> str:
    """The file a result's data came from: a folder result's summary (or report, sweep) JSON."""
    p = Path(path)
    if p.is_dir():
        for name in ("summary.json", "report.json", "sweep.json", "manifest.json"):
            if (p / name).is_file():
                return str(p / name)
    return path


#: Names of files a report reads inside an input folder (besides the MEMBER_FILES of a result).
_READ_NAMES = ("summary.json", "report.json", "sweep.json", "manifest.json")


def check_out_not_input(out: str | os.PathLike[str], paths: Sequence[str | os.PathLike[str]]) -> None:
    """Refuse an ``--out`` that is one of the report's inputs, or a file it reads inside an input
    folder: writing the report there would destroy what it was made from."""
    from contam.errors import OutputError
    from contam.report.inputs import MEMBER_FILES

    target = Path(out).resolve()
    for p in map(Path, paths):
        rp = p.resolve()
        if target == rp:
            raise OutputError(f"--out {out}: is one of the report's inputs; write the report elsewhere")
        if rp.name.endswith(".log.jsonl") and target == rp.with_name(rp.name.removesuffix(".log.jsonl")):
            raise OutputError(f"--out {out}: is the cleaned corpus of the input {p}; write the report elsewhere")
        if rp.is_dir() and rp in target.parents and len(target.relative_to(rp).parts) <= 2:
            name = target.name
            if name in MEMBER_FILES or name in _READ_NAMES or name.endswith((".log.jsonl", ".json")):
                raise OutputError(f"--out {out}: is a file the report reads in its input {p}; write the report elsewhere")


def finite_json(x: Any) -> Any:
    """NaN/inf become ``null`` so the merged JSON is valid for strict parsers."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {str(k): finite_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite_json(v) for v in x]
    return x


def merged_json(report: Report, results: Sequence[Result]) -> dict[str, Any]:
    """One JSON object: per result its kind, source, status, headline figures and the result itself."""
    return finite_json(
        {
            "schema": 1,
            "generator": report.version,
            "title": report.title,
            "skipped": list(report.skipped),
            "results": [
                {"kind": r.kind, "source": r.path, "title": s.title, "status": s.status, "figures": s.figures, "result": r.data}
                for r, s in zip(results, report.sections, strict=True)
            ],
        }
    )


def render(report: Report, fmt: str, results: Sequence[Result] = ()) -> str:
    """The report as ``html``, ``md`` or ``json`` text."""
    if fmt == "html":
        return render_html(report)
    if fmt == "md":
        return render_markdown(report)
    if fmt == "json":
        return json.dumps(merged_json(report, results), indent=2, ensure_ascii=False, default=str, allow_nan=False) + "\n"
    raise ConfigError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")


def format_for(out: Path | None, fmt: str | None) -> str:
    """``fmt`` if given, else from the output's suffix (``.html``, ``.md``, ``.json``), else html."""
    if fmt:
        if fmt not in FORMATS:
            raise ConfigError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
        return fmt
    suffix = out.suffix.lower() if out is not None else ""
    return {".md": "md", ".markdown": "md", ".json": "json"}.get(suffix, "html")


def write_report(paths: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], fmt: str | None = None, **kw: Any) -> Report:
    """Build the report for ``paths`` and write it atomically to ``out``."""
    from contam.outputs import atomic_write

    check_out_not_input(out, paths)
    report, results = build_report(paths, **kw)
    text = render(report, format_for(Path(out), fmt), results)
    with atomic_write(out) as fh:
        fh.write(text)
    return report
