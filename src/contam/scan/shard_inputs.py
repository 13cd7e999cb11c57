"""The input shards of a sharded scan (:mod:`contam.scan.shards`): whether ``--corpus`` names
shards at all, what it names (files, folders, globs, fsspec URLs) resolved to a sorted list of
:class:`InputShard`, and the stable hash of a shard's name that picks a task's subset."""

from __future__ import annotations

import glob as globlib
import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contam.errors import ConfigError, InputError
from contam.scan.runpaths import OutputFilter

#: What a folder or glob of input shards may hold (compressed or not).
SHARD_SUFFIXES = (".jsonl", ".ndjson", ".parquet")
COMPRESSIONS = ("", ".gz", ".zst", ".zstd")


@dataclass(frozen=True)
class InputShard:
    """One input file: ``path`` as it is opened (a local path or an fsspec URL) and ``name``, the
    stable name its selection hash and output folder come from (the path relative to the folder
    or glob it was found by, or the path as given)."""

    path: str
    name: str

    @property
    def is_url(self) -> bool:
        return "://" in self.path

    @property
    def folder(self) -> str:
        """The output folder's name: the shard name made safe, with a short hash against clashes."""
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", self.name).strip("._")[-80:] or "shard"
        return f"{safe}-{hashlib.sha256(self.name.encode()).hexdigest()[:8]}"

    def selected(self, shard_index: int, num_shards: int) -> bool:
        """Whether this shard belongs to task ``shard_index`` of ``num_shards`` (stable across hosts and runs)."""
        return shard_hash(self.name) % num_shards == shard_index


def shard_hash(name: str) -> int:
    """A stable 64-bit hash of a shard name (sha256, not Python's salted ``hash``).

    >>> shard_hash("part-0.jsonl") % 4
    1
    """
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big")


def is_sharded(corpus: Sequence[str], num_shards: int = 1) -> bool:
    """Whether ``corpus`` (``--corpus``, given once or more) names shards (several files, a folder
    of them, a glob, a URL) rather than one file; ``num_shards`` over 1 always shards."""
    if len(corpus) != 1 or num_shards != 1:
        return True
    spec = corpus[0]
    if Path(spec).is_file():
        return False  # an existing file is one corpus, whatever characters its name holds ("[red]")
    if "://" in spec or any(c in spec for c in "*?["):
        return True
    p = Path(spec)
    # A folder written by datasets' save_to_disk is one corpus, not a folder of shards.
    return p.is_dir() and not any((p / f).exists() for f in ("dataset_info.json", "dataset_dict.json", "state.json"))


def _is_shard_file(name: str) -> bool:
    low = name.lower()
    return not Path(low).name.startswith(".") and any(low.endswith(s + c) for s in SHARD_SUFFIXES for c in COMPRESSIONS)


def resolve_corpus(specs: Sequence[str | os.PathLike[str]], exclude: str | os.PathLike[str] | None = None) -> list[InputShard]:
    """The input shards named by ``specs`` (files, folders, globs, fsspec URLs), in a stable order.

    A folder or glob that matches no shard, and two specs naming the same shard, are errors.
    Inside a folder or glob, contam's own outputs are no shards (:func:`contam.scan.runpaths.contam_output`): the
    folder ``exclude`` (the run's ``--out``), a hidden folder (a run being built) and any folder
    holding a contam ``manifest.json`` or ``shard.json``, so a rerun never reads its own flags.
    """
    skip = OutputFilter(exclude)
    if not specs:
        raise ConfigError("no corpus given")
    out: list[InputShard] = []
    for raw in specs:
        spec = str(raw)
        if "://" in spec:
            out.extend(_resolve_url(spec))
        elif spec.startswith("hf:"):
            out.append(InputShard(spec, spec))
        elif any(c in spec for c in "*?["):
            root = _glob_root(spec)
            files = sorted(p for p in globlib.glob(spec, recursive=True) if os.path.isfile(p) and not skip(p, root))
            if not files:
                raise InputError("no file matches this pattern", path=spec)
            out.extend(InputShard(p, os.path.relpath(p, root).replace(os.sep, "/")) for p in files)
        elif os.path.isdir(spec):
            files = sorted(
                str(p) for p in Path(spec).rglob("*") if p.is_file() and _is_shard_file(str(p.relative_to(spec))) and not skip(str(p), spec)
            )
            if not files:
                raise InputError(f"no corpus shards here (files ending in {', '.join(SHARD_SUFFIXES)}, optionally .gz/.zst)", path=spec)
            out.extend(InputShard(p, os.path.relpath(p, spec).replace(os.sep, "/")) for p in files)
        else:
            if not os.path.exists(spec):
                raise InputError("no such file or folder", path=spec)
            out.append(InputShard(spec, os.path.normpath(spec).replace(os.sep, "/")))
    seen: dict[str, str] = {}
    for s in out:
        if s.name in seen:
            raise ConfigError(f"two corpus specs give the shard name {s.name!r} ({seen[s.name]} and {s.path}): give each input once")
        seen[s.name] = s.path
    return out


def _glob_root(spec: str) -> str:
    """The folder part of a glob before its first wildcard."""
    head = re.split(r"[*?\[]", spec, maxsplit=1)[0]
    return os.path.dirname(head) or "."


def _fsspec() -> Any:
    try:
        import fsspec
    except ImportError:
        raise ConfigError("corpus URLs need fsspec (and the filesystem's package, e.g. s3fs): pip install fsspec") from None
    return fsspec


def _resolve_url(spec: str) -> list[InputShard]:
    fsspec = _fsspec()
    try:
        fs, path = fsspec.core.url_to_fs(spec)
        protocol = spec.split("://", 1)[0]
        if any(c in path for c in "*?["):
            root = _glob_root(path)
            found = sorted(p for p in fs.glob(path) if fs.isfile(p))
        elif fs.isdir(path):
            root = path
            found = sorted(p for p in fs.find(path) if _is_shard_file(p[len(path) :].lstrip("/")))
        else:
            root, found = os.path.dirname(path), [path] if fs.exists(path) else []
    except (OSError, ValueError, ImportError) as e:
        raise InputError(f"cannot list: {e}", path=spec) from None
    if not found:
        raise InputError("no corpus shards at this URL", path=spec)
    return [InputShard(f"{protocol}://{p}", p[len(root) :].lstrip("/") if root and p.startswith(root) else p) for p in found]
