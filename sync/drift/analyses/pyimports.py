"""Python imports of names upstream removed: a `from triton.x import N` on FlagTree's lines of a backend's tree
(trunk's own files are symbol drift's, which reads every name on them) where trunk's module
triton.x defined N at the old tag and defines it nowhere at the new one (nor re-exports it, nor has a submodule N),
or the module itself is gone. The import raises ImportError when the module loads: symbol-removed, an error
(issue 33; on the 3.2 -> 3.3 move, which the rule was not developed on, ascend's backend compiler imports
AttrsDescriptor from triton.backends.compiler, which 3.3 removed).

The module is trunk's only where the importing backend does not install its own copy of it (an overlay or a setup or
package copy of that trunk file, or third_party/<b>/python/triton/...): a backend's own copy is what it imports. A
name FlagTree's own lines define in the trunk module survives the replay. An import under `try` with an
ImportError (or broader) handler, a module that defines `__getattr__` or star-imports, and relative imports from a
backend's own package claim nothing; nor do tests and examples, which the package never imports. Nor does a
trunk module that only some backends' builds can import (facts/importers), each loading its own copy of the
module that keeps the name.

A call through a module alias on FlagTree's lines, in trunk's files too (`import triton.language.semantic as s`,
then `s.to_tensor(x)`: the shared walk resolves the callee through the file's imports), of a function the module
defined at the old tag and no longer defines is the same removal: the call raises AttributeError when it runs,
also symbol-removed. Where a class of the module now defines a method of that name, the finding says so (the
3.3 -> 3.4 move: ae6d4641d moved semantic.py's functions into `TritonSemantic`)."""
from __future__ import annotations

import ast
import re

from sync.drift.context import DriftContext
from sync.facts.declindex import declarations_of
from sync.facts.delta import PY, backend_of, fork_added_lines
from sync.facts.pyblobs import python_fact
from sync.facts.parsing import cpython_tree
from sync.facts.filekinds import is_test_file, not_built
from sync.facts.importers import declared_where_imported
from sync.facts.layout import PACKAGE_COPY, SETUP_COPY, backend_root, is_third_party, third_party_owner
from sync.facts.pymodules import TRUNK_PACKAGE, absolute, module_files, module_of, package_of
from sync.git import changes_with_renames
from sync.facts.roles import OVERLAY
from sync.facts.trees import FileTree, read_text
from sync.facts.upstreamlog import with_upstream_commits
from sync.model import Finding

_INSTALLED_IN_PLACE = frozenset({OVERLAY, SETUP_COPY, PACKAGE_COPY})
_CAUGHT = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})
Site = tuple[str | None, str, str, bool]  # backend, module, name, whether called through an alias (else imported)
_IMPORT_FROM = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import\b", re.MULTILINE)


def _module_path(tree: FileTree, module: str) -> str | None:
    return next((path for path in module_files(module) if tree.exists(path)), None)


def _names(tree: FileTree, path: str) -> set[str] | None:
    """Top-level names the module binds; None when it resolves names at run time (__getattr__, a star import)."""
    decls = declarations_of(path, read_text(tree, path) or "")
    if any(decl.name in ("__getattr__", "*") and not decl.scope for decl in decls):
        return None
    return {decl.name for decl in decls if not decl.scope}


def _guarded_lines(text: str) -> set[int]:
    """Lines of imports under a `try` whose handlers catch a failed import (every line, when the text does not
    parse: nothing is claimed of it)."""
    try:
        tree = cpython_tree(text)
    except (SyntaxError, ValueError, RecursionError):
        return set(range(1, text.count("\n") + 2))
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                handler.type is None or any(isinstance(name, ast.Name) and name.id in _CAUGHT
                                            for name in ast.walk(handler.type)) for handler in node.handlers):
            lines.update(inner.lineno for statement in node.body for inner in ast.walk(statement)
                         if isinstance(inner, (ast.Import, ast.ImportFrom)))
    return lines


