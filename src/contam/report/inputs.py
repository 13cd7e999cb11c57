"""Recognize what contam's commands wrote, by file names and content.

>>> from pathlib import Path
>>> classify({"documents": 200, "flagged": 12, "flag_rate": 0.06, "by_benchmark": {}})
'scan'
>>> classify({"command": "zerocot", "metrics": []})
'zerocot'

A folder is a result when its ``summary.json`` (or ``report.json``, ``sweep.json``) says so;
a folder that is not a result itself (``demo-out/``) is searched one level down. A file is a
result when its content is (a ``--json`` dump, a decontamination log ``*.log.jsonl``, a
``summary.json``). Anything else named on the command line is an :class:`InputError`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contam.errors import InputError, reading
from contam.records import Record

#: Probe summaries name their command; these are the ones with a renderer.
PROBE_COMMANDS = ("zerocot", "minkprob", "cliff", "cdd", "reconstruct", "ts-guess", "guided", "swe-filepath", "swe-funcrepro", "swe-prefix")
#: Order of results found inside a container folder: data side, fresh instances, model side, statistics.
KIND_ORDER = (
    "scan",
    "decontaminate",
    "scenarios",
    "eval-detectors",
    "perturb",
    "minkprob",
    "zerocot",
    "cliff",
    "cdd",
    "reconstruct",
    "ts-guess",
    "guided",
    "swe-filepath",
    "swe-funcrepro",
    "swe-prefix",
    "contaminate",
    "eval-probes",
    "eval-probes-sweep",
    "regen",
    "regen-replay",
    "grade",
    "equivariance",
    "power",
    "mcnemar",
)
#: Files that belong to a result folder; naming one means the folder.
MEMBER_FILES = {
    "summary.json",
    "flags.jsonl",
    "items.jsonl",
    "run.json",
    "variants.jsonl",
    "rejections.jsonl",
    "instances.jsonl",
    "audit.jsonl",
    "rows.jsonl",
    "report.json",
    "thresholds.json",
    "boundary.jsonl",
    "graded.jsonl",
    "samples.jsonl",
    "replay.jsonl",
    "control_items.jsonl",
    "table.csv",
    "pairs.json",
    "logprob.jsonl",
    "zerocot.jsonl",
    "reconstruct.jsonl",
}


@dataclass(frozen=True)
class Result(Record):
    """One recognized result: its ``kind``, where it came from, and its summary data."""

    kind: str
    path: str
    data: Any
    folder: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def read_json(path: Path) -> Any:
    """Parse a JSON file (NaN allowed, as Python writes it); errors name the file and line."""
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path=path) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=path) from None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON: {e.msg}", path=path, line=e.lineno) from None


def iter_jsonl(path: Path, limit: int | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, record)`` for each non-blank line of a JSONL file (at most ``limit``); bad lines
    raise the loaders' located :class:`InputError`."""
    from contam.data.loaders import iter_records

    return itertools.islice(iter_records(path), limit)


def classify(d: Any) -> str | None:
    """The kind of a summary (a parsed ``summary.json`` or ``--json`` dump), or ``None``."""
    if isinstance(d, list):
        if d and all(isinstance(x, dict) and {"domain", "tasks", "clean"} <= set(x) for x in d):
            return "regen-replay"
        return None
    if not isinstance(d, dict):
        return None
    keys = set(d)
    cmd = d.get("command")
    if isinstance(cmd, str) and cmd in PROBE_COMMANDS:
        return cmd
    rules: tuple[tuple[str, set[str]], ...] = (
        ("scan", {"documents", "flagged", "flag_rate", "by_benchmark"}),
        ("perturb", {"variants_per_item", "kind", "benchmark"}),
        ("regen", {"failures", "invalid_rate", "n_invalid"}),
        ("eval-probes", {"separations", "verdicts", "n_seen", "n_unseen"}),
        ("eval-probes-json", {"results", "sweep"}),
        ("eval-detectors", {"reports", "table2_s3"}),
        ("scenarios", {"counts", "generators", "benchmark"}),
        ("decontaminate", {"documents_in", "documents_out", "dropped", "masked"}),
        ("power", {"mde_unpaired_wald", "mde_paired", "n_unpaired_for_gap", "n_paired_for_gap"}),
        ("mcnemar", {"n_common", "only_first", "only_second", "p_value"}),
        ("grade", {"episodes", "passed", "pass_rate"}),
        ("contaminate", {"base_model", "seen", "epochs", "mode", "benchmark"}),
    )
    for kind, need in rules:
        if need <= keys:
            return kind
    rows = d.get("rows")
    if isinstance(rows, list) and rows and isinstance(rows[0], dict) and {"substrate", "leaked_artifact"} <= set(rows[0]):
        return "equivariance"
    return None


