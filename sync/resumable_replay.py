"""The resumable replay of an upgrade: OLD..SRC onto NEW on a new branch, kept in a state file and journal.

Invariant: the user's branches, index and work tree are never written. Progress lives in
<git dir>/flagtree-sync/ (state file) and refs/flagtree-sync/wip (keeps replayed objects
reachable); the target branch is created only when every commit has been replayed.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from .atomic import write_text_atomic
from .errors import SyncError, UpgradeStopped
from .faults import checkpoint
from .pin import PIN_FILE, Pin, commit_pin, read_pin
from .git import Commit, GitError, Repository
from .git.repo import (branch_exists, checked_out_branch, commit_of, commit_range, current_branch, delete_ref,
                       has_ref, is_ancestor, open_repo, resolve_commit, resolves, set_ref, valid_branch_name)
from .git.worktree import Worktree, add_worktree, remove_worktree
from .replay import Replayer, ReplayedCommit, summary_of

STATE_VERSION = 1
WIP_REF = "refs/flagtree-sync/wip"

Progress = Callable[[int, int, Commit, ReplayedCommit | None], None]


@dataclass
class UpgradeParams:
    repo: str
    old: str
    onto: str
    src: str
    branch: str
    policy: str
    old_id: str = ""
    onto_id: str = ""
    src_id: str = ""

    def same_run(self, other: "UpgradeParams") -> bool:
        keys = ("old_id", "onto_id", "src_id", "branch", "policy")
        return all(getattr(self, key) == getattr(other, key) for key in keys)


@dataclass
class UpgradeState:
    params: UpgradeParams
    commits: list[str]
    head: str
    results: list[ReplayedCommit] = field(default_factory=list)
    stopped: bool = False  # --on-conflict stop left a conflicted worktree

    def header_json(self) -> dict[str, Any]:
        """What does not grow with the run; the results go to the journal, one line each."""
        return {"version": STATE_VERSION, "params": asdict(self.params), "commits": self.commits,
                "head": self.params.onto_id, "stopped": self.stopped}


@dataclass
class UpgradeResult:
    params: UpgradeParams
    results: list[ReplayedCommit]
    head: str
    resumed: bool


class StateStore:
    """The state file and helpers of one repository's upgrade in progress."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        self.directory = Path(repo.path) / "flagtree-sync"
        self.file = self.directory / "upgrade.json"
        self.journal = self.directory / "upgrade.journal"  # one JSON line per replayed commit
        self.worktree = self.directory / "worktree"

    def load(self) -> UpgradeState | None:
        if not self.file.exists():
            return None
        try:
            header = json.loads(self.file.read_text(encoding="utf-8"))
            if header.get("version") != STATE_VERSION:
                raise SyncError(f"upgrade state has version {header.get('version')}, expected {STATE_VERSION}; "
                                "run upgrade --abort")
            state = UpgradeState(UpgradeParams(**header["params"]), header["commits"], header["head"],
                                 stopped=header.get("stopped", False))
            for line in self._journal_lines():
                entry = json.loads(line)
                state.results.append(ReplayedCommit.from_json(entry["result"]))
                state.head = entry["head"]
            return state
        except (ValueError, KeyError, TypeError) as exc:
            raise SyncError(f"upgrade state {self.file} is unreadable ({exc}); run upgrade --abort") from exc

    def _journal_lines(self) -> list[str]:
        if not self.journal.exists():
            return []
        text = self.journal.read_text(encoding="utf-8")
        lines = text.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n"):  # killed mid-append: drop it, that commit is redone
            lines.pop()
            self.journal.write_text("".join(lines), encoding="utf-8")
        return [line for line in lines if line.strip()]

    def save(self, state: UpgradeState) -> None:
        """Write the header (start of a run, stop/continue); results are only ever appended."""
        self.directory.mkdir(parents=True, exist_ok=True)
        set_ref(self.repo, WIP_REF, state.head)
        if not state.results:
            self.journal.unlink(missing_ok=True)
        write_text_atomic(self.file, json.dumps(state.header_json(), indent=1))

    def record(self, state: UpgradeState, result: ReplayedCommit) -> None:
        """Append one replayed commit. Order matters for kill-safety: the objects exist, then the ref
        that keeps them alive moves, then the journal names them; a torn last line is dropped on load."""
        set_ref(self.repo, WIP_REF, state.head)
        with open(self.journal, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"result": result.to_json(), "head": state.head}) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def clear(self) -> None:
        if self.worktree.exists():
            remove_worktree(self.repo, self.worktree)
        delete_ref(self.repo, WIP_REF)
        self.journal.unlink(missing_ok=True)
        if self.file.exists():
            self.file.unlink()


def resolve_params(repo_path: str, old: str | None, onto: str, src: str | None, branch: str | None,
                   policy: str) -> tuple[Repository, UpgradeParams]:
    repo = open_repo(repo_path)
    src = src or current_branch(repo)
    src_commit = resolve_commit(repo, src)
    if old is None:
        pin = read_pin(repo, src_commit)
        if pin is None:
            raise SyncError(f"--from is required: {src} has no {PIN_FILE}")
        old = pin.tag if resolves(repo, pin.tag) else pin.commit
    old_commit, onto_commit = (resolve_commit(repo, ref) for ref in (old, onto))
    branch = branch or f"sync/{onto}"
    if not valid_branch_name(branch):
        raise SyncError(f"{branch!r} is not a valid branch name: pass --target-branch")
    if not is_ancestor(repo, old_commit.id, src_commit.id):
        raise SyncError(f"{old} ({str(old_commit.id)[:9]}) is not an ancestor of {src}: "
                        "pass the upstream tag the FlagTree branch is based on as --from")
    params = UpgradeParams(repo_path, old, onto, src, branch, policy, str(old_commit.id), str(onto_commit.id),
                           str(src_commit.id))
    return repo, params


