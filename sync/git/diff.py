"""Tree and blob diffs, read-only: nothing here writes an object into the repository."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import pygit2
from pygit2.enums import DeltaStatus

from sync.git.trees import GitTree


@dataclass(frozen=True)
class Change:
    """One file upstream touched between two trees; new_path is None when deleted."""

    old_path: str
    new_path: str | None
    status: str  # modified | deleted | renamed | added | ...

    @property
    def renamed(self) -> bool:
        return self.status == "renamed"


_STATUS = {DeltaStatus.ADDED: "added", DeltaStatus.DELETED: "deleted", DeltaStatus.MODIFIED: "modified",
           DeltaStatus.RENAMED: "renamed", DeltaStatus.COPIED: "copied", DeltaStatus.TYPECHANGE: "typechange"}

# (repo path, old tree id, new tree id) -> changes: rename detection is the costly part of a tree diff,
# so it runs once per pair of trees however many analyzers ask.
_similar_cache: dict[tuple[str, pygit2.Oid, pygit2.Oid], tuple[Change, ...]] = {}
_CACHED_PAIRS = 4  # a run compares one or two pairs; tests open many repositories


def changes_with_renames(old: GitTree, new: GitTree) -> tuple[Change, ...]:
    """Every change old -> new, renames found by git's similarity detection (computed once per pair)."""
    key = (old.repo.path, old.tree.id, new.tree.id)
    if key not in _similar_cache:
        if len(_similar_cache) >= _CACHED_PAIRS:
            del _similar_cache[next(iter(_similar_cache))]
        diff = old.repo.diff(old.tree, new.tree)  # type: ignore[call-overload]  # stubs omit Tree, libgit2 takes it
        diff.find_similar()
        _similar_cache[key] = tuple(
            Change(delta.old_file.path, None if delta.status == DeltaStatus.DELETED else delta.new_file.path,
                   _STATUS.get(delta.status, "other")) for delta in diff.deltas)
    return _similar_cache[key]


def renames(old: GitTree, new: GitTree) -> dict[str, str]:
    """Renames old path -> new path between two trees."""
    return {change.old_path: change.new_path for change in changes_with_renames(old, new)
            if change.renamed and change.new_path is not None}


def added_lines(old: GitTree, new: GitTree, wanted: Callable[[str], bool],
                unread: list[str] | None = None) -> dict[str, set[int]]:
    """Lines new adds over old (new-side numbers) per file that wanted() accepts; other blobs are not read,
    so a partial clone missing them still works (a file whose blobs cannot be read is left out, and its
    path added to unread when given)."""
    added: dict[str, set[int]] = {}
    diff = old.repo.diff(old.tree, new.tree, context_lines=0)  # type: ignore[call-overload]  # as above
    for number, delta in enumerate(diff.deltas):
        path = delta.new_file.path
        if not wanted(path) or delta.is_binary:
            continue
        try:
            patch = diff[number]
        except (pygit2.GitError, KeyError):
            if unread is not None:
                unread.append(path)
            continue
        lines = {line.new_lineno for hunk in patch.hunks for line in hunk.lines if line.origin == "+"}
        if lines:
            added[path] = lines
    return added


def blobs_added_or_changed(repo: pygit2.Repository, old_tree: pygit2.Oid, new_tree: pygit2.Oid,
                           suffixes: tuple[str, ...], wanted: Callable[[str], bool] = lambda path: True,
                           ) -> dict[pygit2.Oid, str]:
    """One path of each blob the new tree adds or changes under a wanted name ending in one of suffixes, by blob
    id."""
    return {delta.new_file.id: delta.new_file.path
            for delta in repo.diff(repo[old_tree], repo[new_tree]).deltas  # type: ignore[call-overload]
            if delta.status != DeltaStatus.DELETED and delta.new_file.path.endswith(suffixes)
            and wanted(delta.new_file.path)}


@dataclass(frozen=True)
class BlobDiff:
    """A diff of two blobs: its unified text, and its hunks' old-side (start, length) and line counts as
    libgit2 made them (read from its patch, not parsed back from the text)."""

    text: str
    hunks: tuple[tuple[int, int], ...] = ()
    added: int = 0
    removed: int = 0


