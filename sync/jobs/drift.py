"""The drift job: classify every backend's overlays, spec functions and guards between two tags."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..drift import DriftResult, analyse_drift
from ..errors import SyncError
from ..model import DriftInfo, Report, build_report
from ..git import GitTree, Repository, branch_exists, branch_head, commit_files, open_repo
from ..model import Finding
from ..suppressions import apply_suppressions, suppressions_path
from ..progress import Progress, Silent
from .revs import require_based_on, resolve_range, resolve_rev


@dataclass(frozen=True)
class DriftOptions:
    target: str | None = None  # the upgraded branch; None: replay the delta in memory
    backends: frozenset[str] = frozenset()
    apply: bool = False  # commit the clean 3-way merges on target
    symbols: bool = False


def run_drift(repo_path: str, old: str, onto: str, source: str | None, options: DriftOptions,
              progress: Progress | None = None) -> Report:
    repo = open_repo(repo_path)
    rng = resolve_range(repo, old, onto, source)
    require_based_on(repo, rng)  # else the in-memory replay would replay upstream's own history
    target = resolve_rev(repo, options.target) if options.target else None
    if options.apply and (target is None or not branch_exists(repo, target.ref)):
        raise SyncError("--apply commits the clean merges on a branch: pass that branch as --target")
    try:
        result = analyse_drift(repo, rng, target, set(options.backends) or None, options.symbols, progress)
    finally:
        (progress or Silent()).close()
    applied = _apply_merges(repo, target.ref, result) if options.apply and target else None
    findings = result.findings
    if target is not None:
        findings = review_on_branch(findings, repo, target.oid, rng.onto.oid, result.owners.backends)
    return build_report(rng, result.owners.backends, findings,
                        drift=DriftInfo(target.ref if target else "(replayed in memory)", applied),
                        only=set(options.backends) or None, tool_version=__version__)


def _apply_merges(repo: Repository, branch: str, result: DriftResult) -> str | None:
    """Commit the clean merges on top of the target branch (in memory: no checkout)."""
    head = branch_head(repo, branch)
    if not result.merged or head is None:
        return None
    ref = f"refs/heads/{branch}"
    message = "Auto-merge drifted overlays\n\n" + "\n".join(f"- {m.path}" for m in result.merged) + "\n"
    commit = commit_files(repo, head, {m.path: m.data for m in result.merged}, message, ref)
    return None if commit == head.id else str(commit)  # the merges were already on the branch


def review_on_branch(findings: list[Finding], repo: Repository, branch_commit: str, onto: str,
                     backends: list[str]) -> list[Finding]:
    """Reviews committed on the upgraded branch count too (the maintainer reviews the branch that will be
    released); an entry there wins over the FlagTree branch's entry for the same finding."""
    branch = GitTree.of_commit(repo, branch_commit, "reviews:branch")
    return apply_suppressions(findings, branch, GitTree.of_commit(repo, onto, "new"), backends)


def uncommitted_suppressions(repo_path: str, read_from: str, backends: list[str]) -> list[str]:
    """suppressions.toml files of the work tree that differ from the branch drift read: `suppress` writes
    the work tree, drift reads commits only (a report must not depend on uncommitted files)."""
    repo = open_repo(repo_path)
    if repo.workdir is None:
        return []
    tree = GitTree.of_commit(repo, resolve_rev(repo, read_from).oid, "reviews")
    changed = []
    for backend in backends:
        rel = suppressions_path(backend)
        on_disk = Path(repo.workdir) / rel
        if on_disk.is_symlink() or not on_disk.is_file():
            continue
        if on_disk.read_bytes() != tree.read(rel):
            changed.append(rel)
    return changed
