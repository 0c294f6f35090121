"""The describe job: the tool's model of a FlagTree tree, per backend, as data a maintainer can read.

What the analyses build on: which packages are hijacked, what each spec file is (overlay, new module,
spec module, ...), the functions each backend exports and the trunk call sites that use them, the
FLAGTREE_SPEC_* macros (with the header defining each), the trunk guards they switch and the functions
of the backend's C++ spec library. bench/real_trees.py scores it against what people read in real trees.
"""
from __future__ import annotations

from typing import Any

from sync.facts.filekinds import CPP_CODE
from sync.facts.backends import backend_exports
from sync.facts.callsites import index_trunk_hooks
from sync.facts.cpp import backend_macros, functions, guard_regions, mentions_spec_macro, stray_macros
from sync.facts.roles import COPY_ROLES, RENAMED_COPY, Classified, classified_files
from sync.facts.layout import backend_names, is_third_party, package_init
from sync.facts.trees import FileTree, read_text
from sync.git import GitTree, current_branch, open_repo
from sync.jobs.revs import resolve_rev

CPP = CPP_CODE


def describe_branch(repo_path: str, source_branch: str | None) -> dict[str, Any]:
    """The describe document of a branch (the current one when None): the branch and its tree's model."""
    repo = open_repo(repo_path)
    rev = resolve_rev(repo, source_branch or current_branch(repo))
    return {"schema": "flagtree-sync/describe/1", "branch": rev.to_json(),
            **describe_tree(GitTree.of_commit(repo, rev.oid, rev.ref))}


def describe_tree(tree: FileTree, base: FileTree | None = None) -> dict[str, Any]:
    """`base`: the upstream tree copies under another name are measured against (else trunk outside third_party/)."""
    hooks = index_trunk_hooks(tree)
    guards: dict[str, list[dict[str, Any]]] = {}
    for path in tree.paths():
        if is_third_party(path) or not path.endswith(CPP):
            continue
        text = read_text(tree, path) or ""
        if mentions_spec_macro(text):
            for region in guard_regions(text):
                guards.setdefault(region.macro, []).append({"path": path, "line": region.start,
                                                            "directive": region.directive})
    by_name = hooks.by_name()
    backends: dict[str, Any] = {}
    classified = classified_files(tree, hooks, base=base)
    for backend in sorted(set(backend_names(tree)) | {item.file.backend for item in classified}):
        exports = backend_exports(tree, backend)
        macros = backend_macros(tree, backend)
        library: dict[str, list[str]] = {}
        for item in classified:
            if item.file.backend == backend and item.role in ("cpp-spec", "cpp-overlay") and item.file.path.endswith(CPP):
                for function in functions(read_text(tree, item.file.path) or ""):
                    library.setdefault(function.short_name, []).append(item.file.path)
        backends[backend] = {
            "layouts": sorted({item.file.layout for item in classified if item.file.backend == backend}),
            "mechanisms": sorted({_mechanism(item) for item in classified if item.file.backend == backend} - {""}),
            "files": {item.file.path: item.role for item in classified if item.file.backend == backend},
            "copies": {item.file.path: item.file.trunk_path for item in classified
                       if item.file.backend == backend and item.role in COPY_ROLES},
            "unreachable_shape": {item.file.path: item.shape for item in classified
                                  if item.file.backend == backend and item.shape},
            "exports": {name: exported.module_path for name, exported in sorted(exports.functions.items())},
            "call_sites": [{"name": name, "kind": site.kind, "path": site.path, "line": site.line}
                           for name in sorted(exports.functions) for site in by_name.get(name, [])],
            "macros": {name: f"{definition.path}:{definition.line}" for name, definition in sorted(macros.items())},
            "guards": {name: guards.get(name, []) for name in sorted(macros)},
            "unincluded_macros": {m.name: f"{m.path}:{m.line}" for m in stray_macros(tree, backend, macros)},
            "library": library,
        }
    return {
        "hijacked": [package_init(package) for package in sorted(hooks.hijacked)],
        "hook_sites": len(hooks.sites),
        "unimplemented": sorted({site.name for site in hooks.sites if site.name} -
                                {name for data in backends.values() for name in data["exports"]}),
        "backends": backends,
    }


def _mechanism(item: Classified) -> str:
    """How a file comes to stand in for trunk code: the seed's hooks (a spec tree), a setup helper's copy or
    package mapping, or a copy under another name; "" for a file that stands in for nothing."""
    if item.role == RENAMED_COPY:
        return RENAMED_COPY
    if item.file.via is not None:
        return item.file.layout
    return "spec-hook" if item.file.area != "copy" else ""
