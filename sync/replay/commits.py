"""Replay commits onto another commit in memory (libgit2): no work tree, no index, no checkout."""
from __future__ import annotations

import fnmatch
from dataclasses import asdict, dataclass, field
from typing import Any

from sync.git import Commit, ConflictHunk, Oid, Repository, Tree
from sync.git.pick import commit_like, pick_tree, short, summary_of
from sync.model import Conflict, Hunk
from sync.model.build import OwnersOf, conflict_owners
from sync.replay.pickmemo import PickMemo

__all__ = ["CONFLICT_TRAILER", "POLICIES", "FileConflict", "PickOutcome", "ReplayedCommit", "Replayer", "short",
           "summary_of"]

POLICIES = ("markers", "ours", "theirs", "stop")
CONFLICT_TRAILER = "FlagTree-Sync-Conflicts"
RESOLVED_TRAILER = "FlagTree-Sync-Resolved"  # a person's commit: these conflicts' files are right as kept


@dataclass
class FileConflict:
    path: str
    kind: str  # a conflict kind of sync/model/kinds.py: content, add/add, deleted-upstream, renamed-upstream, ...
    resolution: str  # markers | ours | theirs | manual
    hunks: list[ConflictHunk] = field(default_factory=list)
    base_path: str | None = None  # where the file was at the commit's parent, when renamed

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def to_model(self, source: str, summary: str, owners_of: OwnersOf) -> Conflict:
        """The report's conflict: the one conversion of a replay conflict into the model (upgrade, status)."""
        return Conflict(source, summary, self.path, self.kind, self.resolution,
                        conflict_owners(owners_of, self.path, summary, (hunk.theirs for hunk in self.hunks)),
                        tuple(Hunk(hunk.line, hunk.ours, hunk.base, hunk.theirs) for hunk in self.hunks),
                        self.base_path)

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

    tree: Oid | None
    conflicts: list[FileConflict]


def settling(policy: str) -> str:
    """How a conflict the run does not stop on is settled: stop commits markers where it does not stop."""
    return "markers" if policy == "stop" else policy


def stops_on(globs: tuple[str, ...], path: str) -> bool:
    """Whether a conflict in path stops a run with --stop-on globs (fnmatch: * also matches /)."""
    return any(fnmatch.fnmatchcase(path, glob) for glob in globs)


class Replayer:
    """Cherry-picks in memory: merge(parent tree, current tree, commit tree) like git does."""

    def __init__(self, repo: Repository, policy: str, onto_label: str, stop_on: tuple[str, ...] = (),
                 memo: PickMemo | None = None) -> None:
        if policy not in POLICIES:
            raise ValueError(policy)
        self.repo = repo
        self.policy = policy
        self.onto_label = onto_label
        self.stop_on = stop_on  # with globs, only a conflict in a file they match stops; others are settled
        self.memo = memo  # picks made before (the same upgrade again): read back, not merged again

    def pick_tree(self, commit: Commit, head_tree: Tree) -> PickOutcome:
        settle = self.policy if not self.stop_on else settling(self.policy)
        tree, conflicts = self._picked(commit, head_tree, settle)
        if any(stops_on(self.stop_on, c.path) for c in conflicts):
            return PickOutcome(None, conflicts)
        return PickOutcome(tree, conflicts)

    def close(self) -> None:
        if self.memo is not None:
            self.memo.close()

    def _picked(self, commit: Commit, head_tree: Tree, settle: str) -> tuple[Oid | None, list[FileConflict]]:
        if self.memo is None:
            return self._merged(commit, head_tree, settle)
        key = self.memo.key(commit, head_tree, settle, self.onto_label)
        known = self.memo.get(key)
        if known is not None:
            try:
                return (None if known[0] is None else Oid(hex=known[0]),
                        [FileConflict.from_json(item) for item in known[1]])
            except (TypeError, ValueError, KeyError, AttributeError):
                pass  # an entry of another shape: merge again and overwrite it
        tree, conflicts = self._merged(commit, head_tree, settle)
        self.memo.put(key, tree, [conflict.to_json() for conflict in conflicts])
        return tree, conflicts

    def _merged(self, commit: Commit, head_tree: Tree, settle: str) -> tuple[Oid | None, list[FileConflict]]:
        picked = pick_tree(self.repo, commit, head_tree, settle, self.onto_label)
        resolution = settling(settle)
        return picked.tree, [FileConflict(c.path, c.kind, resolution, c.hunks, c.base_path) for c in picked.conflicts]

    def commit(self, source: Commit, tree: Oid | str, head: Oid | str, conflicts: list[FileConflict]) -> Oid:
        """Keep author and committer so that replaying the same range twice gives the same hashes."""
        # the trailer is added to the message's own bytes (git cherry-pick -x): invalid UTF-8 stays as it was
        trailer = f"\n\n(cherry picked from commit {source.id})\n"
        if conflicts:
            paths = ", ".join(sorted({conflict.path for conflict in conflicts}))
            trailer += f"{CONFLICT_TRAILER}: {paths}\n"
        return commit_like(self.repo, source, trailer.encode("utf-8", "surrogateescape"), tree, head)