def _check_new_run(repo: Repository, params: UpgradeParams, force: bool) -> list[str]:
    commits = [str(oid) for oid in commit_range(repo, commit_of(repo, params.old_id), commit_of(repo, params.src_id))]
    if not commits:
        raise SyncError(f"nothing to replay: {params.old}..{params.src} has no commits")
    if branch_exists(repo, params.branch) and not force:
        raise SyncError(f"branch {params.branch} already exists: pass --force to replace it, "
                        "or --target-branch NAME")
    if params.branch in (params.src, checked_out_branch(repo)):
        raise SyncError(f"refusing to overwrite the checked-out or source branch {params.branch}")
    return commits


def run_upgrade(repo: Repository, params: UpgradeParams, force: bool, progress: Progress) -> UpgradeResult:
    store = StateStore(repo)
    state = store.load()
    resumed = state is not None
    if state is not None:
        if not state.params.same_run(params):
            raise SyncError(
                f"another upgrade is in progress ({state.params.old}..{state.params.src} onto "
                f"{state.params.onto}, branch {state.params.branch}): upgrade --continue or upgrade --abort")
        if state.stopped:
            raise UpgradeStopped(f"the upgrade stopped on a conflict: resolve it in {store.worktree}, git add, "
                            "then upgrade --continue (or upgrade --abort)")
    else:
        commits = _check_new_run(repo, params, force)
        state = UpgradeState(params, commits, params.onto_id)
        store.save(state)
    return _drive(repo, store, state, progress, resumed)


def _drive(repo: Repository, store: StateStore, state: UpgradeState, progress: Progress,
           resumed: bool) -> UpgradeResult:
    replayer = Replayer(repo, state.params.policy, state.params.onto)
    total = len(state.commits)
    while len(state.results) < total:
        number = len(state.results)
        commit = commit_of(repo, state.commits[number])
        progress(number + 1, total, commit, None)
        head = commit_of(repo, state.head)
        try:
            outcome = replayer.pick_tree(commit, head.tree)
        except GitError as exc:  # e.g. an object missing from a partial clone
            raise SyncError(f"commit {number + 1}/{total} {str(commit.id)[:9]} cannot be replayed: {exc}; "
                            "the state is kept, rerun after fixing the repository") from exc
        if outcome.tree is None:
            _stop_in_worktree(repo, store, state, commit)
            raise UpgradeStopped(
                f"commit {number + 1}/{total} {str(commit.id)[:9]} conflicts in "
                f"{', '.join(c.path for c in outcome.conflicts)}: resolve them in {store.worktree}, git add, "
                "then run flagtree-sync upgrade --continue (or --abort to give up)")
        result = ReplayedCommit(str(commit.id), summary_of(commit), None, outcome.conflicts)
        if outcome.tree != head.tree.id or outcome.conflicts:
            result.result = str(replayer.commit(commit, outcome.tree, head.id, outcome.conflicts))
            state.head = result.result
        state.results.append(result)
        store.record(state, result)
        checkpoint(f"commit:{number + 1}")
        progress(number + 1, total, commit, result)
    head = commit_of(repo, state.head).id
    if read_pin(repo, commit_of(repo, state.params.src_id)) is not None:
        head = commit_pin(repo, commit_of(repo, head), Pin(state.params.onto, state.params.onto_id))
    set_ref(repo, f"refs/heads/{state.params.branch}", head)
    state.head = str(head)
    # The state stays until finish_upgrade: a run killed while reporting resumes into the report.
    return UpgradeResult(state.params, state.results, state.head, resumed)


def finish_upgrade(repo: Repository) -> None:
    """Forget the run once its report is written."""
    StateStore(repo).clear()


def _stop_in_worktree(repo: Repository, store: StateStore, state: UpgradeState, commit: Commit) -> None:
    """Leave git's own conflicted cherry-pick in a separate worktree, for the user's usual tools."""
    state.stopped = True
    store.save(state)
    # The worktree outlives this run on purpose: the user resolves the conflict there.
    add_worktree(repo, store.worktree, state.head).cherry_pick_no_commit(str(commit.id))


def continue_upgrade(repo_path: str, progress: Progress) -> UpgradeResult:
    repo = open_repo(repo_path)
    store = StateStore(repo)
    state = store.load()
    if state is None:
        raise SyncError("no upgrade in progress")
    if state.stopped:
        _take_resolution(repo, store, state)
    return _drive(repo, store, state, progress, resumed=True)


def _take_resolution(repo: Repository, store: StateStore, state: UpgradeState) -> None:
    worktree = Worktree(store.worktree)
    unmerged = worktree.unmerged_paths()
    if unmerged:
        raise SyncError(f"unresolved conflicts in {store.worktree}: {', '.join(unmerged)} (git add them first)")
    commit = commit_of(repo, state.commits[len(state.results)])
    replayer = Replayer(repo, "markers", state.params.onto)
    conflicts = replayer.pick_tree(commit, commit_of(repo, state.head).tree).conflicts
    for conflict in conflicts:
        conflict.resolution = "manual"
    new_head = replayer.commit(commit, worktree.resolved_tree(state.head), state.head, [])
    resolved = ReplayedCommit(str(commit.id), summary_of(commit), str(new_head), conflicts)
    state.results.append(resolved)
    state.head, state.stopped = str(new_head), False
    store.record(state, resolved)
    worktree.quit_cherry_pick()
    remove_worktree(repo, store.worktree)
    store.save(state)


def abort_upgrade(repo_path: str) -> bool:
    repo = open_repo(repo_path)
    store = StateStore(repo)
    had_state = store.file.exists() or has_ref(repo, WIP_REF)
    store.clear()
    return had_state
