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

Workers die with their parent, even when it is killed with ``SIGKILL`` (no cleanup runs then):
on Linux each asks the kernel for ``SIGKILL`` when its parent dies (``PR_SET_PDEATHSIG``);
everywhere, each closes the parent's ends of the pipes it inherited, so the parent's death is
end-of-file on its pipe, and a watcher thread exits the worker as soon as its parent is gone
(even in the middle of a task). Without this a killed scan left its workers alive for ever,
holding the caller's stdout and stderr open.

>>> with OrderedPool(2, _doctest_init, _doctest_work, (10,)) as pool:
...     replies = [pool.submit(i) for i in range(5)]
...     [r.get() for r in replies]
[10, 11, 12, 13, 14]
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from contam.errors import WorkerDied

C = TypeVar("C")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS reports one, which a
    container or ``taskset`` narrows; else every core), at least 1.

    >>> usable_cores() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


T = TypeVar("T")
R = TypeVar("R")


class OrderedPool(Generic[T, R]):
    """``n`` worker processes (forked where the platform can, so a large fitted index is shared
    copy-on-write and ``init`` may be any function; spawned elsewhere, where ``init``, ``work``
    and ``init_args`` must pickle).

    ``large_tasks``: tasks larger than a pipe's buffer (a batch of documents, not a byte range)
    are sent by one thread per worker, so :meth:`submit` never waits for a busy worker to read
    while another sits idle.
    """

    def __init__(
        self, n: int, init: Callable[..., C], work: Callable[[C, T], R], init_args: tuple[Any, ...] = (), large_tasks: bool = False
    ) -> None:
        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        ctx = mp.get_context("fork") if method == "fork" else mp.get_context("spawn")  # literal names: typed contexts
        self.conns: list[Any] = []
        self.procs: list[Any] = []
        self.sent = 0
        for _ in range(n):
            mine, theirs = ctx.Pipe()
            # A forked worker holds copies of the parent's pipe ends (its own and the earlier
            # workers'): it closes them, or the parent's death would never be end-of-file to it.
            inherited = [*self.conns, mine] if method == "fork" else []
            proc = ctx.Process(target=_serve, args=(theirs, init, work, init_args, os.getpid(), inherited), daemon=True)
            proc.start()
            theirs.close()
            self.conns.append(mine)
            self.procs.append(proc)
        # Started after the forks: a forked child copies no thread.
        self.outboxes: list[queue.SimpleQueue[Any]] = []
        for conn in self.conns if large_tasks else ():
            box: queue.SimpleQueue[Any] = queue.SimpleQueue()
            threading.Thread(target=_send_all, args=(conn, box), name="pool-send", daemon=True).start()
            self.outboxes.append(box)

    def submit(self, task: T) -> Reply[R]:
        """Send ``task`` to the next worker in turn; its result is the returned reply's."""
        k = self.sent % len(self.conns)
        self.sent += 1
        if self.outboxes:  # a worker that died is EOF on its reply, which raises WorkerDied there
            self.outboxes[k].put(task)
            return Reply(self.conns[k])
        try:
            self.conns[k].send(task)
        except OSError:
            raise WorkerDied() from None
        return Reply(self.conns[k])

    def close(self) -> None:
        """Stop every worker (tasks in flight are dropped)."""
        for box in self.outboxes:
            box.put(_STOP)
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
        return value


_STOP = object()


def _send_all(conn: Any, box: queue.SimpleQueue[Any]) -> None:
    """A sender thread: the tasks put in ``box``, in order, down ``conn``, until :data:`_STOP`."""
    while (task := box.get()) is not _STOP:
        try:
            conn.send(task)
        except OSError:  # the worker is gone: its reply reports it
            return


def die_with_parent(parent: int) -> None:
    """Make this (child) process end when ``parent`` does: ``PR_SET_PDEATHSIG`` on Linux, and a
    watcher thread everywhere (it also covers the parent dying before the call)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):  # no libc to call: the watcher below still works
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:  # reparented: the parent is gone
                os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _serve(
    conn: Any,
    init: Callable[..., Any],
    work: Callable[[Any, Any], Any],
    init_args: tuple[Any, ...],
    parent: int | None = None,
    inherited: list[Any] | None = None,
) -> None:
    """A worker process: run the tasks that come down ``conn`` until the parent closes it (or dies)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops the workers
    for c in inherited or ():
        c.close()
    if parent is not None:
        die_with_parent(parent)
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
        try:
            conn.send(reply)
        except OSError:  # the parent is gone (a broken pipe): nothing to report to, and no traceback
            return


def _doctest_init(base: int) -> int:
    return base


def _doctest_work(base: int, task: int) -> int:
    return base + task
