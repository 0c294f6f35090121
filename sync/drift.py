"""Run every registered drift analysis over one FlagTree branch between two upstream tags."""
from __future__ import annotations

from dataclasses import dataclass, field

from .analyzers.context import DriftContext
from .analyzers.overlays import MergedOverlay
from .analyzers.owners import OwnerIndex
from .analyzers.registry import ANALYZERS
from .cache import FactCache, using
from .errors import SyncError
from .git import GitError, GitTree, Repository, Tree
from .git.repo import commit_of, commit_range, is_ancestor
from .git.store import scratch_repository
from .progress import Progress, Silent
from .layout import backend_names
from .model import Finding, Range, Rev
from .replay import Replayer
from .suppressions import apply_suppressions


@dataclass
class DriftResult:
    owners: OwnerIndex
    findings: list[Finding] = field(default_factory=list)
    merged: list[MergedOverlay] = field(default_factory=list)


def replayed_tree(repo: Repository, rng: Range) -> Tree:
    """The FlagTree delta replayed onto the new tag, in memory; conflicts keep the FlagTree side.

    The merged blobs and trees are written into repo: pass a scratch repository to keep a store clean."""
    replayer = Replayer(repo, "theirs", rng.onto.short)
    tree = commit_of(repo, rng.onto.oid).tree
    for oid in commit_range(repo, commit_of(repo, rng.old.oid), commit_of(repo, rng.source.oid)):
        picked = replayer.pick_tree(commit_of(repo, oid), tree).tree
        assert picked is not None  # the "theirs" policy always settles a conflict
        tree = repo[picked].peel(Tree)
    return tree


def analyse_drift(repo: Repository, rng: Range, target: Rev | None, backends: set[str] | None = None,
                  symbols: bool = False, progress: Progress | None = None) -> DriftResult:
    """Read-only: objects the in-memory replay needs go to a scratch store, never into repo's."""
    with scratch_repository(repo) as scratch, using(FactCache.for_git_dir(repo.path)):
        return _analyse(repo, scratch, rng, target, backends, symbols, progress or Silent())


def _analyse(repo: Repository, scratch: Repository, rng: Range, target_rev: Rev | None, backends: set[str] | None,
             symbols: bool, progress: Progress) -> DriftResult:
    fork = GitTree.of_commit(repo, rng.source.oid, f"fork:{rng.source.ref}")
    known = backend_names(fork)
    if backends:
        unknown = sorted(backends - set(known))
        if unknown:
            raise SyncError(f"no spec tree for backend(s) {', '.join(unknown)}; known: {', '.join(known) or 'none'}")
    early: list[Finding] = []
    target: GitTree | None = None
    if target_rev is None:
        progress.phase("replaying the delta in memory")
        try:
            target = GitTree(scratch, replayed_tree(scratch, rng), "target:in-memory")
        except GitError as exc:  # e.g. a blob missing from a partial clone
            early.append(Finding("target-unavailable", ".", f"the delta could not be replayed in memory ({exc}); "
                                 "hooks and guards were judged from the upstream tags alone"))
    else:
        target = GitTree.of_commit(repo, target_rev.oid, f"target:{target_rev.ref}")
    context = DriftContext(repo, GitTree.of_commit(repo, rng.old.oid, f"old:{rng.old.ref}"),
                           GitTree.of_commit(repo, rng.onto.oid, f"new:{rng.onto.ref}"), fork, target,
                           sorted(backends or known), filtered=bool(backends), range=rng,
                           fork_based_on_old=is_ancestor(repo, rng.old.oid, rng.source.oid))
    findings = list(early)
    analyzers = [analyzer for analyzer in ANALYZERS if symbols or not analyzer.on_request]
    progress.phase("analyses", len(analyzers))
    for number, analyzer in enumerate(analyzers):
        progress.advance(analyzer.name, number)
        findings.extend(analyzer.analyze(context))
    progress.advance("", len(analyzers))
    if backends:
        findings = [f for f in findings if f.backend is None or f.backend in backends]
    findings = apply_suppressions(findings, fork, context.upstream_new, known)
    return DriftResult(context.owners, findings, list(context.merged))
