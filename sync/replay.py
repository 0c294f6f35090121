"""Replay commits onto another commit in memory (libgit2): no work tree, no index, no checkout."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import pygit2
from pygit2.enums import MergeFavor

from .merge import ConflictHunk, merge_blobs

POLICIES = ("markers", "ours", "theirs", "stop")
CONFLICT_TRAILER = "FlagTree-Sync-Conflicts"


@dataclass
class FileConflict:
    path: str
    kind: str  # content | add/add | deleted-upstream | deleted-by-flagtree
    resolution: str  # markers | ours | theirs | manual
    hunks: list[ConflictHunk] = field(default_factory=list)
    base_path: str | None = None  # where the file was at the commit's parent, when renamed

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "FileConflict":
        hunks = [ConflictHunk(**hunk) for hunk in data.get("hunks", [])]
        return cls(data["path"], data["kind"], data["resolution"], hunks, data.get("base_path"))


@dataclass
class ReplayedCommit:
    source: str
    summary: str
    result: str | None  # the new commit; None when the change was already upstream (empty)
    conflicts: list[FileConflict] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "summary": self.summary, "result": self.result,
                "conflicts": [conflict.to_json() for conflict in self.conflicts]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ReplayedCommit":
        return cls(data["source"], data["summary"], data["result"],
                   [FileConflict.from_json(item) for item in data.get("conflicts", [])])


@dataclass
class PickOutcome:
    """What replaying one commit produced; tree is None when the policy is 'stop' and it conflicted."""

    tree: pygit2.Oid | None
    conflicts: list[FileConflict]


def short(oid: pygit2.Oid | str) -> str:
    return str(oid)[:9]


def summary_of(commit: pygit2.Commit) -> str:
    return commit.message.split("\n", 1)[0].strip()


class Replayer:
    """Cherry-picks in memory: merge(parent tree, current tree, commit tree) like git does."""

    def __init__(self, repo: pygit2.Repository, policy: str, onto_label: str) -> None:
        if policy not in POLICIES:
            raise ValueError(policy)
        self.repo = repo
        self.policy = policy
        self.onto_label = onto_label

    def pick_tree(self, commit: pygit2.Commit, head_tree: pygit2.Tree) -> PickOutcome:
        parent_tree = commit.parents[0].tree if commit.parents else self.repo[self.repo.TreeBuilder().write()]
        index = self.repo.merge_trees(parent_tree, head_tree, commit.tree)
        if not index.conflicts:
            return PickOutcome(index.write_tree(self.repo), [])
        labels = (f"{short(commit.parents[0].id) if commit.parents else 'empty'} (parent)",
                  f"{self.onto_label} (upgraded)", f"{short(commit.id)} ({summary_of(commit)})")
        conflicts = [self._resolve(index, ancestor, ours, theirs, labels)
                     for ancestor, ours, theirs in list(index.conflicts)]
        if self.policy == "stop":
            return PickOutcome(None, conflicts)
        return PickOutcome(index.write_tree(self.repo), conflicts)

    def _resolve(self, index: pygit2.Index, ancestor: pygit2.IndexEntry | None, ours: pygit2.IndexEntry | None,
                 theirs: pygit2.IndexEntry | None, labels: tuple[str, str, str]) -> FileConflict:
        present = ours or theirs or ancestor
        assert present is not None
        path = present.path
        base_path = ancestor.path if ancestor is not None and ancestor.path != path else None
        for entry_path in {entry.path for entry in (ancestor, ours, theirs) if entry is not None}:
            conflicts = index.conflicts  # becomes None once the last conflict is gone
            if conflicts is not None and entry_path in conflicts:
                del conflicts[entry_path]
        resolution = "markers" if self.policy == "stop" else self.policy
        if ours is not None and theirs is not None:
            kind = "content" if ancestor is not None else "add/add"
            marked = merge_blobs(self.repo, path, ancestor.id if ancestor else None, ours.id, theirs.id, labels)
            data = marked.data
            if self.policy in ("ours", "theirs"):
                favor = MergeFavor.OURS if self.policy == "ours" else MergeFavor.THEIRS
                data = merge_blobs(self.repo, path, ancestor.id if ancestor else None, ours.id, theirs.id,
                                   labels, favor).data
            index.add(pygit2.IndexEntry(path, self.repo.create_blob(data), ours.mode))
            return FileConflict(path, kind, resolution, list(marked.hunks), base_path)
        # One side deleted the file the other changed. Markers keep the changed file so nothing is lost.
        if ours is None:
            kind, keep = "deleted-upstream", theirs if self.policy != "ours" else None
        else:
            kind, keep = "deleted-by-flagtree", ours if self.policy != "theirs" else None
        if keep is not None:
            index.add(pygit2.IndexEntry(keep.path, keep.id, keep.mode))
        return FileConflict(path, kind, resolution, [], base_path)

    def commit(self, source: pygit2.Commit, tree: pygit2.Oid, head: pygit2.Oid,
               conflicts: list[FileConflict]) -> pygit2.Oid:
        """Keep author and committer so that replaying the same range twice gives the same hashes."""
        message = source.message.rstrip("\n") + f"\n\n(cherry picked from commit {source.id})\n"
        if conflicts:
            paths = ", ".join(sorted({conflict.path for conflict in conflicts}))
            message += f"{CONFLICT_TRAILER}: {paths}\n"
        return self.repo.create_commit(None, source.author, source.committer, message, tree, [head])
