"""The resumable per-item loop the generation probes share.

Each probe computes one record per (group, item); records stream to a
:class:`~contam.outputs.JsonlCheckpoint` keyed by ``key`` (``"original/gsm8k/test/3"``), so a
killed run picks up where it stopped, and the model's response cache (``contam.models``) makes
any re-asked call free. Records already in the checkpoint are rebuilt, not recomputed.

>>> from dataclasses import dataclass
>>> from contam.records import Record
>>> @dataclass(frozen=True)
... class R(Record):
...     key: str
...     v: int
>>> [r.v for r in run_items(["a", "b"], lambda x: R(f"g/{x}", len(x)), R, key=lambda x: f"g/{x}")]
[1, 1]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from contam.outputs import JsonlCheckpoint
from contam.progress import track
from contam.records import Record

T = TypeVar("T")
R = TypeVar("R", bound=Record)


def run_items(
    items: Sequence[T],
    compute: Callable[[T], R],
    record_type: type[R],
    *,
    key: Callable[[T], str],
    checkpoint: JsonlCheckpoint | None = None,
    description: str = "probing",
) -> list[R]:
    """``compute(item)`` for every item not already in ``checkpoint``, in order, with a progress bar.

    The checkpoint must use ``key="key"`` and each record a ``key`` field equal to ``key(item)``.
    """
    done: dict[str, R] = {}
    if checkpoint is not None:
        for raw in checkpoint.records:
            if isinstance(raw, dict) and "key" in raw:
                done[str(raw["key"])] = record_type.from_dict(raw)
    out: list[R] = []
    for item in track(items, description, total=len(items)):
        k = key(item)
        if k in done:
            out.append(done[k])
            continue
        rec = compute(item)
        if checkpoint is not None:
            checkpoint.write(rec)
        out.append(rec)
    return out
