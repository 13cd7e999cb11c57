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
from typing import Any, Protocol, TypeVar

from contam.interrupt import keeping
from contam.models.base import Completion, LanguageModel, Prompt
from contam.outputs import JsonlCheckpoint
from contam.progress import make_progress
from contam.records import Record


class _HasId(Protocol):
    """Anything with an ``id`` (an :class:`~contam.data.items.Item`, a variant): what the group loop keys records by."""

    @property
    def id(self) -> str: ...


T = TypeVar("T")
ItemT = TypeVar("ItemT", bound=_HasId)
R = TypeVar("R", bound=Record)


def batch_size_for(model: Any) -> int:
    """How many items to send per ``generate`` call: the backend's ``preferred_batch`` (API
    backends set it from their concurrency; batched local backends from their batch size), else 1."""
    return max(1, int(getattr(model, "preferred_batch", 1) or 1))


def run_items(
    items: Sequence[T],
    compute: Callable[[T], R],
    record_type: type[R],
    *,
    key: Callable[[T], str],
    checkpoint: JsonlCheckpoint | None = None,
    description: str = "probing",
    batch: Callable[[list[T]], list[R]] | None = None,
    batch_size: int = 1,
) -> list[R]:
    """``compute(item)`` for every item not already in ``checkpoint``, in order, with a progress bar.

    With ``batch`` and ``batch_size > 1`` the items still to do go ``batch_size`` at a time to
    ``batch(chunk)`` (one ``generate`` call for the chunk: concurrent on API backends, batched on
    GPU ones); each record is checkpointed as soon as its chunk is back. The checkpoint must use
    ``key="key"`` and each record a ``key`` field equal to ``key(item)``.
    """
    done: dict[str, R] = {}
    if checkpoint is not None:
        for raw in checkpoint.records:
            if isinstance(raw, dict) and "key" in raw:
                done[str(raw["key"])] = record_type.from_dict(raw)
    keys = [key(it) for it in items]
    todo = [it for it, k in zip(items, keys, strict=True) if k not in done]
    new: dict[str, R] = {}
    step = batch_size if batch is not None and batch_size > 1 else 1

    def kept() -> str:  # what Ctrl-C leaves behind (contam.interrupt)
        if checkpoint is None:
            return f"nothing kept ({description} ran without an --out folder)"
        return f"{len(items) - len(todo) + len(new)} of {len(items)} items kept in {_folder(checkpoint)} ({description})"

    with make_progress() as prog, keeping(kept, resumable=checkpoint is not None):
        task = prog.add_task(description, total=len(items), completed=len(items) - len(todo), unit="items")
        for start in range(0, len(todo), step):
            chunk = todo[start : start + step]
            recs = batch(chunk) if step > 1 and batch is not None else [compute(chunk[0])]
            for it, rec in zip(chunk, recs, strict=True):
                if checkpoint is not None:
                    checkpoint.write(rec)
                new[key(it)] = rec
            prog.advance(task, len(chunk))
    return [done[k] if k in done else new[k] for k in keys]


def _folder(checkpoint: JsonlCheckpoint) -> str:
    """Where a checkpoint's records are kept: its folder, or the file when the folder holds others' too."""
    return f"{checkpoint.path.parent}/" if checkpoint.path.name == "items.jsonl" else str(checkpoint.path)


def run_groups(
    probe: Any,
    model: LanguageModel,
    items: Sequence[ItemT],
    comparison: Sequence[ItemT] | None,
    record_type: type[R],
    *,
    checkpoint: JsonlCheckpoint | None = None,
    name: str = "probing",
) -> tuple[list[tuple[str, Sequence[ItemT]]], list[R]]:
    """Run a probe's ``score_item`` / ``score_batch`` over the ``original`` items and, when given,
    the ``comparison`` items (group ``reference``, the name records on disk keep); records are
    keyed ``"{group}/{item.id}"``. Returns the groups and the records of both, in order."""
    groups: list[tuple[str, Sequence[ItemT]]] = [("original", items)] + ([("reference", comparison)] if comparison else [])
    records: list[R] = []
    for group, its in groups:
        records += run_items(
            its,
            lambda it, g=group: probe.score_item(model, it, g),
            record_type,
            key=lambda it, g=group: f"{g}/{it.id}",
            checkpoint=checkpoint,
            description=f"{name} {group}",
            batch=lambda chunk, g=group: probe.score_batch(model, chunk, g),
            batch_size=batch_size_for(model),
        )
    return groups, records


def generate_grouped(model: LanguageModel, requests: Sequence[tuple[Prompt, int]], **kw: Any) -> list[list[Completion]]:
    """Completions for ``(prompt, max_new_tokens)`` requests, one ``generate`` call per distinct
    budget (``kw`` goes to every call: ``n``, ``temperature``, ``seed`` ...), in request order."""
    out: list[list[Completion]] = [[] for _ in requests]
    for b in sorted({b for _, b in requests}):
        idx = [i for i, (_, bb) in enumerate(requests) if bb == b]
        res = model.generate([requests[i][0] for i in idx], max_new_tokens=b, **kw)
        for i, comps in zip(idx, res, strict=True):
            out[i] = comps
    return out


def generate_texts(model: LanguageModel, requests: Sequence[tuple[Prompt, int]], **kw: Any) -> list[str]:
    """The first completion's text for each request (see :func:`generate_grouped`)."""
    return [c[0].text for c in generate_grouped(model, requests, **kw)]


def comparison_set(
    items: Sequence[Any],
    reference: Sequence[Any] | None = None,
    variants: dict[str, list[Any]] | None = None,
    control: Sequence[Any] | None = None,
) -> list[Any] | None:
    """The comparison group of an unpaired probe under the shared vocabulary: ``control`` (a clean
    set; ``reference`` is its old name) or ``variants`` (each item's first isomorphic variant)."""
    from contam.errors import ConfigError

    given = [x for x in (reference, control) if x is not None]
    if len(given) + (variants is not None) > 1:
        raise ConfigError("give one comparison set: variants or control")
    if variants is not None:
        return [variants[it.id][0] for it in items if variants.get(it.id)]
    return list(given[0]) if given else None
