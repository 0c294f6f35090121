"""Where a Python use of a name points, read from the file's imports (issue 45: a use counts only once it
resolves to the declaration it named). `struct.unpack(...)` after `import struct` is the standard module's
function, never a method `unpack` of a trunk class; `tl.unpack` after `import triton.language as tl` may be
trunk's; `x.unpack` on a value of unknown type may be anything, trunk's included, but on a string (a literal, or
a name the file only ever assigns strings, `name = __name__`) it is str's (`builtins.str`).
"""
from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

from sync.facts.astwalk import walk_nodes
from sync.facts.parsing import Unparseable, guarded, python_ast

TRUNK_ROOT = "triton"  # the package trunk's Python modules live in


@dataclass(frozen=True)
class PyUse:
    line: int
    module: str | None  # the module the use reaches through an import (`struct`, `triton.language`); None: unknown


def python_uses(text: str, name: str) -> list[PyUse] | None:
    """Every use of name in text as an attribute (`a.b.name`) or a bare name, with the module an import binds
    its receiver (or the name) to; None when the text does not parse (then nothing is known)."""
    tree = guarded(lambda: python_ast(text))
    if isinstance(tree, Unparseable):
        return None
    nodes = walk_nodes(tree)
    bound = _imported_names(nodes)
    strings: set[str] | None = None  # read once, and only for a use whose receiver no import binds
    uses: list[PyUse] = []
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr == name:
            chain: list[str] = []
            value: ast.expr = node.value
            while isinstance(value, ast.Attribute):
                chain.insert(0, value.attr)
                value = value.value
            module = bound.get(value.id) if isinstance(value, ast.Name) else None
            if not chain and module is None:
                strings = _string_names(nodes) if strings is None else strings
                module = _STR if _string_valued(value, strings) else None
            uses.append(PyUse(node.end_lineno or node.lineno, ".".join([module, *chain]) if module else None))
        elif isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            uses.append(PyUse(node.lineno, bound.get(name)))
    return sorted(uses, key=lambda use: use.line)


_STR = "builtins.str"
_STRING_DUNDERS = frozenset({"__name__", "__file__", "__qualname__", "__module__", "__doc__"})
_STRING_METHODS = frozenset({"join", "format", "lower", "upper", "strip", "lstrip", "rstrip", "replace", "title"})


def _string_valued(node: ast.expr, strings: set[str]) -> bool:
    """Whether an expression is surely a str: a literal, an f-string, `__name__`, str(...), a name the file only
    ever assigns strings, a str method's result, or a sum or %-format with a string on its left."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Name):
        return node.id in _STRING_DUNDERS or node.id in strings
    if isinstance(node, ast.Call):
        function = node.func
        return (isinstance(function, ast.Name) and function.id in ("str", "repr")) or \
            (isinstance(function, ast.Attribute) and function.attr in _STRING_METHODS
             and _string_valued(function.value, strings))
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _string_valued(node.left, strings)
    return False


def _string_names(nodes: list[ast.AST]) -> set[str]:
    """Names every binding of which in the file is a plain assignment of a string (no parameter, loop, import,
    augmented or unpacking assignment of the same name anywhere)."""
    assigned: dict[str, list[ast.expr]] = {}
    plain_stores: Counter[str] = Counter()  # stores that are a whole target of a plain assignment
    other: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)
                    plain_stores[target.id] += 1
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            other.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
    stores = Counter(node.id for node in nodes
                     if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)))
    plain = {name for name, count in plain_stores.items() if stores[name] == count}
    strings: set[str] = set()
    changed = True
    while changed:  # a name assigned from another string name is one too
        changed = False
        for name in plain - other - strings:
            if all(_string_valued(value, strings) for value in assigned[name]):
                strings.add(name)
                changed = True
    return strings


def foreign(use: PyUse) -> bool:
    """The use reaches a module outside trunk's package through an import: it cannot mean trunk's declaration."""
    module = use.module
    return module is not None and not module.startswith(".") and module.split(".")[0] != TRUNK_ROOT


def _imported_names(nodes: list[ast.AST]) -> dict[str, str]:
    """Name -> the dotted module (or module.attribute) an import in the file binds it to; a name bound to
    several different places is left out (which one a line sees is a question of flow)."""
    bound: dict[str, set[str]] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                bound.setdefault(local, set()).add(alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    bound.setdefault(alias.asname or alias.name, set()).add(
                        f"{base}.{alias.name}" if base and not base.endswith(".") else f"{base}{alias.name}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.setdefault(node.name, set()).add("")  # defined here too: not only an import
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.setdefault(node.id, set()).add("")
    return {name: next(iter(places)) for name, places in bound.items() if len(places) == 1 and "" not in places}
