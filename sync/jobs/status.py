"""The status job: the report of an upgraded branch as it is now, after hand resolutions on it.

Nothing is read from an earlier report: everything is re-derived from the branch itself.

- The range: NEW is the branch's `flagtree-upstream.toml` pin (the upgrade's last commit writes it),
  SRC is the newest FlagTree commit named by a `(cherry picked from commit X)` line of the branch's
  replayed commits, OLD is the pin in SRC's tree (the tag the FlagTree branch was on). Options win.
- The conflicts: every replayed commit is replayed again, in a scratch store, onto its parent on the
  branch: that is the merge the upgrade met there. A content conflict stays open while its file holds
  conflict markers at the branch tip; a delete/modify conflict while the pick's commit holds the side the
  markers policy kept and nobody changed the file after the replay (a later pick may). Otherwise a person
  resolved it: resolution "manual".
  A commit after the replay whose message has a `FlagTree-Sync-Resolved: PATH[, PATH]` line resolves the
  delete/modify conflicts of those files as they are (the file the replay kept is right as it is).
- Drift and verdicts: every analysis against the branch tip, suppressions from the branch included.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from sync import __version__
from sync.drift.run import analyse_drift
from sync.errors import SyncError, UnknownRef
from sync.git import Commit, GitTree, Oid, Repository, open_repo
from sync.git import changes_with_renames
from sync.git.merge import conflict_hunks, holds_conflict
from sync.git.repo import commit_of, current_branch, resolve_commit, tree_of
from sync.git.store import scratch_repository
from sync.model import SHARED, Finding, Range, Report, ReplayedCommit, Rev, UpgradeInfo, build_report
from sync.model.build import OwnersOf
from sync.support.progress import Progress, Silent
from sync.replay.commits import CONFLICT_TRAILER, RESOLVED_TRAILER, Replayer, summary_of
from sync.replay.pickmemo import PickMemo
from sync.jobs.review import review_on_branch
from sync.replay.engine import branch_in_the_making
from sync.jobs.filehunks import hunks_on_branch
from sync.jobs.revs import range_notes, repository_forges, require_based_on, require_delta, upstream_moves
from sync.jobs.upgraded import CHERRY_PICKED, Replayed, replayed_commits, upgraded_range

@dataclass(frozen=True, kw_only=True)
class StatusOptions:
    target: str | None = None  # the upgraded branch [default: the current branch]
    old: str | None = None  # [default: the pin in SRC's tree]
    onto: str | None = None  # [default: the branch's pin]
    source: str | None = None  # [default: the newest cherry-picked FlagTree commit]
    backends: frozenset[str] = frozenset()


def refresh_status(repo_path: str, options: StatusOptions, progress: Progress | None = None) -> Report:
    progress = progress or Silent()
    repo = open_repo(repo_path)
    if options.target is None and repo.head_is_detached:  # the branch to name is the upgraded one, not --branch
        raise SyncError("HEAD is not on a branch: name the upgraded branch with --target (sync/<NEW>)")
    branch = options.target or current_branch(repo)
    pending = branch_in_the_making(repo, branch)
    if pending:
        raise SyncError(pending)
    head = resolve_commit(repo, branch)
    try:
        try:
            rng, replayed = upgraded_range(repo, branch, options.old, options.onto, options.source)
        except UnknownRef:
            raise
        except SyncError as exc:
            if options.target or _made_by_upgrade(head):  # made by upgrade: only something is missing
                raise
            raise SyncError(f"{exc}; run status on the upgraded branch or pass it as --target (sync/<NEW>)") from exc
        require_based_on(repo, rng)
        require_delta(rng)  # --from HEAD (at SRC) would report the branch with its delta left out
        backends = set(options.backends) or None
        progress.phase("reading the branch")  # the analyses then show their own count (issue 48.9)
        drift = analyse_drift(repo, rng, Rev(branch, str(head.id)), backends, symbols=True, progress=progress)
        findings = review_on_branch(drift.findings, repo, str(head.id), rng.onto.oid, drift.owners.backends)
        commits = conflicts_now(repo, replayed, head, rng.onto.ref, drift.owners.owners, progress)
    finally:
        progress.close()
    findings += markers_left(repo, rng, str(head.id), commits, drift.owners.owners)
    still_marked = any(c.resolution == "markers" for commit in commits for c in commit.conflicts)
    report = build_report(rng, drift.owners.backends, findings, commits,
                          UpgradeInfo(branch, str(head.id), "markers" if still_marked else "manual",
                                      notes=range_notes(repo, rng)),  # what upgrade said of the range, again
                          only=backends, tool_version=__version__, strict=True, forges=repository_forges(repo),
                          moves=upstream_moves(repo, rng, commits))
    return replace(report, file_hunks=hunks_on_branch(repo, rng, str(head.id), report.commits))


def existing_paths(repo_path: str, commit: str, paths: list[str]) -> set[str]:
    """Which of paths the commit's tree has."""
    tree = GitTree.of_commit(open_repo(repo_path), commit, "paths")
    return {path for path in paths if tree.exists(path)}


