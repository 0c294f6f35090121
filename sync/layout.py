"""Facts about the FlagTree tree layout: where trunk, backends and their spec trees live."""
from __future__ import annotations

import re
from dataclasses import dataclass
from posixpath import dirname

from .trees import FileTree

TRUNK = "python/triton"
SPEC_HOOK_MODULE = "flagtree_spec"
HOOK_NAMES = ("spec_path", "spec", "spec_func")
# Older FlagTree branches (main) import spec/spec_func from the runtime driver instead.
LEGACY_HOOK_MODULES = ("triton.runtime.driver",)

# Directories (relative to python/triton) whose __init__.py may call spec_path.
SPEC_PATH_ALLOWED = frozenset({"compiler", "language", "runtime", "tools", "experimental/gluon"})
# Directories where the seed forbids spec_path outright; children of gluon are forbidden too.
SPEC_PATH_FORBIDDEN = frozenset({"", "backends", "experimental", "language/extra"})
NO_SPECIALIZATION = "experimental/tle"  # and everything below it
# Files backends may never shadow or provide.
PROTECTED_FILES = frozenset({"flagtree_spec.py", "_flagtree_backend.py"})
# Trunk files that are specialized by editing them directly, the Triton way.
DIRECT_EDIT_FILES = frozenset({"knobs.py", "_internal_testing.py"})

# DOTALL and \Z: a git path may hold a newline, and "$" would also match before a trailing one
_SPEC_FILE = re.compile(r"\Athird_party/(?P<backend>[^/]+)/backend/spec/(?P<rest>.+)\Z", re.DOTALL)
_CPP_SUFFIXES = (".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx", ".inc", ".td")


@dataclass(frozen=True)
class SpecFile:
    """A file of a backend's spec tree, with its trunk counterpart if it mirrors one."""

    backend: str
    path: str  # full repository path
    area: str  # "triton" (Python), "include", "lib" or "other"
    rel: str  # path below spec/<area>/

    @property
    def trunk_path(self) -> str | None:
        if self.area == "triton":
            return f"{TRUNK}/{self.rel}"
        if self.area in ("include", "lib"):
            return f"{self.area}/{self.rel}"
        return None

    @property
    def is_python(self) -> bool:
        return self.area == "triton" and self.rel.endswith(".py")

    @property
    def is_cpp(self) -> bool:
        return self.area in ("include", "lib") and self.rel.endswith(_CPP_SUFFIXES)


def parse_spec_file(path: str) -> SpecFile | None:
    match = _SPEC_FILE.match(path)
    if not match:
        return None
    area, _, rel = match["rest"].partition("/")
    if not rel:
        return SpecFile(match["backend"], path, "other", area)
    if area not in ("triton", "include", "lib"):
        return SpecFile(match["backend"], path, "other", match["rest"])
    return SpecFile(match["backend"], path, area, rel)


def spec_files(tree: FileTree, backends: set[str] | None = None) -> list[SpecFile]:
    found = []
    for path in tree.paths():
        if not path.startswith("third_party/"):
            continue
        spec_file = parse_spec_file(path)
        if spec_file and (not backends or spec_file.backend in backends):
            found.append(spec_file)
    return found


def backend_names(tree: FileTree) -> list[str]:
    """Backends that have a spec tree (third_party/<b>/backend/spec/...)."""
    return sorted({spec_file.backend for spec_file in spec_files(tree)})


def third_party_backends(tree: FileTree) -> list[str]:
    """Every third_party/<b>/backend directory, with or without spec/."""
    names = set()
    for path in tree.paths():
        parts = path.split("/")
        if len(parts) > 3 and parts[0] == "third_party" and parts[2] == "backend":
            names.add(parts[1])
    return sorted(names)


def trunk_rel(path: str) -> str | None:
    """python/triton/a/b.py -> a/b.py; None outside trunk."""
    prefix = TRUNK + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def package_of(rel: str) -> str:
    """The package directory (relative to python/triton) that holds a module."""
    return dirname(rel)


def is_under(rel_dir: str, top: str) -> bool:
    return rel_dir == top or rel_dir.startswith(top + "/")


def spec_path_verdict(rel_dir: str) -> str:
    """'allowed', 'forbidden' or 'unlisted' for a spec_path call in python/triton/<rel_dir>."""
    if rel_dir in SPEC_PATH_ALLOWED:
        return "allowed"
    if rel_dir in SPEC_PATH_FORBIDDEN or is_under(rel_dir, NO_SPECIALIZATION):
        return "forbidden"
    if rel_dir.startswith("experimental/gluon/") or is_under(rel_dir, "language/extra"):
        return "forbidden"
    if rel_dir.startswith("backends/"):
        return "forbidden"
    return "unlisted"
