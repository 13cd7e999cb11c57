"""Streaming readers for corpora and benchmark files.

Formats: JSONL (plain, ``.gz``, ``.zst``), JSON (a list of objects, or ``{"data": [...]}``),
CSV (with a header row), Parquet, and Hugging Face ``datasets`` (a local ``save_to_disk``
folder, or a hub id when online, spelled ``hf:NAME[:SPLIT]``).

Every problem is an :class:`~contam.errors.InputError` naming file, line and field. With
``skip_bad=True`` bad records are counted in a :class:`BadInputStats` and skipped instead.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar

from contam.data.items import Document, Item
from contam.data.messages import BAD_RECORD, text_field_error
from contam.errors import ConfigError, InputError

#: The end of a GSM8K solution: "#### " and the final number on the last line.
GSM8K_FINAL = re.compile(r"(?:^|\n)####\s*-?[\d,]*\.?\d+\s*$")

#: Largest accepted single record; beyond it the input is almost certainly not a corpus line.
MAX_RECORD_BYTES = 64 * 1024 * 1024


@dataclass
class BadInputStats:
    """Counts of records skipped under ``skip_bad``, by reason, with the first few messages."""

    skipped: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)

    def add(self, err: InputError, reason: str) -> None:
        self.skipped += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        if len(self.examples) < 5:
            self.examples.append(str(err))

    def to_dict(self) -> dict[str, Any]:
        return {"skipped": self.skipped, "reasons": dict(self.reasons), "examples": list(self.examples)}


class _BadLine(Exception):
    """A bad line found while reading, with its reason key (caught in the same reader)."""

    def __init__(self, err: InputError, reason: str) -> None:
        super().__init__(str(err))
        self.err, self.reason = err, reason


def open_binary(path: Path) -> gzip.GzipFile | io.BufferedReader:
    name = path.name.lower()
    if name.endswith(".gz"):
        return gzip.open(path, "rb")
    if name.endswith(".zst") or name.endswith(".zstd"):
        return io.BufferedReader(_ZstdFrames(open(path, "rb")), buffer_size=1 << 20)
    return open(path, "rb")


class _ZstdFrames(io.RawIOBase):
    """A zstd file read frame after frame to its end, strictly.

    zstandard's own stream reader returns an empty read, not an error, when the input ends inside
    a frame (a truncated download), and stops after the first frame of a multi-frame file (pzstd,
    concatenated parts): both would silently scan less than the file holds. Here every frame must
    end, and whatever follows one must be another frame.
    """

    def __init__(self, raw: IO[bytes]) -> None:
        import zstandard

        self._raw = raw
        self._dctx = zstandard.ZstdDecompressor()
        self._obj = self._dctx.decompressobj()
        self._pending = b""
        self._pos = 0  # what of _pending was handed out (no copy per read)
        self._in_frame = False
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        import zstandard

        if self._pos == len(self._pending):
            self._pending, self._pos = b"", 0
        while not self._pending and not self._done:
            data = self._raw.read(1 << 17)
            if not data:
                if self._in_frame:
                    raise zstandard.ZstdError("the file ends inside a zstd frame (truncated?)")
                self._done = True
                break
            while data:
                self._in_frame = True
                self._pending += self._obj.decompress(data)
                if not self._obj.eof:
                    break
                data, self._in_frame = self._obj.unused_data, False  # the next frame, if any
                self._obj = self._dctx.decompressobj()
        n = min(len(b), len(self._pending) - self._pos)
        b[:n] = memoryview(self._pending)[self._pos : self._pos + n]
        self._pos += n
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def decompress_errors() -> tuple[type[BaseException], ...]:
    """What reading a broken compressed file raises: OSError/EOFError (gzip) and zstd's own error."""
    try:
        import zstandard
    except ImportError:  # pragma: no cover - zstandard is a core dependency
        return (OSError, EOFError)
    return (OSError, EOFError, zstandard.ZstdError)


#: A UTF-8 byte-order mark, as Windows tools and pandas' ``utf-8-sig`` write at a file's start.
BOM = b"\xef\xbb\xbf"


def base_suffix(path: Path) -> str:
    name = path.name.lower()
    for comp in (".gz", ".zst", ".zstd"):
        if name.endswith(comp):
            name = name[: -len(comp)]
    return Path(name).suffix


