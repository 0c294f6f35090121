"""Abstract methods upstream added to a trunk base class that a FlagTree class derived from it does not define
(issue 33, the 3.4.x -> 3.6.0 move: 355dc4726 made DriverBase.map_python_to_cpp_type abstract, and tsingmicro's
TXDADriver(GPUDriver) defines none, so creating the driver raises TypeError and no kernel compiles).

Upstream side: a trunk class (python/triton/, at the new tag) and its trunk ancestors declare, in their own bodies, an
@abstractmethod that the same class did not declare abstract at the old tag, and no class between it and the one
FlagTree derives from defines it. FlagTree side: a class on FlagTree's lines whose one base resolves through the
file's imports to that trunk class (overrides' resolution), that declares no abstract method itself (an abstract
class of its own is not instantiated) and defines no method of that name. No claim where the backend ships its own
copy of the base's module (third_party/<b>/python/triton/...: its build installs that copy) or the class has
several bases (another may provide it). Kind abstract-method-missing, an error.
"""
from __future__ import annotations

import ast
import re

from sync.drift.analyses.overrides import class_bases, resolve_class
from sync.drift.context import DriftContext
from sync.facts.astwalk import walk_nodes
from sync.facts.declindex import Decl, declarations_of
from sync.facts.parsing import Unparseable, parsed_ast
from sync.facts.delta import PY, backend_of, fork_added_lines
from sync.facts.filekinds import NAMING_SUFFIXES
from sync.facts.layout import is_third_party
from sync.facts.pymodules import TRUNK_PACKAGE, module_files, package_of
from sync.git import changes_with_renames
from sync.facts.trees import FileTree, read_text
from sync.model import Finding

_DEPTH = 4  # trunk ancestors followed above the base
# Files that can import or load a module by name: code (Python, and C/C++ through the C API) and build files.


def _class(tree: FileTree, dotted: str) -> tuple[str, tuple[Decl, ...], Decl] | None:
    """(file, its declarations, the class) of a trunk class module.Class in the tree."""
    module, _, name = dotted.rpartition(".")
    for path in module_files(module):
        text = read_text(tree, path)
        if text is None:
            continue
        decls = declarations_of(path, text)
        found = next((decl for decl in decls if decl.kind == "class" and decl.name == name and not decl.scope), None)
        return (path, decls, found) if found is not None else None
    return None


def _methods(decls: tuple[Decl, ...], name: str) -> dict[str, Decl]:
    """What a class body binds: its defs, and names it assigns (`f = staticmethod(g)` defines f too)."""
    return {decl.name: decl for decl in decls if decl.kind in ("def", "assign") and decl.scope == name}


def gained_abstracts(context: DriftContext, dotted: str) -> dict[str, str]:
    """Method -> the trunk class that declares it abstract at the new tag and did not at the old one, for a
    trunk class and its ancestors, where nothing between defines it."""
    return _abstracts(context.upstream_new, dotted, context.upstream_old)


def _abstracts(tree: FileTree, dotted: str, before_tree: FileTree | None = None) -> dict[str, str]:
    """Method -> the trunk class of the tree that declares it abstract, for a trunk class and its ancestors, where
    nothing between defines it; with before_tree, only what that class did not declare abstract there."""
    found: dict[str, str] = {}
    defined: set[str] = set()
    pending: list[str] = [dotted]
    seen: set[str] = set()
    while pending and len(seen) <= _DEPTH:
        current = pending.pop(0)
        if current in seen:
            continue
        seen.add(current)
        now = _class(tree, current)
        before = _class(before_tree, current) if before_tree is not None else None
        if now is None:
            continue
        path, decls, klass = now
        methods = _methods(decls, klass.name)
        was = _methods(before[1], before[2].name) if before is not None else {}
        for name, decl in methods.items():
            if "abstract" in decl.flags and name not in defined and name not in found \
                    and not (name in was and "abstract" in was[name].flags):
                found[name] = current
        defined |= {name for name, decl in methods.items() if "abstract" not in decl.flags}
        local = {decl.name for decl in decls if decl.kind == "class" and not decl.scope}
        module = current.rpartition(".")[0]
        pending += [f"{module}.{base.strip()}" for base in klass.target.split(",") if base.strip() in local]
        for base in class_bases(decls, klass, package_of(path)):
            resolved = resolve_class(tree, base)
            if resolved is not None:
                pending.append(resolved)
    return found


def _base_names(context: DriftContext) -> set[str]:
    """The names of the trunk classes a FlagTree class could derive from to meet a gained abstract method: the
    classes of each trunk module that declares an abstract method at the new tag it did not, and the trunk
    classes whose bases name one of them (cheap: a FlagTree file names its base; most moves gain none)."""
    names: set[str] = set()
    for path in _gaining_modules(context):
        names |= {decl.name for decl in declarations_of(path, read_text(context.upstream_new, path) or "")
                  if decl.kind == "class" and not decl.scope}
    if names:
        spelled = re.compile(r"^\s*class\s+(\w+)\s*\(([^)]*)\)", re.MULTILINE)
        for path in context.upstream_new.paths():
            if path.startswith(TRUNK_PACKAGE) and path.endswith(PY) and not is_third_party(path):
                names |= {match[1] for match in spelled.finditer(read_text(context.upstream_new, path) or "")
                          if any(name in match[2] for name in names)}
    return names


