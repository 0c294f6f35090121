"""The state of an upgrade in progress: UpgradeState, and StateStore, which keeps it in <git dir>/flagtree-sync/
(the header file and the journal) and refuses, on load, a state that does not match the planned replay."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sync.errors import SyncError
from sync.git import Repository, tool_dir
from sync.git.repo import UpstreamScan, commit_of, has_object, resolve_commit, resolves, valid_branch_name
from sync.git.worktree import Worktree, is_linked_worktree, remove_worktree
from sync.replay.commits import ReplayedCommit, Replayer
from sync.replay.journal import append_entry, journal_lines
from sync.replay.locks import FORCED_PREFIX, WIP_REF, delete_tool_ref, set_tool_ref
from sync.replay.options import RunOptions
from sync.replay.plan import ORPHAN_REVERT, UpgradeParams, orphan_reverts, planned_commits, upstream_scan
from sync.replay.state import STATE_VERSION, StateFormatError, parse_header, parse_journal_entry
from sync.replay.statefiles import STATE_LIMIT, parse_json, read_json, remove_state_entry
from sync.support.atomic import write_text_atomic


ABORT_HINT = "run flagtree-sync upgrade --abort (the user's branches are untouched) and start the upgrade again"


@dataclass
class UpgradeState:
    params: UpgradeParams
    commits: list[str]
    head: str
    results: list[ReplayedCommit] = field(default_factory=list)
    stopped: bool = False  # --on-conflict stop left a conflicted worktree
    options: RunOptions = field(default_factory=RunOptions)  # as kept(): what only matters after the replay
    # the planned commits that are upstream's, and why (git.repo.REACHABLE or SAME_PATCH): derived from the
    # range, never stored
    known_upstream: dict[str, str] | None = field(default=None, repr=False)
    upstream_scan: UpstreamScan | None = field(default=None, repr=False)  # begun by run_upgrade
    upstream_unchecked: str | None = field(default=None, repr=False)  # why patch-ids were not compared
    target_was: str | None = None  # the commit of the existing target branch --force accepted at the start
    # FlagTree commits that revert a commit the run does not replay: commit -> (reverted commit, why); derived
    orphan_reverts: dict[str, tuple[str, str]] = field(default_factory=dict, repr=False)

    def upstream(self, repo: Repository) -> dict[str, str]:
        """The planned commits left out unpicked, and why: upstream's own (REACHABLE, SAME_PATCH), and with
        --drop-orphan-reverts the reverts of commits not replayed (ORPHAN_REVERT)."""
        if self.known_upstream is None:
            scan = self.upstream_scan or upstream_scan(repo, self.params.range)
            known = {str(oid): why for oid, why in scan.result().items()}
            self.upstream_unchecked = scan.unchecked
            self.upstream_scan = None
            self.orphan_reverts = orphan_reverts(repo, self.commits, known, self.params.drop_orphan_reverts)
            if self.params.drop_orphan_reverts:
                known.update({commit: ORPHAN_REVERT for commit in self.orphan_reverts})
            self.known_upstream = known
        return self.known_upstream

    def header_json(self) -> dict[str, Any]:
        """What does not grow with the run; the results go to the journal, one line each."""
        header = {"version": STATE_VERSION, "params": self.params.to_json(), "commits": self.commits,
                  "head": self.params.range.onto.oid, "stopped": self.stopped, "options": self.options.to_json()}
        if self.target_was is not None:  # only then: a state without it stays readable by the previous release
            header["target_was"] = self.target_was
        return header


class StateStore:
    """The state file and helpers of one repository's upgrade in progress."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        self.directory = tool_dir(repo)
        self.file = self.directory / "upgrade.json"
        self.journal = self.directory / "upgrade.journal"  # one JSON line per replayed commit
        self.worktree = self.directory / "worktree"
        self.moved_aside: list[Path] = []  # what clear() found in the place of the state and kept

    def load(self) -> UpgradeState | None:
        """The state of the run in progress, checked against the repository: a state file or journal
        that was edited, mixed up or truncated is refused (SyncError, exit 2), never replayed."""
        if not os.path.lexists(self.file):
            return None
        try:
            header = parse_header(read_json(self.file, STATE_LIMIT))
            params = UpgradeParams.from_json(header["params"])
            state = UpgradeState(params, header["commits"], params.range.onto.oid, stopped=header["stopped"],
                                 options=RunOptions.from_json(header["options"]),
                                 target_was=header["target_was"])
            _check_plan(self.repo, state)
            replayer = params.replayer(self.repo)
            try:
                for number, line in enumerate(journal_lines(self.journal), start=1):
                    entry = parse_journal_entry(parse_json(line))
                    result = ReplayedCommit.from_json(entry["result"])
                    state.head = _check_entry(self.repo, state, number, result, entry["head"], replayer)
                    state.results.append(result)
            finally:
                replayer.close()
            if state.stopped and len(state.results) >= len(state.commits):
                raise StateFormatError("it says the run stopped, but every commit is replayed")
            return state
        except (ValueError, UnicodeDecodeError, StateFormatError) as exc:
            raise SyncError(f"upgrade state in {self.directory} does not match the planned replay ({exc}); "
                            f"{ABORT_HINT}") from exc

    def save(self, state: UpgradeState) -> None:
        """Write the header (start of a run, stop/continue); results are only ever appended."""
        self.directory.mkdir(parents=True, exist_ok=True)
        set_tool_ref(self.repo, WIP_REF, state.head)
        if not state.results:
            self.journal.unlink(missing_ok=True)
        write_text_atomic(self.file, json.dumps(state.header_json(), indent=1))

    def record(self, state: UpgradeState, result: ReplayedCommit) -> None:
        """Append one replayed commit. Order matters for kill-safety: the objects exist, then the ref
        that keeps them alive moves, then the journal names them; a torn last line is dropped on load."""
        set_tool_ref(self.repo, WIP_REF, state.head)
        append_entry(self.journal, result, state.head)

    def clear(self) -> Path | None:
        """Forget the run. The stop worktree goes with it, conflict and resolution included; when it holds
        files git does not track (the user's, not the tool's) it is kept, clean at its commit, for a later
        stop to reuse, and its path is returned."""
        kept = None
        if is_linked_worktree(self.repo, self.worktree):  # a directory of anyone else's stays
            Worktree(self.worktree).discard()
            if not remove_worktree(self.repo, self.worktree, force=False):
                kept = self.worktree
        delete_tool_ref(self.repo, WIP_REF)
        for name in [name for name in self.repo.references if name.startswith(FORCED_PREFIX)]:
            delete_tool_ref(self.repo, name)
        # the header first: once it is gone no run is in progress; a journal it leaves behind is dropped by the
        # next run's first save. The other way round, a kill between the two left a header without its results,
        # which a rerun read as a run that had replayed nothing and so refused the branch it had made.
        for path in (self.file, self.journal):
            moved = remove_state_entry(path)
            if moved is not None:
                self.moved_aside.append(moved)
        return kept


