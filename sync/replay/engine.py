"""The resumable replay of an upgrade: OLD..SOURCE onto NEW on a new branch, kept in a state file and journal.

Invariant: the user's branches, index and work tree are never written. Progress lives in
<git dir>/flagtree-sync/ (state file) and refs/flagtree-sync/wip (keeps replayed objects
reachable); the target branch is created only when every commit has been replayed.
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import stat
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from sync.replay.applied import made_by_apply
from sync.git.pick import marker_labels
from sync.support.atomic import write_text_atomic
from sync.errors import SyncError, UpgradeStopped
from sync.support.faults import checkpoint
from sync.records.pin import Pin, RecordedRange, commit_pin, pin_name, read_pin
from sync.git import Commit, GitError, Oid, Repository, file_in_tree, holds_conflict, tool_dir
from sync.git.diff import missing_blobs
from sync.git.pick import replayed_parts
from sync.git.repo import (branch_exists, branch_name_shadowed, branch_spelled, commit_of, commit_range,
                       commits_only_on, delete_ref, last_written_by, direct_target, full_ref_name,
                       has_object, has_ref, is_commit, missing_in_history, names_longer_than, open_repo,
                       paths_written_longer_than, ref_conflict, resolve_commit, resolves, set_ref, update_ref,
                       valid_branch_name, UpstreamScan)
from sync.git.worktree import (Worktree, branches_in_use, branches_in_worktrees, is_linked_worktree, longest_name,
                           remove_worktree, stop_worktree)
from sync.model.revs import Range, Rev
from sync.replay.commits import CONFLICT_TRAILER, FileConflict, Replayer, ReplayedCommit, stops_on, summary_of
from sync.replay.options import ConflictPolicy, RunOptions
from sync.replay.state import STATE_VERSION, StateFormatError, parse_header, parse_journal_entry
from sync.support.workers import holding_lock, released_lock

ORPHAN_REVERT = "orphan-revert"  # why a commit is left out: it reverts a commit the run does not replay
LEFT_OUT, OUTSIDE_RANGE = "left-out", "outside-range"  # why a revert is an orphan
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})")
WIP_REF = "refs/flagtree-sync/wip"
# refs/flagtree-sync/forced/<target branch>: the commit --force accepted to replace, written at the start; the state
# file alone (which a hand may edit) never lets a run move a branch that exists
FORCED_PREFIX = "refs/flagtree-sync/forced/"
TARGET_MESSAGE = "flagtree-sync upgrade: "  # the reflog message of the tool's write of the target branch
TOOL_EMAIL = "flagtree-sync@localhost"  # the committer of the commits the tool writes itself (pin, auto-merge)
ABORT_HINT = "run flagtree-sync upgrade --abort (the user's branches are untouched) and start the upgrade again"

Progress = Callable[[int, int, Commit, ReplayedCommit | None], None]
STATE_LIMIT = 64 << 20  # bytes: a header lists 40-hex commit ids, about 1.5 million of them
JOURNAL_LIMIT = 1 << 30  # bytes: a line per commit, conflict hunks included


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
        return Replayer(repo, self.policy, self.range.onto.ref, self.stop_on)


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
            scan = self.upstream_scan or _upstream_scan(repo, self.params.range)
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
            header = parse_header(_read_json(self.file, STATE_LIMIT))
            params = UpgradeParams.from_json(header["params"])
            state = UpgradeState(params, header["commits"], params.range.onto.oid, stopped=header["stopped"],
                                 options=RunOptions.from_json(header["options"]),
                                 target_was=header["target_was"])
            _check_plan(self.repo, state)
            replayer = params.replayer(self.repo)
            for number, line in enumerate(self._journal_lines(), start=1):
                entry = parse_journal_entry(_parse_json(line))
                result = ReplayedCommit.from_json(entry["result"])
                state.head = _check_entry(self.repo, state, number, result, entry["head"], replayer)
                state.results.append(result)
            if state.stopped and len(state.results) >= len(state.commits):
                raise StateFormatError("it says the run stopped, but every commit is replayed")
            return state
        except (ValueError, UnicodeDecodeError, StateFormatError) as exc:
            raise SyncError(f"upgrade state in {self.directory} does not match the planned replay ({exc}); "
                            f"{ABORT_HINT}") from exc

    def _journal_lines(self) -> list[str]:
        text = read_bounded(self.journal, JOURNAL_LIMIT)
        if text is None:
            return []
        lines = text.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n"):  # killed mid-append: drop it, that commit is redone
            lines.pop()
            self.journal.write_text("".join(lines), encoding="utf-8")
        return [line for line in lines if line.strip()]

    def save(self, state: UpgradeState) -> None:
        """Write the header (start of a run, stop/continue); results are only ever appended."""
        self.directory.mkdir(parents=True, exist_ok=True)
        _set_ref(self.repo, WIP_REF, state.head)
        if not state.results:
            self.journal.unlink(missing_ok=True)
        write_text_atomic(self.file, json.dumps(state.header_json(), indent=1))

    def record(self, state: UpgradeState, result: ReplayedCommit) -> None:
        """Append one replayed commit. Order matters for kill-safety: the objects exist, then the ref
        that keeps them alive moves, then the journal names them; a torn last line is dropped on load."""
        _set_ref(self.repo, WIP_REF, state.head)
        with open(self.journal, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"result": result.to_json(), "head": state.head}) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def clear(self) -> Path | None:
        """Forget the run. The stop worktree goes with it, conflict and resolution included; when it holds
        files git does not track (the user's, not the tool's) it is kept, clean at its commit, for a later
        stop to reuse, and its path is returned."""
        kept = None
        if is_linked_worktree(self.repo, self.worktree):  # a directory of anyone else's stays
            Worktree(self.worktree).discard()
            if not remove_worktree(self.repo, self.worktree, force=False):
                kept = self.worktree
        _delete_ref(self.repo, WIP_REF)
        for name in [name for name in self.repo.references if name.startswith(FORCED_PREFIX)]:
            _delete_ref(self.repo, name)
        for path in (self.journal, self.file):
            moved = _remove_state_entry(path)
            if moved is not None:
                self.moved_aside.append(moved)
        return kept


def read_bounded(path: Path, limit: int) -> str | None:
    """A state file's text (None: absent), never read through a symbolic link nor from anything but a regular
    file, and at most limit bytes: a link to /dev/zero or a directory in its place is refused, not read."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: a symbolic link
        raise StateFormatError(f"{path.name} cannot be read as a file ({exc.strerror or exc})") from exc
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):  # a directory, a device, a pipe
        os.close(descriptor)
        raise StateFormatError(f"{path.name} is not a regular file")
    data = bytearray()
    with os.fdopen(descriptor, "rb") as handle:
        while chunk := handle.read(1 << 20):  # in chunks: a buffer of the whole bound would be allocated at once
            data += chunk
            if len(data) > limit:
                raise StateFormatError(f"{path.name} is larger than {limit} bytes")
    return data.decode("utf-8")


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError as exc:  # hand-made nesting far beyond anything this tool writes
        raise StateFormatError("it is nested too deeply") from exc