def removed_import_findings(context: DriftContext) -> list[Finding]:
    old, new, fork = context.upstream_old, context.upstream_new, context.fork
    in_place = [item for item in context.classified
                if (item.role in _INSTALLED_IN_PLACE or item.file.layout in _INSTALLED_IN_PLACE) and item.trunk_path]
    replaced = {(item.file.backend, item.trunk_path) for item in in_place}
    # a file that loads in place of a trunk module imports relatively from that module's package
    stands_for = {item.file.path: item.trunk_path for item in in_place if (item.trunk_path or "").endswith(".py")}
    # only a module upstream changed or deleted can have lost a name: a file that imports from none is not parsed
    changed = {module_of(change.old_path) for change in changes_with_renames(old, new)
               if change.old_path.startswith(TRUNK_PACKAGE) and change.old_path.endswith(".py")
               and not is_third_party(change.old_path) and change.status != "added"}
    if not changed:
        return []
    parts = [module.split(".") for module in changed]
    tails = {".".join(names[cut:]) for names in parts for cut in range(len(names))} | {""}  # relative spellings
    added = fork_added_lines(old, fork)
    # where fixes land: the upgraded branch when one was given (an in-memory replay keeps the FlagTree branch's files)
    upgraded = context.backend_files if context.backend_files is not fork else None
    sites: dict[Site, list[str]] = {}  # (backend, module, name, through a call) -> path:line
    where: dict[Site, tuple[str, str]] = {}  # -> (module's old path, why)
    gone: dict[tuple[str, str, str], str | None] = {}  # (module, its old path, name) -> why the import fails
    for path, lines in sorted(added.items()):
        if not path.endswith(PY) or not_built(path) or is_test_file(path):
            continue  # tests and examples are no part of what loads
        text = read_text(fork, path) or ""
        still_called: set[tuple[str, str]] | None = None  # on the upgraded branch: read once a call proves gone
        for line, module, name in _alias_calls(text, lines, changed):
            removed = _removed(context, path, module, name, gone, replaced)
            if removed is None:
                continue
            if upgraded is not None and still_called is None:
                still_called = {(m, n) for _, m, n in _alias_calls(read_text(upgraded, path) or "", None, changed)}
            if still_called is not None and (module, name) not in still_called:
                continue  # the upgraded branch no longer calls it: fixed there
            _note(context, path, line, module, name, removed, sites, where, calls=True)
        if not is_third_party(path):
            continue  # a trunk file's imports are symbol drift's, which reads every name on them
        spelled = _IMPORT_FROM.findall(text)
        if not any(module in changed or module.startswith(".") and module.lstrip(".") in tails for module in spelled):
            continue  # cheap: no `from M import` names a module upstream changed
        trunk_path = stands_for.get(path)
        package = package_of(trunk_path) if trunk_path else ""
        imports = [(line, target) for line, target in _from_imports(path, text, package)
                   if line in lines and target.startswith("triton.")]
        guarded: set[int] | None = None
        for line, target in imports:
            module, _, name = target.rpartition(".")
            removed = _removed(context, path, module, name, gone, replaced) if name != "*" else None
            if removed is None:
                continue
            if guarded is None:
                guarded = _guarded_lines(text)  # parsed only once an import proves gone: most never do
            if line in guarded:
                continue
            if upgraded is not None and target not in {found for _, found in _from_imports(
                    path, read_text(upgraded, path) or "", package)}:
                continue  # the upgraded branch no longer imports it: fixed there
            _note(context, path, line, module, name, removed, sites, where)
    findings = []
    for (backend, module, name, calls), found in sites.items():
        old_path, why = where[backend, module, name, calls]
        first, _, first_line = found[0].rpartition(":")
        failure = "will not run as is: AttributeError" if calls else "will not import as is: ImportError"
        findings.append(Finding(
            "symbol-removed", first,
            f"{name}: {why} ({failure}); FlagTree {'calls' if calls else 'imports'} it at {len(found)} site(s): "
            f"{', '.join(found[:5])}{' and more' if len(found) > 5 else ''}",
            "import it from where upstream moved it, or port the code that used it", int(first_line), backend,
            related_path=old_path,
            details={"declaration": name, "module": module, "sites": found,
                     "symbols": [f"{name}:removed:{old_path}"], "replacements": {}}))
    if findings and context.range is not None:
        findings = with_upstream_commits(context.repo, context.range.old.oid, context.range.onto.oid, findings)
    return findings


