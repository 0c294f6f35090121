"""The drift job: classify every backend's overlays, spec functions and guards between two tags."""
from __future__ import annotations

import functools
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import Callable

from sync import __version__
from sync.replay.applied import apply_message
from sync.drift.run import DriftResult, analyse_drift
from sync.errors import SyncError
from sync.support.gcpolicy import job
from sync.model import DriftInfo, Finding, Range, ReplayedCommit, Report, build_report
from sync.model.report import BACKEND
from sync.git import GitError, GitTree, Repository, branch_exists, branch_head, commit_files, open_repo
from sync.support.progress import Progress, Silent
from sync.replay.engine import branch_in_the_making, run_lock
from sync.jobs.filehunks import hunks_on_branch
from sync.jobs.revs import (from_doubt, repository_forges, require_based_on, require_forward, resolve_rev,
                             upstream_moves)
from sync.jobs.upgraded import range_of

# review (suppressions, provenance) and worktree (GitPython) are imported where used: a cached drift
# of a bare repository needs neither.
__all__ = ["DriftOptions", "looks_like_flagtree", "run_drift"]


@dataclass(frozen=True, kw_only=True)
class DriftOptions:
    target: str | None = None  # the upgraded branch; None: replay the delta in memory
    backends: frozenset[str] = frozenset()
    apply: bool = False  # commit the clean 3-way merges on target
    symbols: bool = True  # the slow analyses too (drift --fast: False), as upgrade and status run them


@job
def run_drift(repo_path: str, *, old: str | None, onto: str | None, source: str | None, options: DriftOptions,
              progress: Progress | None = None, warn: Callable[[str], None] | None = None) -> Report:
    """old and onto may be left out with a target an upgrade made: they are then read from it, as status does.
    warn is told what looks wrong but may be right."""
    repo = open_repo(repo_path)
    pending = branch_in_the_making(repo, options.target) if options.target else None
    if pending:
        raise SyncError(pending)
    rng = range_of(repo, old, onto, source, options.target)
    require_based_on(repo, rng)  # else the in-memory replay would replay upstream's own history
    require_forward(repo, rng, "drift")
    doubt = from_doubt(repo, rng)
    if doubt is not None and warn is not None:
        warn(doubt)
    target = resolve_rev(repo, options.target) if options.target else None
    if options.apply and (target is None or not branch_exists(repo, target.ref)):
        raise SyncError("--apply commits the clean merges on a branch: pass that branch as --target")
    commits: tuple[ReplayedCommit, ...] = ()
    marked: list[Finding] = []
    # two --apply at once: the second waits for nothing and exits 2 (each would commit on the same tip)
    with run_lock(repo, "apply", "another drift --apply") if options.apply else nullcontext():
        try:
            result = analyse_drift(repo, rng, target, set(options.backends) or None, options.symbols, progress)
            if target is not None:  # its open conflicts block, as status says (issue 48.6)
                from sync.jobs.status import branch_conflicts, markers_left
                commits = branch_conflicts(repo, target, rng, result.owners.owners, progress or Silent())
                marked = markers_left(repo, rng, target.oid, commits, result.owners.owners)
        finally:
            (progress or Silent()).close()
        applied = _apply_merges(repo, target.ref, rng, result) if options.apply and target else None
    findings = _marked_applied(result, applied) if applied else result.findings
    if target is not None:
        from sync.jobs.review import review_on_branch
        findings = review_on_branch(findings, repo, target.oid, rng.onto.oid, result.owners.backends) + marked
    report = build_report(rng, result.owners.backends, findings, commits,
                          drift=DriftInfo(target.ref if target else "(replayed in memory)", applied),
                          only=set(options.backends) or None, tool_version=__version__, strict=True,
                          forges=repository_forges(repo), moves=upstream_moves(repo, rng, commits))
    if target is None or not report.commits:
        return report
    return replace(report, file_hunks=hunks_on_branch(repo, rng, target.oid, report.commits))


def looks_like_flagtree(repo_path: str, report: Report) -> bool:
    """A backend, or a FlagTree hook in trunk. The slow analyses find upstream's own lines on an upstream clone,
    so a report with groups is no proof; this reads the tree only when no backend group says so."""
    if any(group.kind == BACKEND for group in report.groups):
        return True
    if not report.groups:
        return False
    from sync.facts.callsites import index_trunk_hooks
    repo = open_repo(repo_path)
    return bool(index_trunk_hooks(GitTree.of_commit(repo, report.range.source.oid, "fork")).sites)


def _marked_applied(result: DriftResult, commit: str) -> list[Finding]:
    """The findings as analysed (before the merges), each merged overlay's saying that --apply committed it."""
    merged = {m.path for m in result.merged}
    return [replace(f, message=f"{f.message}; committed by --apply in {commit[:9]}, with the new tag as its base in "
                               "provenance.toml", action="review the merge; the next drift judges the merged file")
            if f.kind == "overlay-auto-mergeable" and f.path in merged else f for f in result.findings]


def _apply_merges(repo: Repository, branch: str, rng: Range, result: DriftResult) -> str | None:
    """Commit the clean merges on top of the target branch, in memory, with each merged file's new base in its
    backend's provenance.toml (the next drift merges from there). A branch checked out in a worktree
    is moved there by git's own fast-forward, so its index and files follow the commit (a moved ref under
    an unchanged work tree would look like the merge undone); local changes git would overwrite stop it."""
    head = branch_head(repo, branch)
    if not result.merged or head is None:
        return None
    from sync.git.worktree import branches_in_worktrees, fast_forward
    from sync.records.provenance import applied_manifests
    ref = f"refs/heads/{branch}"
    message = functools.partial(apply_message, [m.path for m in result.merged])
    files = {m.path: m.data for m in result.merged}
    manifests = applied_manifests(GitTree.of_commit(repo, head.id, branch), set(files), rng.onto.ref,
                                  GitTree.of_commit(repo, rng.onto.oid, rng.onto.ref), rng.old.ref,
                                  GitTree.of_commit(repo, rng.old.oid, rng.old.ref))
    files.update({path: text.encode("utf-8") for path, text in manifests.items()})
    checkout = branches_in_worktrees(repo).get(ref)
    if checkout is None:
        try:  # libgit2 moves the ref only while it is still at head: a commit made meanwhile loses nothing
            commit = commit_files(repo, head, files, message, ref, by_user=True)
        except GitError as exc:
            raise SyncError(f"{branch} moved while drift --apply ran ({str(exc).strip()}); nothing was changed: "
                            "run drift --apply again") from exc
        return None if commit == head.id else str(commit)  # the merges were already on the branch
    commit = commit_files(repo, head, files, message, by_user=True)
    if commit == head.id:
        return None
    refused = fast_forward(checkout, str(commit))
    if refused is not None:
        blocking = [line.strip() for line in refused.splitlines() if line.startswith(("\t", " "))]
        why = (f"local changes to {', '.join(blocking)} would be overwritten" if blocking
               else refused.splitlines()[0] if refused else "git refused")
        raise SyncError(f"{branch} is checked out in {checkout} and git would not move it: {why}; "
                        "commit or stash them there and run drift --apply again (nothing was changed)")
    return str(commit)
