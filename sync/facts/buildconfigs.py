"""The build configurations FlagTree's tree selects: one per backend, read from its entry script.

FlagTree builds one backend at a time (`FLAGTREE_BACKEND=b pip install .`). The entry script (setup.py, or
python/setup.py on older branches) passes CMake its cache variables as string literals `"-DX=V"`; the list of
codegen backends (`"-DTRITON_CODEGEN_BACKENDS=" + ';'.join([b.name for b in L ...])`) is the names of a list L
the script assigns under conditions on the backend variable (`if helper.flagtree_backend in ("aipu", ...):`).
configurations() evaluates those conditions and assignments for every backend the tree holds
(third_party/<b>/backend/ beside upstream's own) and for the build without one; each gives the cache variables
and environment facts/cmakebuilt.configured() follows, and the line of the entry script that chose its backends.

What the evaluation reads: string literals, lists, tuples, `+`, starred items, `tuple()` / `list()`, any other
call as the list of what its arguments name (BackendInstaller.copy(names)); names and attributes by their last
identifier: the backend variable (one assigned from an expression that spells "FLAGTREE_BACKEND"), or a list the
setup files assign at module or class level (a dataclass field's default too) plus what they `.append` to it.
Conditions: `in` / `not in`, `==` / `!=`, `and`, `or`, `not`, the backend variable's truth. Anything else is
unknown, and a configuration whose backends rest on something unknown is left out: no guess is made."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from sync.facts.filekinds import is_test_path, language_of
from sync.facts.layout import THIRD_PARTY
from sync.facts.trees import FileTree, read_text

ENTRY_SCRIPTS = ("setup.py", "python/setup.py")
SETUP_DIRS = ("setup_tools/", "python/setup_tools/")
BACKENDS_VARIABLE = "TRITON_CODEGEN_BACKENDS"


@dataclass(frozen=True)
class Configuration:
    backend: str  # FLAGTREE_BACKEND; '' for the build without one
    cache: dict[str, str] = field(hash=False)  # -DX=V the entry script passes
    env: dict[str, str] = field(hash=False)
    chosen_at: str  # path:line of the assignment that chose its codegen backends


class _Unknown(Exception):
    """The script decides this by something not read here."""


def configurations(tree: FileTree, upstream: FileTree) -> list[Configuration]:
    """Every backend's configuration (and the one without a backend) the entry script decides; upstream's own
    third_party directories (nvidia, amd, ...) are codegen backends of trunk's build, not FlagTree backends."""
    for script in ENTRY_SCRIPTS:
        text = read_text(tree, script)
        if text is None or f"-D{BACKENDS_VARIABLE}=" not in text:
            continue
        try:
            module = ast.parse(text)
        except SyntaxError:
            return []
        reader = _Script(tree, script, module)
        found = []
        for backend in ["", *flagtree_backends(tree, upstream)]:
            configuration = reader.configuration(backend)
            if configuration is not None:
                found.append(configuration)
        return found
    return []


def prebuilt_extension_backends(tree: FileTree, upstream: FileTree) -> set[str]:
    """The backends whose build compiles no extension module: the entry script's last `ext_modules = ...` for the
    backend is an empty list (3.2's setup.py for cambricon, which ships a prebuilt libtriton). What such a binding
    library registers is not in the tree."""
    for script in ENTRY_SCRIPTS:
        text = read_text(tree, script)
        if text is None or "ext_modules" not in text:
            continue
        try:
            reader = _Script(tree, script, ast.parse(text))
        except SyntaxError:
            return set()
        found = set()
        for backend in flagtree_backends(tree, upstream):
            try:
                assignment = reader._chosen("ext_modules", backend)
            except _Unknown:
                continue
            value = assignment.value if assignment is not None else None
            if isinstance(value, (ast.List, ast.Tuple)) and not value.elts:
                found.add(backend)
        return found
    return set()


def backend_condition(tree: FileTree, module: ast.Module) -> Callable[[ast.expr, str], bool | None]:
    """How an `if` test of a setup module decides for each backend, read as configurations() reads the entry
    script's conditions (the module's own names and lists first): True, False, or None where it rests on something
    not read here."""
    script = _Script(tree, "", module)

    def holds(test: ast.expr, backend: str) -> bool | None:
        try:
            return script.condition(test, backend)
        except _Unknown:
            return None
    return holds


