"""A large Python text parsed in chunks (sync/facts/pychunks.py) gives every reader of its tree exactly
what one parse of the whole text gives: the same facts, the same errors. The chunk size is forced down to
one boundary line per chunk, so that these small texts split at every def, class and decorator."""
from __future__ import annotations

import ast
import sys

import pytest

from sync.drift.analyses import cochange
from sync.facts import pychunks
from sync.drift.analyses import symbols
from sync.facts.astwalk import walk_levels, walk_nodes
from sync.facts.parsing import Unparseable, parsed_ast, python_ast
from tests.chunk_facts import chunking, consumer_facts
from tests.test_pyfacts_ast import TRICKY

WHOLE = sys.maxsize  # a threshold no text reaches: parsed whole

MANY = "".join([
    "# a header comment\n\nimport os\nfrom triton.flagtree_spec import spec, spec_func as sf\n",
    "from triton import flagtree_spec as fs\nfrom . import rel; from .b import c as d\n\n\n",
    # an import inside a def (deep in the walk) and one of the same name at module level in a later chunk:
    # the whole walk meets the module-level one first, so the nested one wins for np.zeros() below
    "def early():\n    import numpy as np\n    return np.zeros(3)\n\n\n",
    "@sf\ndef hooked(x, *rest, key=1, **more):\n    return spec('name', x, *rest, key=key, **more)\n\n\n",
    "@dec(\n    1,\n)\n@other\ndef decorated(a, /, b=2, *, c):  # a multi-line decorator first\n    pass\n\n\n",
    'DOC = """\ndef not_a_def():\n    pass\nclass NotAClass:\n@not_a_decorator\n"""\n',
    "value = (left\n@ right)\nproduct = left \\\n@ right\n",
    "class Shape:\n    x: int = 1\n    # lead\n    def area(self, meta):\n        meta['num_warps'] = 4\n"
    "        return {'num_warps': self.x, 'stages': 2}\n\n    @property\n    def name(self):\n"
    "        return self.meta.get('num_warps')\n    # class footer\n\n\n",
    "class One: x = 1\n",
    "if FLAGTREE_BACKEND:\n    def chosen(): pass\nelif FLAGTREE_BACKEND == 'alpha':\n    def alpha(): pass\nelse:\n"
    "    def fallback(q=1): pass\n\n\n",
    "async def fetch(*, timeout):\n    if not FLAGTREE_BACKEND:\n        return [i for i in range(3) if FLAGTREE_BACKEND]\n"
    "    setattr(fetch, 'num_warps', 8)\n\n\n",
    "import torch as np\n",
    "def late():\n    return np.zeros(4) + os.path.join('a', 'b')\n\n\n",
    "z = fs.spec_path('p' 'q')\nspec('after', 2)\n\n\n",
    "\fdef after_form_feed(é=1):\n    return 'ü'  # ü\n\n\n",
    "def early(): pass  # a second def of a name: the first one counts\n",
    "def deep():\n    def inner(p):\n        class Local:\n            def method(self): return p\n        return Local\n"
    "    return inner\n",
])
CRLF = MANY.replace("\n", "\r\n")
CR = MANY.replace("\n", "\r")
BOM = "\ufeff" + MANY
BROKEN = [
    MANY.replace("def late():", "def late(:"),  # a real syntax error in a middle chunk
    MANY + "def last(:\n",  # at the end
    "if x:\n    pass\ndef f(): pass\nelse:\n    pass\n" + MANY,  # an else a def cut off from its if
    MANY.replace("DOC = ", "DOC = (", 1),  # an unclosed bracket that swallows every later boundary
]

REFUSED = [  # nesting CPython refuses in a middle chunk (its parser's limit, its recursion limit), a NUL byte
    MANY.replace("def late():", "def late():\n    x = " + "(" * 300 + ")" * 300),
    MANY.replace("def late():", "def late():\n    x = " + "-" * 5000 + "1"),
    MANY.replace("def late():", "def late():\n    x = 1" + " + 1" * 20000),
    MANY.replace("def late():", "def late():\n    x = '\0'"),
]


def _statements(text: str, threshold: int) -> list[str]:
    with chunking(threshold):
        trees = pychunks.over_chunks(text, python_ast, list)
    return [ast.dump(statement, include_attributes=True) for tree in trees for statement in tree.body]


def _chunks(text: str) -> int:
    with chunking(0):
        return len(pychunks.over_chunks(text, python_ast, list))


@pytest.mark.parametrize("text", [MANY, CRLF, CR])
def test_the_chunks_statements_are_the_whole_modules(text: str) -> None:
    assert _chunks(text) > 5
    assert _statements(text, 0) == _statements(text, WHOLE)


def _positions(nodes: list[ast.AST]) -> list[tuple]:
    return [(type(node).__name__, getattr(node, "lineno", None), getattr(node, "col_offset", None),
             getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)) for node in nodes]


def test_merged_levels_are_the_whole_walks_order() -> None:
    with chunking(0):
        trees = pychunks.over_chunks(MANY, python_ast, list)
    merged = pychunks.merge_levels([walk_levels(tree)[1:] for tree in trees])  # one Module node stands for all
    whole = walk_nodes(ast.parse(MANY))[1:]
    assert _positions(merged) == _positions(whole)
    # The order is not the chunks' walks one after the other (the nested import comes later in the whole walk).
    assert _positions([node for tree in trees for node in walk_nodes(tree)[1:]]) != _positions(whole)


