"""Shared facts for the analyzers of code that merged cleanly and still breaks (issue 12).

FlagTree's added lines per file (diff old tag -> fork), a text diff for a finding's evidence, and the
backend a path belongs to. Computed once per DriftContext pair of trees (git caches the tree diffs)."""
from __future__ import annotations

import difflib
from functools import lru_cache
from typing import Callable

from unidiff import PatchSet

from ..cache import memoized_by
from ..git import GitTree
from ..git import added_lines as tree_added_lines

PY = (".py",)
CPP = (".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx", ".inc")
TD = (".td",)
CMAKE_NAMES = ("CMakeLists.txt",)


def is_cmake(path: str) -> bool:
    return path.rsplit("/", 1)[-1] in CMAKE_NAMES or path.endswith(".cmake")


@lru_cache(maxsize=4)  # every analyzer of one run asks with the same two tree objects
def fork_added_lines(old: GitTree, fork: GitTree) -> dict[str, frozenset[int]]:
    """FlagTree's added lines (fork-side numbers) per code, TableGen or CMake file, from one tree diff; through
    the fact cache, keyed by the two trees' ids (a diff that could not read some blob is not stored)."""
    wanted = lambda path: path.endswith(PY + CPP + TD) or is_cmake(path)
    unread: list[str] = []
    diffed = lambda: {path: frozenset(lines) for path, lines in tree_added_lines(old, fork, wanted, unread).items()}
    return memoized_by("fork-added-lines", 2, [str(old.tree.id), str(fork.tree.id)], diffed,
                       encode=lambda found: {path: sorted(lines) for path, lines in found.items()},
                       decode=lambda stored: {str(path): frozenset(map(int, lines)) for path, lines in stored.items()},
                       keep=lambda: not unread)


@lru_cache(maxsize=128)  # many findings carry the same function's diff (one per call site)
def text_diff(before: str, after: str, old_path: str, new_path: str, context: int = 3) -> str:
    """A unified diff of two texts (the evidence a finding rests on)."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{old_path}", f"b/{new_path}", n=context))


def backend_of(owners_of: Callable[[str], list[str]], path: str) -> str | None:
    return next((owner for owner in owners_of(path) if owner not in ("shared-trunk", "flagtree-core")), None)


def hunks_with(diff: str, key: str) -> str:
    """Only the hunks of a diff that mention the key (the evidence, not the whole file)."""
    if not diff:
        return ""
    patch = PatchSet(diff)
    kept = [str(hunk) for file in patch for hunk in file if key in str(hunk)]
    head = "".join(diff.splitlines(keepends=True)[:2])
    return head + "".join(kept) if kept else ""