def markers_left(repo: Repository, rng: Range, head: str, commits: tuple[ReplayedCommit, ...],
                 owners_of: OwnersOf) -> list[Finding]:
    """Conflict blocks at the branch tip that no replayed commit's conflict accounts for (committed by hand, or
    on a branch upgrade did not make), in files the branch changed from NEW: open, and blocking their group in
    status and drift alike (issue 48.6: drift's exit 0 means nothing is left)."""
    known = {conflict.path for commit in commits for conflict in commit.conflicts}
    onto, tip = GitTree.of_commit(repo, rng.onto.oid, "markers:onto"), GitTree.of_commit(repo, head, "markers:tip")
    found = []
    for change in changes_with_renames(onto, tip):
        path = change.new_path
        data = tip.read(path) if path and path not in known else None
        if path is None or data is None or not holds_conflict(data):
            continue
        hunks = conflict_hunks(data.decode("utf-8", errors="replace"))
        owner = next(iter(owners_of(path)), SHARED)
        found.append(Finding("conflict-markers", path, f"{len(hunks)} conflict block(s) committed on the branch "
                             "(no replayed commit's conflict): resolve them", line=hunks[0].line if hunks else None,
                             backend=None if owner == SHARED else owner))
    return found


def branch_conflicts(repo: Repository, branch: Rev, rng: Range, owners_of: OwnersOf,
                     progress: Progress) -> tuple[ReplayedCommit, ...]:
    """The conflicts of a branch upgrade made, open or resolved, as status derives them: drift --target counts
    the same ones, so the two never disagree on a group's verdict. A branch with no replayed commit above
    NEW (not one upgrade made) has none."""
    head = resolve_commit(repo, branch.oid)
    try:
        replayed = replayed_commits(repo, head, rng.onto.oid)
    except SyncError:
        return ()
    return conflicts_now(repo, replayed, head, rng.onto.ref, owners_of, progress)


def conflicts_now(repo: Repository, replayed: list[Replayed], head: Commit, onto_label: str, owners_of: OwnersOf,
                  progress: Progress) -> tuple[ReplayedCommit, ...]:
    """Each replayed commit's conflicts, each open while the branch tip still holds it (module docstring)."""
    progress.phase("conflicts on the branch", len(replayed))
    tip = GitTree.of_commit(repo, head.id, "status:tip")
    replay_end = GitTree.of_commit(repo, replayed[-1].commit.id, "status:replayed") if replayed else tip
    kept_as_is = _said_resolved(head, str(replayed[-1].commit.id)) if replayed else set()
    commits = []
    with scratch_repository(repo) as scratch:  # the re-replay builds objects: never in the user's store
        # the upgrade's own picks, remembered: read back, not merged again
        replayer = Replayer(scratch, "markers", onto_label, memo=PickMemo.of(repo, scratch))
        try:
            for number, item in enumerate(replayed):
                progress.advance(summary_of(item.source), number)
                source = commit_of(scratch, item.source.id)
                outcome = replayer.pick_tree(source, commit_of(scratch, item.commit.parents[0].id).tree)
                sides = _PickSides(scratch, repo, outcome.tree, item.commit.id)
                marked = _trailer_paths(item.commit.raw_message.decode("utf-8", "surrogateescape"))  # names as bytes
                conflicts = tuple(
                    replace(found, resolution="markers" if found.path in marked
                            and _still_open(tip, sides, found.path, found.kind, replay_end)
                            and not (found.path in kept_as_is and found.kind not in ("content", "add/add"))
                            else "manual").to_model(str(item.source.id), summary_of(item.source), owners_of)
                    for found in outcome.conflicts)
                commits.append(ReplayedCommit(str(item.source.id), summary_of(item.source), str(item.commit.id),
                                              conflicts))
        finally:
            replayer.close()
    return tuple(commits)


