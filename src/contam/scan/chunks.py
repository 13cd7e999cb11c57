"""Cutting a corpus into the chunks the scan job's workers scan.

A chunk's work is one of three kinds, whichever the input allows cheapest:

* :class:`ByteRange` — a plain JSONL file on POSIX: the reader only finds a line end near each
  boundary and each worker reads its own range (``os.pread``) and counts its lines, so the
  parent neither reads nor counts the corpus;
* :class:`Block` — compressed JSONL (no seeking): the parent decompresses and cuts at line ends,
  workers parse;
* :class:`Docs` — every other format, through :func:`~contam.data.loaders.read_documents`.

Each comes wrapped in a :class:`Chunk` with its input size and where the next chunk starts (the
scan's checkpoint).

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "c.jsonl")
>>> _ = open(p, "w").write("".join('{"text": "line %d"}\\n' % i for i in range(100)))
>>> chunks = list(corpus_chunks(p, "text", None, False, BadInputStats(), batch_bytes=500))
>>> [c.work for c in chunks[:2]], chunks[-1].next_offset == os.path.getsize(p)
([ByteRange(start=0, end=490), ByteRange(start=490, end=990)], True)
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from contam.data import BadInputStats, read_documents
from contam.data.items import Document
from contam.data.loaders import BOM, base_suffix, decompress_errors, open_binary
from contam.errors import InputError

COMPRESSED = (".gz", ".zst", ".zstd")


@dataclass(frozen=True, slots=True)
class ByteRange:
    """Bytes ``start..end`` of the corpus file, whole lines; its worker numbers them from 1."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Block:
    """Raw JSONL lines, the first of them line ``first_line`` of the corpus."""

    first_line: int
    data: bytes


@dataclass(frozen=True, slots=True)
class Docs:
    """Documents already read (formats other than JSONL)."""

    docs: list[Document]


Work = ByteRange | Block | Docs


@dataclass(frozen=True, slots=True)
class Chunk:
    """One unit of work and where the corpus continues after it.

    ``next_line`` is None after a :class:`ByteRange` (its worker counts its lines);
    ``next_offset`` is the byte offset to resume a plain file at (0 where there is none).
    """

    work: Work
    nbytes: int
    next_line: int | None
    next_offset: int


def corpus_chunks(
    corpus: str,
    text_field: str,
    id_field: str | None,
    skip_bad: bool,
    stats: BadInputStats,
    batch_bytes: int,
    start_line: int = 1,
    start_offset: int = 0,
) -> Iterator[Chunk]:
    """The corpus in chunks of about ``batch_bytes``, from ``start_line`` (``start_offset`` in a plain file)."""
    p = Path(corpus)
    if not str(corpus).startswith("hf:") and p.is_file() and base_suffix(p) in (".jsonl", ".ndjson", ""):
        try:
            fh = open_binary(p)
        except OSError as e:
            raise InputError(f"cannot open: {e.strerror or e}", path=p) from None
        compressed = p.name.lower().endswith(COMPRESSED)
        if not compressed and hasattr(os, "pread"):  # POSIX: workers read their own ranges
            fh.close()
            yield from byte_ranges(p, batch_bytes, start_offset)
            return
        with fh:
            offset, first = 0, 1
            if start_offset and not compressed:
                fh.seek(start_offset)
                offset, first = start_offset, start_line
            try:
                for block in line_blocks(fh, batch_bytes):
                    offset += len(block)
                    if offset == len(block) and block.startswith(BOM):
                        block = block[len(BOM) :]  # a byte-order mark opening the file is not data
                    n_lines = int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8) == 10)) + (not block.endswith(b"\n"))
                    if first < start_line:  # compressed input cannot seek: skip what was done
                        if first + n_lines <= start_line:
                            first += n_lines
                            continue
                        cut = -1
                        for _ in range(start_line - first):
                            cut = block.index(b"\n", cut + 1)
                        block, n_lines, first = block[cut + 1 :], n_lines - (start_line - first), start_line
                    # Workers split the block into lines: the reader only finds line ends.
                    yield Chunk(Block(first, block), len(block), first + n_lines, offset)
                    first += n_lines
            except decompress_errors() as e:
                raise InputError(f"cannot read (corrupt or truncated compressed file?): {e}", path=p) from None
        return
    batch: list[Document] = []
    size = 0
    for doc in read_documents(corpus, text_field=text_field, id_field=id_field, skip_bad=skip_bad, stats=stats):
        if doc.line < start_line:
            continue
        batch.append(Document(id=doc.id, text=doc.text, source=doc.source, line=doc.line))
        size += len(doc.text)
        if size >= batch_bytes:
            yield Chunk(Docs(batch), size, doc.line + 1, 0)
            batch, size = [], 0
    if batch:
        yield Chunk(Docs(batch), size, batch[-1].line + 1, 0)


def byte_ranges(p: Path, batch_bytes: int, start_offset: int) -> Iterator[Chunk]:
    """Byte ranges of about ``batch_bytes`` ending at line ends, from a plain file. The reader
    only looks for a line end near each boundary (it reads no more than that): each worker
    reads its own range and counts its lines."""
    try:
        with open(p, "rb", buffering=0) as f:
            fd = f.fileno()
            size = os.fstat(fd).st_size
            pos = start_offset
            if pos == 0 and os.pread(fd, len(BOM), 0) == BOM:
                pos = len(BOM)  # a byte-order mark opening the file is not data (line 1 starts after it)
            while pos < size:
                end = min(pos + batch_bytes, size)
                if end < size:
                    end = line_end(fd, pos, end, size)
                yield Chunk(ByteRange(pos, end), end - pos, None, end)
                pos = end
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", path=p) from None


def line_end(fd: int, pos: int, stop: int, size: int) -> int:
    """The end (after its newline) of the last line ending in ``pos..stop``, or if none does,
    of the line running past ``stop``."""
    near = min(stop - pos, 1 << 16)
    last = os.pread(fd, near, stop - near).rfind(b"\n")
    if last >= 0:
        return stop - near + last + 1
    at = stop  # no line end in the last 64 KiB: look back further, then forward
    back = os.pread(fd, stop - near - pos, pos).rfind(b"\n") if stop - near > pos else -1
    if back >= 0:
        return pos + back + 1
    while at < size:
        chunk = os.pread(fd, 1 << 20, at)
        if not chunk:
            break
        nl = chunk.find(b"\n")
        if nl >= 0:
            return at + nl + 1
        at += len(chunk)
    return size


def read_range(fd: int, path: str, r: ByteRange) -> bytes:
    """The bytes of ``r`` from an open ``fd`` of ``path`` (named in the error if the file shrank)."""
    out = os.pread(fd, r.end - r.start, r.start)
    if len(out) != r.end - r.start:
        raise InputError(f"cannot read bytes {r.start}-{r.end}: the file changed during the scan", path=path)
    return out


def line_blocks(fh: Any, size: int) -> Iterator[bytes]:
    """Blocks of about ``size`` bytes ending at a line end (or the end of the input); only
    ``read`` is needed, so compressed streams work too."""
    pieces: list[bytes] = []
    while True:
        data = fh.read(size)
        if not data:
            if pieces:
                yield b"".join(pieces)
            return
        cut = data.rfind(b"\n") + 1
        if not cut:  # a line longer than the block: keep reading
            pieces.append(data)
            continue
        pieces.append(data[:cut])
        yield b"".join(pieces)
        pieces = [data[cut:]] if cut < len(data) else []
