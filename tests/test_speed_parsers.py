"""ast and libcst give the same Python shape (the facts symbol drift reads)."""
from __future__ import annotations

import pygit2
import pytest

from sync.drift.analyses.symbols import python_shape_ast, python_shape_libcst
from sync.demo.world import World

TRICKY = [
    "def f(a, /, b, c=1, *args, d, e=2, **kw): pass\n",
    "async def g(x, *, y): ...\n",
    "def h(*, only=None): pass\ndef h(x): pass\n",  # the first definition wins in both
    "class A: x = 1; y: int = 2\n",  # a one-line class body: libcst keeps no statements from it
    "class B(\n    Base,\n    metaclass=M,\n):\n    z = 3\n    def m(self, q=0): pass\n    class C:\n        w = 4\n",
    "a = b = 1\n(c, d) = 2, 3\ne: int\nf += 1\nx.y = 2\n",
    "if X:\n    hidden = 1\n    def hidden_f(): pass\ntry:\n    t = 1\nexcept E:\n    pass\n",
    "def outer():\n    def inner(p): pass\n    return inner\n",
    "class D:  # comment\n    def __init__(self, *a, **k):\n        self.v = 1\n",
    "\ufeffclass É:\n    café = 1\n",
    "x = 1\r\nclass W:\r\n    y = 2\r\n",
    "def broken(:\n",  # neither parses: empty shape from both
    "print 'python 2'\n",
]


@pytest.mark.parametrize("text", TRICKY)
def test_ast_and_libcst_agree_on_tricky_code(text: str) -> None:
    assert python_shape_ast(text) == python_shape_libcst(text)


def test_shapes_are_not_empty() -> None:
    shape = python_shape_ast(TRICKY[0])
    assert shape.names == {"f", "a", "b", "c", "args", "d", "e", "kw"}
    assert [p.kind for p in shape.functions["f"]][:2] == ["positional_only", "positional"]


def test_ast_and_libcst_agree_on_every_demo_file(world: World) -> None:
    repo = pygit2.Repository(str(world.fork))
    compared = 0
    for ref in (world.old_tag, world.new_tag, world.fork_branch):
        tree = repo.revparse_single(ref).peel(pygit2.Commit).tree
        stack = [(tree, "")]
        while stack:
            node, prefix = stack.pop()
            for entry in node:
                if entry.type_str == "tree":
                    stack.append((repo[entry.id], f"{prefix}{entry.name}/"))
                elif entry.name.endswith(".py"):
                    text = repo[entry.id].data.decode("utf-8", errors="replace")
                    assert python_shape_ast(text) == python_shape_libcst(text), prefix + entry.name
                    compared += 1
    assert compared > 10
