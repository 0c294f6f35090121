"""Facts of Python blobs that several analyses read (calls, key reads), from one `ast` parse per blob.

Each analysis defines an extractor (a name, a version, what it collects from the nodes of one depth of
the walk and how it makes the fact of all it collected), and drift/registry.py lists them (EXTRACTORS). A
run makes one PythonFacts of that list, which also keeps the facts of the run in memory, and reads through
it (reading(): the parsers' functions below ask current()). The first request for any fact of a text parses
and walks it once and runs every extractor over the nodes, so the call-signature, key-string and
symbol-drift analyses share the parse and the walk. A large text is parsed and walked chunk by chunk
(pychunks): extractors keep no node, only items, which combine into the whole walk's order.

Facts are kept in memory by content id for the run (PythonFacts.memo) and, when a fact cache is active, stored
in it: one entry per blob holding every extractor's fact (keyed by blob id and the extractors' names and
versions), so a second run parses nothing and a first one writes one file per blob. prefetch() computes the
facts of many blobs up front, across processes when the texts are large enough for that to pay (a fork costs
tens of milliseconds; parsing 5 MB of Python costs seconds). adopt() takes facts computed by encoded_facts in
another process (the parse begun before the replay, drift/ahead.py). Results never depend on the path taken:
the same extractors run on the same text.
"""
from __future__ import annotations

import ast
import hashlib
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import compress
from typing import Any, Callable, Iterable, Iterator

from sync.support.cache import FactCache, active, content_id
from sync.support.workers import jobs, worker_pool
from sync.facts.astwalk import walk_levels
from sync.facts.parsing import Unparseable, guarded, python_ast_once
from sync.facts.pychunks import merge_levels, over_chunks

PARALLEL_BYTES = 1_000_000  # below this much missing text a serial parse beats starting workers
_MEMO_LIMIT = 20_000  # texts; content-addressed, so only memory is at stake


@dataclass(frozen=True)
class Extractor:
    name: str
    version: int
    collect: Callable[[list[ast.AST]], list[Any]]  # items of the nodes of one depth of one chunk (astwalk.walk_levels)
    finish: Callable[[list[Any] | None], Any]  # the fact from every item, in the whole walk's order; None: no parse
    encode: Callable[[Any], Any]  # to JSON-compatible data (the cache and the worker pipe)
    decode: Callable[[Any], Any]
    # The node classes collect reads: it is given only those, in walk order (most nodes of a walk are of
    # classes no extractor reads, and testing each of them in Python is much of the cost).
    reads: frozenset[type] | None = None  # None: every node
    depth: int | None = None  # given only the nodes of this depth of the walk (1: the module's statements)


_CACHE_KIND = "py-facts"


class PythonFacts:
    """The Python facts of one run: the extractors it runs on each text, and the facts it has, by content id."""

    def __init__(self, extractors: Iterable[Extractor]) -> None:
        self.extractors = {extractor.name: extractor for extractor in extractors}
        self.memo: dict[str, dict[str, Any]] = {}  # content id -> every extractor's fact (decoded)
        # The version of the combined cache entry: a digest of every extractor's name and version (a new or
        # changed extractor makes every entry a miss).
        described = ",".join(f"{name}:{extractor.version}" for name, extractor in sorted(self.extractors.items()))
        self.cache_version = int(hashlib.sha1(described.encode("utf-8")).hexdigest()[:8], 16)


_current: ContextVar[PythonFacts | None] = ContextVar("flagtree_sync_python_facts", default=None)


@contextmanager
def reading(facts: PythonFacts) -> Iterator[PythonFacts]:
    """Make facts the PythonFacts the functions below use in this context (as support.cache.using does for
    the fact cache; a worker forked inside it has it too)."""
    token = _current.set(facts)
    try:
        yield facts
    finally:
        _current.reset(token)


def current() -> PythonFacts:
    facts = _current.get()
    if facts is None:
        raise RuntimeError("no PythonFacts: read Python facts inside pyblobs.reading(), as a drift run does")
    return facts


def python_fact(name: str, text: str) -> Any:
    """The named fact of a Python text (computing every registered fact of it on a miss)."""
    key = content_id(text)
    facts = _lookup(key)
    if facts is None:
        facts = _store(key, encoded_facts(text))
    return facts[name]


def prefetch(texts: Iterable[str]) -> None:
    """Compute the facts of every text not known yet; in parallel when there is enough to parse."""
    current()  # the workers fork in this context: they read the same PythonFacts
    missing: dict[str, str] = {}
    for text in texts:
        key = content_id(text)
        if key not in missing and _lookup(key) is None:
            missing[key] = text
    if not missing:
        return
    workers = min(jobs(), len(missing))
    if workers < 2 or sum(map(len, missing.values())) < PARALLEL_BYTES:
        for key, text in missing.items():
            _store(key, encoded_facts(text))
        return
    # Largest first, so that no worker is left with one big file at the end.
    ordered = sorted(missing.items(), key=lambda item: -len(item[1]))
    with worker_pool(workers) as pool:
        for (key, _), facts in zip(ordered, pool.map(encoded_facts, [text for _, text in ordered])):
            _store(key, facts)


