"""What every reader of a whole-module `ast` tree gives for one text, in comparable form: tests and
bench/chunk_parity.py compare it with the texts parsed whole and in chunks (sync/facts/pychunks.py).

Uses only functions that exist with the same meaning before chunking, so that the bench can also run it
against an older checkout of the analyses (the whole parse as it was)."""
from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sync.drift.analyses import callsigs
from sync.drift.analyses import cochange
from sync.drift.analyses import keys
from sync.check import policy
from sync.facts import pyblobs
from sync.facts import pyfacts
from sync.drift.analyses import symbols

assert callsigs  # reads the calls fact of the shared walk

CONSUMERS = ("blob-facts", "function-table", "module-facts", "statements", "python-shape", "cochange-spans",
             "key-producers", "truth-tests")
_QUOTED = re.compile(r"""['"](\w+)['"]""")


def consumer_facts(text: str) -> dict[str, Any]:
    """Each consumer's facts of text (uncached), as plain data."""
    table = pyfacts.function_table.__wrapped__(text)  # type: ignore[attr-defined]
    with _fresh_python_facts():  # spans may be a fact of the shared walk: computed afresh, not from an earlier parse
        spans = cochange._python_spans(text)
        written, productions = keys._producers(text, set(_QUOTED.findall(text)) | {"key"})
        blob_facts = pyblobs.encoded_facts(text)
    return {
        "blob-facts": blob_facts,
        "function-table": None if table is None else [
            [name, f.line, [[p.name, p.kind, p.has_default] for p in f.params], _span(f), f.signature, f.body, f.source]
            for name, f in table.items()],
        "module-facts": [pyfacts._encode_facts(pyfacts._parse_module_facts("m.py", text, positions))
                         for positions in (True, False)],
        "statements": _sorted(pyfacts._normalized_statements(text)),
        "python-shape": symbols._encode_shape(symbols.python_shape_ast(text)),
        "cochange-spans": None if spans is None else [[s.name, s.start, s.end] for s in spans],
        "key-producers": [written, {key: [[p.container, p.kind] for p in found] for key, found in productions.items()}],
        "truth-tests": [list(test) for test in policy._truth_tests(text)],
    }


@contextmanager
def _fresh_python_facts() -> Iterator[None]:
    """The Python facts of a new run (pyblobs.reading, the registry's extractors); an older checkout kept them
    in one memo of the process, emptied here."""
    if not hasattr(pyblobs, "reading"):
        pyblobs._memo.clear()  # type: ignore[attr-defined]
        yield
        return
    from sync.drift.registry import python_facts
    with pyblobs.reading(python_facts()):
        yield


def _span(facts: pyfacts.FunctionFacts) -> list[int] | None:
    return facts._span.to_json() if facts._span is not None else None


def _sorted(found: set[str] | None) -> list[str] | None:
    return None if found is None else sorted(found)


@contextmanager
def chunking(threshold: int, chunk_bytes: int = 1, retries: int = 1_000_000) -> Iterator[None]:
    """Texts above threshold parsed in chunks of at least chunk_bytes (1: a chunk at every boundary line)."""
    from sync.facts import pychunks
    saved = (pychunks.CHUNK_THRESHOLD, pychunks.CHUNK_BYTES, pychunks.MAX_CHUNKS, pychunks.MAX_RETRIES)
    pychunks.CHUNK_THRESHOLD, pychunks.CHUNK_BYTES, pychunks.MAX_RETRIES = threshold, chunk_bytes, retries
    pychunks.MAX_CHUNKS = 1 << 62
    try:
        yield
    finally:
        pychunks.CHUNK_THRESHOLD, pychunks.CHUNK_BYTES, pychunks.MAX_CHUNKS, pychunks.MAX_RETRIES = saved
