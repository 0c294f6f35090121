"""What each backend's spec/triton/__init__.py exports for spec and spec_func to find."""
from __future__ import annotations

from dataclasses import dataclass, field
import posixpath
from posixpath import join, normpath
from typing import Callable

from sync.facts.layout import backend_spec_dir, spec_files
from sync.facts.trees import FileTree, read_text
from sync.facts.pyfacts import parse_module_facts
from sync.facts.pysource import FunctionFacts, ModuleFacts


def spec_root(backend: str) -> str:
    return f"{backend_spec_dir(backend)}/triton"


def python_roots(tree: FileTree, backend: str) -> list[str]:
    """Where the backend's mirror of python/triton lives in this tree, in any layout FlagTree has used."""
    roots = {spec_file.path[: len(spec_file.path) - len(spec_file.rel)].rstrip("/")
             for spec_file in spec_files(tree, {backend}) if spec_file.area == "triton"}
    return sorted(roots) or [spec_root(backend)]


def entry_modules(tree: FileTree, backend: str) -> list[tuple[str, str]]:
    """(package dir, __init__.py) of the modules spec/spec_func look in: each mirror root's __init__.py, and
    for the seed's layout the legacy spec/__init__.py one level up (older branches keep the exports there)."""
    found = []
    for root in python_roots(tree, backend):
        found.append((root, f"{root}/__init__.py"))
        if root == spec_root(backend):
            legacy = root.rpartition("/")[0]
            found.append((legacy, f"{legacy}/__init__.py"))
    return found


@dataclass(frozen=True)
class ExportedFunction:
    name: str
    module_path: str | None  # the file that defines it, when found
    facts: FunctionFacts | None
    line: int | None  # where the entry module exports it


@dataclass
class BackendExports:
    backend: str
    entry: str
    functions: dict[str, ExportedFunction] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # modules that do not parse


def _module_file(tree: FileTree, package_dir: str, module: str, level: int) -> str | None:
    base = package_dir
    for _ in range(level - 1):
        base = base.rpartition("/")[0]
    stem = normpath(join(base, *module.split("."))) if module else base
    for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
        if tree.exists(candidate):
            return candidate
    return None


def _star_exports(tree: FileTree, exports: BackendExports, module_path: str, module_facts: ModuleFacts,
                  facts_of: Callable[[str], ModuleFacts]) -> None:
    """What `from .m import *` binds: m's public functions and the public names m itself imports from the
    backend's own modules (a package __init__.py re-exporting its submodules' functions)."""
    for name, function in module_facts.functions.items():
        if "." not in name and not name.startswith("_"):
            exports.functions.setdefault(name, ExportedFunction(name, module_path, function, function.line))
    package_dir = posixpath.dirname(module_path)
    for imported in module_facts.imported_names:
        if imported.level == 0 or imported.name == "*" or imported.local.startswith("_"):
            continue
        source = _module_file(tree, package_dir, imported.module, imported.level)
        reexported = facts_of(source).functions.get(imported.name) if source else None
        if reexported is not None:
            exports.functions.setdefault(imported.local, ExportedFunction(imported.local, source, reexported,
                                                                          reexported.line))


def backend_exports(tree: FileTree, backend: str) -> BackendExports:
    entries = entry_modules(tree, backend)
    exports = BackendExports(backend, entries[0][1])
    parsed: dict[str, ModuleFacts] = {}

    def facts_of(path: str) -> ModuleFacts:
        if path not in parsed:
            parsed[path] = parse_module_facts(path, read_text(tree, path) or "")
            if parsed[path].error:
                exports.errors.append(f"{path}: {parsed[path].error}")
        return parsed[path]

    for package_dir, entry in entries:
        if not tree.exists(entry):
            continue
        facts = facts_of(entry)
        for qualname, function in facts.functions.items():
            if "." not in qualname:
                exports.functions[qualname] = ExportedFunction(qualname, entry, function, function.line)
        for imported in facts.imported_names:
            if imported.level == 0:
                continue  # absolute imports of the entry are not the backend's own definitions
            module_path = _module_file(tree, package_dir, imported.module, imported.level)
            module_facts = facts_of(module_path) if module_path else None
            if imported.name == "*":
                if module_facts is not None and module_path is not None:
                    _star_exports(tree, exports, module_path, module_facts, facts_of)
                continue
            found = module_facts.functions.get(imported.name) if module_facts else None
            exports.functions[imported.local] = ExportedFunction(imported.local, module_path, found, imported.line)
    return exports