def check_readable(path: Path) -> None:
    if not path.exists():
        raise InputError("no such file or folder", path=path)
    if path.is_file() and not os.access(path, os.R_OK):
        raise InputError("file is not readable", path=path)


def check_corpus_path(path: Path) -> None:
    """:func:`check_readable`, and refuse what can be read only once (a FIFO, ``<(...)``, a socket,
    a device): a scan reads its corpus several times (format, stop-grams, the scan, its sha256),
    and a second read of a pipe waits for ever."""
    check_readable(path)
    if not (path.is_file() or path.is_dir()):
        kind = "a named pipe (FIFO)" if path.is_fifo() else "a socket" if path.is_socket() else "a device" if path.is_char_device() or path.is_block_device() else "not a regular file"  # fmt: skip
        raise InputError(f"{kind}: a corpus is read more than once; save it to a file first (e.g. `cat ... > corpus.jsonl`)", path=path)
    if path.is_file() and path.suffix.lower() in (".jsonl", ".ndjson"):
        check_jsonl_shape(path)


def check_jsonl_shape(path: Path) -> None:
    """Name what a ``.jsonl`` file really is when it is no JSON Lines at all, instead of letting
    its first line fail as "not valid UTF-8" or "not valid JSON": compressed bytes, a (pretty-printed)
    JSON array, or lines ending in a carriage return alone."""
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    for magic, ext, tool, name in ((b"\x1f\x8b", ".gz", "gunzip", "gzip"), (b"\x28\xb5\x2f\xfd", ".zst", "unzstd", "zstd")):
        if head.startswith(magic):
            raise InputError(f"{name}-compressed data in a file named {path.suffix}: name it {path.name}{ext} (contam reads it compressed) or {tool} it", path=path)  # fmt: skip
    first = head.split(b"\n", 1)[0]
    if head.lstrip()[:1] == b"[":
        try:
            json.loads(first)
        except ValueError:
            raise InputError(
                "a JSON array (one value over several lines), not JSON Lines: name it .json (contam reads an array of records) "
                "or write one record per line",
                path=path,
            ) from None
    if b"\r" in first.rstrip(b"\r") and (b"\n" not in head):
        raise InputError("lines end in a carriage return alone (CR, old Mac style): convert them to LF, e.g. `tr '\\r' '\\n' < in > out`", path=path)  # fmt: skip