def _read_json(path: Path, limit: int) -> Any:
    text = read_bounded(path, limit)
    if text is None:
        raise StateFormatError(f"{path.name} is gone")
    return _parse_json(text)


def _remove_state_entry(path: Path) -> Path | None:
    """Remove the state file or journal at path, whatever is there: a file or symbolic link (never its
    target) goes; a directory, which the tool never makes there, is moved aside (returned), not deleted."""
    if path.is_dir() and not path.is_symlink():
        aside = path.with_name(f"{path.name}.moved-aside")
        number = 1
        while os.path.lexists(aside):
            number += 1
            aside = path.with_name(f"{path.name}.moved-aside-{number}")
        path.rename(aside)
        return aside
    path.unlink(missing_ok=True)
    return None


def _stale_lock(repo: Repository, name: str) -> Path:
    """The lock file git (and libgit2) keep next to a ref while writing it. A kill -9 in that moment
    leaves it behind, and every later write of that ref fails. Under run_lock no other run of this
    tool is alive, and only this tool writes refs/flagtree-sync/: such a lock there is stale, removed."""
    lock = Path(repo.path) / f"{name}.lock"
    if name.startswith("refs/flagtree-sync/") and lock.is_file() and not lock.is_symlink():
        lock.unlink()
    return lock


