"""After a stop or a kill: --continue's resolution taken from the stop worktree, the options the run was started
with, and --abort, which forgets the run (and the target branch it made, when nothing else is on it)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sync.errors import SyncError
from sync.git import Repository, file_in_tree, holds_conflict
from sync.git.repo import (commit_of, commits_only_on, direct_target, has_ref, is_commit, last_written_by, open_repo,
                           update_ref, valid_branch_name)
from sync.git.worktree import Worktree, branches_in_worktrees, is_linked_worktree
from sync.replay.commits import ReplayedCommit, Replayer, stops_on, summary_of
from sync.replay.locks import WIP_REF
from sync.replay.options import RunOptions
from sync.replay.plan import UpgradeParams
from sync.replay.statefiles import STATE_LIMIT, read_json
from sync.replay.stop import stop_again
from sync.replay.store import StateStore, UpgradeState
from sync.replay.target import TARGET_MESSAGE, made_by_tool


def stored_options(repo: Repository) -> RunOptions:
    """The options the run in progress was started with (SyncError when there is none)."""
    state = StateStore(repo).load()
    if state is None:
        raise SyncError("no upgrade in progress")
    return state.options


def take_resolution(repo: Repository, store: StateStore, state: UpgradeState) -> None:
    if not os.path.lexists(store.worktree):  # removed by hand: nothing to take, so stop at that commit anew
        stop_again(store, state)
        return
    if not is_linked_worktree(repo, store.worktree):
        raise SyncError(f"{store.worktree} is no longer a worktree of this repository, so the resolution cannot "
                        "be read from it: move it away and rerun --continue (it stops at that commit again)")
    worktree = Worktree(store.worktree)
    unmerged = worktree.unmerged_paths()
    if unmerged:
        raise SyncError(f"unresolved conflicts in {store.worktree}: {', '.join(unmerged)} (resolve them and git add, "
                        "or git rm a file to delete, first; or git add them with their markers and --continue "
                        "--on-conflict markers, or cherry-pick --abort there to replay the commit anew under the "
                        "policy --continue gives)")
    commit = commit_of(repo, state.commits[len(state.results)])
    if worktree.head() == state.head and worktree.picking() is None and not worktree.local_changes():
        # killed between saving the stop and the cherry-pick, or the pick undone: nothing was resolved
        stop_again(store, state)
        return
    unstaged = worktree.unstaged_paths()
    if unstaged:  # the resolution is the index: an edit left out of it would be dropped without a word
        raise SyncError(f"changes not staged in {store.worktree}: {', '.join(unstaged)} (git add them to make "
                        "them part of the resolution, or git restore them), then rerun --continue")
    replayer = Replayer(repo, "markers", state.params.range.onto.ref)
    conflicts = replayer.pick_tree(commit, commit_of(repo, state.head).tree).conflicts
    resolved_tree = worktree.resolved_tree(state.head)
    marked = {conflict.path for conflict in conflicts if _holds_markers(repo, resolved_tree, conflict.path)}
    # markers are a resolution only where the policy now in force would not have stopped
    kept = {path for path in marked if not _stops(state.params, path)}
    if marked - kept:  # a `git add` of a file still in conflict: taking it would commit markers as a resolution
        files = sorted(marked - kept)
        raise SyncError(f"still in conflict in {store.worktree}: {', '.join(files)} "
                        f"{'holds' if len(files) == 1 else 'hold'} "
                        "<<<<<<< / >>>>>>> markers; edit them out, git add them, then rerun --continue "
                        "(to commit markers on purpose, start the upgrade with --on-conflict markers)")
    for conflict in conflicts:
        conflict.resolution = "markers" if conflict.path in kept else "manual"
    new_head = replayer.commit(commit, resolved_tree, state.head, [c for c in conflicts if c.path in kept])
    resolved = ReplayedCommit(str(commit.id), summary_of(commit), str(new_head), conflicts)
    state.results.append(resolved)
    state.head, state.stopped = str(new_head), False
    store.record(state, resolved)
    worktree.quit_cherry_pick()
    store.save(state)
    worktree.detach_at(state.head)  # the resolved commit (same tree): the worktree is clean for the next stop


def _stops(params: UpgradeParams, path: str) -> bool:
    """Whether a conflict in path stops the run under its policy now."""
    return params.policy == "stop" and (not params.stop_on or stops_on(params.stop_on, path))


def _holds_markers(repo: Repository, tree_id: str, path: str) -> bool:
    """Whether the file of the resolved tree still holds a conflict (a <<<<<<< ... >>>>>>> block)."""
    data = file_in_tree(repo, tree_id, path)  # None: deleted, a resolution
    return data is not None and holds_conflict(data)


@dataclass
class Aborted:
    had_state: bool  # whether there was a run to forget
    kept_worktree: Path | None  # the stop worktree, kept for files of the user's
    deleted_branch: str | None  # the target branch this run had made, deleted with it
    moved_aside: tuple[Path, ...] = ()  # directories found where the state belongs, kept under another name


def abort_upgrade(repo_path: str) -> Aborted:
    """Forget the run in progress. A run interrupted after its replay has made its target branch already: that
    branch goes too, when it still holds exactly what the run made (nothing anyone else made is lost)."""
    repo = open_repo(repo_path)
    store = StateStore(repo)
    had_state = any(os.path.lexists(path) for path in (store.file, store.journal)) or has_ref(repo, WIP_REF)
    made = _branch_made_by(repo, store) if had_state else None
    if made is not None:
        branch, tip = made
        failed = update_ref(repo, f"refs/heads/{branch}", None, tip, "flagtree-sync upgrade --abort")
        if failed is not None:  # moved since it was judged: it is no longer only the run's
            made = None
    kept = store.clear()
    return Aborted(had_state, kept, made[0] if made else None, tuple(store.moved_aside))


def _branch_made_by(repo: Repository, store: StateStore) -> tuple[str, str] | None:
    """The run's target branch when the run made its tip (the replayed head, or the pin commit on it), no
    worktree has it checked out, and deleting it loses no commit but the tool's own; else None. Returns the
    branch and the tip judged (the delete compares against it)."""
    try:
        branch = read_json(store.file, STATE_LIMIT)["params"]["target_branch"]
        replayed = repo.references[WIP_REF].target
    except (OSError, ValueError, KeyError, TypeError):  # no or unreadable state: nothing to judge by
        return None
    ref = f"refs/heads/{branch}" if isinstance(branch, str) and valid_branch_name(branch) else ""
    current = direct_target(repo, ref)[0] if ref else None  # a symbolic ref is no branch a run made
    if current is None or not is_commit(repo, current) or ref in branches_in_worktrees(repo):
        return None
    if not last_written_by(repo, ref, TARGET_MESSAGE):  # made or moved by someone else, whatever it holds
        return None
    tip = commit_of(repo, current)
    pinned = tip.parent_ids == [replayed] and made_by_tool(repo, tip)
    if tip.id != replayed and not pinned:
        return None
    if any(not made_by_tool(repo, commit) for commit in commits_only_on(repo, ref, "refs/flagtree-sync/")):
        return None
    return branch, str(tip.id)
