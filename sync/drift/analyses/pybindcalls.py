"""Python calls of pybind11 methods whose bound lambda upstream gave another number of parameters (issue 33).

Trunk's binding sources (python/src/*.cc) register Python classes (`py::class_<PassManager>(m, "pass_manager")`)
and their methods as lambdas (`.def("run", [](PassManager &self, ModuleOp &mod) {...})`). Without `py::arg`
a Python call must pass exactly the lambda's parameters after `self`, by position: when upstream adds one
(625c8cb45, #8113: `run` gained `repro_pipeline_tag` between 3.5 and 3.6), every FlagTree call with the old
count raises TypeError when it runs, on every compile.

Upstream side: a class and method registered once (no overload) in a trunk binding source upstream changed, as
a lambda at both tags, named by no `py::arg`, whose parameter count changed; the class's Python name registered
by no other trunk binding source at the new tag. FlagTree side: on FlagTree's lines in trunk's package or a
backend's tree (tests and examples aside), a call `v.method(a, b)` with plain positional arguments that passes
the old count, where the receiver is known:
- `v` is assigned once in the same function (or module), from `m.<class>(...)`, and `m` is bound by an import
  of a `triton._C.libtriton` submodule (`pm = ir.pass_manager(ctx)`); or
- the method's name is registered once in all the new tree's C++ (`builder.create_warp_specialize(...)`, where
  the builder comes from elsewhere), and no Python def of it is where the call can reach one (as for removed
  bindings: trunk's package on the upgraded tree, the backend's own tree).
A backend whose own C++ registers the class builds its own extension module (iluvatar, mthreads, xpu, sunrise):
its calls claim nothing; nor do those of a backend whose build compiles no extension (a prebuilt one, bindings.py).

Kind call-no-overload, an error, one finding per method and backend with every site and the upstream commits.
"""
from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass

from sync.drift.analyses.bindings import (BINDING_FILES, TRUNK_PYTHON, backend_registrations, on_stdlib,
                                         python_definitions, stdlib_names)
from sync.drift.context import DriftContext
from sync.facts.declindex import Decl, cpp_declarations, declarations_of
from sync.facts.delta import PY, backend_of, fork_lines_where
from sync.facts.filekinds import not_built
from sync.facts.buildconfigs import prebuilt_extension_backends
from sync.facts.layout import backend_root, is_third_party, third_party_owner
from sync.facts.astwalk import walk_nodes
from sync.facts.parsing import cpython_tree
from sync.facts.pymodules import TRUNK_PACKAGE, absolute, package_of
from sync.facts.trees import read_text
from sync.facts.upstreamlog import Commits, changing_commits, one_per_change
from sync.git import changes_with_renames
from sync.model import Finding

EXTENSION = "triton._C.libtriton."  # the pybind11 module's submodules: ir, passes, llvm, ...


@dataclass(frozen=True)
class ChangedBinding:
    klass: str  # the Python class name: pass_manager
    method: str
    before: tuple[str, ...]  # the lambda's parameter names after self, at the old tag
    after: tuple[str, ...]
    old_path: str
    new_path: str


def _is_trunk_binding_source(path: str) -> bool:
    return path.startswith("python/src/") and path.endswith(BINDING_FILES)


def bound_methods(text: str) -> dict[tuple[str, str], list[Decl]]:
    """(class, method) -> its `.def` registrations in a binding source."""
    found: dict[tuple[str, str], list[Decl]] = {}
    if '"' in text:
        for decl in cpp_declarations(text):
            if decl.kind == "pybind" and decl.owner and decl.target == "def":
                found.setdefault((decl.owner, decl.name), []).append(decl)
    return found


def _positional(registrations: list[Decl] | None) -> tuple[str, ...] | None:
    """The parameters after self a call must pass by position: one lambda, none of them named by py::arg."""
    if not registrations or len(registrations) != 1:
        return None
    decl = registrations[0]
    if decl.params is None or not decl.params or "keywords" in decl.flags:
        return None
    return tuple(param.name for param in decl.params[1:])


def changed_bindings(context: DriftContext) -> dict[tuple[str, str], ChangedBinding]:
    out: dict[tuple[str, str], ChangedBinding] = {}
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if change.new_path is None or change.status == "added" or not _is_trunk_binding_source(change.old_path):
            continue
        before = bound_methods(read_text(context.upstream_old, change.old_path) or "")
        after = bound_methods(read_text(context.upstream_new, change.new_path) or "")
        for key in before.keys() & after.keys():
            old, new = _positional(before[key]), _positional(after[key])
            if old is not None and new is not None and len(old) != len(new):
                out[key] = ChangedBinding(*key, old, new, change.old_path, change.new_path)
    if out:  # a class name two trunk sources register: which one a call means is not known
        registered = Counter(klass for path in context.upstream_new.paths() if _is_trunk_binding_source(path)
                             for klass in {owner for owner, _ in bound_methods(read_text(context.upstream_new, path)
                                                                                or "")})
        out = {key: found for key, found in out.items() if registered[key[0]] == 1}
    return out


