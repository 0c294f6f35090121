"""Run the analyses of one drift, the heavy ones side by side in worker processes.

The analyses on request (symbols, call signatures, co-change, keys, ...) read independent files and take
seconds each on a real FlagTree tree; the others take milliseconds. When the fork's Python is large
enough for a process to pay (the bytes the up-front parse saw) and more than one core is free, the heavy
ones run side by side, one analysis a task: a forked worker for each core but one, and the parent itself.
A worker starts from the parent's memory (the trees, the facts parsed up front, the fact cache) and sends
back its findings and the files it had to skip. The parent runs the light analyses, then takes heavy tasks
no worker has begun, the next in the queue as a worker would (an analysis run in the parent copies no page and
sends nothing back). A heavy analysis that reads what the light ones read (Analyzer.in_parent) runs in the parent
with them. The queue holds the longest first (Analyzer.cost), so the short ones are left for the end,
to whoever is free first.
Where cores are left over once each heavy analysis has one (a many-core machine), each analysis that
can split (registry.Parts: symbol drift, the long pole of a first run, then call signatures and key strings)
runs as several parts side by side, whose shares the parent joins into its findings; the parts share what
they all read through the fact cache.
Findings come back in the registry's order whoever ran them, so a report never depends on the path taken
(tests/test_speed_parity.py and tests/test_parallel_analyses.py compare them)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import as_completed
from contextlib import ExitStack
from contextvars import Context, copy_context
from typing import TYPE_CHECKING, Any

from sync.support.cache import active
from sync.git import GitTree
from sync.git.readlog import ReadLog, logging_reads
from sync.model import Finding
from sync.drift.outcome import Found, found
from sync.support.progress import Progress
from sync.support.workers import Dispatch, inherited, worker_pool
from sync.facts.parsing import SkipLog, Unparseable, analysing, guarded_walk, recording_skips
from sync.facts.pyblobs import PARALLEL_BYTES, jobs

if TYPE_CHECKING:
    from sync.drift.context import DriftContext
    from sync.drift.registry import Analyzer

Skipped = dict[tuple[str, str], str]
Task = tuple[int, int, int]  # the analyzer's number, the part, of how many parts (1: the whole analysis)
# a Found or a part's share, skips, unreadable paths per tree, what it read of the watched branch
Outcome = tuple[Any, Skipped, list[list[str]], dict[str, Any]]

# What forked workers read, handed to their pool (workers.inherited): the context copy carries the run's fact
# cache and PythonFacts (pyblobs.reading).
_Work = tuple[Context, Sequence["Analyzer"], "DriftContext", Sequence[GitTree]]


def guarded_analysis(name: str, analyze: Callable[[], Found | Iterable[Finding]]) -> Found:
    """The last net under the parsers: an analysis whose walk still overflows is reported, not a crash."""
    result = guarded_walk(lambda: found(analyze()))
    return _left_out(name, result) if isinstance(result, Unparseable) else result


def _left_out(name: str, why: Unparseable) -> Found:
    return Found([Finding("analysis-skipped", ".", f"{name}: the whole analysis was left out: {why.reason}")])


def run_task(analyzer: "Analyzer", context: "DriftContext", part: int, parts: int) -> Any:
    """What the whole analysis found (parts 1), else part `part`'s share, or why its walk gave up."""
    if parts == 1:
        return guarded_analysis(analyzer.name, lambda: analyzer.analyze(context))
    assert analyzer.parts is not None
    split = analyzer.parts
    return guarded_walk(lambda: split.part(context, part, parts))


def join_shares(analyzer: "Analyzer", context: "DriftContext", shares: list[Any]) -> Found:
    failed = next((share for share in shares if isinstance(share, Unparseable)), None)
    if failed is not None:
        return _left_out(analyzer.name, failed)
    assert analyzer.parts is not None
    split = analyzer.parts
    return guarded_analysis(analyzer.name, lambda: split.join(context, shares))


