"""Run any probe into a run folder, resumably: the one owner of ``run.json``, ``items.jsonl`` and
``summary.json``, for the ``contam probe`` commands and the audit's steps alike.

Layout of a probe's folder::

    OUT/run.json        the settings it was started with; a rerun with others is refused unless fresh
    OUT/items.jsonl     one finished record per line, appended and flushed as each finishes
    OUT/summary.json    the result, written atomically once every item is done

A probe's verb takes a :class:`~contam.outputs.JsonlCheckpoint`; :func:`run_in_folder` opens it
(skipping the records already there), calls ``on_item`` with each record as it is written, and
writes what the probe returns as the summary.

>>> import tempfile
>>> from pathlib import Path
>>> out = Path(tempfile.mkdtemp()) / "run"
>>> def work(ck):
...     for i in range(3):
...         if f"k{i}" not in ck.done:
...             ck.write({"key": f"k{i}", "v": i})
...     return {"n": len(ck.records)}
>>> seen = []
>>> run_in_folder(out, {"command": "demo"}, work, on_item=seen.append)
{'n': 3}
>>> [r["key"] for r in seen], sorted(p.name for p in out.iterdir())
(['k0', 'k1', 'k2'], ['items.jsonl', 'run.json', 'summary.json'])
>>> run_in_folder(out, {"command": "demo"}, work, on_item=seen.append), len(seen)  # resumed: nothing redone
({'n': 3}, 3)
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from contam.errors import ConfigError
from contam.outputs import JsonlCheckpoint, ensure_dir, write_json

log = logging.getLogger(__name__)

#: Called with each record (a plain dict) as soon as it is written to the folder.
OnItem = Callable[[dict[str, Any]], None]

#: Settings that may change between runs into one folder: items are keyed, so more of them is the same run.
GROWABLE = ("limit",)


def guard_settings(out: Path, settings: Mapping[str, Any], fresh: bool = False) -> None:
    """Refuse ``out`` when its ``run.json`` records other settings (unless ``fresh``), then record these.

    Only :data:`GROWABLE` settings may differ: results of different settings never mix in one folder.
    """
    run_file = out / "run.json"
    now = json.loads(json.dumps(dict(settings), default=str))
    if run_file.exists() and not fresh:
        try:
            before = json.loads(run_file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            before = None
        if before is not None and _fixed(before) != _fixed(now):
            raise ConfigError(f"{out} holds a run with other settings ({run_file}); use another --out, or --fresh to start over")
    write_json(run_file, now)


def _fixed(settings: Any) -> Any:
    return {k: v for k, v in settings.items() if k not in GROWABLE} if isinstance(settings, dict) else settings


def run_in_folder(
    out: Path | None,
    settings: Mapping[str, Any] | None,
    work: Callable[..., dict[str, Any]],
    *,
    files: Sequence[str] = ("items.jsonl",),
    key: str = "key",
    fresh: bool = False,
    on_item: OnItem | None = None,
) -> dict[str, Any]:
    """``work(*checkpoints)`` with one resumable checkpoint per name in ``files`` inside ``out``;
    its returned summary is written to ``out/summary.json`` and returned.

    ``settings`` go to ``out/run.json`` (see :func:`guard_settings`; None: no guard). Without a
    folder (``out`` None) ``work`` gets None for every checkpoint, nothing is written and
    ``on_item`` is never called. A failing ``work`` leaves the finished records for a rerun.
    """
    if out is None:
        return work(*(None for _ in files))
    ensure_dir(out)
    if settings is not None:
        guard_settings(out, settings, fresh)
    cks = [JsonlCheckpoint(out / name, key=key, resume=not fresh, on_write=on_item) for name in files]
    done = sum(len(ck.done) for ck in cks)
    log.info("%s: %s", out, f"resuming after {done} finished record(s)" if done else "starting")
    try:
        summary = work(*cks)
    finally:
        for ck in cks:
            ck.close()
    write_json(out / "summary.json", summary)
    log.info("%s: wrote summary.json", out)
    return summary


def no_nan(x: Any) -> Any:
    """NaN (an empty group's mean) becomes null, so the JSON stays valid for strict parsers.

    >>> no_nan({"a": float("nan"), "b": [1.0, float("nan")]})
    {'a': None, 'b': [1.0, None]}
    """
    if isinstance(x, float) and x != x:
        return None
    if isinstance(x, dict):
        return {k: no_nan(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [no_nan(v) for v in x]
    return x
