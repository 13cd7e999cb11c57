"""An ordered pool of worker processes: tasks go to the workers in turn, results come back in
the order the tasks went out.

Each worker has its own pipe and gets every ``n``-th task, so the results of one worker come
back in the order it got its tasks and the parent reads them in submission order with no helper
threads (``multiprocessing.Pool``'s worker-handler thread wakes on every result and cost the
scan job's parent ~0.35 CPU-s per GB). Each worker builds its own context once, with
``init(*init_args)``, and runs ``work(context, task)`` for every task: the context is the
worker's own object, passed explicitly, never module state the parent also writes.

A worker that raises sends the exception back; :meth:`Reply.get` raises it again in the parent.
A worker that dies (killed, out of memory) is a :class:`~contam.errors.WorkerDied`.

>>> with OrderedPool(2, _doctest_init, _doctest_work, (10,)) as pool:
...     replies = [pool.submit(i) for i in range(5)]
...     [r.get() for r in replies]
[10, 11, 12, 13, 14]
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from contam.errors import WorkerDied

C = TypeVar("C")
T = TypeVar("T")
R = TypeVar("R")


class OrderedPool(Generic[T, R]):
    """``n`` worker processes (forked where the platform can, so a large fitted index is shared
    copy-on-write and ``init`` may be any function; spawned elsewhere, where ``init``, ``work``
    and ``init_args`` must pickle)."""

    def __init__(self, n: int, init: Callable[..., C], work: Callable[[C, T], R], init_args: tuple[Any, ...] = ()) -> None:
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self.conns: list[Any] = []
        self.procs: list[Any] = []
        self.sent = 0
        for _ in range(n):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(theirs, init, work, init_args), daemon=True)
            proc.start()
            theirs.close()
            self.conns.append(mine)
            self.procs.append(proc)

    def submit(self, task: T) -> Reply[R]:
        """Send ``task`` to the next worker in turn; its result is the returned reply's."""
        conn = self.conns[self.sent % len(self.conns)]
        self.sent += 1
        try:
            conn.send(task)
        except OSError:
            raise WorkerDied() from None
        return Reply(conn)

    def close(self) -> None:
        """Stop every worker (tasks in flight are dropped)."""
        for proc in self.procs:
            proc.terminate()
        for proc, conn in zip(self.procs, self.conns, strict=True):
            proc.join()
            conn.close()

    def __enter__(self) -> OrderedPool[T, R]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Reply(Generic[R]):
    """The result of one submitted task. Replies of one pool must be read in submission order."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def get(self) -> R:
        try:
            ok, value = self.conn.recv()
        except (EOFError, OSError):
            raise WorkerDied() from None
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]


def _serve(conn: Any, init: Callable[..., Any], work: Callable[[Any, Any], Any], init_args: tuple[Any, ...]) -> None:
    """A worker process: run the tasks that come down ``conn`` until the parent closes it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the workers
    context = init(*init_args)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[bool, Any] = (True, work(context, task))
        except Exception as e:  # bad input, an unreadable file: raised again in the parent
            reply = (False, e)
        conn.send(reply)


def _doctest_init(base: int) -> int:
    return base


def _doctest_work(base: int, task: int) -> int:
    return base + task
