"""What each backend's spec/triton/__init__.py exports for spec and spec_func to find."""
from __future__ import annotations

from dataclasses import dataclass, field
from posixpath import join, normpath

from ..trees import FileTree, read_text
from .pyfacts import FunctionFacts, parse_module_facts


def spec_root(backend: str) -> str:
    return f"third_party/{backend}/backend/spec/triton"


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


def backend_exports(tree: FileTree, backend: str) -> BackendExports:
    root = spec_root(backend)
    exports = BackendExports(backend, f"{root}/__init__.py")
    text = read_text(tree, exports.entry)
    if text is None:
        return exports
    facts = parse_module_facts(exports.entry, text)
    if facts.error:
        exports.errors.append(f"{exports.entry}: {facts.error}")
        return exports
    for qualname, function in facts.functions.items():
        if "." not in qualname:
            exports.functions[qualname] = ExportedFunction(qualname, exports.entry, function, function.line)
    parsed: dict[str, object] = {}
    for imported in facts.imported_names:
        if imported.level == 0:
            continue  # absolute imports of the entry are not the backend's own definitions
        module_path = _module_file(tree, root, imported.module, imported.level)
        function = None
        if module_path is not None:
            if module_path not in parsed:
                module_facts = parse_module_facts(module_path, read_text(tree, module_path) or "")
                if module_facts.error:
                    exports.errors.append(f"{module_path}: {module_facts.error}")
                parsed[module_path] = module_facts
            function = parsed[module_path].functions.get(imported.name)  # type: ignore[attr-defined]
        exports.functions[imported.local] = ExportedFunction(imported.local, module_path, function, imported.line)
    return exports
