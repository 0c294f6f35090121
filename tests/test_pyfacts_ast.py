"""The ast reading of Python facts (pyfacts) gives what the libcst reading (pyfacts_cst) gives: the same
function tables with the same signature, body and source text, the same module facts and the same
module-level statements; libcst answers only where this interpreter's parser refuses the grammar."""
from __future__ import annotations

import pytest

from sync.facts import pyfacts
from sync.facts import pyfacts_cst
from sync.demo.world import World

import pygit2

TRICKY = [
    # decorators with comments between them, comments after `(`, a trailing comment in the parameters,
    # a header comment, a footer comment under the body, a class footer
    "import os; import sys\nx = 1  # c\n\nclass A:\n    # lead\n    @dec\n    # between\n    @dec2(1)\n"
    "    def m(  # after paren\n        self, a, /, b=2, *args, c, d=3, **kw  # trailing\n    ) -> int:  # head\n"
    "        \"\"\"doc\"\"\"\n        if a:\n            return 1\n        # in body\n\n        return 2\n"
    "        # footer\n\n    # class footer\n\ndef f(): return 3\nasync def g(*, k): pass\n",
    # a multi-line string and a backslash continuation inside a method: kept as written
    "class B:\n    def s(self):\n        x = '''\nfirst\n    second'''\n        y = 1 + \\\n  2\n        return x\n",
    # nesting under if/elif/else/try/with/for, a one-line class, a def inside a def
    "if X:\n    def a(): pass\nelif Y:\n    def b(q): pass\nelse:\n    def c(r=1): pass\n"
    "try:\n    def t(): pass\nexcept E:\n    def e(): pass\nfinally:\n    def z(): pass\n"
    "with m:\n    def w(): pass\nfor i in r:\n    def l(): pass\nclass One: x = 1\n"
    "def outer():\n    def inner(p):\n        return p\n    return inner\n",
    # hooks: aliases, the spec module imported as a module, decorators, relative imports with a semicolon,
    # backend comparisons, implicit string concatenation, keyword and star arguments
    "from triton.flagtree_spec import spec, spec_func as sf\nfrom triton import flagtree_spec as fs\n"
    "from . import a; from .b import c as d\nfrom .e import *\nimport triton.flagtree_spec\n"
    "@sf\ndef k(x):\n    return spec('name', x, *rest, key=1, **more)\n"
    "y = fs.spec_path('p' 'q')\nz = spec('a' 'b', 2)\nif FLAGTREE_BACKEND == 'alpha' or os.FLAGTREE_BACKEND != 'b':\n    pass\n"
    "class C:\n    @fs.spec_func('named')\n    def m(self): return triton.flagtree_spec.spec('n', 1)\n",
    "\ufeff# header comment\n\n# above\n@deco\ndef first():\n    pass\n",
    "x = 1\r\ndef crlf(a,\r\n         b):\r\n    return a\r\n",
    "def café(é=1):\n    return 'ü'  # ü\n",
    "def broken(:\n",
]


def _table(table: dict | None) -> list | None:
    if table is None:
        return None
    return [(name, facts.params, facts.signature, facts.body, facts.source) for name, facts in table.items()]


def _facts(facts: pyfacts.ModuleFacts) -> tuple:
    return (facts.error, facts.hooks, [(f.qualname, f.line, f.params) for f in facts.functions.values()],
            facts.import_statement_indices, facts.relative_imports, facts.imported_names, facts.backend_selections)


def _agree(text: str) -> None:
    assert _table(pyfacts.function_table(text)) == _table(pyfacts_cst.function_table_cst(text))
    for positions in (True, False):
        assert _facts(pyfacts._parse_module_facts("m.py", text, positions)) == \
            _facts(pyfacts_cst.module_facts_cst("m.py", text, positions))
    assert pyfacts._normalized_statements(text) == pyfacts_cst.statements_cst(text)


@pytest.mark.parametrize("text", TRICKY)
def test_ast_and_libcst_agree_on_tricky_code(text: str) -> None:
    _agree(text)


def test_the_texts_are_what_libcst_prints() -> None:
    table = pyfacts.function_table(TRICKY[0])
    assert table is not None
    method = table["A.m"]
    assert method.signature == "self, a, /, b=2, *args, c, d=3, **kw  # trailing"
    assert method.source.startswith("@dec\n# between\n@dec2(1)\ndef m(  # after paren\n    self, a")
    assert method.source.endswith("    return 2\n    # footer\n")
    assert method.body.startswith("# head\n    \"\"\"doc\"\"\"")
    assert table["f"].body == "return 3" and table["g"].signature == "*, k"
    strings = pyfacts.function_table(TRICKY[1])
    assert strings is not None and "x = '''\nfirst\n    second'''\n    y = 1 + \\\n  2\n" in strings["B.s"].source
    facts = pyfacts.parse_module_facts("m.py", TRICKY[3])
    assert [(h.kind, h.name, h.args) for h in facts.hooks][:2] == [("spec_func", "k", ()),
                                                                  ("spec", "name", ("x", "*rest", "key=1", "**more"))]
    assert facts.relative_imports[0] == (3, "from . import a;")


def test_newer_grammar_falls_back_to_libcst() -> None:
    text = "type Alias = int\ndef f[T](x: T) -> T:\n    return x\n"  # Python 3.12 syntax
    if pyfacts.cpython_ast(text) is not None:
        pytest.skip("this interpreter parses PEP 695 syntax itself")
    table = pyfacts.function_table(text)
    assert table is not None and table["f"].signature == "x: T" and table["f"].source.startswith("def f[T]")
    assert pyfacts.parse_module_facts("n.py", text).error is None
    assert pyfacts.normalized_statements(text) == {"type Alias = int", "def f[T](x: T) -> T:\n    return x"}


def test_ast_and_libcst_agree_on_every_demo_file(world: World) -> None:
    repo = pygit2.Repository(str(world.fork))
    compared = 0
    for ref in (world.old_tag, world.new_tag, world.fork_branch):
        stack = [repo.revparse_single(ref).peel(pygit2.Commit).tree]
        while stack:
            for entry in stack.pop():
                if entry.type_str == "tree":
                    stack.append(repo[entry.id])
                elif entry.name.endswith(".py"):
                    _agree(repo[entry.id].data.decode("utf-8", errors="replace"))
                    compared += 1
    assert compared > 10


@pytest.mark.parametrize("text", [t for t in TRICKY if "broken" not in t and "\ufeff" not in t])
def test_walk_nodes_is_ast_walk_without_contexts(text: str) -> None:
    import ast
    from sync.facts.astwalk import walk_nodes
    module = ast.parse(text)
    expected = [node for node in ast.walk(module) if not isinstance(node, ast.expr_context)]
    found = walk_nodes(module)
    assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected))
