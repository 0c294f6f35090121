"""What each file of a backend's spec tree is: one classifier, used by check and drift alike.

A Python file under the mirror of python/triton is an overlay (a package above it calls spec_path and
trunk has the path: it shadows the trunk module), a new module (hijacked package, no trunk path), a
spec-function module (no hijacked package above it: it only holds functions the spec entry exports),
or one of the files the seed forbids. C++ under spec/include and spec/lib is a spec library: functions
that trunk guards with #ifndef FLAGTREE_SPEC_<name>, built by the backend's CMake; a TableGen file there
that mirrors a trunk .td is a whole-file overlay.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from posixpath import basename

from sync.facts.layout import (PACKAGE_COPY, RENAMED_COPY, SETUP_COPY, TRUNK, seed_policy,
                      SpecFile, backend_names, copy_candidate, copy_files, is_under, package_of, renamed, spec_files)
from sync.facts.trees import FileTree, read_text
from sync.support.cache import memoized_by
from sync.facts.backends import backend_exports, entry_modules
from sync.facts.callsites import TrunkHooks
from sync.facts.copies import COPY_SUFFIXES, CopyOf, TrunkIndex, copy_candidates
from sync.facts.pyfacts import normalized_statements

OVERLAY = "overlay"  # shadows trunk python/triton/<rel> through a hijacked package
NEW_MODULE = "new-module"  # below a hijacked package, no trunk counterpart
SPEC_MODULE = "spec-module"  # functions for spec/spec_func
ENTRY = "entry"  # the spec tree's __init__.py that spec/spec_func import
INIT_UNUSED = "init-unused"  # __init__.py of a hijacked package: trunk's always loads
ROOT_FILE = "root-file"  # a root-level module that tries to replace a trunk file whole (never legal)
DIRECT_EDIT = "direct-edit"  # knobs.py / _internal_testing.py: specialized in trunk directly
PROTECTED = "protected"  # flagtree_spec.py / _flagtree_backend.py
TLE = "tle"  # experimental/tle may not be specialized
UNREACHABLE = "unreachable"  # below a hijacked package, but a regular trunk package in between hides it
TD_OVERLAY = "td-overlay"  # a TableGen file replacing trunk's whole
CPP_OVERLAY = "cpp-overlay"  # a C++ file that is a copy of its trunk namesake, changed (on the include path first)
CPP_SPEC = "cpp-spec"  # a C++ spec library file (per-function replacements, the macro headers)
# Copies a route other than the seed's hooks installs in trunk's place (SETUP_COPY, PACKAGE_COPY), or a backend
# file that copies a trunk file of another name (RENAMED_COPY): each drifts like an overlay.
COPY_ROLES = frozenset({SETUP_COPY, PACKAGE_COPY, RENAMED_COPY})
WHOLE_FILE_ROLES = frozenset({"overlay", "td-overlay", "cpp-overlay"}) | COPY_ROLES  # 3-way merged against trunk
OTHER = "other"  # CMake, docs, data: not analysed

PYTHON_ROLES = (OVERLAY, NEW_MODULE, SPEC_MODULE, ENTRY, INIT_UNUSED, ROOT_FILE, DIRECT_EDIT, PROTECTED, TLE,
                UNREACHABLE)
# A root-level file that repeats at least this share of its trunk namesake's top-level statements is a copy
# of that file (an attempt to shadow it), not a module of spec functions.
COPY_SHARE = 0.5


@dataclass(frozen=True)
class Classified:
    file: SpecFile
    role: str
    hijacked: str | None = None  # the hijacked package (relative to python/triton) that makes it an overlay
    hidden_by: str | None = None  # UNREACHABLE: the trunk package that hides it
    why: str = ""
    shape: str = ""  # UNREACHABLE: what it would be if Python reached it (overlay or new-module)

    @property
    def trunk_path(self) -> str | None:
        return self.file.trunk_path


def _nearest_hijacked(package: str, hooks: TrunkHooks) -> str | None:
    """The deepest hijacked package at or above `package` (the root "" counts)."""
    found = [hijacked for hijacked in hooks.hijacked if is_under(package, hijacked)]
    return max(found, key=lambda hijacked: (hijacked != "", hijacked.count("/"), len(hijacked)), default=None)


def _hiding_package(tree: FileTree, spec_file: SpecFile, hijacked: str) -> str | None:
    """The trunk package that keeps Python from ever reaching this file, if any.

    Walking down from the hijacked package: a sub-package the backend mirrors with its own __init__.py
    is the backend's (everything below it is reached); one it mirrors without __init__.py while trunk's
    is a regular package is trunk's, and the backend's directory is never looked in.
    """
    mirror_root = spec_file.path[: len(spec_file.path) - len(spec_file.rel)]
    below = package_of(spec_file.rel)[len(hijacked):].strip("/") if hijacked else package_of(spec_file.rel)
    package = hijacked
    for part in below.split("/") if below else ():
        package = f"{package}/{part}" if package else part
        if tree.exists(f"{mirror_root}{package}/__init__.py"):
            return None
        if tree.exists(f"{TRUNK}/{package}/__init__.py"):
            return package
    return None


def _copies_trunk(tree: FileTree, spec_file: SpecFile) -> bool:
    trunk_text = read_text(tree, spec_file.trunk_path or "")
    if trunk_text is None:
        return False
    text = read_text(tree, spec_file.path) or ""
    if text == trunk_text:
        return True
    mine, theirs = normalized_statements(text), normalized_statements(trunk_text)
    if not mine or not theirs:
        return False
    return len(mine & theirs) >= COPY_SHARE * len(theirs)


def contained_in(text: str, trunk_text: str) -> str | None:
    """How an overlay is wholly contained in trunk (the seed forbids such files), or None: every top-level
    statement is in trunk, or it is trunk with lines deleted and nothing added or changed."""
    mine, theirs = normalized_statements(text), normalized_statements(trunk_text)
    if mine is not None and theirs is not None and mine <= theirs:
        return "every statement is"
    ours, trunk = text.splitlines(), trunk_text.splitlines()
    if ours and _subsequence(ours, trunk):
        return f"only {len(trunk) - len(ours)} line(s) deleted from"
    return None


def _subsequence(lines: list[str], of: list[str]) -> bool:
    """Whether lines are of with some lines deleted, in order (a greedy match: linear, where a diff of two
    large files is not)."""
    remaining = iter(of)
    return all(any(line == theirs for theirs in remaining) for line in lines)


def copies_trunk_lines(tree: FileTree, spec_file: SpecFile) -> bool:
    """A C++ file holding at least COPY_SHARE of its trunk namesake's lines is a copy of it; a spec library file
    (a few replaced functions, built as a library of its own) is not, whatever its path."""
    trunk_text = read_text(tree, spec_file.trunk_path or "")
    if trunk_text is None:
        return False
    theirs = {line.strip() for line in trunk_text.splitlines() if line.strip()}
    mine = {line.strip() for line in (read_text(tree, spec_file.path) or "").splitlines() if line.strip()}
    return bool(theirs) and len(mine & theirs) >= COPY_SHARE * len(theirs)


def is_td_overlay(tree: FileTree, spec_file: SpecFile) -> bool:
    """A spec TableGen file mirroring a trunk .td: the backend's CMake picks it instead of trunk's."""
    return spec_file.is_tablegen and tree.exists(spec_file.trunk_path or "")


def td_overlays(tree: FileTree) -> frozenset[tuple[str, str]]:
    """(backend, trunk .td) of each TableGen overlay: the classification's td-overlay role alone, without the
    copy detection the other roles need."""
    return frozenset((spec_file.backend, spec_file.trunk_path) for spec_file in spec_files(tree)
                     if spec_file.trunk_path and is_td_overlay(tree, spec_file))


def classify(tree: FileTree, spec_file: SpecFile, hooks: TrunkHooks, entries: frozenset[str] = frozenset(),
             exporters: frozenset[str] = frozenset()) -> Classified:
    """The role of one spec file; `entries` are the spec entry modules (spec/triton/__init__.py, legacy
    spec/__init__.py), `exporters` the modules the entry takes spec functions from."""
    if spec_file.area in ("include", "lib"):
        if is_td_overlay(tree, spec_file):
            return Classified(spec_file, TD_OVERLAY, why="a TableGen file the backend's CMake picks instead of trunk's")
        if spec_file.is_cpp and copies_trunk_lines(tree, spec_file):
            return Classified(spec_file, CPP_OVERLAY, why="a changed copy of the trunk file")
        return Classified(spec_file, CPP_SPEC if spec_file.is_cpp else OTHER)
    if not spec_file.is_python:
        return Classified(spec_file, OTHER)
    rel = spec_file.rel
    if spec_file.path in entries or rel == "__init__.py":
        return Classified(spec_file, ENTRY)
    policy = seed_policy()
    if spec_file.root_level and rel in policy.protected_files:
        return Classified(spec_file, PROTECTED, why="backends may not provide or shadow this file")
    if is_under(package_of(rel), policy.no_specialization) and package_of(rel):
        return Classified(spec_file, TLE, why=f"{policy.no_specialization} may not be specialized")
    if spec_file.root_level:
        if rel in policy.direct_edit_files:
            return Classified(spec_file, DIRECT_EDIT, "" if "" in hooks.hijacked else None,
                              why=f"the seed specializes {rel} directly in trunk")
        if _copies_trunk(tree, spec_file):
            return Classified(spec_file, ROOT_FILE, "" if "" in hooks.hijacked else None,
                              why="python/triton is the parent of every package: its modules cannot be overlaid; "
                                  "use spec/spec_func")
        return Classified(spec_file, SPEC_MODULE)
    hijacked = _nearest_hijacked(package_of(rel), hooks)
    if hijacked is None:
        return Classified(spec_file, SPEC_MODULE)
    if basename(rel) == "__init__.py" and package_of(rel) == hijacked:
        if spec_file.path in exporters:  # never the package's __init__, but the entry imports its functions
            return Classified(spec_file, SPEC_MODULE, hijacked)
        return Classified(spec_file, INIT_UNUSED, hijacked, why=f"{hijacked} is hijacked; its __init__.py always "
                          "comes from trunk")
    role = OVERLAY if tree.exists(spec_file.trunk_path or "") else NEW_MODULE
    hidden = _hiding_package(tree, spec_file, hijacked)
    if hidden is not None:
        return Classified(spec_file, UNREACHABLE, hijacked, hidden,
                          why=f"trunk package {hidden} is a regular package and the backend's mirror of it has "
                              "no __init__.py, so Python never looks in the backend's directory", shape=role)
    return Classified(spec_file, role, hijacked)


def shadows_trunk(classified: Classified) -> bool:
    """Whether the file replaces its trunk namesake whole, so that drift 3-way merges it: overlays and C++ and
    TableGen copies, and a root-level copy (or knobs.py, _internal_testing.py) where python/triton itself is
    hijacked (illegal, and `check` says so, but then Python does load it in trunk's place)."""
    return classified.role in WHOLE_FILE_ROLES or (classified.role in (ROOT_FILE, DIRECT_EDIT)
                                                   and classified.hijacked == "" and classified.trunk_path is not None)


def classified_files(tree: FileTree, hooks: TrunkHooks, backends: set[str] | None = None,
                     base: FileTree | None = None) -> list[Classified]:
    """Every spec file of the selected backends with its role, then the files other mechanisms install in trunk's
    place, then the backend files that copy a trunk file of another name. `base` is the upstream tree copies are
    measured against (the old tag); without it, trunk is what lies outside third_party/ in `tree`."""
    names = backend_names(tree)
    entries = frozenset(entry for backend in names for _, entry in entry_modules(tree, backend))
    exporters = frozenset(exported.module_path for backend in names
                          for exported in backend_exports(tree, backend).functions.values() if exported.module_path)
    found = [classify(tree, spec_file, hooks, entries, exporters) for spec_file in spec_files(tree, backends)]
    in_spec_trees = {item.file.path for item in found}
    for spec_file in copy_files(tree, backends):
        if spec_file.path not in in_spec_trees:
            role = spec_file.layout if tree.exists(spec_file.trunk_path or "") else NEW_MODULE if spec_file.is_python \
                else OTHER
            found.append(Classified(spec_file, role, why=f"installed in trunk's place by {spec_file.via}"))
    return _with_renamed_copies(tree, found, backends, base)


def _with_renamed_copies(tree: FileTree, found: list[Classified], backends: set[str] | None,
                         base: FileTree | None) -> list[Classified]:
    """New modules that copy a trunk file by content become renamed copies; so do the backends' other files."""
    # a module with no namesake, or a file of a package copy with none (C headers under _C/include), may
    # still copy a trunk file of another name
    unpaired = [(item.file.backend, item.file.path) for item in found
                if (item.role == NEW_MODULE or item.role == OTHER and item.file.via is not None)
                and item.file.path.endswith(COPY_SUFFIXES)]
    taken = {item.file.path for item in found}
    candidates = [(backend, path) for backend, path in copy_candidates(tree, backends, taken)
                  if base is None or not base.exists(path)]  # a file upstream has at the old tag is upstream's own
    copies = _copies(tree, base, unpaired + candidates)

    def measured(spec_file: SpecFile) -> Classified | None:
        copy = copies.get(spec_file.path)
        if copy is None:
            return None
        same = "identical to" if copy.identical else f"{copy.similarity:.0%} of its lines in common with"
        return Classified(renamed(spec_file, copy.source), RENAMED_COPY, why=f"{same} {copy.source}")

    result = [measured(item.file) or item if item.file.path in copies else item for item in found]
    result += [copy for copy in (measured(copy_candidate(backend, path)) for backend, path in candidates) if copy]
    return result


_COPIES = ("renamed-copies", 1)  # kind and version in the fact cache


def _copies(tree: FileTree, base: FileTree | None, files: list[tuple[str, str]]) -> dict[str, CopyOf]:
    """path -> the trunk file it copies, of the (backend, path) files given that copy one. Kept in the fact cache
    by the two trees' ids and the files asked: `status` after `upgrade` indexes no trunk file."""
    def compute() -> dict[str, CopyOf]:
        index = TrunkIndex(base) if base is not None else TrunkIndex(tree, outside_third_party=True)
        found = {path: index.copy_of(backend, path, read_text(tree, path) or "") for backend, path in files}
        return {path: copy for path, copy in found.items() if copy is not None}

    ids = [_tree_id(tree), _tree_id(base) if base is not None else "outside third_party"]
    if None in ids:
        return compute()
    asked = hashlib.sha1("\n".join(f"{backend}\0{path}" for backend, path in files).encode("utf-8")).hexdigest()
    inputs = [str(part) for part in ids] + [asked]
    return memoized_by(*_COPIES, inputs, compute,
                       lambda copies: {path: [c.source, c.similarity, c.identical] for path, c in copies.items()},
                       lambda stored: {path: CopyOf(str(source), float(share), bool(same))
                                       for path, (source, share, same) in stored.items()})


def _tree_id(tree: FileTree) -> object | None:
    """A git tree's id (GitTree); None for a tree with none (a directory on disk)."""
    return getattr(getattr(tree, "tree", None), "id", None)
