"""The drift job: classify every backend's overlays, spec functions and guards between two tags."""
from __future__ import annotations

from dataclasses import dataclass

from .. import __version__
from ..drift import DriftResult, analyse_drift
from ..errors import SyncError
from ..model import DriftInfo, Report, build_report
from ..git import Repository, branch_exists, branch_head, commit_files, open_repo
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
    return build_report(rng, result.owners.backends, result.findings,
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
