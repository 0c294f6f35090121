"""Python bindings upstream removed (issue 33): FlagTree Python reaches C++ only through pybind11 names, which
C++ registers as string literals (`.def("create_x", ...)`, `ADD_PASS_WRAPPER_0("add_x", ...)`). A binding
registered in an upstream-changed binding file at the old tag and registered nowhere in the new tree is gone;
a FlagTree-added Python line that reads it as an attribute (`passes.ttir.add_x(pm)`) fails when it runs.

A name also defined by Python (`def add_x`) where the use's package reaches it on the upgraded tree (the new
tree and FlagTree's own lines: trunk's python/triton/, and a backend's own tree for a use inside it), or
registered by the backend's own C++ (third_party/<b>/), resolves there instead: no claim. A binding of one backend's
own module (third_party/<b>/) reaches trunk's Python and b's, never another backend's, which loads its own module
(issue 33, the 3.3 -> 3.4 move: amd's removed add_decompose_unsupported_conversions was taken for iluvatar's
`iluvatar.passes...` call of its own). Findings are symbol-removed (error),
one per binding and backend, with every site and the upstream commit. A backend whose build compiles no extension
module (the entry script's `ext_modules` is empty for it: cambricon's prebuilt libtriton on the 3.2 line) loads a
binding library not in the tree: its uses claim nothing.
"""
from __future__ import annotations

import ast
import re
import sys

from sync.git import changes_with_renames
from sync.facts.delta import fork_lines_where
from sync.model import Finding
from sync.facts.trees import FileTree, read_text
from sync.drift.context import DriftContext
from sync.facts.declindex import Decl, cpp_declarations
from sync.facts.delta import backend_of
from sync.facts.upstreamlog import with_upstream_commits
from sync.facts.filekinds import PYBIND_SOURCES, not_built
from sync.facts.layout import TRUNK, backend_root, is_third_party, third_party_owner
from sync.facts.buildconfigs import prebuilt_extension_backends
from sync.facts.astwalk import walk_nodes
from sync.facts.parsing import cpython_tree

BINDING_FILES = PYBIND_SOURCES
TRUNK_PYTHON = f"{TRUNK}/"


def _is_binding_source(path: str) -> bool:
    return path.endswith(BINDING_FILES) and ("python/src/" in path or "/python/" in path)