def _ref_error(repo: Repository, name: str, lock: Path, exc: OSError) -> SyncError:
    """Another ref's lock may belong to a git command the user is running: the user decides."""
    held = [str(path) for path in (lock, Path(repo.path) / "packed-refs.lock") if path.exists()]
    hint = (f"if no git command is running, remove {' and '.join(held)} and rerun" if held
            else "fix that and rerun")
    return SyncError(f"cannot update {name}: {str(exc).strip() or exc.strerror}; {hint} (the replay is kept)")


def _set_ref(repo: Repository, name: str, target: str | Oid) -> None:
    lock = _stale_lock(repo, name)
    try:
        set_ref(repo, name, target)
    except OSError as exc:
        raise _ref_error(repo, name, lock, exc) from exc


def _delete_ref(repo: Repository, name: str) -> None:
    lock = _stale_lock(repo, name)
    try:
        delete_ref(repo, name)
    except OSError as exc:
        raise _ref_error(repo, name, lock, exc) from exc


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


def _upstream_scan(repo: Repository, rng: Range) -> UpstreamScan:
    return UpstreamScan(repo, commit_of(repo, rng.old.oid), commit_of(repo, rng.onto.oid),
                        commit_of(repo, rng.source.oid))


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


@contextmanager
def run_lock(repo: Repository, name: str = "upgrade", running: str = "another upgrade") -> Iterator[None]:
    """Hold <git dir>/flagtree-sync/<name>.lock for a whole run: a second run on the same repository
    fails at once (exit 2) instead of interleaving its journal with this one. The kernel drops the
    lock when the process dies, so a killed run never leaves it held."""
    directory = tool_dir(repo)
    if directory.is_symlink() or (os.path.lexists(directory) and not directory.is_dir()):
        raise SyncError(f"{directory} is not flagtree-sync's directory (a symbolic link or a file): move it away "
                        "and rerun")
    directory.mkdir(exist_ok=True)
    path = directory / f"{name}.lock"
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        odd = path.is_symlink() or path.is_dir()  # no run can hold such a lock: it is safe to move away
        raise SyncError(f"cannot open the lock {path}: {exc.strerror or exc}" +
                        ("; it is not a file, so no upgrade holds it: move it away and rerun" if odd else "")) from exc
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise SyncError(f"{running} is in progress on {repo.workdir or repo.path} (it holds {path}); "
                            "wait for it to finish") from exc
        holding_lock(descriptor)  # forked workers close their copy (sync/support/workers.py)
        yield
    finally:
        released_lock(descriptor)
        os.close(descriptor)  # releases the lock


