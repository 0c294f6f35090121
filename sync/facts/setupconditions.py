"""How FlagTree's setup files decide per backend (facts/buildconfigs reads the entry script with it, facts/layout the
setup helper's package mapping): the backend variable (one assigned from an expression that spells
"FLAGTREE_BACKEND"), the lists the setup files assign at module or class level (a dataclass field's default too)
plus what they `.append` to them, and tests on them.

What the evaluation reads: string literals, lists, tuples, `+`, starred items, `tuple()` / `list()`, any other
call as the list of what its arguments name (BackendInstaller.copy(names)); names and attributes by their last
identifier. Conditions: `in` / `not in`, `==` / `!=`, `and`, `or`, `not`, the backend variable's truth. Anything
else is Unknown: no guess is made."""
from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator

from sync.facts.astwalk import last_name
from sync.facts.filekinds import is_test_path, language_of
from sync.facts.trees import FileTree, read_text

SETUP_DIRS = ("setup_tools/", "python/setup_tools/")


class Unknown(Exception):
    """The script decides this by something not read here."""


class Conditions:
    """The names and lists the setup files define, and how a test or list expression of theirs reads for one
    backend."""

    def __init__(self, tree: FileTree, module: ast.Module) -> None:
        helpers = [module] + [tree_module for tree_module in helper_modules(tree)]
        self.backend_names = backend_variables(helpers)
        self.lists = list_definitions(helpers, self.backend_names)

    def condition(self, test: ast.expr, backend: str) -> bool:
        if isinstance(test, ast.BoolOp):
            values = [self.condition(value, backend) for value in test.values]
            return all(values) if isinstance(test.op, ast.And) else any(values)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return not self.condition(test.operand, backend)
        if self._is_backend(test):
            return bool(backend)
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and self._is_backend(test.left):
            right = self.value(test.comparators[0], backend, set()) if not isinstance(test.comparators[0], ast.Constant) \
                else [test.comparators[0].value]
            operator = test.ops[0]
            if isinstance(operator, (ast.In, ast.NotIn)):
                return (backend in right) == isinstance(operator, ast.In)
            if isinstance(operator, (ast.Eq, ast.NotEq)) and len(right) == 1:
                return (backend == right[0]) == isinstance(operator, ast.Eq)
        raise Unknown

    def _is_backend(self, node: ast.expr) -> bool:
        return last_name(node) in self.backend_names

    def value(self, node: ast.expr, backend: str, seen: set[str]) -> list[str]:
        """The names a list expression holds."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return [name for element in node.elts for name in self.value(element, backend, seen)]
        if isinstance(node, ast.Starred):
            return self.value(node.value, backend, seen)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self.value(node.left, backend, seen) + self.value(node.right, backend, seen)
        if isinstance(node, ast.Call):  # tuple(x), list(x), BackendInstaller.copy(names), copy_externals()
            return [name for argument in node.args for name in self.value(argument, backend, seen)]
        name = last_name(node)
        if name is None:
            raise Unknown
        if name in self.backend_names:
            return [backend] if backend else []
        if name in seen or name not in self.lists:
            raise Unknown
        definitions, appended = self.lists[name]
        values = {tuple(self.value(definition, backend, seen | {name})) for definition in definitions}
        if len(values) != 1:
            raise Unknown  # assigned differently in two places: which one runs is not read here
        return [*next(iter(values)), *(item for node in appended for item in self.value(node, backend, seen | {name}))]


def backend_condition(tree: FileTree, module: ast.Module) -> Callable[[ast.expr, str], bool | None]:
    """How an `if` test of a setup module decides for each backend, read as configurations() reads the entry
    script's conditions (the module's own names and lists first): True, False, or None where it rests on something
    not read here."""
    script = Conditions(tree, module)

    def holds(test: ast.expr, backend: str) -> bool | None:
        try:
            return script.condition(test, backend)
        except Unknown:
            return None
    return holds


def helper_modules(tree: FileTree) -> Iterable[ast.Module]:
    for path in sorted(tree.paths()):
        if path.startswith(SETUP_DIRS) and language_of(path) == "py" and not is_test_path(path):
            text = read_text(tree, path)
            try:
                yield ast.parse(text or "")
            except SyntaxError:
                continue


def backend_variables(modules: list[ast.Module]) -> set[str]:
    """Names assigned from an expression that reads FLAGTREE_BACKEND (os.getenv("FLAGTREE_BACKEND", ...))."""
    names: set[str] = set()
    for module in modules:
        for node in ast.walk(module):
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            if any(isinstance(c, ast.Constant) and c.value == "FLAGTREE_BACKEND" for c in ast.walk(value)):
                names.update(name for target in targets if (name := last_name(target)))
    return names


def list_definitions(modules: list[ast.Module], backend_names: set[str]) -> dict[str, tuple[list[ast.expr],
                                                                                             list[ast.expr]]]:
    """Name -> (the values module and class bodies assign it, what any code appends to it)."""
    found: dict[str, tuple[list[ast.expr], list[ast.expr]]] = {}
    for module in modules:
        bodies = [module.body] + [node.body for node in ast.walk(module) if isinstance(node, ast.ClassDef)]
        for body in bodies:
            for statement in body:
                if isinstance(statement, ast.Assign):
                    for target in statement.targets:
                        if isinstance(target, ast.Name) and target.id not in backend_names:
                            found.setdefault(target.id, ([], []))[0].append(statement.value)
                elif isinstance(statement, ast.AnnAssign) and statement.value is not None \
                        and isinstance(statement.target, ast.Name):
                    found.setdefault(statement.target.id, ([], []))[0].append(statement.value)
    for module in modules:
        for call, local in _calls(module, frozenset()):
            if isinstance(call.func, ast.Attribute) and call.func.attr == "append" and len(call.args) == 1 \
                    and (name := last_name(call.func.value)) in found \
                    and not (isinstance(call.func.value, ast.Name) and name in local):
                found[name][1].append(call.args[0])
    return found


def _calls(node: ast.AST, local: frozenset[str]) -> Iterator[tuple[ast.Call, frozenset[str]]]:
    """Every call below node, with the names the function it sits in assigns."""
    for child in ast.iter_child_nodes(node):
        inner = local | _locals(child) if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else local
        if isinstance(child, ast.Call):
            yield child, inner
        yield from _calls(child, inner)


def _locals(function: ast.FunctionDef | ast.AsyncFunctionDef) -> frozenset[str]:
    """Names a function assigns: `default_backends = kargs[...]` then `.append('flir')` is a download hook's
    alias of the list, run only when its download is (the directory it adds is downloaded, not in the tree)."""
    return frozenset(target.id for node in ast.walk(function) if isinstance(node, ast.Assign)
                     for target in node.targets if isinstance(target, ast.Name))
