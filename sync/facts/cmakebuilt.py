"""Whether CMake compiles a file: a directory its parent's CMakeLists.txt names only in a commented-out
`add_subdirectory(...)` is left out of the build, with every file under it (sunrise's spec/lib/Conversion on the
3.4.x -> 3.5.1 move: `#add_subdirectory(TritonGPUToLLVM)`). Anything else counts as built: a C++ use claims no
build break only where the tree says plainly that the file is not compiled."""
from __future__ import annotations

import re
from weakref import WeakKeyDictionary

from sync.facts.trees import FileTree, read_text

_ADD_SUBDIRECTORY = re.compile(r"^[ \t]*(#?)[ \t#]*add_subdirectory[ \t]*\([ \t]*\"?([^\s)\"]+)", re.MULTILINE | re.IGNORECASE)


def unbuilt(tree: FileTree, path: str) -> bool:
    """Whether a directory above path is one its parent's CMakeLists.txt adds only in comments, or the nearest
    CMakeLists.txt that names the file names it only in a commented-out target (tsingmicro's
    `# add_llvm_executable(tsingmicro-tensor-layout tsingmicro-tensor-layout.cpp ...)` on the 3.5.x -> 3.7 move)."""
    parts = path.split("/")[:-1]
    return any(_left_out(tree, "/".join(parts[:depth - 1]), parts[depth - 1]) for depth in range(1, len(parts) + 1)) \
        or _target_commented_out(tree, path)


_COMMENTED_TARGET = re.compile(r"^[ \t]*#[ \t#]*add_\w+[ \t]*\(", re.IGNORECASE)
_COMMENTED = re.compile(r"^[ \t]*#")
_GLOB = re.compile(r"\bfile[ \t]*\([ \t]*GLOB", re.IGNORECASE)


def _target_commented_out(tree: FileTree, path: str) -> bool:
    """The nearest CMakeLists.txt above path that spells the file (its path from there) spells it only inside
    commented-out lines, in a block that comments out an add_*( call; a file list it may take from a glob or a
    variable counts as built."""
    parts = path.split("/")
    for depth in range(len(parts) - 1, -1, -1):
        directory, rest = "/".join(parts[:depth]), "/".join(parts[depth:])
        text = read_text(tree, f"{directory}/CMakeLists.txt" if directory else "CMakeLists.txt")
        if not text or rest not in text:  # cheap: most CMake files never spell the file at all
            continue
        mention = re.compile(rf"(?<![\w./-]){re.escape(rest)}(?![\w.-])")
        if not mention.search(text):
            continue
        if _GLOB.search(text):
            return False
        lines = text.splitlines()
        for number, line in enumerate(lines):
            if not mention.search(line):
                continue
            if not _COMMENTED.match(line):
                return False  # an active line names it
            block = number
            while block >= 0 and _COMMENTED.match(lines[block]) and not _COMMENTED_TARGET.match(lines[block]):
                block -= 1
            if block < 0 or not _COMMENTED_TARGET.match(lines[block]):
                return False  # a remark, not a target: read it as built
        return True
    return False


_memo: WeakKeyDictionary[FileTree, dict[str, frozenset[str]]] = WeakKeyDictionary()  # per tree, while it lives


def _left_out(tree: FileTree, parent: str, name: str) -> bool:
    known = _memo.setdefault(tree, {})
    if parent not in known:
        known[parent] = _commented_only(tree, parent)
    return name in known[parent]


def _commented_only(tree: FileTree, directory: str) -> frozenset[str]:
    """The subdirectories directory/CMakeLists.txt adds only in commented-out lines."""
    text = read_text(tree, f"{directory}/CMakeLists.txt" if directory else "CMakeLists.txt")
    if not text:
        return frozenset()
    active: set[str] = set()
    commented: set[str] = set()
    for hash_mark, argument in _ADD_SUBDIRECTORY.findall(text):
        first = argument.strip("/").split("/", 1)[0]  # add_subdirectory(a/b) adds a's subtree b: a is not all of it
        (commented if hash_mark else active).add(first if "/" not in argument.strip("/") else "")
    return frozenset(commented - active - {""})