def flagtree_backends(tree: FileTree, upstream: FileTree) -> list[str]:
    """third_party/<b>/backend/ directories of the tree that upstream's tree does not have."""
    names = set()
    for path in tree.paths():
        parts = path.split("/", 3)
        if len(parts) == 4 and parts[0] == THIRD_PARTY and parts[2] == "backend":
            names.add(parts[1])
    upstream_dirs = {path.split("/", 2)[1] for path in upstream.paths() if path.startswith(f"{THIRD_PARTY}/")}
    return sorted(names - upstream_dirs)


class _Script:
    def __init__(self, tree: FileTree, path: str, module: ast.Module) -> None:
        self.path = path
        self.module = module
        self.literal_cache: dict[str, str] = {}
        self.computed: list[tuple[str, ast.expr]] = []  # (-DX=, the expression after it)
        for node in ast.walk(module):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("-D"):
                name, equals, value = node.value[2:].partition("=")
                name = name.split(":", 1)[0]
                if equals and value and name.isidentifier():
                    self.literal_cache[name] = value
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant) \
                    and isinstance(node.left.value, str) and node.left.value == f"-D{BACKENDS_VARIABLE}=":
                self.computed.append((BACKENDS_VARIABLE, node.right))
        helpers = [module] + [tree_module for tree_module in _helper_modules(tree)]
        self.backend_names = _backend_variables(helpers)
        self.lists = _list_definitions(helpers, self.backend_names)

    def configuration(self, backend: str) -> Configuration | None:
        if len(self.computed) != 1:
            return None
        listed = _listed_variable(self.computed[0][1])
        if listed is None:
            return None
        try:
            assignment = self._chosen(listed, backend)
            if assignment is None:
                return None
            names = self.value(assignment.value, backend, set())
        except _Unknown:
            return None
        cache = {**self.literal_cache, BACKENDS_VARIABLE: ";".join(dict.fromkeys(name for name in names if name))}
        return Configuration(backend, cache, {"FLAGTREE_BACKEND": backend}, f"{self.path}:{assignment.lineno}")

    def _chosen(self, variable: str, backend: str) -> ast.Assign | None:
        """The module-level assignment to variable the script runs last for this backend (through if/else; one
        under a condition not read here leaves the configuration unknown)."""
        chosen: list[ast.Assign] = []
        def walk(body: list[ast.stmt]) -> None:
            for statement in body:
                if isinstance(statement, ast.If):
                    try:
                        taken = self.condition(statement.test, backend)
                    except _Unknown:
                        if any(_assigns(node, variable) for node in ast.walk(statement)):
                            raise
                        continue
                    walk(statement.body if taken else statement.orelse)
                elif _assigns(statement, variable):
                    chosen.append(statement)  # type: ignore[arg-type]
        walk(self.module.body)
        return chosen[-1] if chosen else None

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
        raise _Unknown

    def _is_backend(self, node: ast.expr) -> bool:
        return _last_name(node) in self.backend_names

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
        name = _last_name(node)
        if name is None:
            raise _Unknown
        if name in self.backend_names:
            return [backend] if backend else []
        if name in seen or name not in self.lists:
            raise _Unknown
        definitions, appended = self.lists[name]
        values = {tuple(self.value(definition, backend, seen | {name})) for definition in definitions}
        if len(values) != 1:
            raise _Unknown  # assigned differently in two places: which one runs is not read here
        return [*next(iter(values)), *(item for node in appended for item in self.value(node, backend, seen | {name}))]


def _assigns(node: ast.AST, variable: str) -> bool:
    return isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == variable for t in node.targets)


def _listed_variable(node: ast.expr) -> str | None:
    """L of `';'.join([b.name for b in L if not b.is_external])`: the list whose names are the value; a
    comprehension that keeps only elements passing a positive test (`if b.is_external`) picks out-of-tree ones."""
    if isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    if isinstance(node, ast.ListComp) and len(node.generators) == 1:
        generator = node.generators[0]
        if all(isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) for test in generator.ifs) \
                and isinstance(generator.iter, ast.Name):
            return generator.iter.id
    return None


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _helper_modules(tree: FileTree) -> Iterable[ast.Module]:
    for path in sorted(tree.paths()):
        if path.startswith(SETUP_DIRS) and language_of(path) == "py" and not is_test_path(path):
            text = read_text(tree, path)
            try:
                yield ast.parse(text or "")
            except SyntaxError:
                continue


def _backend_variables(modules: list[ast.Module]) -> set[str]:
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
                names.update(name for target in targets if (name := _last_name(target)))
    return names


def _list_definitions(modules: list[ast.Module], backend_names: set[str]) -> dict[str, tuple[list[ast.expr],
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
                    and (name := _last_name(call.func.value)) in found \
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