def blob_patch(repo: pygit2.Repository, old: pygit2.Oid | None, new: pygit2.Oid | None, old_path: str,
               new_path: str) -> BlobDiff:
    """Unified diff of two blobs, with its hunks (a summary needs no parse of the text); a missing side reads as
    the empty blob, as git diffs it against e69de29. Nothing is written (the empty side is passed as bytes, not
    created as an object)."""
    if old is None and new is None:
        return BlobDiff("")
    # Both sides stay referenced until the text is made: libgit2 reads their buffers lazily.
    before = repo[old].peel(pygit2.Blob) if old is not None else b""
    after = repo[new].peel(pygit2.Blob) if new is not None else b""
    patch = pygit2.Patch.create_from(before, after, old_as_path=old_path, new_as_path=new_path)
    _, added, removed = patch.line_stats
    return BlobDiff(patch.text or "", tuple((hunk.old_start, hunk.old_lines) for hunk in patch.hunks), added, removed)


@dataclass(frozen=True)
class Hunk:
    """One hunk of a diff without context lines: the old side's lines old_start.. (old_lines of them) became the
    new side's new_start.. (new_lines); removed and added hold their texts, in order."""

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    removed: tuple[str, ...]
    added: tuple[str, ...]


def commit_hunks(repo: pygit2.Repository, commit: pygit2.Commit,
                 wanted: Callable[[str], bool]) -> Iterator[tuple[str, Hunk]]:
    """(new path, hunk without context) of each file a single-parent commit modified that wanted() accepts: one
    tree diff of the commit against its parent, no index of either tree."""
    diff = repo.diff(commit.parents[0].tree, commit.tree, context_lines=0)  # type: ignore[call-overload]
    for patch in diff:
        delta = patch.delta
        if delta.status != DeltaStatus.MODIFIED or not wanted(delta.new_file.path):
            continue
        for hunk in patch.hunks:
            yield delta.new_file.path, Hunk(hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines,
                                            tuple(line.content for line in hunk.lines if line.origin == "-"),
                                            tuple(line.content for line in hunk.lines if line.origin == "+"))


def blob_hunks(repo: pygit2.Repository, old: pygit2.Oid, new: pygit2.Oid) -> tuple[Hunk, ...]:
    """The hunks of old -> new without context, as libgit2 finds them (what a line of old became in new)."""
    if old == new:
        return ()
    patch = pygit2.Patch.create_from(repo[old].peel(pygit2.Blob), repo[new].peel(pygit2.Blob), context_lines=0)
    return tuple(Hunk(hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines,
                      tuple(line.content for line in hunk.lines if line.origin == "-"),
                      tuple(line.content for line in hunk.lines if line.origin == "+"))
                 for hunk in patch.hunks)


def changed_paths(repo: pygit2.Repository, commit_id: str) -> list[str]:
    """The paths a commit changed against its first parent (both sides of a rename)."""
    files = _first_parent_files(repo[commit_id].peel(pygit2.Commit))
    return sorted({file.path for file in files})


def missing_blobs(repo: pygit2.Repository, commit: pygit2.Commit) -> list[str]:
    """The paths a commit changes (against its first parent, both sides) whose blob the object store lacks."""
    return sorted({file.path for file in _first_parent_files(commit) if file.id != _NO_BLOB and not repo.odb.exists(file.id)})


_NO_BLOB = pygit2.Oid(hex="0" * 40)  # the side of an added or deleted file that is not there


def _first_parent_files(commit: pygit2.Commit) -> list[pygit2.DiffFile]:
    """Both sides of every file a commit changes against its first parent (an empty tree for a root commit)."""
    if commit.parents:
        diff = commit.parents[0].tree.diff_to_tree(commit.tree)
    else:
        diff = commit.tree.diff_to_tree(swap=True)
    return [file for delta in diff.deltas for file in (delta.old_file, delta.new_file)]
