"""Which builds can import a trunk Python module (python/triton/...): one build per FlagTree backend and one
without (facts/buildconfigs), less three kinds of build.

- A backend whose setup installs the module's package from its own python tree (layout.generic_package_roots)
  ships that tree's file, not trunk's.
- A build whose setup.py package list leaves the package out, where the list names it only under an `if` on the
  backend that does not hold for this one (layout.backend_packages: FlagTree's get_packages appends
  triton/language/extra/xpu only for xpu). A package the list never spells may come from code not read here.
- A build whose binding library lacks a submodule the module and its packages import unconditionally. Triton's
  `triton._C.libtriton` gets one submodule per compiled `init_triton_<name>` function (python/src/main.cc calls
  each through `def_submodule`). A package whose `__init__.py` imports `triton._C.libtriton.<name>`, or re-raises
  when it cannot (FlagTree's TLE: `except ImportError: raise RuntimeError`), loads only in a build that compiles
  the file defining `init_triton_<name>`: where the build configuration's CMake reaches the directory of that
  file's nearest CMakeLists.txt (facts/cmakebuilt). TLE's C++ is added only `if(FLAGTREE_BACKEND STREQUAL
  "ascend")` on the 3.2 and 3.3 lines.

Every doubt counts as "can import": an import this reader does not follow, an entry script not read, a backend
that ships a prebuilt binding library, a submodule no compiled file defines."""
from __future__ import annotations

import ast
from posixpath import dirname
from typing import Callable

from sync.facts.buildconfigs import every_configuration, prebuilt_extension_backends
from sync.facts.cmakebuilt import Configured, cmake_directory, configured, named_subdirectories, unbuilt
from sync.facts.declindex import DeclarationIndex, declarations_of
from sync.facts.filekinds import CPP_SOURCES
from sync.facts.layout import (ListedPackages, backend_packages, generic_package_roots, is_third_party,
                               listed_packages)
from sync.facts.pymodules import MODULE_SUFFIX, TRUNK_PACKAGE, absolute, package_of
from sync.facts.trees import FileTree, read_text
from sync.git.readlog import TreeMemo

BINDINGS = "triton._C.libtriton"
INIT_PREFIX = "init_triton_"  # the function that fills libtriton's submodule of the same suffix
NO_BACKEND = ""  # the build without a FlagTree backend (upstream's own codegen backends)


class _Builds:
    """What the entry script and setup helpers say of every build of one tree, read once."""

    def __init__(self, tree: FileTree, upstream: FileTree) -> None:
        self.tree, self.upstream = tree, upstream
        self.configurations = every_configuration(tree, upstream)
        self.listed = listed_packages(tree)
        paths = tree.paths()
        self.roots = [mapped for mapped in generic_package_roots(tree, beside_setup=True)
                      if any(path.startswith(f"{mapped.root}/") for path in paths)]
        self._lists: dict[str, ListedPackages | None] = {}
        self._prebuilt: set[str] | None = None

    def installing_elsewhere(self, package_dir: str) -> set[str]:
        """The backends whose setup installs the package at package_dir from their own python tree."""
        package = package_dir.removeprefix(TRUNK_PACKAGE)
        return {mapped.backend for mapped in self.roots if mapped.source_dir(package) != package_dir}

    def packages_of(self, backend: str) -> ListedPackages | None:
        if backend not in self._lists:
            self._lists[backend] = backend_packages(self.tree, backend)
        return self._lists[backend]

    @property
    def prebuilt(self) -> set[str]:
        if self._prebuilt is None:
            self._prebuilt = prebuilt_extension_backends(self.tree, self.upstream)
        return self._prebuilt


_builds: TreeMemo[_Builds] = TreeMemo()
_memo: TreeMemo[frozenset[str] | None] = TreeMemo()


def _known(tree: FileTree, upstream: FileTree) -> _Builds:
    return _builds.get(tree, id(upstream), lambda: _Builds(tree, upstream))


def importing_builds(tree: FileTree, upstream: FileTree, path: str) -> frozenset[str] | None:
    """The backends ('' for the build without one) whose build can import the trunk module at path; None for a
    path that is no trunk module, or where the entry script leaves a build undecided."""
    if not (path.startswith(TRUNK_PACKAGE) and path.endswith(MODULE_SUFFIX)) or is_third_party(path):
        return None
    known = _known(tree, upstream)
    package_dir = dirname(path)
    builds = _memo.get(tree, f"package:{package_dir}", lambda: _builds_installing(known, package_dir))
    needed = required_submodules(tree, path)
    if builds is None or not needed:
        return builds
    having = _memo.get(tree, "submodules:" + ",".join(sorted(needed)), lambda: _builds_having(known, needed))
    return builds if having is None else builds & having


