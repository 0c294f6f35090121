"""Attribute a path to who must look at it: a backend, FlagTree core, or shared trunk."""
from __future__ import annotations

from posixpath import basename

from ..layout import TRUNK, configured_roots, owning_backend, package_of, spec_files, trunk_rel
from ..trees import FileTree, read_text
from .backends import BackendExports, backend_exports
from .cpp import backend_macros, mentions_spec_macro
from .callsites import TrunkHooks, index_trunk_hooks

CORE = "flagtree-core"
SHARED = "shared-trunk"
_CORE_FILES = {f"{TRUNK}/flagtree_spec.py", f"{TRUNK}/_flagtree_backend.py", "setup.py", "pyproject.toml",
               "python/setup.py", "python/pyproject.toml"}
_CORE_PREFIXES = ("cmake/", ".github/", ".ci/")


class OwnerIndex:
    """Built once from the fork tree; answers owners(path) without reading git again."""

    def __init__(self, tree: FileTree, hooks: TrunkHooks | None = None,
                 exports: dict[str, BackendExports] | None = None) -> None:
        self.tree = tree
        self.extra = configured_roots(tree)
        self.hooks = hooks if hooks is not None else index_trunk_hooks(tree)
        self.backends = sorted({spec_file.backend for spec_file in spec_files(tree)})
        if exports is None:
            exports = {backend: backend_exports(tree, backend) for backend in self.backends}
        self.exports = {backend: set(exports[backend].functions) for backend in self.backends if backend in exports}
        self.macros = {backend: set(backend_macros(tree, backend)) for backend in self.backends}
        self.overlaid: dict[str, set[str]] = {}  # trunk path -> backends that mirror it
        self.overlaid_packages: dict[str, set[str]] = {}  # trunk package dir -> backends with files in it
        for spec_file in spec_files(tree):
            trunk_path = spec_file.trunk_path
            if trunk_path:
                self.overlaid.setdefault(trunk_path, set()).add(spec_file.backend)
            if spec_file.area == "triton":
                self.overlaid_packages.setdefault(package_of(spec_file.rel), set()).add(spec_file.backend)

    def owners(self, path: str) -> list[str]:
        backend = owning_backend(path, self.extra)
        if backend is not None:  # everything under third_party/<b>/, and each spec tree, is the backend's
            return [backend]
        if path in _CORE_FILES or basename(path) == "CMakeLists.txt" or path.startswith(_CORE_PREFIXES):
            return [CORE]
        found = set(self.overlaid.get(path, set()))
        facts = self.hooks.facts.get(path)
        if facts is not None:
            names = {site.name for site in facts.hooks if site.name}
            found |= {backend for backend, exported in self.exports.items() if names & exported}
            rel = trunk_rel(path) or ""
            if rel.endswith("__init__.py") and any(site.kind == "spec_path" for site in facts.hooks):
                found |= self.overlaid_packages.get(package_of(rel), set())
        if not path.endswith(".py") and any(self.macros.values()):
            text = read_text(self.tree, path) or ""
            if mentions_spec_macro(text):
                found |= {backend for backend, macros in self.macros.items() if any(m in text for m in macros)}
        return sorted(found) or [SHARED]