def run_analyses(analyzers: Sequence["Analyzer"], context: "DriftContext", progress: Progress, skips: SkipLog,
                 parse_bytes: int, trees: Sequence[GitTree] = (),
                 placed: Callable[["Analyzer", list[Finding]], list[Finding]] | None = None) -> Found:
    """Every analyzer's findings and clean merges, in analyzer order; skips of workers are added to skips, and
    the blobs they could not read to trees' `missing` (a result that met one is never cached). placed: moves an
    analyzer's findings to the branch the user edits (drift/branchlines.py), in the parent. Each analysis's
    result kept from an earlier run on the branch (context.kept_results) is reused where the branch answers what
    it read the same (drift/analysis_cache.py); the others' results are stored for the next run.

    parse_bytes: the fork Python the up-front parse covered; below PARALLEL_BYTES a worker costs more
    than it saves."""
    kept = context.kept_results
    reused = {number: entry for number, analyzer in enumerate(analyzers)
              if kept is not None and (entry := kept.load(analyzer.name)) is not None}
    heavy = [number for number, analyzer in enumerate(analyzers)
             if analyzer.on_request and not analyzer.in_parent and number not in reused]
    tasks = _tasks(analyzers, heavy)
    workers = min(jobs() - 1, len(tasks) - 1)  # the parent is one of the processes
    if workers < 1 or parse_bytes < PARALLEL_BYTES:
        heavy, tasks = [], []
    results: dict[int, Found] = {}
    shares: dict[Task, Any] = {}
    reads: dict[int, ReadLog] = {}  # what each analysis run here or in a worker read of the branch
    done = 0

    def finished(number: int, result: Found) -> None:
        nonlocal done
        results[number] = result
        done += 1
        progress.advance(analyzers[number].name, done)

    def settled(task: Task, outcome: Any) -> None:
        """A task's outcome is in: a split analysis is joined here as soon as all its parts are."""
        number, _, parts = task
        if parts == 1:
            finished(number, outcome)
            return
        shares[task] = outcome
        if all((number, part, parts) in shares for part in range(parts)):
            with analysing(analyzers[number].name), logging_reads(reads.setdefault(number, ReadLog())):
                finished(number, join_shares(analyzers[number], context,
                                             [shares.pop((number, part, parts)) for part in range(parts)]))

    def run_here(task: Task) -> None:
        with analysing(analyzers[task[0]].name), logging_reads(reads.setdefault(task[0], ReadLog())):
            outcome = run_task(analyzers[task[0]], context, task[1], task[2])
        settled(task, outcome)

    for number, entry in reused.items():
        for key, reason in entry.skipped.items():
            skips.skipped.setdefault(key, reason)
        finished(number, entry.found)

    with ExitStack() as stack:
        dispatch = _start(stack, analyzers, context, tasks, trees, workers) if tasks else None
        for number in range(len(analyzers)):
            if number not in heavy and number not in reused:
                run_here((number, 0, 1))
        while dispatch is not None and (first := dispatch.take_first()) is not None:
            run_here(first)
        futures = dispatch.futures if dispatch is not None else {}
        by_future = {future: task for task, future in futures.items()}
        outcomes: dict[Task, Outcome] = {}
        for future in as_completed(by_future):  # a join begins while other tasks still run
            task = by_future[future]
            outcomes[task] = future.result()
            reads.setdefault(task[0], ReadLog()).merge(ReadLog.from_json(outcomes[task][3]))
            settled(task, outcomes[task][0])
        for task, (_, skipped, missing, _) in sorted(outcomes.items()):  # in task order, whatever finished first
            for key, reason in skipped.items():
                skips.skipped.setdefault(key, reason)
            for tree, paths in zip(trees, missing):
                tree.missing.update(paths)
    if kept is not None and not any(tree.missing for tree in trees):  # a blob missing now may be fetched later
        for number, log in sorted(reads.items()):
            name = analyzers[number].name
            kept.store(name, results[number], {key: reason for key, reason in skips.skipped.items()
                                               if key[0] == name}, log)
    ordered = [results[number] for number in range(len(analyzers))]
    return Found([finding for analyzer, result in zip(analyzers, ordered)
                  for finding in (placed(analyzer, result.findings) if placed else result.findings)],
                 [merge for result in ordered for merge in result.merged])


def _tasks(analyzers: Sequence["Analyzer"], heavy: list[int]) -> list[Task]:
    """The heavy analyses, one task each, except that cores left over when each has one go to the analyses
    that split, in order, each into at most its parts.most, when the fact cache is there to share the files
    their parts all read (a symbol-drift part begins with its own share of them and reads the rest back).
    The longest first (Analyzer.cost, a part its share; registry order among equals): whoever is free takes
    the next, so the short ones fill in at the end instead of one long one running while a process waits."""
    spare = jobs() - len(heavy) if active() is not None else 0
    tasks: list[Task] = []
    for number in heavy:
        split = analyzers[number].parts
        parts = min(split.most, spare + 1) if split is not None and spare > 0 else 1
        spare -= parts - 1
        tasks.extend((number, part, parts) for part in range(parts))
    return sorted(tasks, key=lambda task: -analyzers[task[0]].cost / task[2])


def _start(stack: ExitStack, analyzers: Sequence["Analyzer"], context: "DriftContext", tasks: list[Task],
           trees: Sequence[GitTree], workers: int) -> Dispatch[Task, Outcome]:
    """The pool (left with the stack: terminated on an exception, Ctrl-C included) and its dispatch."""
    work: _Work = (copy_context(), analyzers, context, trees)
    cache = active()
    if cache is not None:
        cache.flush()  # what the parent parsed so far, readable by the workers it forks
    pool = stack.enter_context(worker_pool(workers, inherited=work))
    return Dispatch(tasks, workers, lambda task: pool.submit(_in_worker, task))


def _in_worker(task: Task) -> Outcome:
    work: _Work = inherited()
    variables, analyzers, context, trees = work
    outcome = variables.run(_one, analyzers[task[0]], context, task, trees)
    cache = variables.run(active)
    if cache is not None:
        cache.flush()  # before answering: the parent and the other workers read the database
    return outcome


def _one(analyzer: "Analyzer", context: "DriftContext", task: Task, trees: Sequence[GitTree]) -> Outcome:
    with recording_skips() as log, analysing(analyzer.name), logging_reads(ReadLog()) as read:
        outcome = run_task(analyzer, context, task[1], task[2])
    return outcome, dict(log.skipped), [sorted(tree.missing) for tree in trees], read.to_json()
