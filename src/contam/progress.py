"""The one progress helper every long loop goes through (Rich bars with rate and ETA).

Bars render on stderr only when it is a terminal, so logs, pipes and CI stay clean;
``CONTAM_PROGRESS=0`` turns them off and ``=1`` forces them on.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sized
from typing import TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

T = TypeVar("T")

stderr_console = Console(stderr=True)


def progress_enabled() -> bool:
    flag = os.environ.get("CONTAM_PROGRESS")
    if flag is not None:
        return flag not in ("0", "false", "no", "")
    return sys.stderr.isatty()


def make_progress(transient: bool = False) -> Progress:
    """A :class:`rich.progress.Progress` with the project's columns, for callers that
    advance bars by hand (e.g. by bytes read)."""
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=stderr_console,
        transient=transient,
        disable=not progress_enabled(),
    )


def track(items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
    """Iterate ``items`` with a progress bar (rate and ETA when ``total`` is known)."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    with make_progress() as prog:
        task = prog.add_task(description, total=total)
        for item in items:
            yield item
            prog.advance(task)