def unique_names(context: DriftContext, changed: dict[tuple[str, str], ChangedBinding]) -> dict[str, ChangedBinding]:
    """method -> its change, for changed methods whose name one registration alone carries in the C++ of the
    upgraded tree: the new tree's and FlagTree's (a backend's own binding of the name, such as TLE's
    triton_tle.cc registering create_warp_specialize on its builder, may be what a call means)."""
    names = {method for _, method in changed}
    per_path: dict[tuple[str, str], int] = {}  # (path, name) -> registrations, the more of the two trees' versions
    for tree in (context.upstream_new, context.fork):
        for path in tree.paths():
            if path.endswith(BINDING_FILES):
                text = read_text(tree, path) or ""
                if any(f'"{name}"' in text for name in names):
                    here = Counter(decl.name for decl in cpp_declarations(text)
                                   if decl.kind == "pybind" and decl.name in names)
                    for name, count in here.items():
                        per_path[(path, name)] = max(per_path.get((path, name), 0), count)
    counts: Counter[str] = Counter()
    for (_, name), count in per_path.items():
        counts[name] += count
    return {method: found for (_, method), found in changed.items() if counts[method] == 1}


def extension_modules(path: str, text: str) -> set[str]:
    """Names the module binds to a submodule of the pybind11 extension (`from triton._C.libtriton import ir`;
    relative imports only in trunk's package, where they reach it)."""
    trunk = path.startswith(TRUNK_PACKAGE) and not is_third_party(path)
    names = set()
    for decl in declarations_of(path, text):
        if decl.kind == "import" and not decl.scope:
            target = decl.target
            if target.startswith("."):
                if not trunk:
                    continue
                target = absolute(target, package_of(path))
            if target.startswith(EXTENSION) and "." not in target[len(EXTENSION):]:
                names.add(decl.name)
    return names


def _scopes(tree: ast.Module) -> list[list[ast.AST]]:
    """The nodes of the module's own scope and of each function's, nested functions and classes apart."""
    scopes: list[list[ast.AST]] = []
    pending: list[ast.AST] = [tree]
    while pending:
        root = pending.pop()
        nodes: list[ast.AST] = []
        stack = list(ast.iter_child_nodes(root))
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                pending.append(node)
                continue
            nodes.append(node)
            stack.extend(ast.iter_child_nodes(node))
        scopes.append(nodes)
    return scopes


def calls_of_bound(tree: ast.Module, modules: set[str], classes: set[str]) -> list[tuple[str, str, int, int]]:
    """(class, method, positional arguments, line) of each plain call on a variable that its scope assigns
    once, from `module.<class>(...)`."""
    found = []
    for nodes in _scopes(tree):
        stores = Counter(node.id for node in nodes if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store))
        made: dict[str, str] = {}
        for node in nodes:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                    and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id in modules \
                    and node.value.func.attr in classes:
                made[node.targets[0].id] = node.value.func.attr
        made = {name: klass for name, klass in made.items() if stores[name] == 1}
        for call in (node for node in nodes if isinstance(node, ast.Call)):
            method = _plain_method(call)
            if method is not None and isinstance(method.value, ast.Name) and method.value.id in made:
                found.append((made[method.value.id], method.attr, len(call.args), call.lineno))
    return found


def calls_by_name(tree: ast.Module, methods: set[str]) -> list[tuple[str, int, int]]:
    """(method, positional arguments, line) of each plain call `x.method(...)`, whatever x is but a name bound
    to the standard library."""
    stdlib = stdlib_names(tree)
    return [(method.attr, len(node.args), node.lineno) for node in walk_nodes(tree) if isinstance(node, ast.Call)
            and (method := _plain_method(node)) is not None and method.attr in methods
            and not on_stdlib(method, stdlib)]


def _plain_method(call: ast.Call) -> ast.Attribute | None:
    """`x.method` of a call `x.method(a, b)` with positional arguments only, none unpacked (their count is what
    the callee receives); None for any other call."""
    if isinstance(call.func, ast.Attribute) and not call.keywords \
            and not any(isinstance(argument, ast.Starred) for argument in call.args):
        return call.func
    return None