def _alias_calls(text: str, lines: frozenset[int] | None, changed: set[str]) -> list[tuple[int, str, str]]:
    """(line, module, name) of each call `alias.name(...)` on the lines (None: anywhere) whose alias the file
    imports as one of the modules upstream changed (the callee as the shared walk resolved it through the
    file's imports)."""
    found = []
    for call in python_fact("calls", text):
        if (lines is None or call.line in lines) and call.attribute and call.target.endswith("." + call.attribute):
            module = call.target[:-len(call.attribute) - 1]
            if module in changed:
                found.append((call.line, module, call.attribute))
    return found


def _removed(context: DriftContext, path: str, module: str, name: str, gone: dict[tuple[str, str, str], str | None],
             replaced: set[tuple[str, str | None]]) -> tuple[str, str] | None:
    """(the module's old path, why) where module.name is trunk's, as the file reaches it, and gone at the new tag."""
    old_path = _module_path(context.upstream_old, module)
    home = backend_root(path)
    if old_path is None or (third_party_owner(path), old_path) in replaced \
            or (home is not None and context.fork.exists(home + old_path)):
        return None  # not trunk's module at the old tag, or the backend installs its own copy of it
    if (module, old_path, name) not in gone:  # one answer per name, however many files use it
        gone[module, old_path, name] = _gone(context, module, old_path, name)
    why = gone[module, old_path, name]
    if why is None or (home is None and declared_where_imported(context.fork, context.upstream_old, path, old_path,
                                                               name, context.serving_file)):
        return None  # kept, or only builds that load their own copy of the module, one that keeps the name, import path
    return old_path, why


def _note(context: DriftContext, path: str, line: int, module: str, name: str, removed: tuple[str, str],
          sites: dict[Site, list[str]], where: dict[Site, tuple[str, str]], calls: bool = False) -> None:
    """Record a site of module.name, which upstream removed (removed: the module's old path, why)."""
    key = (backend_of(context.owners.owners, path), module, name, calls)
    sites.setdefault(key, []).append(f"{path}:{line}")
    if key not in where:  # what the finding says, once for all its sites
        old_path, why = removed
        where[key] = (old_path, why + _moved_into_class(context, module, name) if calls else why)


def _moved_into_class(context: DriftContext, module: str, name: str) -> str:
    """'; <Class>.<name> is a method now' where a class of the module at the new tag defines it."""
    new_path = _module_path(context.upstream_new, module)
    if new_path is None:
        return ""
    classes = sorted({decl.scope for decl in declarations_of(new_path, read_text(context.upstream_new, new_path) or "")
                      if decl.kind == "def" and decl.name == name and decl.scope and "." not in decl.scope})
    return f"; {', '.join(f'{klass}.{name}' for klass in classes)} is a method now" if classes else ""


def _from_imports(path: str, text: str, package: str) -> list[tuple[int, str]]:
    """(line, dotted name) of each `from ... import` of the text, a relative one made absolute from package."""
    return [(decl.line, absolute(decl.target, package) if package else decl.target)
            for decl in declarations_of(path, text) if decl.kind == "import" and "from" in decl.flags]


def _gone(context: DriftContext, module: str, old_path: str, name: str) -> str | None:
    """Why `from module import name` fails at the new tag, or None when it still works there (or did not before)."""
    old, new = context.upstream_old, context.upstream_new
    old_names = _names(old, old_path)
    if old_names is None or name not in old_names:
        return None  # resolved at run time, or upstream never had it: not upstream's removal
    if any(old.exists(candidate) for candidate in module_files(f"{module}.{name}")):
        return None  # a submodule: moved modules are the replay's business, not an import of a name
    new_path = _module_path(new, module)
    if new_path is None:
        return f"module {module} ({old_path}) is gone upstream"
    new_names = _names(new, new_path)
    if new_names is None or name in new_names:
        return None
    fork_path = _module_path(context.fork, module)
    if fork_path is not None:  # FlagTree's own definition in the trunk module survives the replay
        own = set(fork_added_lines(old, context.fork).get(fork_path, frozenset()))
        if any(decl.name == name and not decl.scope and decl.line in own
               for decl in declarations_of(fork_path, read_text(context.fork, fork_path) or "")):
            return None
    return f"{module} ({new_path}) no longer defines it"