def iter_records(
    path: str | os.PathLike[str],
    *,
    skip_bad: bool = False,
    stats: BadInputStats | None = None,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, record)`` from any supported file; line numbers start at 1.

    For CSV the header is line 1 and records start at line 2; for JSON arrays and Parquet the
    "line" is the record's 1-based index.
    """
    p = Path(path)
    if str(path).startswith("hf:"):
        yield from _iter_hf(str(path)[3:])
        return
    check_readable(p)
    if p.is_dir():
        yield from _iter_hf(str(p))
        return
    suffix = base_suffix(p)
    if suffix in (".jsonl", ".ndjson", ""):
        yield from _iter_jsonl(p, skip_bad, stats)
    elif suffix == ".json":
        yield from _iter_json(p, skip_bad, stats)
    elif suffix in (".csv", ".tsv"):
        yield from _iter_csv(p, "\t" if suffix == ".tsv" else ",")
    elif suffix == ".parquet":
        yield from _iter_parquet(p)
    else:
        raise InputError(f"unsupported file type {suffix!r} (expected .jsonl, .json, .csv, .parquet, optionally .gz/.zst)", path=p)


def _iter_jsonl(p: Path, skip_bad: bool, stats: BadInputStats | None) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        fh = open_binary(p)
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror or e}", path=p) from None
    with fh:
        buffered = io.BufferedReader(fh) if not isinstance(fh, io.BufferedReader) else fh
        try:
            for lineno, raw in enumerate(buffered, start=1):
                if lineno == 1 and raw.startswith(BOM):
                    raw = raw[3:]
                if not raw.strip():
                    continue
                try:
                    if len(raw) > MAX_RECORD_BYTES:
                        raise _BadLine(*BAD_RECORD["too_large"].error(p, lineno, mb=len(raw) / 1e6, limit_mib=MAX_RECORD_BYTES // 2**20))
                    try:
                        text = raw.decode("utf-8")
                    except UnicodeDecodeError as e:
                        raise _BadLine(*BAD_RECORD["not_utf8"].error(p, lineno, start=e.start)) from None
                    try:
                        rec = json.loads(text)
                    except json.JSONDecodeError as e:
                        raise _BadLine(*BAD_RECORD["not_json"].error(p, lineno, msg=e.msg, colno=e.colno)) from None
                    except RecursionError:
                        raise _BadLine(*BAD_RECORD["too_deep"].error(p, lineno)) from None
                    if not isinstance(rec, dict):
                        raise _BadLine(*BAD_RECORD["not_object"].error(p, lineno, kind=type(rec).__name__))
                except _BadLine as bad:
                    if skip_bad:
                        if stats is not None:
                            stats.add(bad.err, bad.reason)
                        continue
                    raise bad.err from None
                yield lineno, rec
        except decompress_errors() as e:
            raise InputError(f"cannot read (corrupt or truncated compressed file?): {e}", path=p) from None


def _iter_json(p: Path, skip_bad: bool, stats: BadInputStats | None) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        with open_binary(p) as fh:
            data = json.loads(fh.read().decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        raise InputError(f"not valid UTF-8 (byte {e.start})", path=p) from None
    except json.JSONDecodeError as e:
        raise InputError(f"not valid JSON ({e.msg})", path=p, line=e.lineno) from None
    except RecursionError:
        raise InputError("JSON nested too deeply to read", path=p) from None
    except decompress_errors() as e:
        raise InputError(f"cannot read (corrupt or truncated compressed file?): {e}", path=p) from None
    if isinstance(data, dict):
        for key in ("data", "records", "items", "rows"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            # A mapping of id -> record (as the τ-bench databases are).
            data = [dict(v, id=v.get("id", k)) if isinstance(v, dict) else {"id": k, "value": v} for k, v in data.items()]
    if not isinstance(data, list):
        raise InputError("expected a JSON list of objects", path=p)
    for i, rec in enumerate(data, start=1):
        if not isinstance(rec, dict):
            err = InputError(f"record {i} is {type(rec).__name__}, expected an object", path=p, line=i)
            if skip_bad:
                if stats is not None:
                    stats.add(err, "not an object")
                continue
            raise err
        yield i, rec


def _iter_csv(p: Path, delimiter: str) -> Iterator[tuple[int, dict[str, Any]]]:
    with open_binary(p) as fh:
        # utf-8-sig: a byte-order mark before the header is not part of the first column's name.
        text = io.TextIOWrapper(fh, encoding="utf-8-sig", newline="")
        reader = csv.DictReader(text, delimiter=delimiter)
        try:
            start = 2  # the physical line a record starts on (a quoted field may span lines)
            for rec in reader:
                # DictReader files extra values under the key None and fills missing ones with
                # None: either way the row does not match the header, and guessing is wrong.
                if None in rec or None in rec.values():
                    header = len(reader.fieldnames or ())
                    extra = rec.pop(None, None)
                    n_fields = header + len(extra) if extra else header - sum(v is None for v in rec.values())
                    raise InputError(f"row has {n_fields} fields, the header has {header}", path=p, line=start)
                yield reader.line_num, dict(rec)
                start = reader.line_num + 1
        except UnicodeDecodeError as e:
            raise InputError(f"not valid UTF-8 (byte {e.start})", path=p, line=reader.line_num + 1) from None
        except csv.Error as e:
            raise InputError(f"bad CSV: {e}", path=p, line=reader.line_num) from None
        except decompress_errors() as e:
            raise InputError(f"cannot read (corrupt or truncated compressed file?): {e}", path=p) from None


def _iter_parquet(p: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a core dependency
        raise ConfigError("reading Parquet needs pyarrow: pip install pyarrow") from None
    try:
        pf = pq.ParquetFile(p)
    except Exception as e:  # pyarrow raises several unrelated types for a bad file
        raise InputError(f"not a readable Parquet file: {e}", path=p) from None
    n = 0
    batches = pf.iter_batches(batch_size=4096)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except Exception as e:  # a corrupt page: pyarrow's OSError / ArrowInvalid
            raise InputError(f"cannot read Parquet record {n + 1}: {e}", path=p) from None
        for rec in batch.to_pylist():
            n += 1
            yield n, rec


def _iter_hf(spec: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        import datasets
    except ImportError:
        raise ConfigError("reading Hugging Face datasets needs the 'datasets' extra: pip install 'contam[datasets]'") from None
    name, _, split = spec.partition(":")
    try:
        if Path(name).is_dir():
            ds = datasets.load_from_disk(name)
        else:
            ds = datasets.load_dataset(name, split=split or None)
    except Exception as e:  # datasets raises many types (FileNotFoundError, ConnectionError, ...)
        raise InputError(f"cannot load Hugging Face dataset: {str(e).splitlines()[0] if str(e) else type(e).__name__}", path=name) from None
    if isinstance(ds, datasets.DatasetDict):
        if split:
            ds = ds[split]
        elif len(ds) == 1:
            ds = next(iter(ds.values()))
        else:
            raise ConfigError(f"{name} has splits {sorted(ds)}: name one as {name}:SPLIT")
    for i, rec in enumerate(ds, start=1):
        yield i, dict(rec)


def read_documents(
    path: str | os.PathLike[str],
    *,
    text_field: str = "text",
    id_field: str | None = None,
    skip_bad: bool = False,
    stats: BadInputStats | None = None,
    fmt: str = "text",
    roles: tuple[str, ...] | None = None,
) -> Iterator[Document]:
    """Stream :class:`Document` records from a corpus file.

    ``id_field`` defaults to ``id`` when present, else the line number. A missing or non-string
    text field is an error naming file, line and field (or a skip under ``skip_bad``).

    ``fmt`` (:mod:`contam.data.formats`): ``text`` reads ``text_field``; ``chat``, ``sharegpt``,
    ``alpaca``, ``pair`` read the turns of ``roles`` (None: all) joined by a blank line, with
    the turn map in ``metadata["turns"]``; ``auto`` detects the format from the first valid record.
    """
    if fmt != "text":
        yield from _read_turn_documents(path, text_field, id_field, skip_bad, stats, fmt, roles)
        return
    src = str(path)
    for lineno, rec in iter_records(path, skip_bad=skip_bad, stats=stats):
        text = get_field(rec, text_field)
        if not isinstance(text, str):
            err, reason = text_field_error(src, lineno, text_field, text, rec)
            if skip_bad:
                if stats is not None:
                    stats.add(err, reason)
                continue
            raise err
        key = get_field(rec, id_field) if id_field else rec.get("id")
        doc_id = str(key) if key is not None else str(lineno)
        meta = {k: v for k, v in rec.items() if k not in (text_field, id_field or "id")}
        yield Document(id=doc_id, text=text, metadata=meta, source=src, line=lineno)


def _read_turn_documents(
    path: str | os.PathLike[str],
    text_field: str,
    id_field: str | None,
    skip_bad: bool,
    stats: BadInputStats | None,
    fmt: str,
    roles: tuple[str, ...] | None,
) -> Iterator[Document]:
    """:func:`read_documents` for the conversation formats (and ``auto``)."""
    from contam.data.formats import FormatReader

    src = str(path)
    reader = FormatReader(fmt, roles=roles, text_field=text_field, path=src)
    for lineno, rec in iter_records(path, skip_bad=skip_bad, stats=stats):
        try:
            rt = reader.read(rec, lineno)
        except InputError as err:
            if skip_bad:
                if stats is not None:
                    stats.add(err, f"not a {reader.format} record" if reader.format != "auto" else "unknown record format")
                continue
            raise
        key = get_field(rec, id_field) if id_field else rec.get("id")
        doc_id = str(key) if key is not None else str(lineno)
        if reader.format == "text":
            meta = {k: v for k, v in rec.items() if k not in (text_field, id_field or "id")}
        else:
            meta = {"format": reader.format, "turns": rt.turns}
        yield Document(id=doc_id, text=rt.text, metadata=meta, source=src, line=lineno)


def sniff_format(path: str | os.PathLike[str], text_field: str = "text", limit: int = 1000) -> str:
    """The format ``auto`` picks for a file: that of its first record with a known shape (among
    the first ``limit`` that parse); an error naming the first record when none has one."""
    from contam.data.formats import FormatReader, detect

    first: tuple[int, Any] | None = None
    for k, (lineno, rec) in enumerate(iter_records(path, skip_bad=True)):
        found = detect(rec, text_field)
        if found is not None:
            return found
        if first is None:
            first = (lineno, rec)
        if k >= limit:
            break
    if first is None:
        return "text"  # nothing parses: the reader reports the bad lines as it always did
    for lineno, _ in iter_records(path, skip_bad=False):  # a bad line before that record is the first fault: it raises
        if lineno >= first[0]:
            break
    FormatReader("auto", text_field=text_field, path=str(path)).read(first[1], first[0])  # raises, naming the record
    return "text"  # pragma: no cover - read() raised


def get_field(rec: dict[str, Any], dotted: str | None) -> Any:
    """Field lookup; ``a.b`` reaches into nested objects."""
    if dotted is None:
        return None
    cur: Any = rec
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


@dataclass(frozen=True)
class FieldMap:
    """Which record fields hold an item's parts. ``None`` means: guess from common names."""

    question: str | None = None
    answer: str | None = None
    solution: str | None = None
    choices: str | None = None
    id: str | None = None

    _GUESS: ClassVar[dict[str, tuple[str, ...]]] = {
        "question": ("question", "prompt", "problem", "problem_statement", "input", "instruction", "text"),
        "answer": ("answer", "target", "label", "gold", "output"),
        "solution": ("solution", "canonical_solution", "patch", "reasoning", "rationale", "explanation"),
        "choices": ("choices", "options"),
        "id": ("id", "task_id", "instance_id", "idx", "uid"),
    }

    def resolve(self, part: str, rec: dict[str, Any]) -> str | None:
        chosen = getattr(self, part)
        if chosen is not None:
            return chosen
        for name in self._GUESS[part]:
            if name in rec and not (part == "answer" and name == self.question):
                return name
        return None


