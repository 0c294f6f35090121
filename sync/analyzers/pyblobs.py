"""Facts of Python blobs that several analyses read (calls, key reads), from one `ast` parse per blob.

Each analysis registers an extractor (a name, a version, what it collects from the nodes of one depth of
the walk and how it makes the fact of all it collected); the first request for any fact of a text parses
and walks it once and runs every extractor over the nodes, so the call-signature, key-string and
symbol-drift analyses share the parse and the walk. A large text is parsed and walked chunk by chunk
(pychunks): extractors keep no node, only items, which combine into the whole walk's order.

Facts are kept in memory by content id for the run and, when a fact cache is active, stored in it (keyed
by blob id and extractor version), so a second run parses nothing. prefetch() computes the facts of many
blobs up front, across processes when the texts are large enough for that to pay (a fork costs tens of
milliseconds; parsing 5 MB of Python costs seconds).
Results never depend on the path taken: the same extractors run on the same text.
"""
from __future__ import annotations

import ast
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from ..cache import active, content_id
from .parsing import Unparseable, guarded, python_ast, walk_levels
from .pychunks import merge_levels, over_chunks

PARALLEL_BYTES = 1_000_000  # below this much missing text a serial parse beats starting workers
_MEMO_LIMIT = 50_000  # entries; content-addressed, so only memory is at stake


@dataclass(frozen=True)
class Extractor:
    name: str
    version: int
    collect: Callable[[list[ast.AST]], list[Any]]  # items of the nodes of one depth of one chunk (parsing.walk_levels)
    finish: Callable[[list[Any] | None], Any]  # the fact from every item, in the whole walk's order; None: no parse
    encode: Callable[[Any], Any]  # to JSON-compatible data (the cache and the worker pipe)
    decode: Callable[[Any], Any]
    # The node classes collect reads: it is given only those, in walk order (most nodes of a walk are of
    # classes no extractor reads, and testing each of them in Python is much of the cost).
    reads: frozenset[type] | None = None  # None: every node


_EXTRACTORS: dict[str, Extractor] = {}
_memo: dict[tuple[str, str], Any] = {}


def register(extractor: Extractor) -> None:
    _EXTRACTORS[extractor.name] = extractor


def jobs() -> int:
    """Worker processes for prefetch: FLAGTREE_SYNC_JOBS, else the cores this process may use."""
    configured = os.environ.get("FLAGTREE_SYNC_JOBS", "")
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def python_fact(name: str, text: str) -> Any:
    """The named fact of a Python text (computing every registered fact of it on a miss)."""
    key = content_id(text)
    found = _lookup(name, key)
    if found is not _MISSING:
        return found
    _store(key, _encoded_facts(text))
    return _memo[(name, key)]


def prefetch(texts: Iterable[str]) -> None:
    """Compute the facts of every text not known yet; in parallel when there is enough to parse."""
    missing: dict[str, str] = {}
    for text in texts:
        key = content_id(text)
        if key not in missing and any(_lookup(name, key) is _MISSING for name in _EXTRACTORS):
            missing[key] = text
    if not missing:
        return
    workers = min(jobs(), len(missing))
    if workers < 2 or sum(map(len, missing.values())) < PARALLEL_BYTES:
        for key, text in missing.items():
            _store(key, _encoded_facts(text))
        return
    # Largest first, so that no worker is left with one big file at the end.
    ordered = sorted(missing.items(), key=lambda item: -len(item[1]))
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        for (key, _), facts in zip(ordered, pool.map(_encoded_facts, [text for _, text in ordered])):
            _store(key, facts)


_MISSING = object()


def _lookup(name: str, key: str) -> Any:
    if (name, key) in _memo:
        return _memo[(name, key)]
    cache = active()
    extractor = _EXTRACTORS[name]
    if cache is not None:
        stored = cache.get(f"py-{name}", extractor.version, key)
        if isinstance(stored, list) and len(stored) == 1:
            try:
                value = extractor.decode(stored[0])
            except (TypeError, ValueError, KeyError, IndexError):
                return _MISSING  # an entry of an unexpected shape: parse again and overwrite it
            _remember(name, key, value)
            return value
    return _MISSING


def _encoded_facts(text: str) -> dict[str, Any]:
    """Every registered fact of one text, encoded (runs in a worker process too)."""
    def facts_of(trees: Iterator[ast.Module]) -> dict[str, Any]:
        parts: dict[str, list[list[list[Any]]]] = {name: [] for name in _EXTRACTORS}
        for tree in trees:
            levels = walk_levels(tree)
            for name, extractor in _EXTRACTORS.items():
                reads = extractor.reads
                parts[name].append([extractor.collect(level if reads is None else
                                                      [node for node in level if type(node) in reads])
                                    for level in levels])
            del tree, levels  # the chunk's tree goes before the next one is parsed
        return {name: extractor.encode(extractor.finish(merge_levels(parts[name])))
                for name, extractor in _EXTRACTORS.items()}

    # One walk of the tree serves every extractor (the walk, not the isinstance tests, is the cost).
    # guarded: deep nesting in the parse or in an extractor's walk is an unparseable text, not a crash
    found = guarded(lambda: over_chunks(text, python_ast, facts_of))
    if isinstance(found, Unparseable):
        return {name: extractor.encode(extractor.finish(None)) for name, extractor in _EXTRACTORS.items()}
    return found


def _store(key: str, encoded: dict[str, Any]) -> None:
    cache = active()
    for name, value in encoded.items():
        extractor = _EXTRACTORS[name]
        if cache is not None:
            cache.put(f"py-{name}", extractor.version, key, [value])
        _remember(name, key, extractor.decode(value))


def _remember(name: str, key: str, value: Any) -> None:
    if len(_memo) >= _MEMO_LIMIT:
        _memo.clear()
    _memo[(name, key)] = value
