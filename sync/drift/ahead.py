"""The analysis's up-front work, begun before the delta is replayed so that the two run at once.

Before its analyses, a drift diffs the old tag against the FlagTree branch (FlagTree's added lines) and
parses the fork's Python files with added lines (pyblobs). Both read the old tag and the branch alone,
which are known before anything is replayed. On a first run (the fact cache holds no diff of these two
trees: a run that made one stored the facts too) with enough Python to parse for workers to pay,
parsing_ahead hands the diff and the parse of every Python file the branch changed, largest first, to
worker processes (one for each core but the caller's) and yields an Ahead, the run's handle on that work and
on its PythonFacts; the caller replays meanwhile and passes the Ahead to the analysis, whose
DriftContext.prefetch_fork_python calls settle(ahead), which parses the files no worker has begun itself,
smallest first, then takes what the workers found. Results never depend on it: the workers and the caller
run the same diff and the same extractors on the same blobs, and whatever they could not read is left to
the analysis."""
from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

from sync.support.cache import FactCache, content_id, using
from sync.git import GitTree, Oid, Repository, blobs_added_or_changed, commit_of, is_ancestor
from sync.git.repo import fact_cache
from sync.model import Range
from sync.facts.trees import read_text
from sync.support.workers import Dispatch, inherited, stop_pool, worker_pool
from sync.facts.filekinds import is_shipped_python
from sync.facts.delta import PY, adopt_fork_diff, fork_diff, fork_diff_stored
from sync.facts import pyblobs
from sync.facts.pyblobs import PythonFacts, adopt, encoded_facts, jobs, known, prefetch, reading, stored

Diff = dict[str, frozenset[int]]
Facts = tuple[str, dict[str, Any]]  # content id, encoded facts


@dataclass
class _Begun:
    owner: int  # the pid of the pool's parent: a forked worker inherits this, not the pool
    pool: ProcessPoolExecutor
    repo: Repository
    fork: str  # the branch's commit
    trees: tuple[Oid, Oid]  # old, fork
    diff: Future[Diff | None]
    parses: Dispatch[str, Facts | None]  # by path


@dataclass
class Ahead:
    """One analysis's up-front work, owned by its run: the PythonFacts the run reads through (the extractors
    and the facts it has), and the parse begun in workers for settle() to take (None: none, or taken)."""
    facts: PythonFacts
    begun: _Begun | None = None


# In a worker (each its own): what it read once for all its tasks. The repository and the run's PythonFacts come
# with the pool (workers.inherited).
_fork_trees: dict[str, GitTree] = {}  # in a worker: the trees of the two commits, indexed once
_caches: dict[int, FactCache | None] = {}  # in a worker (by its pid): one fact cache for all its tasks


@contextmanager
def parsing_ahead(repo: Repository, rng: Range, facts: PythonFacts) -> Iterator[Ahead]:
    """Begin the diff and the parse in worker processes when it pays (see the module's text); leaving the
    context stops whatever settle() did not take."""
    ahead = Ahead(facts)
    paths = _python_to_parse(repo, rng) if jobs() >= 2 else []
    if not paths:
        yield ahead
        return
    trees = (_tree_of(repo, rng.old.oid), _tree_of(repo, rng.source.oid))
    with ExitStack() as stack:
        workers = min(jobs() - 1, len(paths) + 1)  # the caller replays, then parses too
        pool = stack.enter_context(worker_pool(workers, inherited=(repo, facts)))
        diff = pool.submit(_diff, rng.old.oid, rng.source.oid)
        parses = Dispatch(paths, workers, lambda path: pool.submit(_parse, rng.source.oid, path), queued=1)
        begun = _Begun(os.getpid(), pool, repo, rng.source.oid, trees, diff, parses)
        ahead.begun = begun
        try:
            yield ahead
        finally:
            ahead.begun = None
        if not begun.diff.done() or not begun.parses.handed_out() \
                or not all(parse.done() for parse in begun.parses.futures.values()):
            stop_pool(pool)  # nobody took it: no reason to wait for the rest