def installs_own_copy(tree: FileTree, upstream: FileTree, backend: str, path: str) -> bool:
    """Whether the backend's setup installs the package of the trunk module at path from its own python tree
    (layout.generic_package_roots): its build never imports trunk's file, whatever the entry script decides."""
    return backend in _known(tree, upstream).installing_elsewhere(dirname(path))


def _builds_installing(known: _Builds, package_dir: str) -> frozenset[str] | None:
    if known.configurations is None:
        return None
    package = package_dir.removeprefix(TRUNK_PACKAGE)
    elsewhere = known.installing_elsewhere(package_dir)
    listed = known.listed
    spelled = listed is not None and not listed.discovers and package in listed.packages
    builds = set()
    for configuration in known.configurations:
        backend = configuration.backend
        if backend in elsewhere:
            continue  # it ships its own tree's copy of the package
        mine = known.packages_of(backend) if spelled else None
        if spelled and listed is not None and package not in (mine or listed).packages:
            continue  # the list names the package only for other backends
        builds.add(backend)
    return frozenset(builds)


def declared_where_imported(tree: FileTree, upstream: FileTree, path: str, declaring: str, name: str,
                            serving: Callable[[str, str], str | None]) -> bool:
    """Whether the builds that can import the trunk module at path are some, not the one without a backend, and
    each loads, in place of the trunk module `declaring`, a file of its own (serving(backend, declaring)) that
    still binds the name at its top level: then no build meets upstream's removal of the name there. (A module
    no build imports is drift/run.py's to say.)"""
    builds = importing_builds(tree, upstream, path)
    if not builds or NO_BACKEND in builds:
        return False
    for backend in builds:
        served = serving(backend, declaring)
        if served is None or name not in {decl.name for decl in declarations_of(served, read_text(tree, served) or "")
                                          if not decl.scope}:
            return False
    return True


def required_submodules(tree: FileTree, path: str) -> set[str]:
    """The libtriton submodules the module and each package above it (their `__init__.py`) import at module
    level without a fallback."""
    if not (path.startswith(TRUNK_PACKAGE) and path.endswith(MODULE_SUFFIX)):
        return set()
    files = [path]
    directory = dirname(path)
    while directory.startswith(TRUNK_PACKAGE) and directory != TRUNK_PACKAGE.rstrip("/"):
        files.append(f"{directory}/__init__{MODULE_SUFFIX}")
        directory = dirname(directory)
    needed: set[str] = set()
    for file in dict.fromkeys(files):
        text = read_text(tree, file)
        if text is None:
            continue
        try:
            module = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        needed |= _imported_submodules(module.body, package_of(file))
    return needed


def _imported_submodules(body: list[ast.stmt], package: str) -> set[str]:
    found: set[str] = set()
    for statement in body:
        if isinstance(statement, ast.Try) and all(_reraises(handler) for handler in statement.handlers):
            found |= _imported_submodules(statement.body, package)
        elif isinstance(statement, ast.ImportFrom):
            source = absolute("." * statement.level + (statement.module or ""), package)
            if source == BINDINGS:
                found |= {alias.name for alias in statement.names if alias.name != "*"}
            elif source.startswith(BINDINGS + "."):
                found.add(source[len(BINDINGS) + 1:].split(".")[0])
        elif isinstance(statement, ast.Import):
            found |= {alias.name[len(BINDINGS) + 1:].split(".")[0] for alias in statement.names
                      if alias.name.startswith(BINDINGS + ".")}
    return found


def _reraises(handler: ast.ExceptHandler) -> bool:
    """A handler that ends in `raise`: the import it guards is still required."""
    return bool(handler.body) and isinstance(handler.body[-1], ast.Raise)


def _builds_having(known: _Builds, needed: set[str]) -> frozenset[str] | None:
    tree = known.tree
    index = DeclarationIndex.of(tree)
    definers: dict[str, list[str]] = {}
    for name in needed:
        found = [where for where, decl in index.find(INIT_PREFIX + name, ("function",), suffixes=CPP_SOURCES)
                 if "definition" in decl.flags and not unbuilt(tree, where)]
        if not found:
            return None  # no compiled file of the tree fills it: not a fact this reader can stand behind
        definers[name] = [cmake_directory(tree, where) for where in found]
    if known.configurations is None:
        return None  # a build the entry script leaves undecided may have them
    builds = set()
    for configuration in known.configurations:
        backend = configuration.backend
        if backend in known.prebuilt:
            builds.add(backend)  # a binding library the tree does not build: it may have them
            continue
        made = configured(tree, configuration.cache, configuration.env)
        if all(any(_reaches(tree, made, directory) for directory in directories) for directories in definers.values()):
            builds.add(backend)
    return frozenset(builds)


def _reaches(tree: FileTree, made: Configured, directory: str) -> bool:
    """Whether the build may add the directory: it does, or it adds one it does not know (a plugin directory from
    the environment) and the tree's own CMake never names this one."""
    return directory in made.reached or (made.elsewhere and directory not in named_subdirectories(tree))
