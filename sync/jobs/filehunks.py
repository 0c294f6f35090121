"""Each conflicted file's hunks as the upgraded branch holds it (issue 48), and the labels resolve merges with."""
from __future__ import annotations

from typing import Iterable

from sync.git import ConflictHunk, GitTree, Repository, holds_conflict, merge_blobs
from sync.git.merge import conflict_hunks
from sync.model import FileHunks, Hunk, Range, ReplayedCommit, conflicts_by_file


def merge_labels(rng: Range) -> tuple[str, str, str]:
    """base, ours, theirs: the upgraded side is labelled as the replay labels it."""
    return f"{rng.old.ref} (old upstream)", f"{rng.onto.ref} (upgraded)", f"{rng.source.ref} (FlagTree)"


_HUNKED = ("content", "add/add")  # conflict kinds with hunks; a delete/modify conflict has none


def hunks_on_branch(repo: Repository, rng: Range, tip: str, commits: Iterable[ReplayedCommit]) -> dict[str, FileHunks]:
    """The hunks of each conflicted file as the branch at tip holds it (issue 48): parsed from the file when it
    holds one level of markers, else (nested markers, or a file several commits conflicted in that no longer
    holds any) those of the single-level merge resolve writes. A commit's own hunks stop matching the file once
    a later commit merged over them, or the file was edited after."""
    branch = GitTree.of_commit(repo, tip, "branch")
    old, new, fork = (GitTree.of_commit(repo, rev.oid, rev.ref) for rev in (rng.old, rng.onto, rng.source))
    found: dict[str, FileHunks] = {}
    for item in conflicts_by_file(conflict for commit in commits for conflict in commit.conflicts):
        if not any(kind in _HUNKED for kind in item.kinds):
            continue
        data = branch.read(item.path)
        text = data.decode("utf-8", errors="replace") if data is not None and b"\0" not in data else None
        if text is not None and holds_conflict(data or b""):
            hunks = conflict_hunks(text)
            if _marker_blocks(text) == len(hunks):  # one level: what the user sees is what is shown
                found[item.path] = FileHunks(_model(hunks), "branch")
                continue
        elif len(item.conflicts) == 1:  # resolved, or never merged over: its commit's hunks are the file's
            continue
        theirs = fork.blob_id(item.path)
        if theirs is None:
            continue
        merged = merge_blobs(repo, item.path, old.blob_id(item.path), new.blob_id(item.path), theirs,
                             merge_labels(rng))
        found[item.path] = FileHunks(_model(merged.hunks), "resolve")
    return found


def _marker_blocks(text: str) -> int:
    """The <<<<<<< lines of a text, nested ones included (conflict_hunks reads a nested marker as text)."""
    return sum(1 for line in text.splitlines() if line.startswith("<<<<<<<"))


def _model(hunks: Iterable[ConflictHunk]) -> tuple[Hunk, ...]:
    return tuple(Hunk(hunk.line, hunk.ours, hunk.base, hunk.theirs) for hunk in hunks)
