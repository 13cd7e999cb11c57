"""Writing results safely: atomic files and resumable JSONL checkpoints.

Outputs are never half-written: :func:`atomic_write` writes to a temporary file in the same
folder and renames it into place. Long runs stream per-item records through
:class:`JsonlCheckpoint`, which appends and flushes one line per finished item and, on
restart, reads back what is already done (a line cut short by a kill is dropped).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from contam.errors import OutputError
from contam.textsafe import no_surrogates


def ensure_dir(path: str | os.PathLike[str]) -> Path:
    """Create ``path`` (and parents) and check that we can write into it."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise OutputError(f"{p}: is a file, expected an output folder")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create output folder {p}: {e.strerror or e}") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise OutputError(f"output folder {p} is not writable")
    return p


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
    """Open a temporary sibling of ``path`` for writing and rename it over ``path`` on success.

    On any exception the temporary file is removed and ``path`` is left as it was.
    """
    target = Path(path)
    if target.is_dir():
        raise OutputError(f"{target}: is a folder; name a file to write")
    ensure_dir(target.parent if str(target.parent) else ".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:
        raise OutputError(f"cannot write {target}: {e.strerror or e}") from None
    kwargs: dict[str, Any] = {} if "b" in mode else {"encoding": encoding, "newline": ""}
    try:
        # mkstemp creates 0600; give the result the mode a plain open() would (0666 minus umask).
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _read_umask() -> int:
    # os.umask can only be read by setting it; do that once, at import, before any threads exist.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def write_json(path: str | os.PathLike[str], data: Any) -> None:
    """Write ``data`` as indented JSON, atomically."""
    # Lone surrogates (legal as JSON escapes in an input) are written back as escapes: UTF-8 cannot hold them.
    text = no_surrogates(json.dumps(data, indent=2, ensure_ascii=False, default=json_default))
    with atomic_write(path) as fh:
        fh.write(text + "\n")


def read_json_dict(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object in ``path``, or ``{}`` when it is missing, unreadable or not an object: for
    the summaries a run folder may or may not hold (an older run, one cut short), never for input."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return d if isinstance(d, dict) else {}


def json_default(obj: Any) -> Any:
    """``default=`` of :func:`json.dump` for contam's outputs: records via ``to_dict()``, and the
    other non-JSON types our results hold."""
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def dumps_line(data: Any) -> str:
    """One compact JSON line (no trailing newline); a lone surrogate from the input stays a ``\\uXXXX`` escape."""
    return no_surrogates(json.dumps(data, ensure_ascii=False, default=json_default, separators=(",", ":")))


class JsonlCheckpoint:
    """Append-only JSONL output that survives kills and resumes.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "items.jsonl")
    >>> with JsonlCheckpoint(p, key="id") as ck:
    ...     ck.write({"id": "a", "score": 1})
    >>> JsonlCheckpoint(p, key="id").done
    {'a'}

    ``done`` holds the keys already written; callers skip those items. With ``resume=False``
    an existing file is replaced (the old one is kept until the first record is written).
    ``on_write`` is called with each record (as written, a plain dict) once it is on disk: a
    caller's progress display or log, without polling the file.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        key: str = "id",
        resume: bool = True,
        on_write: Callable[[Any], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.key = key
        self.on_write = on_write
        self.done: set[str] = set()
        self.records: list[dict[str, Any]] = []
        ensure_dir(self.path.parent)
        self._fh: IO[str] | None = None
        if resume and self.path.exists():
            self._load()
        elif not resume and self.path.exists():
            self.path.unlink()

    def _load(self) -> None:
        good: list[str] = []
        with open(self.path, encoding="utf-8", errors="replace") as fh:
            for raw in fh:
                if not raw.endswith("\n"):
                    break  # cut short by a kill: drop it, the item is redone
                try:
                    rec = json.loads(raw)
                except json.JSONDecodeError:
                    break
                good.append(raw)
                self.records.append(rec)
                if isinstance(rec, dict) and self.key in rec:
                    self.done.add(str(rec[self.key]))
        # Rewrite without the broken tail so appends continue on a clean line boundary.
        with atomic_write(self.path) as out:
            out.writelines(good)

    def write(self, record: Any) -> None:
        """Append one record (a dict or a :class:`~contam.records.Record`) and flush it to disk."""
        data = record.to_dict() if hasattr(record, "to_dict") else record
        if self._fh is None:
            try:
                self._fh = open(self.path, "a", encoding="utf-8")
            except OSError as e:
                raise OutputError(f"cannot write {self.path}: {e.strerror or e}") from None
        self._fh.write(dumps_line(data) + "\n")
        self._fh.flush()
        if isinstance(data, dict) and self.key in data:
            self.done.add(str(data[self.key]))
        self.records.append(data)
        if self.on_write is not None:
            self.on_write(data)

    def close(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None

    def __enter__(self) -> JsonlCheckpoint:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
