"""Fewer cyclic garbage collections while a job parses: the parsers allocate millions of tree nodes
that die by reference count, and CPython's default thresholds walk the live heap again and again
for them (about a tenth of a cold upgrade's CPU on the benchmark of record, docs/benchmarks.md).
Cycles are still collected, only less often; the thresholds are restored when the job ends, and what the
parse memo froze (parsing.cpython_tree) is thawed for the collector."""
from __future__ import annotations

import gc
from contextlib import contextmanager
from functools import wraps
from typing import Callable, Iterator, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

# Young objects before a collection (CPython: 700), and how many of each younger generation's
# collections trigger the next one (CPython: 10 and 10).
JOB_THRESHOLDS = (100_000, 50, 100)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the block with JOB_THRESHOLDS; the previous thresholds come back after it, also on error, and
    objects frozen meanwhile are the collector's again. Nested uses keep the outer one's thresholds."""
    previous = gc.get_threshold()
    gc.set_threshold(*JOB_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()


def job(function: Callable[P, R]) -> Callable[P, R]:
    """A job entry point (run_upgrade, run_drift, ...) run under fewer_collections."""
    @wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with fewer_collections():
            return function(*args, **kwargs)
    return run