@pytest.mark.parametrize("text", [MANY, CRLF, CR, BOM, *BROKEN, *REFUSED, *TRICKY],
                         ids=range(4 + len(BROKEN) + len(REFUSED) + len(TRICKY)))
def test_every_consumer_gives_the_whole_parse_facts(text: str) -> None:
    with chunking(0):
        chunked = consumer_facts(text)
    with chunking(WHOLE):
        whole = consumer_facts(text)
    for name, facts in whole.items():
        assert chunked[name] == facts, name


def test_the_facts_cover_the_whole_text() -> None:
    """The parity above compares facts that are there: calls resolved through the nested import, every def."""
    with chunking(0):
        facts = consumer_facts(MANY)
    calls = {call[0] for call in facts["blob-facts"]["calls"]}
    assert "numpy.zeros" in calls and "torch.zeros" not in calls and "os.path.join" in calls
    names = [row[0] for row in facts["function-table"]]
    assert {"early", "hooked", "decorated", "Shape.area", "deep.inner.Local.method", "after_form_feed"} <= set(names)
    hooks = facts["module-facts"][0]["hooks"]
    assert [hook[1] for hook in hooks] == ["hooked", "name", None, "after"] and hooks[-1][6] > 10  # global index
    assert [test[1] for test in facts["truth-tests"]] == ["FLAGTREE_BACKEND", "not FLAGTREE_BACKEND",
                                                          "FLAGTREE_BACKEND"]


def test_a_boundary_inside_a_string_or_brackets_is_merged_not_parsed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    failed: list[str] = []
    real = pychunks._chunk_tree

    def counting(text: str, start: int, end: int, line: int) -> ast.Module | None:
        tree = real(text, start, end, line)
        if tree is None:
            failed.append(text[end:])  # what follows a chunk that did not parse
        return tree

    def never(text: str) -> ast.Module:
        raise AssertionError("parsed whole")
    monkeypatch.setattr(pychunks, "_chunk_tree", counting)
    with chunking(0):
        trees = pychunks.over_chunks(CRLF, never, list)
    assert len(trees) > 5
    assert any(rest.startswith("class NotAClass:") for rest in failed)  # a boundary in a string
    assert any(rest.startswith("@ right)") for rest in failed)  # in brackets
    assert any(rest.startswith("@ right\r\n") for rest in failed)  # after a backslash and CR LF


def test_past_the_retries_the_text_is_parsed_whole() -> None:
    wholes: list[str] = []

    def whole(text: str) -> ast.Module:
        wholes.append(text)
        return ast.parse(text)
    with chunking(0, retries=0):
        trees = pychunks.over_chunks(MANY, whole, list)
    assert wholes == [MANY] and len(trees) == 1


@pytest.mark.parametrize("text", BROKEN + REFUSED)
def test_a_text_that_does_not_parse_whole_gives_the_whole_parse_outcome(text: str) -> None:
    whole = parsed_ast(text)
    assert isinstance(whole, Unparseable)
    with chunking(0):
        chunked = pychunks.over_chunks(text, parsed_ast, list)
    assert chunked == whole


def test_small_texts_are_parsed_whole_by_default() -> None:
    assert len(MANY) < pychunks.CHUNK_THRESHOLD
    assert len(pychunks.over_chunks(MANY, python_ast, list)) == 1
    big = MANY * (pychunks.CHUNK_THRESHOLD // len(MANY) + 1)
    assert len(pychunks.over_chunks(big, python_ast, list)) > 1


def test_chunks_grow_past_max_chunks() -> None:
    block = "def f():\n    return 1\n\n\n"
    big = block * (2 * pychunks.CHUNK_BYTES * pychunks.MAX_CHUNKS // len(block) + 1)
    assert pychunks.MAX_CHUNKS - 1 <= len(pychunks._bounds(big)) - 1 <= pychunks.MAX_CHUNKS + 1


def test_trunk_name_candidates_stream_and_give_nothing_for_untokenizable_text() -> None:
    text = "from a import b\nx.attr = c(d, e=f)\n"
    assert symbols._trunk_name_candidates(text) == [("a", 1), ("b", 1), ("attr", 2), ("c", 2), ("e", 2)]
    assert symbols._trunk_name_candidates(text + "s = '''never closed\n") == []


def test_names_on_some_lines_are_the_whole_files_on_those_lines() -> None:
    python = "def f(a):\n    b = a + 1  # c\n    return g(b)\n"
    assert cochange._names("m.py", python, {2, 3}) == {2: {"b", "a"}, 3: {"g", "b"}}
    assert cochange._names("m.py", python) == {1: {"f", "a"}, 2: {"b", "a"}, 3: {"g", "b"}}
    cpp = "int f(int a) {\n  int b = a;\n  return b;\n}\n"
    whole = cochange._names("m.cpp", cpp)
    assert whole is not None and cochange._names("m.cpp", cpp, {2}) == {2: whole[2]}
