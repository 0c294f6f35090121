"""The include graph of a tree (issue 45): which of the tree's files a C/C++ file reaches through its `#include`s,
directly or through the headers it includes. A spelled include resolves to every file of the tree it can name: the
including file's directory, the repository's root, and any `include/` directory of the tree (trunk's and upstream's
own third_party/<x>/include, a backend's own); an include the tree cannot answer (MLIR, LLVM, the system, a file
TableGen generates) is outside it. Taking every candidate keeps the closure an over-approximation: a claim that a
file does NOT reach a header stays sound where a compiler's -I order would pick one of them.
"""
from __future__ import annotations

import re
import weakref
from posixpath import dirname, join, normpath
from typing import Any

from sync.facts.declindex import HEADER_SUFFIXES, TD_SUFFIXES
from sync.facts.trees import FileTree, read_text

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)
_TD_INCLUDE = re.compile(r'^[ \t]*include[ \t]+"([^"\n]+)"', re.MULTILINE)


def spelled_includes(text: str) -> list[tuple[int, str]]:
    """(line, name as spelled) of each `#include "name"` or `#include <name>` of a C/C++ text, lines counted by
    newlines alone, as git numbers them."""
    found, line, counted = [], 1, 0
    for match in _INCLUDE.finditer(text):
        line += text.count("\n", counted, match.start())
        counted = match.start()
        found.append((line, match[1]))
    return found


def spelled_td_includes(text: str) -> list[tuple[int, str]]:
    """(line, name as spelled) of each `include "name"` of a TableGen text, lines counted as git numbers them."""
    return [(text.count("\n", 0, match.start()) + 1, match[1]) for match in _TD_INCLUDE.finditer(text)]


class IncludeGraph:
    """Includes of one tree, read lazily and kept per file."""

    _graphs: "weakref.WeakKeyDictionary[Any, IncludeGraph]" = weakref.WeakKeyDictionary()

    def __init__(self, tree: FileTree) -> None:
        self.tree = tree
        self._under_include: dict[str, list[str]] | None = None
        self._direct: dict[str, tuple[str, ...]] = {}
        self._closures: dict[str, frozenset[str]] = {}

    @classmethod
    def of(cls, tree: FileTree) -> "IncludeGraph":
        graph = cls._graphs.get(tree)
        if graph is None:
            graph = cls._graphs[tree] = cls(tree)
        return graph

    def _suffixes(self) -> dict[str, list[str]]:
        """The part of each header's (or TableGen file's) path after an `include/` directory -> the files with
        that part (TableGen's `include` searches its include directories as C++'s does)."""
        if self._under_include is None:
            found: dict[str, list[str]] = {}
            for path in self.tree.paths():
                if path.endswith(HEADER_SUFFIXES + TD_SUFFIXES):
                    parts = path.split("/")
                    for index, part in enumerate(parts[:-1]):
                        if part == "include":
                            found.setdefault("/".join(parts[index + 1:]), []).append(path)
            self._under_include = found
        return self._under_include

    def resolve(self, including: str, spelled: str) -> list[str]:
        """The tree's files an include of `spelled` in the file `including` can name."""
        candidates = {normpath(join(dirname(including), spelled)), normpath(spelled)}
        found = [path for path in candidates if not path.startswith("..") and self.tree.exists(path)]
        return sorted(set(found) | set(self._suffixes().get(normpath(spelled), ())))

    def direct(self, path: str) -> tuple[str, ...]:
        if path not in self._direct:
            text = read_text(self.tree, path) or ""
            self._direct[path] = tuple(sorted({reached for spelled in _INCLUDE.findall(text)
                                               for reached in self.resolve(path, spelled.strip())}))
        return self._direct[path]

    def closure(self, path: str) -> frozenset[str]:
        """Every file of the tree path reaches through its includes, path itself included."""
        if path in self._closures:
            return self._closures[path]
        seen = {path}
        pending = [path]
        while pending:
            current = pending.pop()
            known = self._closures.get(current)
            if known is not None and current != path:
                seen |= known
                continue
            for reached in self.direct(current):
                if reached not in seen:
                    seen.add(reached)
                    pending.append(reached)
        self._closures[path] = frozenset(seen)
        return self._closures[path]
