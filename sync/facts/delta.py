"""Shared facts for the analyzers of code that merged cleanly and still breaks (issue 12).

FlagTree's added lines per file (diff old tag -> fork), a text diff for a finding's evidence, and the
backend a path belongs to. Computed once per DriftContext pair of trees (git caches the tree diffs)."""
from __future__ import annotations

import difflib
from functools import lru_cache
from typing import Callable

from unidiff import PatchSet

from sync.support.cache import memoized_by, stored_by
from sync.git import GitTree, Oid
from sync.git import added_lines as tree_added_lines
from sync.model.report import backend_among
from sync.facts.filekinds import CPP_CODE, PY_SUFFIXES, TD_SUFFIXES, is_cmake, is_shipped_python  # noqa: F401 (is_cmake: also from here)
from sync.facts.layout import in_own_trunk_copy
from sync.facts.trees import read_text

PY, CPP, TD = PY_SUFFIXES, CPP_CODE, TD_SUFFIXES  # the vocabulary's (facts/filekinds.py), by their short names


_FORK_ADDED = ("fork-added-lines", 3)  # kind and version in the fact cache


def fork_diff_stored(old_tree: Oid, fork_tree: Oid) -> bool:
    """Whether the active fact cache holds fork_added_lines of these two trees (a run has diffed them)."""
    return stored_by(*_FORK_ADDED, [str(old_tree), str(fork_tree)])


# (repository, old tree id, fork tree id) -> the diff: every analyzer of a run asks, and so may the parse
# begun before the replay (with tree objects of its own)
_added_memo: dict[tuple[str, Oid, Oid], dict[str, frozenset[int]]] = {}
_MEMO_PAIRS = 4


def fork_python_texts(old: GitTree, fork: GitTree) -> list[str]:
    """The fork's Python files with FlagTree-added lines: what the analyses on request read most."""
    return [text for path in fork_added_lines(old, fork) if path.endswith(PY)
            for text in [read_text(fork, path)] if text is not None]


def forget_fork_diffs() -> None:
    """Drop the diffs kept in memory (tests that count what a run computes)."""
    _added_memo.clear()


def fork_added_lines(old: GitTree, fork: GitTree) -> dict[str, frozenset[int]]:
    """FlagTree's added lines (fork-side numbers) per code, TableGen or CMake file, from one tree diff; through
    the fact cache, keyed by the two trees' ids (a diff that could not read some blob is not kept)."""
    key = (old.repo.path, old.tree.id, fork.tree.id)
    if key in _added_memo:
        return _added_memo[key]
    unread: list[str] = []
    added = memoized_by(*_FORK_ADDED, [str(old.tree.id), str(fork.tree.id)],
                        lambda: fork_diff(old, fork, unread), _encode_added, _decode_added, keep=lambda: not unread)
    added = _flagtree_lines(added)
    if not unread:
        _remember(key, added)
    return added


def _flagtree_lines(added: dict[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    """The added lines the analyses read: none of a backend's own copy of trunk (layout.in_own_trunk_copy)."""
    return {path: lines for path, lines in added.items() if not in_own_trunk_copy(path)}



def fork_lines_where(old: GitTree, fork: GitTree, wanted: Callable[[str], bool]) -> dict[str, set[int]]:
    """FlagTree's added lines of the code files wanted, from the run's one diff of the fork (fork_added_lines);
    a diff of its own per question read the fork's blobs again (1.5 s over four analyses on the 3.7 move)."""
    return {path: set(lines) for path, lines in fork_added_lines(old, fork).items() if wanted(path)}


def fork_diff(old: GitTree, fork: GitTree, unread: list[str]) -> dict[str, frozenset[int]]:
    """fork_added_lines without the caches; the paths whose blobs could not be read go to unread. Of Python only
    the files a built package can import: FlagTree's tests and tutorials break no build, and were 64% of the Python
    a first run of the 3.7 move parsed (5.2 of 8.1 MB)."""
    wanted = lambda path: is_shipped_python(path) or path.endswith(CPP + TD) or is_cmake(path)
    return {path: frozenset(lines) for path, lines in tree_added_lines(old, fork, wanted, unread).items()}


def adopt_fork_diff(repo_path: str, old_tree: Oid, fork_tree: Oid, added: dict[str, frozenset[int]]) -> None:
    """fork_diff of these trees, made in another process (the parse begun before the replay): kept, and
    stored in the active fact cache, as if fork_added_lines had made it here."""
    memoized_by(*_FORK_ADDED, [str(old_tree), str(fork_tree)], lambda: added, _encode_added, _decode_added)
    _remember((repo_path, old_tree, fork_tree), _flagtree_lines(added))


def _remember(key: tuple[str, Oid, Oid], added: dict[str, frozenset[int]]) -> None:
    if len(_added_memo) >= _MEMO_PAIRS:
        del _added_memo[next(iter(_added_memo))]
    _added_memo[key] = added


def _encode_added(added: dict[str, frozenset[int]]) -> dict[str, list[int]]:
    return {path: sorted(lines) for path, lines in added.items()}


def _decode_added(stored: dict) -> dict[str, frozenset[int]]:
    return {str(path): frozenset(map(int, lines)) for path, lines in stored.items()}


@lru_cache(maxsize=128)  # many findings carry the same function's diff (one per call site)
def text_diff(before: str, after: str, old_path: str, new_path: str, context: int = 3) -> str:
    """A unified diff of two texts (the evidence a finding rests on)."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{old_path}", f"b/{new_path}", n=context))


def backend_of(owners_of: Callable[[str], list[str]], path: str) -> str | None:
    return backend_among(owners_of(path))


def hunks_with(diff: str, key: str) -> str:
    """Only the hunks of a diff that mention the key (the evidence, not the whole file)."""
    if not diff:
        return ""
    patch = PatchSet(diff)
    kept = [str(hunk) for file in patch for hunk in file if key in str(hunk)]
    head = "".join(diff.splitlines(keepends=True)[:2])
    return head + "".join(kept) if kept else ""