def _check_plan(repo: Repository, state: UpgradeState) -> None:
    """The planned commit list is exactly OLD..SOURCE as the repository has it."""
    rng = state.params.range
    for name, rev in (("from", rng.old), ("onto", rng.onto), ("source", rng.source)):
        if not has_object(repo, rev.oid):
            raise StateFormatError(f"params.range.{name} {rev.short} is not in the repository")
    # The onto ref labels the conflict markers and is the pinned tag: a state whose label is not the
    # one its first commits were replayed with would make a branch of mixed markers.
    if not resolves(repo, rng.onto.ref) or str(resolve_commit(repo, rng.onto.ref).id) != rng.onto.oid:
        raise StateFormatError(f"params.range.onto.ref {rng.onto.ref!r} does not name {rng.onto.short}")
    if not valid_branch_name(state.params.target_branch):
        raise StateFormatError(f"params.target_branch {state.params.target_branch!r} is not a valid branch name")
    if state.commits != planned_commits(repo, rng):
        raise StateFormatError(f"its commit list ({len(state.commits)} commits) is not "
                               f"{rng.old.ref}..{rng.source.ref} ({len(planned_commits(repo, rng))} commits)")


def _check_entry(repo: Repository, state: UpgradeState, number: int, result: ReplayedCommit, head: str,
                 replayer: Replayer) -> str:
    """Journal line number must record the next planned commit, as a child of the head before it;
    returns the head after it. A duplicated, extra, reordered or foreign line fails here."""
    if number > len(state.commits):
        raise StateFormatError(f"journal line {number} is beyond the {len(state.commits)} planned commits")
    planned = state.commits[number - 1]
    if result.source != planned:
        raise StateFormatError(f"journal line {number} records {result.source[:9]}, "
                               f"the plan has {planned[:9]} there")
    if result.result is None:
        if head != state.head:
            raise StateFormatError(f"journal line {number} moves the head without a commit")
        if result.conflicts:
            raise StateFormatError(f"journal line {number} records conflicts but no commit")
        # A line claiming "already upstream" would drop the commit from the branch: pick it again to be sure,
        # unless the commit is upstream's own (left out without a pick).
        head_tree = commit_of(repo, head).tree
        outcome = replayer.pick_tree(commit_of(repo, planned), head_tree)
        if (outcome.tree != head_tree.id or outcome.conflicts) and planned not in state.upstream(repo):
            raise StateFormatError(f"journal line {number} says {planned[:9]} changes nothing, "
                                   "but it does")
        return head
    if head != result.result or not has_object(repo, head):
        raise StateFormatError(f"journal line {number}: its commit {head[:9]} is not in the repository")
    replayed = commit_of(repo, head)
    if [str(parent) for parent in replayed.parent_ids] != [state.head]:
        raise StateFormatError(f"journal line {number}: {head[:9]} is not a child of the head before it")
    return head