def known(text: str) -> bool:
    """Whether the facts of text are in memory or in the active fact cache."""
    return _lookup(content_id(text)) is not None


def known_fact(name: str, text: str) -> tuple[bool, Any]:
    """(True, the named fact) where the run's extractors make it and the text's facts are in memory or in the
    fact cache (the fork's files, parsed up front); else (False, None), and nothing is parsed here."""
    facts = _current.get()
    if facts is None or name not in facts.extractors:
        return False, None
    found = _lookup(content_id(text))
    return (True, found[name]) if found is not None else (False, None)


def adopt(found: Iterable[tuple[str, dict[str, Any]]], stored: bool = False) -> None:
    """Facts of texts by content id, as encoded_facts gave them in another process: kept as if parsed here.
    stored: that process put them in the fact cache already (see store)."""
    memo = current().memo
    for key, encoded in found:
        if key not in memo:
            _store(key, encoded, put=not stored)


def store(cache: FactCache | None, key: str, encoded: dict[str, Any]) -> None:
    """Put the encoded facts of a text in the fact cache."""
    if cache is not None:
        cache.put(_CACHE_KIND, current().cache_version, key, encoded)


def stored(cache: FactCache | None, key: str, encoded: dict[str, Any]) -> bool:
    """store, for another process to read back (a worker of the parse begun ahead): whether the cache holds
    them now."""
    store(cache, key, encoded)
    if cache is None:
        return False
    cache.flush()  # the other process reads the database, not this one's batch
    return cache.holds(_CACHE_KIND, current().cache_version, key)


def _lookup(key: str) -> dict[str, Any] | None:
    """Every fact of a text by its content id, from memory or the fact cache; None: not known yet."""
    run = current()
    if key in run.memo:
        return run.memo[key]
    cache = active()
    if cache is None:
        return None
    extractors = run.extractors
    stored = cache.get(_CACHE_KIND, run.cache_version, key)
    if not isinstance(stored, dict) or set(stored) != set(extractors):
        return None
    try:
        facts = {name: extractors[name].decode(value) for name, value in stored.items()}
    except (TypeError, ValueError, KeyError, IndexError):
        return None  # an entry of an unexpected shape: parse again and overwrite it
    _remember(key, facts)
    return facts


def encoded_facts(text: str) -> dict[str, Any]:
    """Every fact of one text the current PythonFacts' extractors make, encoded (runs in worker processes too)."""
    extractors = current().extractors

    def facts_of(trees: Iterator[ast.Module]) -> dict[str, Any]:
        parts: dict[str, list[list[list[Any]]]] = {name: [] for name in extractors}
        for tree in trees:
            levels = walk_levels(tree)
            kinds = [list(map(type, level)) for level in levels]  # once for every extractor
            for name, extractor in extractors.items():
                parts[name].append([extractor.collect(_given(extractor, depth, level, kinds[depth]))
                                    for depth, level in enumerate(levels)])
            del tree, levels, kinds  # the chunk's tree goes before the next one is parsed
        return {name: extractor.encode(extractor.finish(merge_levels(parts[name])))
                for name, extractor in extractors.items()}

    # One walk of the tree serves every extractor (the walk, not the isinstance tests, is the cost).
    # guarded: deep nesting in the parse or in an extractor's walk is an unparseable text, not a crash
    found = guarded(lambda: over_chunks(text, python_ast_once, facts_of))
    if isinstance(found, Unparseable):
        return {name: extractor.encode(extractor.finish(None)) for name, extractor in extractors.items()}
    return found


def _given(extractor: Extractor, depth: int, level: list[ast.AST], kinds: list[type]) -> list[ast.AST]:
    """The nodes of one depth of the walk an extractor is given (its depth, its classes); kinds are the
    nodes' classes (compress keeps the test per node in C)."""
    if extractor.depth is not None and depth != extractor.depth:
        return []
    reads = extractor.reads
    return level if reads is None else list(compress(level, map(reads.__contains__, kinds)))


def _store(key: str, encoded: dict[str, Any], put: bool = True) -> dict[str, Any]:
    if put:
        store(active(), key, encoded)
    extractors = current().extractors
    facts = {name: extractors[name].decode(value) for name, value in encoded.items()}
    _remember(key, facts)
    return facts


def _remember(key: str, facts: dict[str, Any]) -> None:
    memo = current().memo
    if len(memo) >= _MEMO_LIMIT:
        memo.clear()
    memo[key] = facts


def parses(text: str) -> bool:
    """Whether CPython parses the text, from the shared parse (no parse of its own when the text was
    prefetched). False also for a text CPython refuses and a newer grammar might accept: ask the full
    parse (pyfacts) for the reason."""
    return bool(python_fact("parses", text))


PARSES = Extractor("parses", 1, lambda nodes: [], lambda items: items is not None, encode=bool, decode=bool,
                   reads=frozenset(), depth=1)