def made_by_tool(repo: Repository, commit: Commit) -> bool:
    """Whether commit is exactly what a run of this tool writes (and so can be recreated by rerunning it):

    - a replayed commit: one parent, the message of the commit named by its "(cherry picked from commit X)"
      line, followed by nothing but that line and the tool's conflict trailer, and author and committer
      (names, emails, dates) identical to X's, which the replay keeps. A cherry-pick -x by hand or an
      amend changes the committer, so it does not pass;
    - the pin commit: one parent and the tool's own committer (TOOL_EMAIL);
    - a drift --apply merge: one parent and the trailer that names its own tree (the user's identity signs it).
    """
    if len(commit.parent_ids) != 1:
        return False
    if commit.committer.email == TOOL_EMAIL or made_by_apply(commit):
        return True
    found = re.search(rb"\n\n\(cherry picked from commit ([0-9a-f]{40})\)\n(?:" + CONFLICT_TRAILER.encode()
                      + rb": [^\n]*\n)?\Z", commit.raw_message)
    if found is None or not has_object(repo, found.group(1).decode()):
        return False
    author, committer, message, _ = replayed_parts(commit_of(repo, found.group(1).decode()))
    same = lambda a, b: ((a.raw_name, a.raw_email, a.time, a.offset)  # noqa: E731
                         == (b.raw_name, b.raw_email, b.time, b.offset))
    return (commit.raw_message[:found.start()] == message.rstrip(b"\n")
            and same(commit.author, author) and same(commit.committer, committer))


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
        _check_replaceable(repo, target)
    return commits


_RESUME_HINT = "the replay is kept: fix that and run the upgrade again (--continue), or upgrade --abort"


def check_target(repo: Repository, params: UpgradeParams, hint: str) -> str | None:
    """What a fresh start checks about the target branch, checked again before it is written (the user may
    have made it, checked it out or edited the state since): a name git accepts, no ref in its way, not
    the source branch (full ref names compared, symbolic refs followed), no symbolic ref, checked out in no
    worktree. Returns the commit it is at; None: absent."""
    target = params.target_branch
    if not valid_branch_name(target):
        raise SyncError(f"{target!r} is not a valid branch name (git check-ref-format --branch refuses it); {hint}")
    shadowed = branch_name_shadowed(repo, target)
    if shadowed is not None:  # drift --target and git itself would read another commit by that name
        raise SyncError(f"refusing branch name {target!r}: {shadowed}; {hint}")
    ref = f"refs/heads/{target}"
    blocker = ref_conflict(repo, ref)
    if blocker is not None:  # git keeps refs as paths: refs/heads/sync blocks refs/heads/sync/v3.6.0
        raise SyncError(f"branch {target} cannot be created: {blocker} exists; rename that ref, or {hint}")
    current, symbolic = direct_target(repo, ref)
    odd = current is not None and not is_commit(repo, current)  # written by hand: git makes no such branch
    if symbolic or odd or _is_source(repo, params, ref, current):
        why = ("a symbolic ref" if symbolic else f"a ref to {current[:9]}, which is no commit" if odd and current
               else f"the source branch (--branch {params.source_branch})")
        raise SyncError(f"refusing to overwrite branch {target}: it is {why}; {hint}")
    for used, worktree in branches_in_use(repo).items():
        if ref in (used, full_ref_name(repo, used)):  # a worktree on a symbolic ref to it holds it too
            raise SyncError(f"branch {target} is checked out in the worktree {worktree} (or a rebase or bisect "
                            f"there returns to it): it will not be moved under it; switch that worktree to another "
                            f"branch, or {hint}")
    return current


def _is_source(repo: Repository, params: UpgradeParams, ref: str, current: str | None) -> bool:
    """Whether the target ref is the source branch however --branch spelled it (main, heads/main, main~0,
    main@{0}, main^{commit}, HEAD~0); where the spelling starts from no branch (a commit id, a tag), every
    branch at the source commit may be the one meant, and counts as the source."""
    spelled = branch_spelled(repo, params.source_branch)
    if spelled is not None:
        return ref == spelled
    return current is not None and current == params.range.source.oid


