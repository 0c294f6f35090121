"""Which builds can import a trunk Python module: the ones whose binding library has every submodule the module
and its packages import unconditionally.

Triton's binding library `triton._C.libtriton` gets one submodule per compiled `init_triton_<name>` function
(python/src/main.cc calls each through `def_submodule`). A package whose `__init__.py` imports
`triton._C.libtriton.<name>`, or re-raises when it cannot (FlagTree's TLE: `except ImportError: raise
RuntimeError`), loads only in a build that compiles the file defining `init_triton_<name>`. A build compiles that
file when the build configuration (facts/buildconfigs) reaches the directory of its nearest CMakeLists.txt
(facts/cmakebuilt): TLE's C++ is added only `if(FLAGTREE_BACKEND STREQUAL "ascend")` on the 3.2 and 3.3 lines.

Every doubt counts as "can import": an import this reader does not follow, a configuration the entry script
does not decide, a backend that ships a prebuilt binding library, a submodule no compiled file defines. A backend
whose setup installs the module's package from its own python tree (layout.generic_package_roots) ships that
tree's file, not trunk's: its build does not import trunk's module."""
from __future__ import annotations

import ast
from posixpath import dirname
from typing import Callable

from sync.facts.buildconfigs import every_configuration, prebuilt_extension_backends
from sync.facts.cmakebuilt import Configured, cmake_directory, configured, named_subdirectories, unbuilt
from sync.facts.declindex import DeclarationIndex, declarations_of
from sync.facts.filekinds import CPP_SOURCES
from sync.facts.layout import generic_package_roots
from sync.facts.pymodules import MODULE_SUFFIX, TRUNK_PACKAGE, absolute, package_of
from sync.facts.trees import FileTree, read_text
from sync.git.readlog import TreeMemo

BINDINGS = "triton._C.libtriton"
INIT_PREFIX = "init_triton_"  # the function that fills libtriton's submodule of the same suffix
NO_BACKEND = ""  # the build without a FlagTree backend (upstream's own codegen backends)

_memo: TreeMemo[frozenset[str] | None] = TreeMemo()


def importing_builds(tree: FileTree, upstream: FileTree, path: str) -> frozenset[str] | None:
    """The backends ('' for the build without one) whose build can import the trunk module at path; None when
    every build may (nothing it imports narrows it, or something is not known)."""
    needed = required_submodules(tree, path)
    if not needed:
        return None
    having = _memo.get(tree, ",".join(sorted(needed)), lambda: _builds_having(tree, upstream, needed))
    if having is None:
        return None
    return having - _installing_elsewhere(tree, dirname(path))


def _installing_elsewhere(tree: FileTree, package_dir: str) -> set[str]:
    """The backends whose setup installs the module's package from their own python tree
    (layout.generic_package_roots): their build ships that directory's copy, never trunk's file."""
    package = package_dir.removeprefix(TRUNK_PACKAGE)
    paths = tree.paths()
    return {mapped.backend for mapped in generic_package_roots(tree, beside_setup=True)
            if mapped.source_dir(package) != package_dir and any(p.startswith(f"{mapped.root}/") for p in paths)}


def declared_where_imported(tree: FileTree, upstream: FileTree, path: str, declaring: str, name: str,
                            serving: Callable[[str, str], str | None]) -> bool:
    """Whether every build that can import the trunk module at path loads, in place of the trunk module
    `declaring`, a file of its own (serving(backend, declaring)) that still binds the name at its top level:
    then no build meets upstream's removal of the name from `declaring` there."""
    builds = importing_builds(tree, upstream, path)
    if builds is None or NO_BACKEND in builds:
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


def _builds_having(tree: FileTree, upstream: FileTree, needed: set[str]) -> frozenset[str] | None:
    index = DeclarationIndex.of(tree)
    definers: dict[str, list[str]] = {}
    for name in needed:
        found = [where for where, decl in index.find(INIT_PREFIX + name, ("function",), suffixes=CPP_SOURCES)
                 if "definition" in decl.flags and not unbuilt(tree, where)]
        if not found:
            return None  # no compiled file of the tree fills it: not a fact this reader can stand behind
        definers[name] = [cmake_directory(tree, where) for where in found]
    configurations = every_configuration(tree, upstream)
    if configurations is None:
        return None  # a build the entry script leaves undecided may have them
    prebuilt = prebuilt_extension_backends(tree, upstream)
    builds = set()
    for configuration in configurations:
        backend = configuration.backend
        if backend in prebuilt:
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
