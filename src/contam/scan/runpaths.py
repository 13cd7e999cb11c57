"""Which files a run folder's ``manifest.json`` may make ``contam verify`` read, and which folders
of a corpus are contam's own outputs (never read as corpus shards).

A manifest is data, and may come from anyone (a CI artifact, a shared folder): its paths must not
turn ``verify`` into a reader of arbitrary files (``../../etc/hostname``, ``/home/you/.ssh/id``).
An output is read only when it lies inside the run folder, or inside a folder it was merged from:
one its manifest names in ``merged_from`` (the same folder, or one of that name: a merged run may be
verified from another working folder or after the runs were moved together) that holds a contam
manifest of its own listing that very file among its outputs.

>>> import json, tempfile
>>> from pathlib import Path
>>> root = Path(tempfile.mkdtemp())
>>> (root / "run").mkdir()
>>> output_allowed(root / "run", "flags.jsonl"), output_allowed(root / "run", "../../etc/hostname")
(True, False)
>>> output_allowed(root / "run", "/etc/hostname")
False
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path


def output_allowed(run: str | os.PathLike[str], rel: str, merged_from: Sequence[str] = ()) -> bool:
    """Whether ``verify`` may hash the output ``rel`` (a manifest path, relative to ``run``) of a
    run merged from the folders ``merged_from`` (none for a run that is no merge)."""
    root = Path(run).resolve()
    target = (root / rel).resolve()
    if target == root or root in target.parents:
        return target != root
    sources = {Path(d).resolve() for d in merged_from}
    names = {Path(d).name for d in merged_from}
    for folder in target.parents:
        listed = _outputs_listed(folder)
        if listed is not None:
            named = folder in sources or folder.name in names
            return named and os.path.relpath(target, folder).replace(os.sep, "/") in listed
    return False


def _outputs_listed(folder: Path) -> set[str] | None:
    """The output paths of ``folder/manifest.json`` (``None`` when it holds no contam manifest)."""
    try:
        m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(m, dict) or "manifest_version" not in m or not isinstance(m.get("outputs"), list):
        return None
    return {str(o.get("path")) for o in m["outputs"] if isinstance(o, dict)}


def contam_output(folder: Path) -> bool:
    """Whether ``folder`` holds results contam wrote (a run's ``manifest.json``, a shard's ``shard.json``)."""
    if (folder / "shard.json").is_file():
        return True
    try:
        m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(m, dict) and isinstance(m.get("command"), str)


class OutputFilter:
    """``skip(path, root)``: whether ``path`` lies in contam's own output below ``root`` (folders checked once)."""

    def __init__(self, exclude: str | os.PathLike[str] | None) -> None:
        self.exclude = Path(exclude).resolve() if exclude is not None else None
        self.seen: dict[Path, bool] = {}

    def __call__(self, path: str, root: str) -> bool:
        p, top = Path(path), Path(root)
        if self.exclude is not None and self.exclude in p.resolve().parents:
            return True
        for folder in p.relative_to(top).parents:
            if folder == Path("."):
                continue
            if folder.name.startswith("."):
                return True
            full = top / folder
            if full not in self.seen:
                self.seen[full] = contam_output(full)
            if self.seen[full]:
                return True
        return False


def remove_stale_temps(target: Path) -> int:
    """Remove what a killed write of ``target`` left: the hidden ``.NAME.*.tmp`` siblings that
    :func:`contam.outputs.atomic_write` renames into place on success (as large as the output, and
    no later run would reuse them). Two runs writing the same output at once are not supported
    anyway: each would rename over the other's result. Returns how many were removed."""
    n = 0
    for stale in target.parent.glob(f".{target.name}.*.tmp"):
        try:
            stale.unlink()
            n += 1
        except OSError:
            continue
    return n
