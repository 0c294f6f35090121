"""What one upgrade replays: its parameters, the commits of its range, and the ones it leaves out unpicked
(upstream's own, and with --drop-orphan-reverts the reverts of commits it does not replay)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sync.errors import SyncError
from sync.git import GitError, Repository
from sync.git.repo import UpstreamScan, commit_of, commit_range, resolve_commit
from sync.model.revs import Range
from sync.replay.commits import Replayer
from sync.replay.pickmemo import PickMemo


ORPHAN_REVERT = "orphan-revert"  # why a commit is left out: it reverts a commit the run does not replay
LEFT_OUT, OUTSIDE_RANGE = "left-out", "outside-range"  # why a revert is an orphan
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")


@dataclass(frozen=True)
class UpgradeParams:
    """What one upgrade replays: range.old..range.source (the FlagTree branch, --branch) onto
    range.onto, as the new branch target_branch (--target-branch), conflicts settled by policy."""

    repo: str
    range: Range
    target_branch: str
    policy: str
    drop_orphan_reverts: bool = False  # --drop-orphan-reverts: leave out reverts of what is not replayed
    stop_on: tuple[str, ...] = ()  # --stop-on: stop only on conflicts in files these globs match

    @property
    def source_branch(self) -> str:
        return self.range.source.ref

    def same_run(self, other: "UpgradeParams") -> bool:
        """The same commits onto the same commit, as the same branch: how the refs were spelled does not matter."""
        def key(params: UpgradeParams) -> tuple[str, ...]:
            rng = params.range
            return (rng.old.oid, rng.onto.oid, rng.source.oid, params.target_branch, params.policy,
                    str(params.drop_orphan_reverts), *params.stop_on)
        return key(self) == key(other)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"repo": self.repo, "range": self.range.to_json(), "target_branch": self.target_branch,
                "policy": self.policy}
        if self.drop_orphan_reverts:  # older states lack it
            data["drop_orphan_reverts"] = True
        if self.stop_on:
            data["stop_on"] = list(self.stop_on)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "UpgradeParams":
        return cls(data["repo"], Range.from_json(data["range"]), data["target_branch"], data["policy"],
                   bool(data.get("drop_orphan_reverts", False)), tuple(data.get("stop_on", ())))

    def replayer(self, repo: Repository) -> Replayer:
        return Replayer(repo, self.policy, self.range.onto.ref, self.stop_on, PickMemo.of(repo))


def planned_commits(repo: Repository, rng: Range) -> list[str]:
    """The commits an upgrade of rng replays, oldest first (upstream ones included: each gets a journal line
    that records it as already upstream)."""
    return [str(oid) for oid in commit_range(repo, commit_of(repo, rng.old.oid), commit_of(repo, rng.source.oid))]


def orphan_reverts(repo: Repository, commits: list[str], left_out: dict[str, str],
                   dropping: bool) -> dict[str, tuple[str, str]]:
    """The commits whose message says "This reverts commit X" where X is not replayed: left out as upstream's
    (LEFT_OUT) or not a commit of the range (OUTSIDE_RANGE). git rebase would replay such a revert onto a
    branch that lacks X, and it conflicts or undoes upstream's own change. When dropping, a dropped revert
    counts as left out for a revert of it (a revert of the revert is an orphan too)."""
    planned = set(commits)
    gone = set(left_out)
    found: dict[str, tuple[str, str]] = {}
    for oid in commits:
        if oid in left_out:
            continue
        named = _REVERTS.search(commit_of(repo, oid).message)
        if named is None:
            continue
        try:
            reverted = str(resolve_commit(repo, named.group(1)).id)
        except (SyncError, KeyError, ValueError, GitError):
            reverted = named.group(1)  # not in the repository: certainly not replayed
        if reverted in gone:
            found[oid] = (reverted, LEFT_OUT)
        elif reverted not in planned:
            found[oid] = (reverted, OUTSIDE_RANGE)
        if oid in found and dropping:
            gone.add(oid)
    return found


def upstream_scan(repo: Repository, rng: Range) -> UpstreamScan:
    return UpstreamScan(repo, commit_of(repo, rng.old.oid), commit_of(repo, rng.onto.oid),
                        commit_of(repo, rng.source.oid))