def settle(ahead: Ahead | None) -> None:
    """Take what the workers found (waiting for it): the diff and the facts, as if made here (in the
    PythonFacts the caller reads through, which is ahead's)."""
    if ahead is None:
        return
    begun, ahead.begun = ahead.begun, None
    if begun is None or begun.owner != os.getpid():
        return
    fork = GitTree.of_commit(begun.repo, begun.fork, begun.fork)
    while (path := begun.parses.take_last()) is not None:  # what no worker has begun, smallest first
        text = read_text(fork, path)
        if text is not None:
            prefetch([text])  # one text: parsed here, unless the fact cache has it
    diff = _result(begun.diff)
    if diff is not None:
        adopt_fork_diff(begun.repo.path, *begun.trees, diff)
    adopt((facts for facts in map(_result, _taken(begun.parses.futures)) if facts is not None), stored=True)
    begun.pool.shutdown(wait=False)  # idle now: the workers exit before the analyses fork theirs


def _taken(futures: dict[str, Future[Facts | None]]) -> Iterator[Future[Facts | None]]:
    """Each future, dropped as it is taken (its facts go once they are kept decoded)."""
    while futures:
        yield futures.pop(next(iter(futures)))


def _python_to_parse(repo: Repository, rng: Range) -> list[str]:
    """The Python files the fork adds or changes over the old tag, largest first, when this is a first run
    for these trees and they hold enough to parse for workers to pay; else none."""
    if not is_ancestor(repo, rng.old.oid, rng.source.oid):
        return []  # the analysis parses nothing up front then
    old, fork = _tree_of(repo, rng.old.oid), _tree_of(repo, rng.source.oid)
    with using(fact_cache(repo)):
        if fork_diff_stored(old, fork):
            return []
    files = blobs_added_or_changed(repo, old, fork, PY, is_shipped_python)  # one path of each blob: copies parse once
    sizes = {path: _size(repo, blob) for blob, path in files.items()}
    if sum(sizes.values()) < pyblobs.PARALLEL_BYTES:
        return []
    return sorted(sizes, key=lambda path: -sizes[path])


def _size(repo: Repository, blob: Oid) -> int:
    try:
        return int(repo.odb.read_header(blob)[1])
    except (KeyError, ValueError):  # not in the store (a partial clone): the analysis says so
        return 0


def _tree_of(repo: Repository, commit: str) -> Oid:
    return commit_of(repo, commit).tree_id


def _result(future: Future[Any]) -> Any:
    try:
        return future.result()
    except Exception:  # a broken pool: the analysis computes what is missing itself
        return None


def _diff(old: str, fork: str) -> Diff | None:
    """In a worker: fork_diff of the two commits' trees; None when some blob could not be read."""
    unread: list[str] = []
    diff = fork_diff(_worker_tree(old), _worker_tree(fork), unread)
    return None if unread else diff


def _parse(fork: str, path: str) -> Facts | None:
    """In a worker: the facts of one fork file, unless the fact cache has them (or the blob is missing).
    Facts the worker could put in the fact cache stay there: the caller reads them back when an analysis asks
    (pyblobs._lookup), instead of holding every file's facts, sent through the pipe, until it settles."""
    text = read_text(_worker_tree(fork), path)
    if text is None:
        return None
    repo, facts = _worker_source()
    cache = _worker_cache()
    with using(cache, close=False), reading(facts):
        if known(text):
            return None  # the analysis reads it from the cache
        key, encoded = content_id(text), encoded_facts(text)
        if stored(cache, key, encoded):  # here, not in the caller
            return None
    return key, encoded  # no cache to read it back from: the caller takes it over


def _worker_source() -> tuple[Repository, PythonFacts]:
    source: tuple[Repository, PythonFacts] = inherited()
    return source


def _worker_cache() -> FactCache | None:
    if os.getpid() not in _caches:
        _caches[os.getpid()] = fact_cache(_worker_source()[0])
    return _caches[os.getpid()]


def _worker_tree(commit: str) -> GitTree:
    if commit not in _fork_trees:
        _fork_trees[commit] = GitTree.of_commit(_worker_source()[0], commit, commit)
    return _fork_trees[commit]
