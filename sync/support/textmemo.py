"""The last parses of texts, kept while the texts' lengths sum to a budget.

Several analyses parse the same file for different facts (a first run of the 3.7 move parsed a third of its
C++ and Python texts twice or more), usually one after another. An LRU by count (lru_cache) keeps either too
few trees or too many bytes: trees cost about 12 (tree-sitter) to 28 (CPython's ast) times their text, and
real files range from 100 bytes to 1 MB. The budget is in characters of text, so memory stays bounded.
Callers must not change a tree they get: the next caller gets the same object."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

Tree = TypeVar("Tree")


class TextMemo(Generic[Tree]):
    def __init__(self, budget: int) -> None:
        self.budget = budget  # characters of text whose trees are kept
        self._trees: OrderedDict[str, Tree] = OrderedDict()
        self._held = 0

    def get(self, text: str, parse: Callable[[str], Tree]) -> Tree:
        """parse(text), from the memo where it holds text; an exception from parse passes and keeps nothing."""
        tree = self._trees.get(text)
        if tree is not None:
            self._trees.move_to_end(text)
            return tree
        tree = parse(text)
        if len(text) <= self.budget:
            self._trees[text] = tree
            self._held += len(text)
            while self._held > self.budget:
                dropped, _ = self._trees.popitem(last=False)
                self._held -= len(dropped)
        return tree

    def clear(self) -> None:
        self._trees.clear()
        self._held = 0
