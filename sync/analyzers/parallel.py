"""Run the analyses of one drift, the heavy ones side by side in worker processes.

The analyses on request (symbols, call signatures, co-change, keys, ...) read independent files and take
seconds each on a real FlagTree tree; the others take milliseconds. When the fork's Python is large
enough for a process to pay (the bytes the up-front parse saw) and more than one core is free, the heavy
ones run side by side, one analysis a task: a forked worker for each core but one, and the parent itself.
A worker starts from the parent's memory (the trees, the facts parsed up front, the fact cache) and sends
back its findings and the files it had to skip. The parent runs the light analyses, then takes heavy tasks
no worker has begun, from the end of the queue while the workers take them from its front: an analysis run
in the parent copies no page and sends nothing back, and the last tasks go to whoever is free first.
Findings come back in the registry's order whoever ran them, so a report never depends on the path taken
(tests/test_speed_parity.py compares both)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from contextvars import Context, copy_context
from typing import TYPE_CHECKING

from ..git import GitTree
from ..model import Finding
from ..progress import Progress
from ..workers import Dispatch, worker_pool
from .parsing import SkipLog, analysing, recording_skips
from .pyblobs import PARALLEL_BYTES, jobs

if TYPE_CHECKING:
    from .registry import Analyzer

RunOne = Callable[["Analyzer"], list[Finding]]
Skipped = dict[tuple[str, str], str]
Outcome = tuple[list[Finding], Skipped, list[list[str]]]  # findings, skips, unreadable paths per tree

# What forked workers read: set just before the pool forks, cleared after (never pickled).
_WORK: tuple[Context, Sequence["Analyzer"], RunOne, Sequence[GitTree]] | None = None


def run_analyses(analyzers: Sequence["Analyzer"], run_one: RunOne, progress: Progress, skips: SkipLog,
                 parse_bytes: int, trees: Sequence[GitTree] = ()) -> list[Finding]:
    """Every analyzer's findings, in analyzer order; skips of workers are added to skips, and the blobs
    they could not read to trees' `missing` (a result that met one is never cached).

    parse_bytes: the fork Python the up-front parse covered; below PARALLEL_BYTES a worker costs more
    than it saves."""
    heavy = [index for index, analyzer in enumerate(analyzers) if analyzer.on_request]
    workers = min(jobs() - 1, len(heavy) - 1)  # the parent is one of the processes
    if workers < 1 or parse_bytes < PARALLEL_BYTES:
        heavy = []
    found: dict[int, list[Finding]] = {}
    done = 0

    def finished(number: int, findings: list[Finding]) -> None:
        nonlocal done
        found[number] = findings
        done += 1
        progress.advance(analyzers[number].name, done)

    def run_here(number: int) -> None:
        with analysing(analyzers[number].name):
            finished(number, run_one(analyzers[number]))

    with ExitStack() as stack:
        dispatch = _start(stack, analyzers, heavy, run_one, trees, workers) if heavy else None
        for number in range(len(analyzers)):
            if number not in heavy:
                run_here(number)
        while dispatch is not None and (last := dispatch.take_last()) is not None:
            run_here(last)
        for number, future in sorted(dispatch.futures.items() if dispatch is not None else ()):
            findings, skipped, missing = future.result()
            for key, reason in skipped.items():
                skips.skipped.setdefault(key, reason)
            for tree, paths in zip(trees, missing):
                tree.missing.update(paths)
            finished(number, findings)
    return [finding for number in range(len(analyzers)) for finding in found[number]]


def _start(stack: ExitStack, analyzers: Sequence["Analyzer"], heavy: list[int], run_one: RunOne,
           trees: Sequence[GitTree], workers: int) -> Dispatch[int, Outcome]:
    """The pool (left with the stack: terminated on an exception, Ctrl-C included) and its dispatch."""
    global _WORK
    # The context carries the active fact cache; the workers fork on entering the pool, so _WORK is set before.
    _WORK = (copy_context(), analyzers, run_one, trees)
    try:
        pool = stack.enter_context(worker_pool(workers))
    finally:
        _WORK = None
    return Dispatch(heavy, workers, lambda number: pool.submit(_in_worker, number))


def _in_worker(index: int) -> Outcome:
    assert _WORK is not None, "run_analyses sets the work before the pool forks"
    context, analyzers, run_one, trees = _WORK
    return context.run(_one, analyzers[index], run_one, trees)


def _one(analyzer: "Analyzer", run_one: RunOne, trees: Sequence[GitTree]) -> Outcome:
    with recording_skips() as log, analysing(analyzer.name):
        found = run_one(analyzer)
    return found, dict(log.skipped), [sorted(tree.missing) for tree in trees]
