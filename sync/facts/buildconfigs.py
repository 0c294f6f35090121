"""The build configurations FlagTree's tree selects: one per backend, read from its entry script.

FlagTree builds one backend at a time (`FLAGTREE_BACKEND=b pip install .`). The entry script (setup.py, or
python/setup.py on older branches) passes CMake its cache variables as string literals `"-DX=V"`; the list of
codegen backends (`"-DTRITON_CODEGEN_BACKENDS=" + ';'.join([b.name for b in L ...])`) is the names of a list L
the script assigns under conditions on the backend variable (`if helper.flagtree_backend in ("aipu", ...):`).
configurations() evaluates those conditions and assignments for every backend the tree holds
(third_party/<b>/backend/ beside upstream's own) and for the build without one; each gives the cache variables
and environment facts/cmakebuilt.configured() follows, and the line of the entry script that chose its backends.

Conditions and lists are read by facts/setupconditions (what it reads is said there); a configuration whose
backends rest on something it cannot read is left out: no guess is made."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from sync.facts.layout import THIRD_PARTY
from sync.facts.astwalk import last_name
from sync.facts.setupconditions import Conditions, Unknown
from sync.facts.trees import FileTree, read_text
from sync.git.readlog import TreeMemo

ENTRY_SCRIPTS = ("setup.py", "python/setup.py")
BACKENDS_VARIABLE = "TRITON_CODEGEN_BACKENDS"


@dataclass(frozen=True)
class Configuration:
    backend: str  # FLAGTREE_BACKEND; '' for the build without one
    cache: dict[str, str] = field(hash=False)  # -DX=V the entry script passes
    env: dict[str, str] = field(hash=False)
    chosen_at: str  # path:line of the assignment that chose its codegen backends


def configurations(tree: FileTree, upstream: FileTree, partial: bool = False) -> list[Configuration]:
    """Every backend's configuration (and the one without a backend) the entry script decides; upstream's own
    third_party directories (nvidia, amd, ...) are codegen backends of trunk's build, not FlagTree backends.
    partial: a backend whose codegen backends the script does not decide is still given, with the script's literal
    cache variables and its FLAGTREE_BACKEND, and TRITON_CODEGEN_BACKENDS left unknown (chosen_at is '')."""
    for script in ENTRY_SCRIPTS:
        text = read_text(tree, script)
        if text is None or f"-D{BACKENDS_VARIABLE}=" not in text:
            continue
        reader = _script(tree, script)
        if reader is None:
            return []
        found = []
        for backend in ["", *flagtree_backends(tree, upstream)]:
            configuration = reader.configuration(backend)
            if configuration is None and partial:
                configuration = Configuration(backend, dict(reader.literal_cache), {"FLAGTREE_BACKEND": backend}, "")
            if configuration is not None:
                found.append(configuration)
        return found
    return []


def every_configuration(tree: FileTree, upstream: FileTree) -> list[Configuration] | None:
    """One configuration for each build: the one without a backend and each FlagTree backend's, partial where the
    entry script does not decide its codegen backends; None where the script leaves one out."""
    found = configurations(tree, upstream, partial=True)
    return found if {item.backend for item in found} == {"", *flagtree_backends(tree, upstream)} else None


def prebuilt_extension_backends(tree: FileTree, upstream: FileTree) -> set[str]:
    """The backends whose build compiles no extension module: the entry script's last `ext_modules = ...` for the
    backend is an empty list (3.2's setup.py for cambricon, which ships a prebuilt libtriton). What such a binding
    library registers is not in the tree."""
    for script in ENTRY_SCRIPTS:
        text = read_text(tree, script)
        if text is None or "ext_modules" not in text:
            continue
        reader = _script(tree, script)
        if reader is None:
            return set()
        found = set()
        for backend in flagtree_backends(tree, upstream):
            try:
                assignment = reader._chosen("ext_modules", backend)
            except Unknown:
                continue
            value = assignment.value if assignment is not None else None
            if isinstance(value, (ast.List, ast.Tuple)) and not value.elts:
                found.add(backend)
        return found
    return set()


_scripts: "TreeMemo[_Script | None]" = TreeMemo()


def _script(tree: FileTree, path: str) -> "_Script | None":
    """The entry script and the setup helpers it reads, read once per tree; None where it does not parse."""
    def read() -> _Script | None:
        try:
            return _Script(tree, path, ast.parse(read_text(tree, path) or ""))
        except SyntaxError:
            return None
    return _scripts.get(tree, path, read)


def flagtree_backends(tree: FileTree, upstream: FileTree) -> list[str]:
    """third_party/<b>/backend/ directories of the tree that upstream's tree does not have."""
    names = set()
    for path in tree.paths():
        parts = path.split("/", 3)
        if len(parts) == 4 and parts[0] == THIRD_PARTY and parts[2] == "backend":
            names.add(parts[1])
    upstream_dirs = {path.split("/", 2)[1] for path in upstream.paths() if path.startswith(f"{THIRD_PARTY}/")}
    return sorted(names - upstream_dirs)


class _Script(Conditions):
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
        super().__init__(tree, module)

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
        except Unknown:
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
                    except Unknown:
                        if any(_assigns(node, variable) for node in ast.walk(statement)):
                            raise
                        continue
                    walk(statement.body if taken else statement.orelse)
                elif _assigns(statement, variable):
                    chosen.append(statement)  # type: ignore[arg-type]
        walk(self.module.body)
        return chosen[-1] if chosen else None


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