def _require_writable(repo: Repository, state: UpgradeState, current: str | None, tip: str | None) -> None:
    """The target may be written only when it is absent, already this run's tip (tip None: not known yet, so
    the replayed head or the pin on it) or the branch --force accepted at the start, still all the tool's."""
    target = state.params.target_branch
    if current is None or current == tip or (tip is None and _runs_tip(repo, state, current)):
        return
    if current == state.target_was and direct_target(repo, FORCED_PREFIX + target)[0] == current:
        _check_replaceable(repo, target)  # accepted by --force at the start (the tool's ref says so), still so
        return
    made = commit_of(repo, current)
    raise SyncError(f"branch {target} was made or moved since this upgrade started (it is at {current[:9]} "
                    f"{summary_of(made)!r}) and is left as it is: rename it (git branch -m {target} NAME) or "
                    f"delete it if nothing on it is yours, then run the upgrade again (--continue), or upgrade --abort")


def _runs_tip(repo: Repository, state: UpgradeState, current: str) -> bool:
    """Whether current is what this run writes once every commit is replayed: its head, or the pin on it."""
    if len(state.results) < len(state.commits):
        return False
    made = commit_of(repo, current)
    return current == state.head or ([str(p) for p in made.parent_ids] == [state.head] and made_by_tool(repo, made))


def _write_target(repo: Repository, state: UpgradeState, tip: str) -> None:
    """Set the target branch to tip, re-checked under the run lock and compare-and-swapped against the value
    checked: a branch made, moved or checked out since loses nothing."""
    current = check_target(repo, state.params, _RESUME_HINT)
    _require_writable(repo, state, current, tip)
    if current == tip:
        return
    name = f"refs/heads/{state.params.target_branch}"
    if not has_object(repo, tip):  # libgit2 can report a commit written on a full disk that it never wrote
        raise OSError(errno.EIO, f"commit {tip} is not in the object store, though it was written")
    gone = missing_in_history(repo, tip, state.params.range.onto.oid)
    if gone:  # a git prune or gc racing the run removed what it wrote: never a branch that lacks it
        raise SyncError(f"objects this run wrote are gone from the object store (a git prune or gc while it ran?): "
                        f"{', '.join(gone[:3])}{f' and {len(gone) - 3} more' if len(gone) > 3 else ''}; "
                        f"{name} was not written: drop the run with upgrade --abort and run the upgrade again")
    failed = update_ref(repo, name, tip, current, f"{TARGET_MESSAGE}{state.params.range.onto.ref}")
    if failed is not None:
        raise SyncError(f"cannot update {name}: {failed}; {_RESUME_HINT}")


def _check_replaceable(repo: Repository, branch: str) -> None:
    """--force replaces only a branch that no worktree has checked out and whose commits that nothing
    else keeps are all the tool's own (made_by_tool): rerunning recreates them, nothing made by hand is lost."""
    ref = f"refs/heads/{branch}"
    worktree = branches_in_worktrees(repo).get(ref)
    if worktree is not None:
        raise SyncError(f"branch {branch} is checked out in the worktree {worktree}: --force will not move it; "
                        "switch that worktree to another branch, or pass --target-branch NAME")
    by_hand = [commit for commit in commits_only_on(repo, ref, "refs/flagtree-sync/") if not made_by_tool(repo, commit)]
    if by_hand:
        named = ", ".join(f"{str(c.id)[:9]} {summary_of(c)!r}" for c in by_hand[:5])
        more = f" and {len(by_hand) - 5} more" if len(by_hand) > 5 else ""
        raise SyncError(f"branch {branch} has {len(by_hand)} commit(s) that flagtree-sync did not make and that "
                        f"--force would lose: {named}{more}; keep them on another branch (git branch NAME {branch}) "
                        "or pass --target-branch NAME")