def load_items(
    path: str | os.PathLike[str],
    *,
    fields: FieldMap | None = None,
    benchmark: str | None = None,
    skip_bad: bool = False,
    stats: BadInputStats | None = None,
) -> list[Item]:
    """Load a user-supplied benchmark file as :class:`Item` records.

    The question field is required; answer, solution, choices and id are optional. Duplicate
    ids are an error (they would make flags ambiguous).
    """
    fields = fields or FieldMap()
    bench = benchmark or Path(str(path)).name.split(".")[0]
    items: list[Item] = []
    seen: dict[str, int] = {}
    for lineno, rec in iter_records(path, skip_bad=skip_bad, stats=stats):
        qf = fields.resolve("question", rec)
        q = get_field(rec, qf) if qf else None
        if not isinstance(q, str) or not q.strip():
            err = InputError("question is missing or empty", path=path, line=lineno, field=qf or fields.question or "question")
            if skip_bad:
                if stats is not None:
                    stats.add(err, "missing question")
                continue
            raise err
        af, sf, cf, idf = (fields.resolve(k, rec) for k in ("answer", "solution", "choices", "id"))
        answer = _as_text(get_field(rec, af) if af else None)
        solution = _as_text(get_field(rec, sf) if sf else None)
        if not solution and GSM8K_FINAL.search(answer):
            # GSM8K's own format: the worked solution in `answer`, ending in "#### <number>".
            solution, answer = answer, answer.rsplit("####", 1)[1].strip().replace(",", "")
        choices = get_field(rec, cf) if cf else None
        if choices is not None and not isinstance(choices, (list, tuple)):
            raise InputError("choices must be a list of strings", path=path, line=lineno, field=cf)
        raw_id = get_field(rec, idf) if idf else None
        item_id = str(raw_id) if raw_id is not None else f"{bench}/{lineno}"
        if item_id in seen:
            raise InputError(f"duplicate item id {item_id!r} (first on line {seen[item_id]})", path=path, line=lineno, field=idf or "id")
        seen[item_id] = lineno
        used = {qf, af, sf, cf, idf}
        items.append(
            Item(
                id=item_id,
                question=q,
                answer=answer,
                solution=solution,
                choices=tuple(str(c) for c in choices) if choices else (),
                benchmark=bench,
                metadata={k: v for k, v in rec.items() if k not in used},
            )
        )
    if not items:
        raise InputError("no items found", path=path)
    return items


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)
