"""Run every drift analysis over one FlagTree branch between two upstream tags."""
from __future__ import annotations

from dataclasses import dataclass, field

from .analyzers.context import DriftContext
from .analyzers.cppguards import guard_findings
from .analyzers.overlays import MergedOverlay, overlay_findings
from .analyzers.owners import OwnerIndex
from .analyzers.specfuncs import spec_function_findings
from .analyzers.symbols import symbol_findings
from .errors import SyncError
from .findings import Finding
from .layout import backend_names, third_party_backends
from .git import GitError, GitTree, Repository, Tree
from .git.repo import commit_of, commit_range, is_ancestor
from .git.store import scratch_repository
from .replay import Replayer
from .suppressions import apply_suppressions


@dataclass
class DriftResult:
    owners: OwnerIndex
    findings: list[Finding] = field(default_factory=list)
    merged: list[MergedOverlay] = field(default_factory=list)


def replayed_tree(repo: Repository, old_id: str, onto_id: str, src_id: str) -> Tree:
    """The FlagTree delta replayed onto the new tag, in memory; conflicts keep the FlagTree side.

    The merged blobs and trees are written into repo: pass a scratch repository to keep a store clean."""
    replayer = Replayer(repo, "theirs", onto_id[:9])
    tree = commit_of(repo, onto_id).tree
    for oid in commit_range(repo, commit_of(repo, old_id), commit_of(repo, src_id)):
        tree = repo[replayer.pick_tree(repo[oid], tree).tree]
    return tree


def _symbol_drift(repo: Repository, context: DriftContext, old_id: str, src_id: str) -> list[Finding]:
    if not is_ancestor(repo, old_id, src_id):
        # FlagTree's added lines are measured from OLD: on a branch not based on it they would be upstream's.
        return [Finding("symbol-drift-skipped", "info", ".", "the old tag is not an ancestor of the branch, so "
                        "FlagTree's added lines cannot be told from upstream's", "pass the branch's own base as --from")]
    return symbol_findings(repo, context.upstream_old, context.upstream_new, context.fork, context.owners.owners)


def analyse_drift(repo: Repository, old_id: str, onto_id: str, src_id: str, target_id: str | None,
                  backends: set[str] | None = None, symbols: bool = False) -> DriftResult:
    """Read-only: objects the in-memory replay needs go to a scratch store, never into repo's."""
    with scratch_repository(repo) as scratch:
        return _analyse(repo, scratch, old_id, onto_id, src_id, target_id, backends, symbols)


def _analyse(repo: Repository, scratch: Repository, old_id: str, onto_id: str, src_id: str,
             target_id: str | None, backends: set[str] | None, symbols: bool) -> DriftResult:
    fork = GitTree.of_commit(repo, src_id, f"fork:{src_id}")
    known = backend_names(fork)
    if backends:
        unknown = sorted(backends - set(known))
        if unknown:
            raise SyncError(f"no spec tree for backend(s) {', '.join(unknown)}; known: {', '.join(known) or 'none'}")
    early: list[Finding] = []
    target: GitTree | None = None
    if target_id is None:
        try:
            target = GitTree(scratch, replayed_tree(scratch, old_id, onto_id, src_id), "target:in-memory")
        except GitError as exc:  # e.g. a blob missing from a partial clone
            early.append(Finding(
                "target-unavailable", "info", ".", f"the delta could not be replayed in memory ({exc}); "
                "hooks and guards were judged from the upstream tags alone", "pass --target"))
    else:
        target = GitTree.of_commit(repo, target_id, f"target:{target_id}")
    context = DriftContext(repo, GitTree.of_commit(repo, old_id, f"old:{old_id}"),
                           GitTree.of_commit(repo, onto_id, f"new:{onto_id}"), fork, target,
                           sorted(backends or known), filtered=bool(backends))
    result = DriftResult(context.owners, early)
    for backend in third_party_backends(fork):
        if backend not in known and (not backends or backend in backends):
            result.findings.append(Finding("backend-without-spec", "info", f"third_party/{backend}/backend",
                                           "backend has no spec/ tree: nothing to drift", "", backend=backend))
    result.findings += overlay_findings(context, result.merged)
    result.findings += spec_function_findings(context)
    result.findings += guard_findings(context)
    if symbols:
        result.findings += _symbol_drift(repo, context, old_id, src_id)
    if backends:
        result.findings = [f for f in result.findings if f.backend is None or f.backend in backends]
    result.findings = apply_suppressions(result.findings, fork, context.upstream_new, known)
    return result