def run_upgrade(repo: Repository, params: UpgradeParams, force: bool, progress: Progress,
                options: RunOptions | None = None, on_start: Callable[[], object] = lambda: None) -> UpgradeResult:
    """Start (or resume, when the same run is in progress) a replay; hold run_lock around it. on_start is
    called once the run is accepted, before the first commit is replayed."""
    store = StateStore(repo)
    # git cherry runs in the background while the run is checked and the analysis starts ahead (on_start)
    scan = _upstream_scan(repo, params.range)
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
        _require_writable(repo, state, check_target(repo, state.params, _RESUME_HINT), None)
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
            _set_ref(repo, FORCED_PREFIX + params.target_branch, state.target_was)
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
    replayer = state.params.replayer(repo)
    total = len(state.commits)
    upstream = state.upstream(repo)
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
            _stop_in_worktree(repo, store, state, commit)
            raise UpgradeStopped(
                f"commit {number + 1}/{total} {str(commit.id)[:9]} conflicts in "
                f"{', '.join(c.path for c in outcome.conflicts)}{_matched(state.params, outcome.conflicts)}: "
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
    tip = commit_of(repo, state.head).id
    rng = state.params.range
    # Always pinned: status, drift, suppress and provenance read the range from the branch. A source without a
    # pin gives no OLD to read, so the pin commit's trailers record it (and the source).
    unpinned = read_pin(repo, commit_of(repo, rng.source.oid)) is None
    recorded = RecordedRange(Rev(pin_name(repo, rng.old), rng.old.oid), rng.source.oid) if unpinned else None
    tip = commit_pin(repo, commit_of(repo, tip), Pin(pin_name(repo, rng.onto), rng.onto.oid), recorded)
    _write_target(repo, state, str(tip))
    state.head = str(tip)
    # The state stays until finish_upgrade: a run killed while reporting resumes into the report.
    return UpgradeResult(state.params, state.results, state.head, resumed, state.options, upstream,
                         state.upstream_unchecked, state.orphan_reverts)


def finish_upgrade(repo: Repository) -> Path | None:
    """Forget the run once its report is written; the stop worktree when it was kept for files of the user's."""
    return StateStore(repo).clear()


def _stop_in_worktree(repo: Repository, store: StateStore, state: UpgradeState, commit: Commit) -> None:
    """Leave git's own conflicted cherry-pick in a separate worktree, for the user's usual tools. The same
    worktree serves every stop of the run (a shell sitting in it stays valid); it is made ready first, so a
    refused one (local changes, not ours) leaves the run unstopped and the next --continue comes back here."""
    worktree = stop_worktree(repo, store.worktree, state.head)
    state.stopped = True
    store.save(state)
    # The worktree outlives this run on purpose: the user resolves the conflict there.
    failed = worktree.cherry_pick_no_commit(str(commit.id))
    worktree.relabel_conflicts(repo, marker_labels(commit, state.params.range.onto.ref))  # as markers mode writes
    if failed is not None and not worktree.unmerged_paths():  # git stopped on what it could not write
        worktree.discard()
        _stop_again(store, state)
        raise SyncError(f"git cannot leave commit {str(commit.id)[:9]} in the stop worktree {store.worktree} "
                        f"({failed.splitlines()[0]}), so there is nothing to resolve there; {CHECKOUT_HINT}")


CHECKOUT_HINT = ("drop this run with upgrade --abort and start it with --on-conflict markers, ours or theirs, "
                 "which replay in memory")


def require_checkoutable(repo: Repository, rng: Range, needs: str, hint: str) -> None:
    """Refuse up front what a worktree will fail to check out: a file name or path longer than the file system
    takes (git stores it, the kernel refuses it), in the commits the worktree would hold."""
    name_max, path_max = longest_name(tool_dir(repo))
    for rev in (rng.onto, rng.source):  # git writes paths relative to the worktree: PATH_MAX less the NUL
        found = next(names_longer_than(repo, commit_of(repo, rev.oid).tree_id, name_max, path_max - 1), None)
        if found is not None:
            longest = max(len(part.encode()) for part in found.split("/"))
            what = (f"a name of {longest} bytes; it takes {name_max}" if longest > name_max else
                    f"a path of {len(found.encode())} bytes; it takes {path_max} in all")
            raise SyncError(f"{needs} needs a worktree, and this file system cannot hold {rev.ref}'s file "
                            f"{found[:80]!r}{'...' if len(found) > 80 else ''} ({what}): {hint}")
    # a path an intermediate commit adds (and a later one removes) is in the worktree at that commit's stop
    written = next(paths_written_longer_than(repo, commit_of(repo, rng.old.oid), commit_of(repo, rng.source.oid),
                                             name_max, path_max - 1), None)
    if written is not None:
        commit, found = written
        raise SyncError(f"{needs} needs a worktree, and this file system cannot hold the file {found[:80]!r}"
                        f"{'...' if len(found) > 80 else ''} that commit {str(commit.id)[:9]} writes (a name over "
                        f"{name_max} bytes or a path over {path_max}): {hint}")


def branch_in_the_making(repo: Repository, name: str) -> str | None:
    """Why a branch does not exist yet when it is the target of the upgrade in progress; None otherwise."""
    try:
        state = StateStore(repo).load()
    except (SyncError, OSError, ValueError):
        return None
    if state is None or state.params.target_branch != name or branch_exists(repo, name):
        return None
    where = f"stopped at commit {len(state.results) + 1}/{len(state.commits)}" if state.stopped else \
        f"interrupted after {len(state.results)} of {len(state.commits)} commits"
    then = "resolve the conflict, then run upgrade --continue" if state.stopped else "rerun the upgrade to finish it"
    return f"{name} does not exist yet: the upgrade that makes it is {where}; {then}"


def stored_options(repo: Repository) -> RunOptions:
    """The options the run in progress was started with (SyncError when there is none)."""
    state = StateStore(repo).load()
    if state is None:
        raise SyncError("no upgrade in progress")
    return state.options


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
    _require_writable(repo, state, check_target(repo, state.params, _RESUME_HINT), None)
    kept = options.kept() if options is not None else state.options
    if kept != state.options:
        state.options = kept
        store.save(state)
    if conflicts is not None:  # saved with the next header: the resolution taken, or the stop dropped
        state.params = replace(state.params, policy=conflicts.policy, stop_on=conflicts.stop_on)
    if state.stopped:
        _take_resolution(repo, store, state)
    elif conflicts is not None:
        store.save(state)
    return _drive(repo, store, state, progress, resumed=True)


def _take_resolution(repo: Repository, store: StateStore, state: UpgradeState) -> None:
    if not os.path.lexists(store.worktree):  # removed by hand: nothing to take, so stop at that commit anew
        _stop_again(store, state)
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
        _stop_again(store, state)
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


def _matched(params: UpgradeParams, conflicts: list[FileConflict]) -> str:
    """At a --stop-on stop: which files stopped it, the others may keep their markers."""
    if not params.stop_on:
        return ""
    matched = sorted({c.path for c in conflicts if stops_on(params.stop_on, c.path)})
    if len(matched) == len({c.path for c in conflicts}):
        return ""
    return f" (--stop-on matches {', '.join(matched)}; git add the others as they are to keep their markers)"


def _stops(params: UpgradeParams, path: str) -> bool:
    """Whether a conflict in path stops the run under its policy now."""
    return params.policy == "stop" and (not params.stop_on or stops_on(params.stop_on, path))


def _holds_markers(repo: Repository, tree_id: str, path: str) -> bool:
    """Whether the file of the resolved tree still holds a conflict (a <<<<<<< ... >>>>>>> block)."""
    data = file_in_tree(repo, tree_id, path)  # None: deleted, a resolution
    return data is not None and holds_conflict(data)


def _stop_again(store: StateStore, state: UpgradeState) -> None:
    """Nothing to take as the resolution: the run is no longer stopped, so the replay meets the commit
    again and stops there anew."""
    state.stopped = False
    store.save(state)


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
        branch = _read_json(store.file, STATE_LIMIT)["params"]["target_branch"]
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
