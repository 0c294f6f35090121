"""Copies under another name: a backend file whose content is (near) equal to a trunk file it does not mirror.

The measure is git's idea of a copy, by lines: the share of the larger file's non-blank lines (stripped, as a
multiset) that the two files have in common. A file counts only above a size floor, where sameness of content
cannot be a coincidence of a few boilerplate lines; a name never counts.
"""
from __future__ import annotations

import heapq
from collections import Counter
from itertools import chain
from dataclasses import dataclass
from posixpath import basename

from sync.facts.filekinds import COPY_SUFFIXES, is_test_path
from sync.facts.layout import TRUNK, is_third_party, third_party_owner
from sync.facts.trees import FileTree, read_text

NEAR = 0.8  # at least this share of lines in common: the same file (git's copy detection starts at 0.5)
MIN_LINES = 10  # fewer non-blank lines than this, and identity says little (a 3-line __init__.py matches many)
_COMMON = 20  # a line in more trunk files than this (an import, a closing brace) points at no file in particular
_SHORTLIST = 5  # trunk files sharing the most specific lines, measured in full


@dataclass(frozen=True)
class CopyOf:
    source: str  # the trunk file (at the tree it was measured against)
    similarity: float  # share of lines in common, 0..1
    identical: bool


def _lines(text: str) -> Counter[str]:
    lines = Counter(map(str.strip, text.splitlines()))
    del lines[""]  # blank lines say nothing (and a Counter's del of a missing key is no error)
    return lines


def similarity(mine: Counter[str], theirs: Counter[str]) -> float:
    larger = max(sum(mine.values()), sum(theirs.values()))
    if not larger:
        return 0.0
    smaller = mine if len(mine) <= len(theirs) else theirs
    other = theirs if smaller is mine else mine
    return sum(min(count, other[line]) for line, count in smaller.items() if line in other) / larger


class TrunkIndex:
    """Trunk's files of the copy languages, indexed by their specific lines, to find what a backend file copies.

    Trunk is the tree given (the old upstream tag in drift) less every third_party/<b>/ that is the measured
    backend's own; on a tree without upstream history, only files outside third_party/ are trunk."""

    def __init__(self, tree: FileTree, outside_third_party: bool = False) -> None:
        self.tree = tree
        self.texts: dict[str, str] = {}
        self.lines: dict[str, Counter[str]] = {}
        self.sizes: dict[str, int] = {}  # non-blank lines per file
        holders: dict[str, list[str]] = {}
        for path in tree.paths():
            if not path.endswith(COPY_SUFFIXES) or is_test_path(path):
                continue
            if outside_third_party and is_third_party(path):
                continue
            text = read_text(tree, path)
            if text is None:
                continue
            lines = _lines(text)
            if sum(lines.values()) < MIN_LINES:
                continue
            self.texts[path], self.lines[path], self.sizes[path] = text, lines, sum(lines.values())
            for line in lines:
                holders.setdefault(line, []).append(path)
        self.holders = {line: paths for line, paths in holders.items() if len(paths) <= _COMMON}
        self.owners = {path: third_party_owner(path) for path in self.texts}
        # the order of the shortlist past the count: a same-named file, then trunk proper, then path order
        self.ranks = {path: (basename(path), not path.startswith(TRUNK + "/"), path) for path in self.texts}

    def copy_of(self, backend: str, path: str, text: str) -> CopyOf | None:
        """The trunk file this backend file copies, if one holds NEAR of its lines; never the backend's own."""
        mine = _lines(text)
        size = sum(mine.values())
        if size < MIN_LINES:
            return None
        holders = self.holders
        hits = Counter(chain.from_iterable(holders[line] for line in mine if line in holders))  # one counting pass
        owners, ranks, name = self.owners, self.ranks, basename(path)
        best: CopyOf | None = None
        # most shared specific lines first; then a same-named file, then trunk proper, then path order
        ranked = heapq.nsmallest(_SHORTLIST, (holder for holder in hits if owners[holder] != backend and holder != path),
                                 key=lambda holder: (-hits[holder], ranks[holder][0] != name, *ranks[holder][1:]))
        for holder in ranked:
            if min(size, self.sizes[holder]) < NEAR * max(size, self.sizes[holder]):
                continue  # the lines in common are at most the smaller file's: under NEAR whatever they are
            share = similarity(mine, self.lines[holder])
            if share >= NEAR and (best is None or share > best.similarity):
                best = CopyOf(holder, share, self.texts[holder] == text)
        return best


def copy_candidates(tree: FileTree, backends: set[str] | None, taken: set[str]) -> list[tuple[str, str]]:
    """(backend, path) of each backend file to measure: every non-test file of a copy language under
    third_party/<b>/ that no other mechanism already pairs with a trunk file."""
    found = []
    for path in tree.paths():
        backend = third_party_owner(path)
        if backend is None or path in taken or not path.endswith(COPY_SUFFIXES) or is_test_path(path):
            continue
        if not backends or backend in backends:
            found.append((backend, path))
    return found