def _gaining_modules(context: DriftContext) -> list[str]:
    """The trunk modules upstream changed that declare an abstract method at the new tag they did not."""
    found: list[str] = []
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if change.new_path is None or not change.new_path.startswith(TRUNK_PACKAGE) or not change.new_path.endswith(PY) \
                or is_third_party(change.new_path):
            continue
        after = read_text(context.upstream_new, change.new_path) or ""
        if "abstractmethod" not in after:
            continue
        before = read_text(context.upstream_old, change.old_path) or "" if change.status != "added" else ""
        now = {(decl.scope, decl.name) for decl in declarations_of(change.new_path, after) if "abstract" in decl.flags}
        was = {(decl.scope, decl.name) for decl in declarations_of(change.old_path, before) if "abstract" in decl.flags}
        if now - was:
            found.append(change.new_path)
    return found


def abstract_findings(context: DriftContext) -> list[Finding]:
    candidates = _base_names(context)
    if not candidates:
        return []
    findings: list[Finding] = []
    gained: dict[str, dict[str, str]] = {}
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if not path.endswith(PY):
            continue
        text = read_text(context.fork, path) or ""
        if "class " not in text or not any(name in text for name in candidates):
            continue  # cheap: a class derived from one of them names its base
        decls = declarations_of(path, text)
        for klass in (decl for decl in decls if decl.kind == "class" and decl.target and decl.line in lines):
            bases = class_bases(decls, klass)
            if len(bases) != 1 or len([b for b in klass.target.split(",") if b.strip()]) != 1:
                continue
            resolved = resolve_class(context.upstream_new, bases[0])
            if resolved is None:
                continue
            if any(context.own_copy(path, module_path) for module_path in module_files(resolved.rpartition(".")[0])):
                continue  # the backend installs or loads its own version of the base's module
            qualified = f"{klass.scope}.{klass.name}" if klass.scope else klass.name
            own = _methods(decls, qualified)
            if any("abstract" in decl.flags for decl in own.values()):
                continue  # an abstract class of FlagTree's own: its subclasses are what gets created
            if resolved not in gained:
                gained[resolved] = gained_abstracts(context, resolved)
            missing = {method: declaring for method, declaring in gained[resolved].items() if method not in own}
            if missing and never_imported(context.fork, path):
                continue  # nothing creates it
            if missing:
                shown = ", ".join(f"{method} ({declaring})" for method, declaring in sorted(missing.items()))
                # Already abstract at the old tag: the backend did not run before this move either (iluvatar's and
                # xpu's drivers on triton_v3.2.x and triton_v3.4.x); the new method is still one more to define.
                was = resolve_class(context.upstream_old, bases[0])
                before = sorted(set(_abstracts(context.upstream_old, was)) - set(own)) if was is not None else []
                findings.append(Finding(
                    "abstract-method-missing", path,
                    f"{klass.name} derives from {resolved}, and trunk at the new tag declares abstract what it does not "
                    f"define: {shown}; creating a {klass.name} raises TypeError (will not run as is)"
                    + (f"; it was abstract at the old tag already (it defines no {', '.join(before)})"
                       if before else ""),
                    line=klass.line, backend=backend_of(context.owners.owners, path),
                    related_path=next(iter(module_files(next(iter(missing.values())).rpartition(".")[0])), None),
                    details={"class": klass.name, "base": resolved, "methods": sorted(missing),
                             **({"abstract_at_old": before} if before else {})}))
    return findings


def never_imported(fork: FileTree, path: str) -> bool:
    """Whether path is a backend module that no other code or build file of the fork names (see the module's
    text). In Python only an import of the module or a string can load it: `import x.cpu_driver`, `from
    .cpu_driver import X`, `from . import cpu_driver`, `import_module("x.cpu_driver")`; a name bound by `as
    cpu_driver` is another module's alias (the 3.3.x cpu backend's `import triton.backends.cpu.driver as
    cpu_driver`). A file that does not parse counts as naming it."""
    if not is_third_party(path):
        return False
    directory, _, name = path.rpartition("/")
    module = directory.rpartition("/")[2] if name == "__init__.py" else name.removesuffix(".py")
    word = re.compile(rf"(?<!\w){re.escape(module)}(?!\w)")
    for other in fork.paths():
        if other != path and other.endswith(NAMING_SUFFIXES):
            text = read_text(fork, other) or ""
            if module in text and word.search(text) and (not other.endswith(".py") or _loads(text, module, word)):
                return False
    return True


def _loads(text: str, module: str, word: re.Pattern[str]) -> bool:
    """Whether Python text imports the module by name, or spells it in a string."""
    tree = parsed_ast(text)
    if isinstance(tree, Unparseable):
        return True
    for node in walk_nodes(tree):
        if isinstance(node, ast.Import) and any(module in alias.name.split(".") for alias in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (module in (node.module or "").split(".")
                                                 or any(alias.name == module for alias in node.names)):
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and word.search(node.value):
            return True
    return False
