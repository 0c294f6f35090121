"""Forked worker processes of a job (the up-front parse and the parallel analyses).

A worker never outlives the run, never answers Ctrl-C itself and never holds the run's lock:
- it ignores SIGINT: Ctrl-C reaches the whole process group, and the parent alone stops the pool (a worker
  killed by it would surface as a broken pool, an "internal error", with its traceback on the terminal);
  the parent holds SIGINT back while it forks, so no worker can be hit before it ignores it;
- the kernel kills it when the parent dies (PR_SET_PDEATHSIG), so a kill -9 of the parent leaves no
  orphan waiting on its queue for ever;
- it closes its copy of the run lock's descriptor (flock locks live while any copy is open), so a killed
  run's lock is free for the rerun that resumes it.
Leaving the pool by an exception (Ctrl-C included) terminates the workers instead of waiting for them."""
from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from threading import Lock
from typing import Any, Generic, TypeVar

_PR_SET_PDEATHSIG = 1  # linux/prctl.h
Task = TypeVar("Task", bound=Hashable)
Result = TypeVar("Result")
_held_locks: set[int] = set()  # descriptors of locks this process holds for its run
_NOT_A_WORKER = object()
_inherited: Any = _NOT_A_WORKER  # in a worker: what its pool was given (inherited())


def jobs() -> int:
    """Processes a job may run side by side: FLAGTREE_SYNC_JOBS, else the cores this process may use."""
    configured = os.environ.get("FLAGTREE_SYNC_JOBS", "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def holding_lock(descriptor: int) -> None:
    _held_locks.add(descriptor)


def released_lock(descriptor: int) -> None:
    _held_locks.discard(descriptor)


@contextmanager
def worker_pool(workers: int, inherited: Any = None) -> Iterator[ProcessPoolExecutor]:
    """A pool of forked workers, all started on entry. inherited: what the workers read (inherited() in a
    worker), handed to them through the fork, never pickled: a worker starts from the parent's memory, where a
    task's arguments would be pickled per task (the analyses' context holds the trees and the parsed facts)."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_in_worker,
                               initargs=(os.getpid(), inherited))
    try:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            pool.submit(int).result()  # a fork pool starts every worker at its first task
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a Ctrl-C held back is raised here
        yield pool
    except BaseException:
        stop_pool(pool)
        raise
    pool.shutdown(wait=True)


class Dispatch(Generic[Task, Result]):
    """Tasks in order for a pool's workers and the parent: the workers are handed the first tasks left as they
    finish theirs, and the parent takes the last ones to run itself, so the two meet at the end and the last
    tasks go to whoever is free first. A task the parent runs copies no page and sends nothing back.

    queued: tasks handed to each worker beyond the one it runs. 0 for long tasks (a task in the pool's queue is
    beyond the parent's reach); 1 for many short ones, so that no worker waits for its next task to arrive."""

    def __init__(self, tasks: list[Task], workers: int, submit: Callable[[Task], "Future[Result]"],
                 queued: int = 0) -> None:
        self._left, self._submit = deque(tasks), submit
        self._lock = Lock()
        self.futures: dict[Task, Future[Result]] = {}
        self._broken = False
        for _ in range(workers * (1 + queued)):
            self._hand_out()

    def take_first(self) -> Task | None:
        """The first task no worker has, for the parent to run (the next, as a worker would take it); None once
        every task is handed out."""
        with self._lock:
            return self._left.popleft() if self._left else None

    def take_last(self) -> Task | None:
        """The last task no worker has, for the parent to run; None once every task is handed out (all in
        futures by then: handing out holds the lock until the future is in)."""
        with self._lock:
            return self._left.pop() if self._left else None

    def handed_out(self) -> bool:
        """Whether every task went to a worker or to the parent (none is left to take)."""
        with self._lock:
            return not self._left

    def _hand_out(self, _finished: object = None) -> None:
        """Hand the first task left to the pool (also a future's callback: its worker is free again)."""
        with self._lock:
            if not self._left or self._broken:
                return
            task = self._left.popleft()
            try:
                future = self._submit(task)
            except Exception as exc:  # a broken or shut pool (Ctrl-C): hand out nothing more, quietly;
                future = Future()  # whoever waits on this task gets the error, the rest stay for the parent
                future.set_exception(exc)
                self._broken = True
            self.futures[task] = future
        if not self._broken:
            future.add_done_callback(self._hand_out)  # outside the lock; runs at once if it is done already


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Kill the pool's workers and cancel what they had left (instead of waiting for it)."""
    # ProcessPoolExecutor (3.11) has no public way to stop running workers: its process table it is.
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.is_alive():
            process.kill()
    # A worker killed halfway through sending a result would leave the pool's manager thread waiting for the
    # rest for ever (and the interpreter joins that thread at exit): with the parent's copy of the result
    # pipe's write end closed too, no writer is left, so the read ends and the pool shuts down as broken.
    queue = getattr(pool, "_result_queue", None)
    writer = getattr(queue, "_writer", None)
    if writer is not None:
        writer.close()
    pool.shutdown(wait=True, cancel_futures=True)


def inherited() -> Any:
    """In a worker: what its pool was given (worker_pool's inherited)."""
    if _inherited is _NOT_A_WORKER:
        raise RuntimeError("inherited() is for a worker of worker_pool")
    return _inherited


def _in_worker(parent: int, given: Any) -> None:
    global _inherited
    _inherited = given  # set in the worker only, by its pool's start
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    for descriptor in list(_held_locks):
        try:
            os.close(descriptor)
        except OSError:
            pass
    _held_locks.clear()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the orphan still exits when its queue's pipe closes
        pass
    if os.getppid() != parent:  # the parent died before the prctl took effect
        os._exit(1)