class _PickSides:
    """What a pick kept (the re-replay's tree) and what the branch recorded for it (its commit's tree), each
    read as a whole tree only when a delete/modify conflict asks: a content conflict needs neither."""

    def __init__(self, scratch: Repository, repo: Repository, kept: Oid | None, recorded: Oid) -> None:
        self._scratch, self._repo, self._kept_id, self._recorded_id = scratch, repo, kept, recorded

    @cached_property
    def kept(self) -> GitTree | None:
        if self._kept_id is None:
            return None
        return GitTree(self._scratch, tree_of(self._scratch, self._kept_id), "status:markers")

    @cached_property
    def recorded(self) -> GitTree:
        return GitTree.of_commit(self._repo, self._recorded_id, "status:pick")


def _said_resolved(head: Commit, replay_end: str) -> set[str]:
    """Files the commits after the replay (first parents, head down to replay_end) name in a RESOLVED_TRAILER:
    a delete/modify conflict whose file is right as the replay kept it has no change to show that."""
    found: set[str] = set()
    commit: Commit | None = head
    while commit is not None and str(commit.id) != replay_end:
        found |= _paths_in(commit.message, RESOLVED_TRAILER)
        commit = commit.parents[0] if commit.parents else None
    return found


def _paths_in(message: str, trailer: str) -> set[str]:
    prefix = trailer + ": "
    return {path.strip() for line in message.splitlines() if line.startswith(prefix)
            for path in line[len(prefix):].split(",") if path.strip()}


def conflict_trailer_paths(commit: Commit) -> set[str]:
    """The files a replayed commit says it committed in conflict (its CONFLICT_TRAILER)."""
    return _trailer_paths(commit.raw_message.decode("utf-8", "surrogateescape"))


def _trailer_paths(message: str) -> set[str]:
    """The files the pick's commit says it committed in conflict; a file resolved by hand at a stop
    (--on-conflict stop) is not among them, whatever the resolution kept."""
    return _paths_in(message, CONFLICT_TRAILER)


def _still_open(tip: GitTree, sides: _PickSides, path: str, kind: str, replay_end: GitTree) -> bool:
    """sides: what the pick kept and what the branch's commit of the pick that met the conflict recorded;
    replay_end: the last replayed commit."""
    data = tip.read(path)
    if kind in ("content", "add/add"):
        return data is not None and holds_conflict(data)
    # delete/modify: the markers policy kept the changed side without markers. Open while nobody touched it:
    # the pick recorded that side (a resolution at a stop would show there), and no one changed the file after
    # the replay (later picks may change it: that is the replay, not a resolution).
    kept = sides.kept
    return data is not None and kept is not None and sides.recorded.read(path) == kept.read(path) \
        and data == replay_end.read(path)


def _made_by_upgrade(head: Commit, limit: int = 10_000) -> bool:
    """Whether a commit on the first-parent line from head replays a FlagTree commit: the branch is an upgraded
    one even when hand fixes sit on top of what upgrade made."""
    commit: Commit | None = head
    for _ in range(limit):
        if commit is None:
            return False
        if CHERRY_PICKED.search(commit.message):
            return True
        commit = commit.parents[0] if commit.parents else None
    return False
