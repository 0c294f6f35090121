"""Facts about the FlagTree tree layout: where trunk, backends and their spec trees live."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from posixpath import dirname

from .trees import FileTree, read_text

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

# \A and \Z with DOTALL: a git path may hold a newline, and "$" would also match before a trailing one
_CPP_SUFFIXES = (".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx", ".inc", ".td")
# The layouts FlagTree has used for a backend's spec tree (read from its history):
# - third_party/<b>/backend/spec/{triton,include,lib}/...: the seed's layout (main, 3.6 branches);
# - python/triton/spec/<b>/...: the Python mirror inside trunk's package (triton_v3.5.x, ascend).
# A repository may name more in pyproject.toml: [tool.flagtree-sync] spec_roots = ["x/{backend}/py"].
_THIRD_PARTY_SPEC = re.compile(r"\Athird_party/(?P<backend>[^/]+)/backend/spec/(?P<rest>.+)\Z", re.S)
_OWNED = re.compile(r"\Athird_party/(?P<backend>[^/]+)/.", re.S)
PYTHON_SPEC_HOME = f"{TRUNK}/spec"
_PYTHON_SPEC = re.compile(rf"\A{re.escape(PYTHON_SPEC_HOME)}/(?P<backend>[^/]+)/(?P<rel>.+)\Z", re.S)
CONFIG_FILE = "pyproject.toml"


@dataclass(frozen=True)
class SpecFile:
    """A file of a backend's spec tree, with its trunk counterpart if it mirrors one."""

    backend: str
    path: str  # full repository path
    area: str  # "triton" (Python), "include", "lib" or "other"
    rel: str  # path below spec/<area>/ (for "triton": relative to python/triton)
    layout: str = "third-party"  # third-party | python-spec | configured

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

    @property
    def is_tablegen(self) -> bool:
        return self.area in ("include", "lib") and self.rel.endswith(".td")

    @property
    def root_level(self) -> bool:
        """A module directly in the mirror of python/triton: never a legal overlay (the root is every package's parent)."""
        return self.area == "triton" and "/" not in self.rel


def configured_roots(tree: FileTree) -> tuple[re.Pattern[str], ...]:
    """Extra Python spec roots named in the repository's pyproject.toml ([tool.flagtree-sync] spec_roots)."""
    text = read_text(tree, CONFIG_FILE)
    if not text or "flagtree-sync" not in text:
        return ()
    try:
        roots = tomllib.loads(text).get("tool", {}).get("flagtree-sync", {}).get("spec_roots", [])
    except (tomllib.TOMLDecodeError, RecursionError):  # nested too deeply: not a config of ours either
        return ()
    patterns = []
    for root in roots if isinstance(roots, list) else []:
        if isinstance(root, str) and root.count("{backend}") == 1 and not root.startswith(("/", "..")):
            head, _, tail = root.strip("/").partition("{backend}")
            patterns.append(re.compile(rf"\A{re.escape(head)}(?P<backend>[^/]+){re.escape(tail)}/(?P<rel>.+)\Z", re.S))
    return tuple(patterns)


def parse_spec_file(path: str, extra: tuple[re.Pattern[str], ...] = ()) -> SpecFile | None:
    match = _THIRD_PARTY_SPEC.match(path)
    if match:
        area, _, rel = match["rest"].partition("/")
        if not rel:
            return SpecFile(match["backend"], path, "other", area)
        if area not in ("triton", "include", "lib"):
            return SpecFile(match["backend"], path, "other", match["rest"])
        return SpecFile(match["backend"], path, area, rel)
    match = _PYTHON_SPEC.match(path)
    if match:
        return SpecFile(match["backend"], path, "triton", match["rel"], "python-spec")
    for pattern in extra:
        match = pattern.match(path)
        if match:
            return SpecFile(match["backend"], path, "triton", match["rel"], "configured")
    return None


def owning_backend(path: str, extra: tuple[re.Pattern[str], ...] = ()) -> str | None:
    """The backend a path belongs to: everything under third_party/<b>/, and every spec tree."""
    spec_file = parse_spec_file(path, extra)
    if spec_file is not None:
        return spec_file.backend
    return third_party_owner(path)


def third_party_owner(path: str) -> str | None:
    """b for a file under third_party/<b>/ (whose build reads b's own copies first); None elsewhere."""
    match = _OWNED.match(path)
    return match["backend"] if match else None


def spec_files(tree: FileTree, backends: set[str] | None = None) -> list[SpecFile]:
    extra = configured_roots(tree)
    found = []
    for path in tree.paths():
        if not path.startswith(("third_party/", PYTHON_SPEC_HOME + "/")) and not extra:
            continue
        spec_file = parse_spec_file(path, extra)
        if spec_file and (not backends or spec_file.backend in backends):
            found.append(spec_file)
    return found


def is_spec_path(path: str, extra: tuple[re.Pattern[str], ...] = ()) -> bool:
    """A file of some backend's spec tree (so never trunk, even when it lies under python/triton)."""
    return parse_spec_file(path, extra) is not None


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


def third_party_groups(tree: FileTree) -> list[str]:
    """Every directory third_party/<b>/ that holds a file: each is a group of the report (it owns its files)."""
    return sorted({owner for path in tree.paths() if (owner := third_party_owner(path)) is not None})


def require_backends(tree: FileTree, wanted: set[str] | frozenset[str]) -> None:
    """Refuse --backend names that are no group of the tree's: a backend (third_party/<b>/backend, with or
    without spec/, or a spec tree elsewhere) or any third_party/<b>/ directory, which the report groups too."""
    known = sorted(set(backend_names(tree)) | set(third_party_groups(tree)))
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        from .errors import SyncError  # layout stays importable without the error module's dependents
        raise SyncError(f"no backend {', '.join(unknown)} (third_party/<backend>/) on this branch; "
                        f"known: {', '.join(known) or 'none'}")


def trunk_rel(path: str) -> str | None:
    """python/triton/a/b.py -> a/b.py; None outside trunk (a backend's python/triton/spec/<b>/ is not trunk)."""
    prefix = TRUNK + "/"
    if not path.startswith(prefix) or _PYTHON_SPEC.match(path):
        return None
    return path[len(prefix):]


def package_init(rel_dir: str) -> str:
    """The trunk __init__.py of a package directory relative to python/triton ("" is python/triton itself)."""
    return f"{TRUNK}/{rel_dir}/__init__.py" if rel_dir else f"{TRUNK}/__init__.py"


def package_of(rel: str) -> str:
    """The package directory (relative to python/triton) that holds a module."""
    return dirname(rel)


def is_under(rel_dir: str, top: str) -> bool:
    """rel_dir is top or below it; everything is below the root package ("")."""
    return top == "" or rel_dir == top or rel_dir.startswith(top + "/")


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