def _is_decontam_log(path: Path) -> bool:
    if not path.name.endswith(".log.jsonl"):
        return False
    try:
        first = next(iter_jsonl(path, limit=1), None)
    except InputError:
        return False
    return first is None or {"doc_id", "line", "action"} <= set(first[1])


def recognize_folder(folder: Path) -> list[Result]:
    """The results a folder holds itself (empty when it is only a container)."""
    for name in ("summary.json", "report.json", "sweep.json", "manifest.json"):
        p = folder / name
        if not p.is_file():
            continue
        data = read_json(p)
        kind = classify(data)
        if name == "sweep.json" and isinstance(data, list):
            kind = "eval-probes-sweep"
        if kind is not None:
            return _expand(kind, str(folder), data, str(folder))
    return []


def _expand(kind: str, path: str, data: Any, folder: str | None) -> list[Result]:
    if kind == "eval-probes-json":  # `contam eval-probes --json`: one result per model
        return [Result("eval-probes", path, r, folder) for r in data.get("results", []) if isinstance(r, dict)]
    return [Result(kind, path, data, folder)]


def recognize(path: Path, *, warn: Callable[[str], None] | None = None, skip_unknown: bool = False) -> list[Result]:
    """The results at ``path`` (a result folder, a container folder or a result file).

    Raises :class:`InputError` naming the path when nothing there is a contam result, unless
    ``skip_unknown``, which reports it through ``warn`` and returns ``[]``.
    """

    def unknown(msg: str) -> list[Result]:
        if skip_unknown:
            if warn:
                warn(f"skipped {path}: {msg}")
            return []
        raise InputError(msg, path=path)

    if not path.exists():
        return unknown("no such file or folder")
    if path.is_dir():
        found = recognize_folder(path)
        if found:
            return found
        out: list[Result] = []
        ignored: list[str] = []
        for child in sorted(path.iterdir()):
            if child.name.startswith("."):
                continue
            if child.is_dir():
                sub = recognize_folder(child)
                out += sub
                if not sub:
                    ignored.append(child.name + "/")
            elif _is_decontam_log(child):
                out.append(_decontam(child))
            elif child.suffix == ".json" and classify(_try_json(child)) is not None:
                out += recognize(child)
            else:
                ignored.append(child.name)
        if not out:
            return unknown("not a contam result folder (no summary.json, report.json or sweep.json, here or one level down)")
        if ignored and warn:
            warn(f"{path}: left out {', '.join(ignored)} (not contam results)")
        return sorted(out, key=lambda r: KIND_ORDER.index(r.kind) if r.kind in KIND_ORDER else len(KIND_ORDER))
    if path.name in MEMBER_FILES and path.name != "summary.json" and recognize_folder(path.parent):
        return recognize_folder(path.parent)
    if _is_decontam_log(path):
        return [_decontam(path)]
    if path.suffix == ".json":
        data = read_json(path)
        kind = classify(data)
        if kind is not None:
            return _expand(kind, str(path), data, str(path.parent))
        return unknown("JSON that no contam command writes (expected a summary.json, report.json or a --json dump)")
    return unknown("not a contam result (expected a result folder, a summary/report JSON, or a decontamination *.log.jsonl)")


def _try_json(path: Path) -> Any:
    try:
        return read_json(path)
    except InputError:
        return None


def _decontam(log: Path) -> Result:
    """A decontamination log, with the counts its sibling clean corpus gives."""
    rows = [r for _, r in iter_jsonl(log)]
    clean = log.with_name(log.name.removesuffix(".log.jsonl"))
    data: dict[str, Any] = {
        "log": str(log),
        "dropped": sum(r.get("action") == "dropped" for r in rows),
        "masked": sum(r.get("action") == "masked" for r in rows),
        "chars_masked": sum(int(r.get("chars_masked", 0) or 0) for r in rows),
        "entries": rows,
    }
    if clean.is_file() and not clean.name.endswith((".gz", ".zst")):
        with open(clean, "rb") as fh:
            data["documents_out"] = sum(1 for line in fh if line.strip())
        data["documents_in"] = data["documents_out"] + data["dropped"]
        data["out"] = str(clean)
    return Result("decontaminate", str(log), data, str(log.parent))


def load_inputs(paths: list[Path], *, warn: Callable[[str], None] | None = None, skip_unknown: bool = False) -> list[Result]:
    """Every result at ``paths``, in the order given (duplicates dropped)."""
    out: list[Result] = []
    seen: set[tuple[str, str]] = set()
    for p in paths:
        with reading(p, what="not a contam result contam can read"):
            found = recognize(Path(p), warn=warn, skip_unknown=skip_unknown)
        for r in found:
            key = (r.kind, str(Path(r.folder or r.path).resolve()) + "#" + json.dumps(r.data, sort_keys=True, default=str)[:200])
            if key not in seen:
                seen.add(key)
                out.append(r)
    return out
