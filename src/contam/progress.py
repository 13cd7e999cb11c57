"""The one progress helper every long loop goes through (Rich bars with rate and ETA).

Bars render on stderr only when it is a terminal; ``CONTAM_PROGRESS=1`` forces them on and
``=0`` turns progress off. Off a terminal (a log, a pipe, CI, ``nohup``) the same progress is a
plain line on stderr every ``CONTAM_PROGRESS_INTERVAL`` seconds (default 30), one per unfinished
bar, e.g. ``zero-CoT probe: 8/50 items, 1m12s elapsed, ETA 6m18s``: the rate and the ETA count
only the work done in this run (a resumed run's records do not make it look faster).

>>> plain_line("zero-CoT probe", 8, 50, 72.0, 8, "items")
'zero-CoT probe: 8/50 items, 1m12s elapsed, ETA 6m18s'
>>> plain_line("scanning (token)", 1234, None, 5.0, 1234)
'scanning (token): 1234 done, 5s elapsed'
>>> plain_line("[3/7] gsm8k: Zero-CoT Probe", 40.5, 162.0, 4000.0, 30.0, "%")
'[3/7] gsm8k: Zero-CoT Probe: 25% done, 1h06m elapsed, ETA 4h30m'
>>> plain_line("[2/4] gsm8k: Zero-CoT Probe", 1, 100, 270.0, 1, "%", idle=268.0)
'[2/4] gsm8k: Zero-CoT Probe: 1% done, 4m30s elapsed, ETA unknown (no progress for 4m28s)'
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sized
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from contam import interrupt

T = TypeVar("T")

stderr_console = Console(stderr=True)

_OFF = ("0", "false", "no", "")
#: Seconds between plain progress lines off a terminal, unless ``CONTAM_PROGRESS_INTERVAL`` says otherwise.
DEFAULT_INTERVAL = 30.0


def progress_enabled() -> bool:
    """Whether Rich bars are drawn (stderr is a terminal, or ``CONTAM_PROGRESS=1``)."""
    flag = os.environ.get("CONTAM_PROGRESS")
    if flag is not None:
        return flag not in _OFF
    return sys.stderr.isatty()


def plain_interval() -> float | None:
    """Seconds between plain progress lines, or ``None`` when none are printed (bars are drawn
    instead, progress is turned off with ``CONTAM_PROGRESS=0``, or the interval is 0)."""
    flag = os.environ.get("CONTAM_PROGRESS")
    if flag is not None or sys.stderr.isatty():
        return None  # bars on, or progress asked off
    raw = os.environ.get("CONTAM_PROGRESS_INTERVAL", "")
    try:
        secs = float(raw) if raw.strip() else DEFAULT_INTERVAL
    except ValueError:
        secs = DEFAULT_INTERVAL
    return secs if secs > 0 else None


def duration(secs: float) -> str:
    """``42s``, ``1m12s``, ``2h05m``."""
    s = max(0, round(secs))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def plain_line(
    description: str, completed: float, total: float | None, elapsed: float, done_here: float, unit: str = "", idle: float = 0.0
) -> str:
    """One progress line: ``done/total unit``, time elapsed in this run and the ETA.

    The ETA comes from this run's rate as of its last progress (``done_here`` units in
    ``elapsed - idle`` seconds), less the ``idle`` seconds since; a loop whose next batch is
    late says so instead of an ETA that only grows."""
    share = f"{min(1.0, completed / total):.0%}" if total else ""
    if unit == "%":  # a count in arbitrary units (an audit's steps): the share only
        done = f"{share} done" if total else "running"
    elif total:
        done = f"{completed:g}/{total:g} " + (unit or f"({share})")
    else:
        done = f"{completed:g} done"
    parts = [f"{description}: {done}", f"{duration(elapsed)} elapsed"]
    if total:
        left = max(0.0, total - completed)
        eta = left * (elapsed - idle) / done_here - idle if done_here > 0 else None
        if eta is None:
            parts.append("ETA unknown")
        elif eta > 0 or not left:
            parts.append(f"ETA {duration(eta)}")
        else:
            parts.append(f"ETA unknown (no progress for {duration(idle)})")
    return ", ".join(parts)


class PlainProgress(Progress):
    """A :class:`rich.progress.Progress` that, with ``interval`` set (bars off, stderr not a
    terminal), prints :func:`plain_line` for every unfinished task every ``interval`` seconds from
    a background thread, so a stalled item still shows the run is alive."""

    def __init__(self, *columns: str | ProgressColumn, interval: float | None = None, **kw: Any) -> None:
        super().__init__(*columns, **kw)
        self.interval = interval
        self._start: dict[TaskID, tuple[float, float]] = {}  # task -> (monotonic start, completed at start)
        self._moved: dict[TaskID, float] = {}  # task -> when its count last changed
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add_task(
        self, description: str, start: bool = True, total: float | None = 100.0, completed: int = 0, visible: bool = True, **fields: Any
    ) -> TaskID:
        with self._lock:
            task = super().add_task(description, start=start, total=total, completed=completed, visible=visible, **fields)
            self._start[task] = (time.monotonic(), float(completed))
        return task

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._moved[task_id] = time.monotonic()
        interrupt.check()  # a Ctrl-C a C library's callback swallowed stops the loop here

    def update(
        self,
        task_id: TaskID,
        *,
        total: float | None = None,
        completed: float | None = None,
        advance: float | None = None,
        description: str | None = None,
        visible: bool | None = None,
        refresh: bool = False,
        **fields: Any,
    ) -> None:
        kw = {"total": total, "completed": completed, "advance": advance, "description": description, "visible": visible}
        super().update(task_id, refresh=refresh, **kw, **fields)
        if completed is not None or advance:
            self._moved[task_id] = time.monotonic()
            interrupt.check()

    def start(self) -> None:
        super().start()
        if self.interval and self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="contam-progress", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        super().stop()

    def lines(self) -> list[str]:
        """The plain line of every visible, unfinished task, as of now."""
        now = time.monotonic()
        with self._lock:
            tasks = [
                (t.id, t.description, t.completed, t.total, t.fields.get("unit", "")) for t in self.tasks if t.visible and not t.finished
            ]
        out = []
        for tid, desc, completed, total, unit in tasks:
            t0, base = self._start.get(tid, (now, 0.0))
            idle = now - self._moved.get(tid, t0)
            out.append(plain_line(desc, completed, total, now - t0, completed - base, str(unit), idle))
        return out

    def _loop(self) -> None:
        assert self.interval is not None
        while not self._stop.wait(self.interval):
            try:
                for line in self.lines():
                    sys.stderr.write(line + "\n")
                sys.stderr.flush()
            except (OSError, ValueError):  # stderr closed under us: nothing left to tell
                return


def make_progress(*columns: str | ProgressColumn, transient: bool = False, console: Console | None = None) -> PlainProgress:
    """The project's progress display, for callers that advance bars by hand (e.g. by bytes read):
    Rich bars on a terminal (``columns``, else the project's), plain lines every ~30 s off one.
    A task's ``unit`` field (``add_task(..., unit="items")``) names what its count counts; ``"%"``
    shows the share done only."""
    cols = columns or (
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    return PlainProgress(
        *cols,
        console=console or stderr_console,
        transient=transient,
        disable=not progress_enabled(),
        interval=plain_interval(),
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
