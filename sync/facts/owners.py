"""Attribute a path to who must look at it: a backend, FlagTree core, or shared trunk."""
from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatch
from posixpath import basename

from sync.facts.layout import (TRUNK, backend_names, commit_tag_owners, configured_owners, configured_roots,
                      enclosing_gate_groups, gate_groups, is_under, owning_backend, package_of, spec_files,
                      third_party_groups, trunk_rel)
from sync.errors import SyncError
from sync.facts.trees import FileTree, read_text
from sync.facts.backends import BackendExports, backend_exports
from sync.facts.cpp import backend_macros, mentions_spec_macro
from sync.facts.callsites import TrunkHooks, index_trunk_hooks
from sync.model.report import CI, CORE, SHARED

_CORE_FILES = {f"{TRUNK}/flagtree_spec.py", f"{TRUNK}/_flagtree_backend.py", "setup.py", "pyproject.toml",
               "python/setup.py", "python/pyproject.toml"}
_CORE_PREFIXES = ("cmake/", ".github/", ".ci/")
BUILT_IN_GROUPS = (CORE, SHARED, CI)  # the report's own groups


def require_distinct_groups(tree: FileTree, backends: Sequence[str]) -> None:
    """Refuse a backend or third_party/ directory named like one of the report's built-in groups: its findings
    and conflicts would merge silently into that group's row."""
    clashing = sorted((set(backends) | set(third_party_groups(tree))) & set(BUILT_IN_GROUPS))
    if clashing:
        name = clashing[0]
        raise SyncError(f"{tree.label}: the directory third_party/{name}/ (or a spec tree of backend {name}) is named "
                        f"like the report's built-in group {name}, and the two would merge into one row: rename the "
                        "backend's directory")


class OwnerIndex:
    """Built once from the fork tree; answers owners(path) without reading git again."""

    def __init__(self, tree: FileTree, hooks: TrunkHooks | None = None,
                 exports: dict[str, BackendExports] | None = None) -> None:
        self.tree = tree
        self.extra = configured_roots(tree)
        self.hooks = hooks if hooks is not None else index_trunk_hooks(tree)
        self.backends = backend_names(tree)  # a spec tree, or files a setup helper installs in trunk's place
        require_distinct_groups(tree, self.backends)
        if exports is None:
            exports = {backend: backend_exports(tree, backend) for backend in self.backends}
        self.exports = {backend: set(exports[backend].functions) for backend in self.backends if backend in exports}
        self.macros = {backend: set(backend_macros(tree, backend)) for backend in self.backends}
        self.groups = frozenset(third_party_groups(tree)) | frozenset(self.backends)  # names a gate may carry
        self.mapped = configured_owners(tree)  # group -> path globs
        self.tags = commit_tag_owners(tree)  # commit subject tag -> group
        self._texts: dict[str, str] = {}
        self.overlaid: dict[str, set[str]] = {}  # trunk path -> backends that mirror it
        self.overlaid_packages: dict[str, set[str]] = {}  # trunk package dir -> backends with files in it
        for spec_file in spec_files(tree):
            trunk_path = spec_file.trunk_path
            if trunk_path:
                self.overlaid.setdefault(trunk_path, set()).add(spec_file.backend)
            if spec_file.area == "triton":
                self.overlaid_packages.setdefault(package_of(spec_file.rel), set()).add(spec_file.backend)

    def owners(self, path: str, summary: str = "", flagtree_side: Sequence[str] = ()) -> list[str]:
        """Every group whose code is on the FlagTree side of `path`: the backend owning its directory; else the
        groups the repository maps it to (CI by default), FlagTree core for its build files, the backends whose
        hooks, overlays or spec macros it serves, the groups whose gates it holds, and, given the commit subject
        `summary`, the groups of its configured tags and of the tags that name a group. Given the lines of a
        conflict's FlagTree side, a gate counts only where it encloses or sits in them; else any gate the file holds
        counts. shared-trunk is what is left."""
        backend = owning_backend(path, self.extra)
        if backend is not None:  # everything under third_party/<b>/, and each spec tree, is the backend's
            return [backend]
        found = {group for group, globs in self.mapped.items() if any(fnmatch(path, glob) for glob in globs)}
        if not found and (path in _CORE_FILES or basename(path) == "CMakeLists.txt" or path.startswith(_CORE_PREFIXES)):
            found.add(CORE)
        found |= self.overlaid.get(path, set())
        facts = self.hooks.facts.get(path)
        if facts is not None:
            names = {site.name for site in facts.hooks if site.name}
            found |= {backend for backend, exported in self.exports.items() if names & exported}
            rel = trunk_rel(path) or ""
            if rel.endswith("__init__.py") and any(site.kind == "spec_path" for site in facts.hooks):
                # spec_path serves the backend files at any depth below the package, not only beside its init
                found |= {backend for package, backends in self.overlaid_packages.items()
                          if is_under(package, package_of(rel)) for backend in backends}
        text = self._text(path)
        if not path.endswith(".py") and any(self.macros.values()) and mentions_spec_macro(text):
            found |= {backend for backend, macros in self.macros.items() if any(m in text for m in macros)}
        found |= enclosing_gate_groups(text, list(flagtree_side), self.groups) if flagtree_side \
            else gate_groups(text, self.groups)
        found |= {group for tag, group in self.tags.items() if tag in summary}
        # a subject tag that names a group ("[TLE] ..." where third_party/tle is one) is that group's commit too
        found |= {group for group in self.groups if f"[{group}]" in summary.lower()}
        return sorted(found) or [SHARED]

    def _text(self, path: str) -> str:
        if path not in self._texts:
            self._texts[path] = read_text(self.tree, path) or ""
        return self._texts[path]
