"""The resumable replay of an upgrade: OLD..SOURCE onto NEW on a new branch, kept in a state file and journal.

Invariant: the user's branches, index and work tree are never written. Progress lives in
<git dir>/flagtree-sync/ (state file) and refs/flagtree-sync/wip (keeps replayed objects
reachable); the target branch is created only when every commit has been replayed.

This module is the replay loop and its entries (run_upgrade, continue_upgrade); the rest of the run has a
module each: plan.py (what is replayed), store.py with journal.py and statefiles.py (the state kept), locks.py
(the run lock and the tool's refs), target.py (the target branch), stop.py (the stop worktree) and resume.py
(--continue's resolution, --abort). The names callers use are re-exported here.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from sync.errors import SyncError, UpgradeStopped
from sync.git import Commit, GitError, Repository
from sync.git.diff import missing_blobs
from sync.git.repo import commit_of, direct_target, open_repo
from sync.model.revs import Rev
from sync.records.pin import Pin, RecordedRange, commit_pin, pin_name, read_pin
from sync.replay.commits import ReplayedCommit, Replayer, summary_of
from sync.replay.locks import FORCED_PREFIX, run_lock, set_tool_ref
from sync.replay.options import ConflictPolicy, RunOptions
from sync.replay.plan import UpgradeParams, orphan_reverts, planned_commits, upstream_scan
from sync.replay.resume import take_resolution
from sync.replay.stop import stop_in_worktree, stop_on_matches
from sync.replay.store import StateStore, UpgradeState
from sync.replay.target import RESUME_HINT, check_replaceable, check_target, require_writable, write_target
from sync.support.faults import checkpoint

# re-exported: the engine is where the jobs and the tests reach the replay
from sync.replay.locks import WIP_REF
from sync.replay.plan import LEFT_OUT, ORPHAN_REVERT, OUTSIDE_RANGE
from sync.replay.resume import Aborted, abort_upgrade, stored_options
from sync.replay.stop import CHECKOUT_HINT, require_checkoutable
from sync.replay.target import TARGET_MESSAGE, TOOL_EMAIL, branch_in_the_making, made_by_tool

__all__ = ["Aborted", "CHECKOUT_HINT", "LEFT_OUT", "ORPHAN_REVERT", "OUTSIDE_RANGE", "Progress", "StateStore",
           "TARGET_MESSAGE", "TOOL_EMAIL", "UpgradeParams", "UpgradeResult", "UpgradeState", "WIP_REF", "abort_upgrade",
           "branch_in_the_making", "continue_upgrade", "finish_upgrade", "made_by_tool", "orphan_reverts",
           "planned_commits", "require_checkoutable", "run_lock", "run_upgrade", "stored_options"]


Progress = Callable[[int, int, Commit, ReplayedCommit | None], None]


@dataclass
class UpgradeResult:
    params: UpgradeParams
    results: list[ReplayedCommit]
    head: str
    resumed: bool
    options: RunOptions = field(default_factory=RunOptions)  # what the run was started with
    upstream: dict[str, str] = field(default_factory=dict)  # commit -> why it is upstream's (left out)
    upstream_unchecked: str | None = None  # why same-patch commits could not be told (git cherry failed)
    orphan_reverts: dict[str, tuple[str, str]] = field(default_factory=dict)  # commit -> (reverted, why)


def _check_new_run(repo: Repository, params: UpgradeParams, force: bool) -> list[str]:
    commits = planned_commits(repo, params.range)
    if not commits:
        raise SyncError(f"nothing to replay: {params.range.old.ref}..{params.source_branch} has no commits")
    target = params.target_branch
    current = check_target(repo, params, "pass --target-branch NAME")
    if current is not None:
        if not force:
            raise SyncError(f"branch {target} already exists: pass --force to replace it, "
                            "or --target-branch NAME")
        check_replaceable(repo, target, params.range.onto.oid)
    return commits


def run_upgrade(repo: Repository, params: UpgradeParams, force: bool, progress: Progress,
                options: RunOptions | None = None, on_start: Callable[[], object] = lambda: None) -> UpgradeResult:
    """Start (or resume, when the same run is in progress) a replay; hold run_lock around it. on_start is
    called once the run is accepted, before the first commit is replayed."""
    store = StateStore(repo)
    # git cherry runs in the background while the run is checked and the analysis starts ahead (on_start)
    scan = upstream_scan(repo, params.range)
    state = store.load()
    resumed = state is not None
    if state is not None:
        if not state.params.same_run(params):
            running = state.params.range
            raise SyncError(
                f"another upgrade is in progress ({running.old.ref}..{running.source.ref} onto {running.onto.ref}, "
                f"branch {state.params.target_branch}): upgrade --continue or upgrade --abort")
        if state.stopped:
            raise UpgradeStopped(f"the upgrade stopped on a conflict: resolve it in {store.worktree}, git add, "
                            "then upgrade --continue (or upgrade --abort)")
        require_writable(repo, state, check_target(repo, state.params, RESUME_HINT), None)
        state.upstream_scan = scan  # a loaded state never holds what upstream() derives
        on_start()
    else:
        commits = _check_new_run(repo, params, force)
        state = UpgradeState(params, commits, params.range.onto.oid, options=(options or RunOptions()).kept(),
                             target_was=direct_target(repo, f"refs/heads/{params.target_branch}")[0],
                             upstream_scan=scan)
        on_start()  # the analysis starts ahead while git cherry's scan ends; the caller stops it on a refusal
        _refuse_only_upstream(repo, state)
        store.save(state)
        if state.target_was is not None:
            set_tool_ref(repo, FORCED_PREFIX + params.target_branch, state.target_was)
    return _drive(repo, store, state, progress, resumed)


def _refuse_only_upstream(repo: Repository, state: UpgradeState) -> None:
    """A range whose every commit is upstream's has nothing of FlagTree's: its branch would be --onto under a
    new name, reported clean. That is what swapped arguments give, never an upgrade."""
    if len(state.upstream(repo)) < len(state.commits):
        return
    rng = state.params.range
    raise SyncError(f"all {len(state.commits)} commits of {rng.old.ref}..{rng.source.ref} are upstream's "
                    f"({rng.onto.ref} has them, or the same change): there is nothing of FlagTree's to replay. Are the arguments "
                    "swapped? --from is the upstream tag the FlagTree branch is based on, --onto the new upstream "
                    "tag, --branch the FlagTree branch")


def _drive(repo: Repository, store: StateStore, state: UpgradeState, progress: Progress,
           resumed: bool) -> UpgradeResult:
    upstream = state.upstream(repo)
    replayer = state.params.replayer(repo)
    try:
        _replay_rest(repo, store, state, progress, replayer, upstream)
    finally:
        replayer.close()
    return _finish_replay(repo, state, resumed, upstream)


def _replay_rest(repo: Repository, store: StateStore, state: UpgradeState, progress: Progress,
                 replayer: Replayer, upstream: dict[str, str]) -> None:
    """Replay the commits the journal does not hold yet; a stop raises UpgradeStopped."""
    total = len(state.commits)
    while len(state.results) < total:
        number = len(state.results)
        commit = commit_of(repo, state.commits[number])
        progress(number + 1, total, commit, None)
        if str(commit.id) in upstream:  # upstream's own change: NEW has it, or the same patch, already
            result = ReplayedCommit(str(commit.id), summary_of(commit), None, [])
            state.results.append(result)
            store.record(state, result)
            checkpoint(f"commit:{number + 1}")
            progress(number + 1, total, commit, result)
            continue
        try:
            head = commit_of(repo, state.head)
        except KeyError:  # written by this run, then removed before a ref kept it
            raise SyncError(f"commit {state.head[:9]}, which this run wrote, is gone from the object store (a git "
                            "prune or gc while it ran?): drop the run with upgrade --abort and run the upgrade "
                            "again") from None
        try:
            outcome = replayer.pick_tree(commit, head.tree)
        except GitError as exc:  # e.g. an object missing from a partial clone
            missing = missing_blobs(repo, commit)
            why = (f"the repository lacks the blob of {', '.join(missing[:3])}"
                   f"{f' and {len(missing) - 3} more' if len(missing) > 3 else ''} (a partial clone, or a mirror "
                   "that left large files out): fetch them, e.g. with a full `git fetch`," if missing else
                   f"{exc}: fix the repository,")
            raise SyncError(f"commit {number + 1}/{total} {str(commit.id)[:9]} cannot be replayed: {why} then rerun "
                            "the same command (the state is kept), or drop this run with `upgrade --abort`") from exc
        if outcome.tree is None:
            stop_in_worktree(repo, store, state, commit)
            raise UpgradeStopped(
                f"commit {number + 1}/{total} {str(commit.id)[:9]} conflicts in "
                f"{', '.join(c.path for c in outcome.conflicts)}{stop_on_matches(state.params, outcome.conflicts)}: "
                f"resolve them in {store.worktree}, git add, "
                "then run flagtree-sync upgrade --continue (or --abort to give up)")
        result = ReplayedCommit(str(commit.id), summary_of(commit), None, outcome.conflicts)
        if outcome.tree != head.tree.id or outcome.conflicts:
            result.result = str(replayer.commit(commit, outcome.tree, head.id, outcome.conflicts))
            state.head = result.result
        state.results.append(result)
        store.record(state, result)
        checkpoint(f"commit:{number + 1}")
        progress(number + 1, total, commit, result)


def _finish_replay(repo: Repository, state: UpgradeState, resumed: bool, upstream: dict[str, str]) -> UpgradeResult:
    tip = commit_of(repo, state.head).id
    rng = state.params.range
    # Always pinned: status, drift, suppress and provenance read the range from the branch. A source without a
    # pin gives no OLD to read, so the pin commit's trailers record it (and the source).
    unpinned = read_pin(repo, commit_of(repo, rng.source.oid)) is None
    recorded = RecordedRange(Rev(pin_name(repo, rng.old), rng.old.oid), rng.source.oid) if unpinned else None
    tip = commit_pin(repo, commit_of(repo, tip), Pin(pin_name(repo, rng.onto), rng.onto.oid), recorded)
    write_target(repo, state, str(tip))
    state.head = str(tip)
    # The state stays until finish_upgrade: a run killed while reporting resumes into the report.
    return UpgradeResult(state.params, state.results, state.head, resumed, state.options, upstream,
                         state.upstream_unchecked, state.orphan_reverts)


def finish_upgrade(repo: Repository) -> Path | None:
    """Forget the run once its report is written; the stop worktree when it was kept for files of the user's."""
    return StateStore(repo).clear()


def continue_upgrade(repo_path: str, progress: Progress, options: RunOptions | None = None,
                     conflicts: ConflictPolicy | None = None) -> UpgradeResult:
    """Resume the run in progress; options (when given) replace the stored ones from now on, and conflicts (the
    --on-conflict and --stop-on given) the run's from the commit it stopped at: a way out of a long run of stops."""
    repo = open_repo(repo_path)
    store = StateStore(repo)
    state = store.load()
    if state is None:
        raise SyncError("no upgrade in progress")
    # the state's target is checked as on a fresh start: it may have been edited, made or checked out since
    require_writable(repo, state, check_target(repo, state.params, RESUME_HINT), None)
    kept = options.kept() if options is not None else state.options
    if kept != state.options:
        state.options = kept
        store.save(state)
    if conflicts is not None:  # saved with the next header: the resolution taken, or the stop dropped
        state.params = replace(state.params, policy=conflicts.policy, stop_on=conflicts.stop_on)
    if state.stopped:
        take_resolution(repo, store, state)
    elif conflicts is not None:
        store.save(state)
    return _drive(repo, store, state, progress, resumed=True)
