"""The Python facts of a run (sync/facts/pyblobs.py): the extractors are the list drift/registry.py builds, not
whatever modules happened to be imported, and each run keeps what it parsed in its own PythonFacts."""
from __future__ import annotations

import ast
import contextvars
from pathlib import Path

import pytest

from sync.drift import registry
from sync.facts import pyblobs
from sync.facts.pyblobs import Extractor, PythonFacts, reading

ANALYSES = Path(registry.__file__).resolve().parent / "analyses"
FACTS = Path(pyblobs.__file__).resolve().parent  # a fact every analysis may ask (PARSES) is defined there


def test_every_extractor_an_analysis_defines_is_listed_once_in_the_registry() -> None:
    defined = {}
    for path in sorted([*ANALYSES.glob("*.py"), *FACTS.glob("*.py")]):
        module = ast.parse(path.read_text())
        for node in module.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                    and getattr(node.value.func, "id", None) == Extractor.__name__:
                defined[node.targets[0].id] = path.stem  # type: ignore[attr-defined]
            assert not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                        and getattr(node.value.func, "id", None) == "register"), f"{path.name} registers on import"
    assert defined, "the analyses define the extractors of the shared parse"
    names = [extractor.name for extractor in registry.EXTRACTORS]
    assert len(names) == len(set(names)) == len(defined)
    assert not hasattr(pyblobs, "register")


def test_facts_are_read_through_a_run_only() -> None:
    """No process-wide list of extractors or memo: outside a run there is nothing to read through."""
    with pytest.raises(RuntimeError, match="reading"):
        contextvars.Context().run(pyblobs.python_fact, "calls", "f(1)\n")


def test_each_run_keeps_its_own_facts_with_its_own_extractors() -> None:
    text = "def f(x):\n    return g(x)\n"
    first, second = registry.python_facts(), PythonFacts([registry.EXTRACTORS[0]])
    with reading(first):
        calls = pyblobs.python_fact("calls", text)
        assert [call.line for call in calls] == [2]
    assert list(first.memo) and sorted(next(iter(first.memo.values()))) == sorted(e.name for e in registry.EXTRACTORS)
    assert second.memo == {}
    with reading(second):
        assert pyblobs.encoded_facts(text).keys() == {registry.EXTRACTORS[0].name}
    assert first.cache_version != second.cache_version  # a cache entry of one never reads as the other's


def test_the_shared_parse_keeps_the_facts_and_not_the_tree() -> None:
    """Once every extractor has read a text's nodes, its tree goes (issue 46): kept in the parse memo, the fork's
    trees took memory from the trees other readers ask again, and held some 30 bytes a character of text."""
    from sync.facts import parsing
    text = "def kept_or_not(x):\n    return g(x)\n"
    parsing.forget_python_trees()
    with reading(registry.python_facts()):
        assert [call.line for call in pyblobs.python_fact("calls", text)] == [2]
    assert text not in parsing._TREES._trees
    assert parsing.python_ast(text) is parsing.python_ast(text)  # what another reader parses is still shared
