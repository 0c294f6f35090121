"""The include graph of a tree (issue 45): which of the tree's files a C/C++ file reaches through its `#include`s,
directly or through the headers it includes. A spelled include resolves to every file of the tree it can name: the
including file's directory, the repository's root, and any `include/` directory of the tree (trunk's and upstream's
own third_party/<x>/include, a backend's own); an include the tree cannot answer (MLIR, LLVM, the system, a file
TableGen generates) is outside it. Taking every candidate keeps the closure an over-approximation: a claim that a
file does NOT reach a header stays sound where a compiler's -I order would pick one of them.
"""
from __future__ import annotations

import re
from collections.abc import Hashable
from posixpath import dirname, join, normpath
from typing import Any

from sync.facts.cpp import included_name
from sync.facts.declindex import HEADER_SUFFIXES, TD_SUFFIXES
from sync.facts.trees import FileTree, read_text
from sync.git.readlog import ReadLog, TreeMemo, kept_value

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


def spelled_includes_of(path: str, text: str) -> list[tuple[int, str]]:
    """(line, name as spelled) of each include of a C++ or TableGen text, read by path's suffix."""
    if path.endswith(TD_SUFFIXES):
        return spelled_td_includes(text)
    return [(line, name) for line, row in enumerate(text.splitlines(), start=1)
            for name in [included_name(row)] if name is not None]


class IncludeGraph:
    """Includes of one tree, read lazily and kept per file; each kept answer replays what it read of a watched tree
    (git/readlog.py), so an analysis that takes it from an earlier one logs the files it rests on."""

    _graphs: "TreeMemo[IncludeGraph]" = TreeMemo()

    def __init__(self, tree: FileTree) -> None:
        self.tree = tree
        self._kept: dict[Hashable, tuple[Any, ReadLog]] = {}

    @classmethod
    def of(cls, tree: FileTree) -> "IncludeGraph":
        return cls._graphs.get(tree, None, lambda: cls(tree))

    def _suffixes(self) -> dict[str, list[str]]:
        """The part of each header's (or TableGen file's) path after an `include/` directory -> the files with
        that part (TableGen's `include` searches its include directories as C++'s does)."""
        return kept_value(self._kept, "suffixes", self._read_suffixes)

    def _read_suffixes(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for path in self.tree.paths():
            if path.endswith(HEADER_SUFFIXES + TD_SUFFIXES):
                parts = path.split("/")
                for index, part in enumerate(parts[:-1]):
                    if part == "include":
                        found.setdefault("/".join(parts[index + 1:]), []).append(path)
        return found

    def resolve(self, including: str, spelled: str) -> list[str]:
        """The tree's files an include of `spelled` in the file `including` can name."""
        candidates = {normpath(join(dirname(including), spelled)), normpath(spelled)}
        found = [path for path in candidates if not path.startswith("..") and self.tree.exists(path)]
        return sorted(set(found) | set(self._suffixes().get(normpath(spelled), ())))

    def direct(self, path: str) -> tuple[str, ...]:
        return kept_value(self._kept, ("direct", path), lambda: tuple(sorted(
            {reached for spelled in _INCLUDE.findall(read_text(self.tree, path) or "")
             for reached in self.resolve(path, spelled.strip())})))

    def closure(self, path: str) -> frozenset[str]:
        """Every file of the tree path reaches through its includes, path itself included."""
        return kept_value(self._kept, ("closure", path), lambda: self._reach(path))

    def _reach(self, path: str) -> frozenset[str]:
        seen = {path}
        pending = [path]
        while pending:
            current = pending.pop()
            if current != path and ("closure", current) in self._kept:
                seen |= self.closure(current)  # (replays what that closure read)
                continue
            for reached in self.direct(current):
                if reached not in seen:
                    seen.add(reached)
                    pending.append(reached)
        return frozenset(seen)
