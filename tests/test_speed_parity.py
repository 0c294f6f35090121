"""Speed paths never change a result: every analysis gives the same findings with and without the fact
cache, cold and warm, and with the Python facts parsed serially or in worker processes."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from sync.drift.analyses import keys
from sync.facts import pyblobs
from sync.facts import pyfacts
from sync.facts import pyfacts_cst
from sync.drift.analyses import symbols
from sync.drift import outcome
from sync.drift.context import DriftContext
from sync.facts.delta import forget_fork_diffs
from sync.drift.registry import ANALYZERS, EXTRACTORS
from sync.support.cache import FactCache, using
from tests import test_callsigs, test_cochange, test_keystrings
from tests.upstream_fixture import context_of
from .cache_rows import rows


def _world(tmp_path: Path) -> DriftContext:
    """One tree pair where call-signature, key-string, co-change and symbol drift all fire."""
    cs = test_callsigs
    old = {"include/triton/Dialect/X/IR/Attrs.td": cs.TD_OLD, "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n",
           "python/triton/semantic.py": cs.SEMANTIC_OLD, "python/triton/compiler.py": test_keystrings.PRODUCER_OLD,
           "lib/A.cpp": test_cochange.OLD_CPP, "python/triton/a.py": test_cochange.OLD_PY,
           "python/triton/tle.py": "X = 1\n", "python/triton/util.py": "def compute_layout(x):\n    return x\n"}
    new = {**old, "include/triton/Dialect/X/IR/Attrs.td": cs.TD_NEW, "python/triton/semantic.py": cs.SEMANTIC_NEW,
           "python/triton/compiler.py": test_keystrings.PRODUCER_NEW, "lib/A.cpp": test_cochange.NEW_CPP,
           "python/triton/a.py": test_cochange.NEW_PY,
           "python/triton/util.py": "def compute_layouts(x):\n    return x\n"}
    fork = {**old,
            "lib/Use.cpp": '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n'
                           "  auto a = x::FooAttr::get(ctx, 4, true);\n  auto t = x::BarType::get(ctx, ty, false);\n}\n",
            "third_party/tle/binding.cc": cs.BINDING,
            "python/triton/tle.py": "from triton.semantic import make\nfrom triton.util import compute_layout\n\n\n"
                                    "def g(b, builder, k):\n"
                                    "    builder.make_foo()\n    x = k.metadata.cluster_dims, k.metadata['num_warps']\n"
                                    "    return make(b, [compute_layout(1)])\n",
            "lib/A.cpp": test_cochange.OLD_CPP.replace("  return b;\n}\n\n", "  return b;\n  // flagtree\n}\n\n", 1),
            "python/triton/a.py": test_cochange.OLD_PY.replace("    return y\n", "    y += 1  # flagtree\n    return y\n")}
    return context_of(tmp_path, old, new, fork)


def _forget() -> None:
    """Drop every in-memory memo, so that a run computes or reads from the fact cache only."""
    pyblobs.current().memo.clear()
    forget_fork_diffs()
    for function in (pyfacts.parse_module_facts, pyfacts.function_table, pyfacts_cst._function_nodes, symbols.python_shape):
        function.cache_clear()


def _findings(context: DriftContext, cache: FactCache | None) -> str:
    _forget()
    fresh = dataclasses.replace(context, _facts={}, _tables={})  # no cached_property carried over
    with using(cache):
        fresh.prefetch_fork_python()
        found = [finding for analyzer in ANALYZERS for finding in outcome.found(analyzer.analyze(fresh)).findings]
    return json.dumps([dataclasses.asdict(finding) for finding in found], sort_keys=True, default=str)


def test_same_findings_with_and_without_cache_and_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    context = _world(tmp_path / "repo")
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", "1")
    serial = _findings(context, None)
    kinds = {finding["kind"] for finding in json.loads(serial)}
    assert {"call-signature", "key-string", "symbol-removed"} <= kinds and kinds & {"co-change", "co-change-review"}

    (tmp_path / "git-dir").mkdir()
    cache = lambda: FactCache(tmp_path / "git-dir")
    cold = _findings(context, cache())
    assert rows(tmp_path / "git-dir")
    parses: list[str] = []
    real = pyblobs.encoded_facts
    monkeypatch.setattr(pyblobs, "encoded_facts", lambda text: parses.append(text) or real(text))
    warm = _findings(context, cache())
    assert parses == []  # the Python facts came from the cache: nothing parsed again
    monkeypatch.undo()

    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", "2")
    monkeypatch.setattr(pyblobs, "PARALLEL_BYTES", 0)  # force the worker pool on these tiny files
    parallel = _findings(context, None)
    assert serial == cold == warm == parallel


def _original_mentions(text: str, wanted: set[str]) -> bool:
    return any(f"'{key}'" in text or f'"{key}"' in text for key in wanted)


@given(st.text(alphabet="ab_'\" x1·", max_size=30), st.sets(st.text(alphabet="ab_1·", min_size=1, max_size=3), max_size=4))
def test_quoted_key_scan_agrees_with_the_substring_test(text: str, wanted: set[str]) -> None:
    word_keys = {key for key in wanted if keys._WORD.fullmatch(key)}
    assert keys._mentions_quoted(text, word_keys, wanted - word_keys) == _original_mentions(text, wanted)


def test_quoted_key_scan_sees_overlapping_quotes() -> None:
    assert keys._mentions_quoted("x['a'bcd']", {"bcd"}, set())
    assert not keys._mentions_quoted("x['abcd']", {"bcd"}, set())


READER_TEXT = '''
import os.path as osp, json
from triton.language import semantic as sem, core
from .relative import skipped


class Holder(Base):
    def method(self, metadata, *args, key=None, **kw):
        self.cluster_dims = metadata["cluster_dims"]
        value = metadata.get("num_warps", 4) + getattr(kw, "shared_mem", 0)
        if hasattr(self, "num_stages"):
            value += self.options.num_ctas
        sem.make_block(value, *args, **kw)
        (lambda inner: inner.attr_name)(value)
        return [core.reduce_sum(x, axis=key) for x in args]


async def coroutine(first, second=2):
    async with osp.join("a", "b") as handle:
        total: int = await handle.read_bytes()
    return json.dumps({"field_name": total})
'''


def test_each_extractor_reads_only_nodes_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """Giving collect only the node classes an extractor declares gives the facts of every node."""
    filtered = pyblobs.encoded_facts(READER_TEXT)
    assert all(extractor.reads is not None for extractor in EXTRACTORS)
    with pyblobs.reading(pyblobs.PythonFacts(dataclasses.replace(extractor, reads=None) for extractor in EXTRACTORS)):
        unfiltered = pyblobs.encoded_facts(READER_TEXT)
    assert filtered == unfiltered
    assert all(filtered[name] for name in ("calls", "key-reads", "own-names"))