def stdlib_names(tree: ast.Module) -> set[str]:
    """Names a module binds to the standard library (`import weakref`, `from os import path`): an attribute
    read on one (`weakref.finalize`) is the library's, never a binding, whatever it is called (issue 33, the
    3.5.x -> 3.7 move: `weakref.finalize` was taken for the removed `finalize` binding)."""
    names = set()
    for node in walk_nodes(tree):
        if isinstance(node, ast.Import):
            names |= {alias.asname or alias.name.split(".")[0] for alias in node.names
                      if alias.name.split(".")[0] in sys.stdlib_module_names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module \
                and node.module.split(".")[0] in sys.stdlib_module_names:
            names |= {alias.asname or alias.name for alias in node.names}
    return names


def on_stdlib(attribute: ast.Attribute, stdlib: set[str]) -> bool:
    """Whether an attribute is read on a name bound to the standard library."""
    return isinstance(attribute.value, ast.Name) and attribute.value.id in stdlib


def registered(text: str) -> set[str]:
    """Python names a pybind11 source registers: the string literal first argument of `.def*(...)` or of an
    upper-case macro call (the pass wrappers); the `pybind` declarations of the file's declaration index."""
    if '"' not in text:
        return set()
    return {decl.name for decl in cpp_declarations(text) if decl.kind == "pybind"}


def backend_registrations(fork: FileTree, backend_dir: str, spelled: set[str]) -> list[Decl]:
    """The pybind registrations of a backend's own C++ (third_party/<b>/), in the files that quote one of the
    names spelled: what the extension module that backend builds itself binds."""
    return [decl for source in fork.paths() if source.startswith(backend_dir) and source.endswith(BINDING_FILES)
            for text in [read_text(fork, source) or ""] if any(f'"{name}"' in text for name in spelled)
            for decl in cpp_declarations(text) if decl.kind == "pybind"]


def removed_bindings(context: DriftContext) -> dict[str, str]:
    """Binding name -> the upstream file that registered it at the old tag, for bindings gone from the new tree."""
    old_names: dict[str, str] = {}
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if change.status != "added" and _is_binding_source(change.old_path):
            for name in registered(read_text(context.upstream_old, change.old_path) or ""):
                old_names.setdefault(name, change.old_path)
    if not old_names:
        return {}
    still = set()  # the quoted name anywhere in a new binding source: kept (a superset: claims nothing unsure)
    for path in context.upstream_new.paths():
        if _is_binding_source(path):
            text = read_text(context.upstream_new, path) or ""
            still |= {name for name in old_names if f'"{name}"' in text}
    return {name: path for name, path in old_names.items() if name not in still}


def binding_findings(context: DriftContext) -> list[Finding]:
    gone = removed_bindings(context)
    if not gone:
        return []
    lines_by_path = fork_lines_where(context.upstream_old, context.fork, lambda path: path.endswith(".py") and (
        path.startswith(TRUNK_PYTHON) or is_third_party(path))
        and not not_built(path))
    spelled = re.compile(r"\.\s*(" + "|".join(re.escape(name) for name in gone) + r")\b")
    uses: dict[str, list[tuple[str, int]]] = {}
    for path, lines in sorted(lines_by_path.items()):
        text = read_text(context.fork, path) or ""
        if not spelled.search(text):
            continue  # cheap: an attribute read of a binding spells `.name`
        try:
            tree = cpython_tree(text)
        except (SyntaxError, ValueError, RecursionError):
            continue
        stdlib = stdlib_names(tree)
        for node in walk_nodes(tree):  # ast.walk's nodes, without a generator per node
            if isinstance(node, ast.Attribute) and node.attr in gone and node.lineno in lines \
                    and not on_stdlib(node, stdlib):
                uses.setdefault(node.attr, []).append((path, node.lineno))
    if not uses:
        return []
    defined = python_definitions(context, set(uses))
    own: dict[str, set[str]] = {}  # backend dir -> the binding names its own C++ registers

    def registers(backend_dir: str) -> set[str]:
        if backend_dir not in own:
            own[backend_dir] = {decl.name for decl in backend_registrations(context.fork, backend_dir, set(uses))}
        return own[backend_dir]

    prebuilt = prebuilt_extension_backends(context.fork, context.upstream_old)
    groups: dict[tuple[str | None, str], list[str]] = {}
    for name, sites in uses.items():
        home = backend_root(gone[name])  # a backend's own pybind module: third_party/<b>/; trunk's: None
        for path, line in sites:
            root = backend_root(path)
            if third_party_owner(path) in prebuilt:
                continue  # its build ships a prebuilt binding library: what that registers is not read here
            if home is not None and root is not None and root != home:
                continue  # another backend's module: this backend's Python loads its own (iluvatar's, not amd's)
            if defined.get(name, set()) & {TRUNK_PYTHON, root}:
                continue  # a Python def the use can reach: it may mean that one
            if root is not None and name in registers(root):
                continue  # the backend registers the name itself
            groups.setdefault((backend_of(context.owners.owners, path), name), []).append(f"{path}:{line}")
    findings = []
    for (backend, name), where in sorted(groups.items(), key=lambda item: (item[0][0] or "", item[0][1])):
        path, _, first_line = where[0].rpartition(":")
        findings.append(Finding(
            "symbol-removed", path,
            f"{name}: Python binding removed from {gone[name]} (will not run as is: AttributeError); FlagTree uses "
            f"it at {len(where)} site(s): {', '.join(where[:5])}{' and more' if len(where) > 5 else ''}",
            "port these calls to what upstream does now", int(first_line), backend, related_path=gone[name],
            details={"declaration": name, "sites": where, "symbols": [f"{name}:removed:{gone[name]}"],
                     "replacements": {}}))
    if findings and context.range is not None:
        findings = with_upstream_commits(context.repo, context.range.old.oid, context.range.onto.oid, findings)
    return findings


def python_definitions(context: DriftContext, names: set[str]) -> dict[str, set[str]]:
    """name -> the roots (python/triton/, third_party/<b>/) where a Python def of it can be what an attribute
    of that name means: trunk's package on the new tree, and FlagTree's own lines in trunk's package or a
    backend's tree. A use in trunk's package reaches python/triton/; one in a backend's tree reaches that too and
    its own third_party/<b>/ (a backend's copy of the interpreter is not trunk's). The upgraded tree is the new one
    plus FlagTree's own lines: a def the fork holds only because upstream had it at the old tag (the interpreter's
    builder mirroring a removed binding) goes with the upgrade. A test's stub is no definition."""
    if not names:
        return {}
    defines = re.compile(r"\bdef\s+(" + "|".join(re.escape(name) for name in sorted(names)) + r")\b")
    built = lambda path: path.endswith(".py") and not not_built(path)
    defined: dict[str, set[str]] = {}
    for path in context.upstream_new.paths():
        if built(path) and path.startswith(TRUNK_PYTHON):
            for name in defines.findall(read_text(context.upstream_new, path) or ""):
                defined.setdefault(name, set()).add(TRUNK_PYTHON)
    for path, own_lines in fork_lines_where(context.upstream_old, context.fork, built).items():
        root = TRUNK_PYTHON if path.startswith(TRUNK_PYTHON) else backend_root(path)
        if root is None:
            continue  # outside trunk's package and every backend's tree: no use reaches it
        text = read_text(context.fork, path) or ""
        for match in defines.finditer(text):
            if text.count("\n", 0, match.start()) + 1 in own_lines:
                defined.setdefault(match[1], set()).add(root)
    return defined