def pybind_call_findings(context: DriftContext) -> list[Finding]:
    changed = changed_bindings(context)
    if not changed:
        return []
    classes = {klass for klass, _ in changed}
    by_name = {method: found for (_, method), found in changed.items()
               if sum(other == method for _, other in changed) == 1}
    own: dict[str, set[str]] = {}  # backend dir -> the classes its own C++ registers

    def registers(backend_dir: str) -> set[str]:
        if backend_dir not in own:
            own[backend_dir] = {decl.owner for decl in backend_registrations(context.fork, backend_dir, classes)
                                if decl.owner and decl.target == "def"}
        return own[backend_dir]

    wanted = lambda path: path.endswith(PY) and (path.startswith(TRUNK_PACKAGE) or is_third_party(path)) \
        and not not_built(path)
    resolved: list[tuple[str, int, int, ChangedBinding]] = []  # path, line, count, binding
    by_name_only: list[tuple[str, int, int, str]] = []  # path, line, count, method: resolved by the name alone
    for path, lines in sorted(fork_lines_where(context.upstream_old, context.fork, wanted).items()):
        text = read_text(context.fork, path) or ""
        constructed = "_C.libtriton" in text and any(f".{klass}(" in text for klass in classes)
        named = {method for method in by_name if f".{method}(" in text}
        if not constructed and not named:
            continue  # cheap: a variable made by `module.<class>(`, or a call spelling a changed method's name
        modules = extension_modules(path, text) if constructed else set()
        try:
            tree = cpython_tree(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        found, by_name_here = _old_count_calls(tree, lines, modules, classes, changed,
                                               {name: by_name[name] for name in named})
        resolved += [(path, line, count, binding) for line, count, binding in found]
        by_name_only += [(path, line, count, method) for line, count, method in by_name_here]
    if by_name_only:  # the name alone: no Python def the call can reach, and one registration in all the C++
        defined = python_definitions(context, {method for *_, method in by_name_only})
        by_name_only = [site for site in by_name_only
                        if not defined.get(site[3], set()) & {TRUNK_PYTHON, backend_root(site[0])}]
        unique = unique_names(context, {(by_name[method].klass, method): by_name[method]
                                        for *_, method in by_name_only})
        resolved += [(path, line, count, unique[method]) for path, line, count, method in by_name_only
                     if method in unique]
    prebuilt = prebuilt_extension_backends(context.fork, context.upstream_old) if resolved else set()
    sited = [_sited(context, path, line, count, binding)
             for path, line, count, binding in sorted(resolved, key=lambda site: site[:3])
             if ((home := backend_root(path)) is None or binding.klass not in registers(home))
             and third_party_owner(path) not in prebuilt]
    return one_per_change(sited, _changing_commits(context))


def _fits_old_only(binding: ChangedBinding, count: int) -> bool:
    return count == len(binding.before) and count != len(binding.after)


def _old_count_calls(tree: ast.Module, lines: set[int], modules: set[str], classes: set[str],
                     changed: dict[tuple[str, str], ChangedBinding], named: dict[str, ChangedBinding]
                     ) -> tuple[list[tuple[int, int, ChangedBinding]], list[tuple[int, int, str]]]:
    """The calls on FlagTree's lines that pass a changed binding its old count: (line, count, binding) where the
    constructor resolves the receiver, (line, count, method) where only the name can."""
    found: list[tuple[int, int, ChangedBinding]] = []
    made: set[int] = set()  # lines whose receiver its constructor resolves: the name says no more there
    for klass, method, count, line in calls_of_bound(tree, modules, classes) if modules else []:
        made.add(line)
        binding = changed.get((klass, method))
        if line in lines and binding is not None and _fits_old_only(binding, count):
            found.append((line, count, binding))
    by_name = [(line, count, method) for method, count, line in calls_by_name(tree, set(named))
               if line in lines and line not in made and _fits_old_only(named[method], count)]
    return found, by_name


def _sited(context: DriftContext, path: str, line: int, count: int,
           binding: ChangedBinding) -> tuple[tuple[str, ...], list[str], Finding]:
    listed = lambda names: f"({', '.join(names)})"
    return (("pybind", binding.old_path, binding.new_path, binding.klass, binding.method), [f"{path}:{line}"], Finding(
        "call-no-overload", path,
        f"{binding.klass}.{binding.method}: FlagTree calls the pybind method with {count} argument(s); upstream's "
        f"binding in {binding.new_path} took {listed(binding.before)} and takes {listed(binding.after)} now, "
        f"none by name or with a default: each call raises TypeError (will not run as is)",
        "pass what the new binding takes at every site the finding lists", line,
        backend_of(context.owners.owners, path), related_path=binding.new_path,
        details={"declaration": binding.method, "class": binding.klass, "resolved_by": "pybind binding",
                 "symbols": [f"{binding.klass}.{binding.method}:signature:{binding.new_path}"]}))


def _changing_commits(context: DriftContext) -> Commits | None:
    """The upstream commits that changed the method's parameter count, with the tags' commits."""
    if context.range is None:
        return None
    old, new = context.range.old.oid, context.range.onto.oid

    def of(change: tuple[str, ...]) -> tuple[list[tuple[str, str]], int]:
        _, old_path, new_path, klass, method = change
        return changing_commits(context.repo, old, new, (old_path, new_path),
                                lambda text: _positional(bound_methods(text).get((klass, method))))
    return of
