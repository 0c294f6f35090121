"""Which include directories a backend's compiled files see (issue 45): where a declaration a site of backend b
names is looked up.

FlagTree's root CMakeLists.txt puts `third_party/${FLAGTREE_BACKEND}/include` on the include path in place of
trunk's `include/` when the backend carries its own copy of trunk (iluvatar, mthreads, xpu on the 3.1 line), and a
backend's own CMakeLists.txt adds its directories (`${CMAKE_CURRENT_SOURCE_DIR}/include`). Read from those
`include_directories` calls, with the build's variables put in (the backend's name for FLAGTREE_BACKEND, source
directories for CMAKE_CURRENT_SOURCE_DIR and PROJECT_SOURCE_DIR, values `set` in the same file); a directory of
the build tree (a BINARY_DIR) or a value read from elsewhere is not a file of the tree and is left out. The
backend's `include/` counts too where it exists (the layout every FlagTree backend uses), whatever CMake says.

A trunk header `include/<rel>` that one of these directories holds as `<dir>/<rel>` is what the backend's files
compile: its declarations, not trunk's, answer their uses.
"""
from __future__ import annotations

import re
from posixpath import dirname, join, normpath

from sync.facts.cmake import ROOT_VARIABLES, commands
from sync.facts.layout import THIRD_PARTY, backend_dir, third_party_owner
from sync.facts.trees import FileTree, read_text
from sync.git.readlog import TreeMemo

ROOT_CMAKE = "CMakeLists.txt"
TRUNK_INCLUDE = "include/"
_VARIABLE = re.compile(r"\$\{(\w+)\}")
_NAME = re.compile(r"\w+\Z")
_SOURCE_DIRS = ("CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR")
_BACKEND_VARIABLES = ("FLAGTREE_BACKEND",)
_KEYWORDS = {"AFTER", "BEFORE", "SYSTEM"}

_cache: TreeMemo[tuple[str, ...]] = TreeMemo()  # per tree and backend, while the tree lives


def _expanded(word: str, here: str, backend: str, bound: dict[str, str]) -> str | None:
    """A CMake word with the build's variables put in; None where one is not known here."""
    def value(match: re.Match[str]) -> str:
        name = match[1]
        if name in _SOURCE_DIRS:
            return here or "."
        if name in ROOT_VARIABLES:
            return "."
        if name in _BACKEND_VARIABLES:
            return backend
        if name in bound:
            return bound[name]
        raise KeyError(name)
    from_variable = word.startswith("${")  # a source directory's value is a path from the root already
    try:
        for _ in range(4):  # a value set from another variable
            if "${" not in word:
                break
            word = _VARIABLE.sub(value, word)
    except KeyError:
        return None
    if "${" in word or word.startswith("/"):
        return None
    return normpath(word if from_variable else join(here, word))


def _directories(tree: FileTree, cmake: str, backend: str) -> list[str]:
    """The directories one CMake file's include_directories name, for a build of the backend."""
    read = commands(read_text(tree, cmake) or "")
    here = dirname(cmake)
    bound: dict[str, str] = {}
    for command in read:
        if command.name == "set" and len(command.args) == 2 and _NAME.match(command.args[0].text):
            bound.setdefault(command.args[0].text, command.args[1].text)  # the first: a later one is another branch
    found = []
    for command in read:
        if command.name != "include_directories":
            continue
        for argument in command.args:
            if not argument.quoted and argument.text.upper() in _KEYWORDS:
                continue
            directory = _expanded(argument.text, here, backend, bound)
            if directory is not None and directory not in found:
                found.append(directory)
    return found


def own_include_dirs(tree: FileTree, backend: str) -> tuple[str, ...]:
    """The backend's own directories (under third_party/<b>/) on its build's include path, in the order named."""
    return _cache.get(tree, backend, lambda: _own_include_dirs(tree, backend))


def _own_include_dirs(tree: FileTree, backend: str) -> tuple[str, ...]:
    home = backend_dir(backend)
    named = _directories(tree, ROOT_CMAKE, backend) + _directories(tree, f"{home}/{ROOT_CMAKE}", backend)
    named.append(f"{home}/include")
    prefix = f"{home}/"
    return tuple(dict.fromkeys(directory for directory in named if directory.startswith(prefix)))


def backend_copy(tree: FileTree, backend: str, declaring: str) -> str | None:
    """The file backend b's compiled files read in place of trunk's `declaring`: the same header below one of
    the backend's own include directories (include/<rel> -> <dir>/<rel>), or the backend's copy at the same
    place of its tree (third_party/<b>/<declaring>); None where the backend has none."""
    if declaring.startswith(f"{THIRD_PARTY}/"):
        return None
    if declaring.startswith(TRUNK_INCLUDE):
        rel = declaring[len(TRUNK_INCLUDE):]
        for directory in own_include_dirs(tree, backend):
            if tree.exists(f"{directory}/{rel}"):
                return f"{directory}/{rel}"
    same_place = f"{backend_dir(backend)}/{declaring}"
    return same_place if tree.exists(same_place) else None


def compiled_copy(tree: FileTree, site: str, declaring: str) -> str | None:
    """backend_copy for the backend of a compiled file at `site`; None for trunk's files."""
    backend = third_party_owner(site)
    return backend_copy(tree, backend, declaring) if backend is not None else None
