"""Review jobs: record a reviewed finding (suppressions.toml) or each file's upstream base (provenance.toml)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..drift import analyse_drift
from ..errors import SyncError
from ..git import GitTree, Repository, current_branch, open_repo
from ..layout import backend_names
from ..model import Finding
from ..provenance import Recorded, write_manifest
from ..suppressions import add_suppression, apply_suppressions, subject_of, suppressions_path
from .revs import resolve_rev
from .upgraded import range_of, upgraded_range


def _work_tree(repo: Repository, name: str) -> Path:
    if repo.workdir is None:
        raise SyncError(f"a bare repository has no work tree to write {name} in")
    return Path(repo.workdir)


@dataclass(frozen=True)
class SuppressRequest:
    kind: str
    path: str
    reason: str
    subject: str | None = None  # which finding, when the file has several of the kind
    target: str | None = None  # the upgraded branch drift --target reads; None: the in-memory replay


def record_suppression(repo_path: str, old: str | None, onto: str | None, source: str | None,
                       request: SuppressRequest) -> Path:
    """Append the finding (kind, path[, subject]) of drift OLD -> NEW to its backend's suppressions.toml,
    found as `drift` (with the same --target) finds it: every analysis runs."""
    repo = open_repo(repo_path)
    work_tree = _work_tree(repo, "suppressions.toml")
    rng = range_of(repo, old, onto, source, request.target)
    target = resolve_rev(repo, request.target) if request.target else None
    result = analyse_drift(repo, rng, target, None, symbols=True)
    findings = result.findings
    if target is not None:
        findings = review_on_branch(findings, repo, target.oid, rng.onto.oid, result.owners.backends)
    finding = _the_finding(findings, request)
    if finding.suppressed:
        raise SyncError(f"{request.kind} on {request.path} is already suppressed for {finding.suppressed.reviewed_for}")
    new = GitTree.of_commit(repo, rng.onto.oid, rng.onto.ref)
    return add_suppression(work_tree, finding, new, rng.onto.ref, request.reason)


def _the_finding(findings: list[Finding], request: SuppressRequest) -> Finding:
    on_path = [f for f in findings if f.path == request.path]
    matches = [f for f in on_path if f.kind == request.kind]
    if not matches:
        known = sorted({f.kind for f in on_path})
        raise SyncError(f"no {request.kind} finding on {request.path}" + (f" (it has: {', '.join(known)})" if known else ""))
    subjects = sorted({subject_of(f) for f in matches})
    if request.subject is not None:
        matches = [f for f in matches if subject_of(f) == request.subject]
        if not matches:
            raise SyncError(f"no {request.kind} finding on {request.path} about {request.subject} "
                            f"(--subject is one of: {', '.join(subjects)})")
    elif len(subjects) > 1:
        about = f" about {len(subjects)} subjects" if len(subjects) != len(matches) else ""
        raise SyncError(f"{len(matches)} {request.kind} findings on {request.path}{about}: pass --subject "
                        f"(one of: {', '.join(subjects)}; a review covers every finding about its subject)")
    return matches[0]


def record_provenance(repo_path: str, tag: str, backend: str, source: str | None,
                      old: str | None = None) -> Recorded:
    """Write the backend's provenance.toml: each file's trunk counterpart and its blob at TAG, for the files
    that hold TAG's change (write_manifest). A file the manifest has no base for is judged from OLD (given, or
    the tag the FlagTree commits the branch replays pin)."""
    repo = open_repo(repo_path)
    work_tree = _work_tree(repo, "provenance.toml")
    source = source or current_branch(repo)
    branch = GitTree.of_commit(repo, resolve_rev(repo, source).oid, source)
    if backend not in backend_names(branch):
        raise SyncError(f"no spec tree for backend {backend} on {source}")
    tag_tree = GitTree.of_commit(repo, resolve_rev(repo, tag).oid, tag)
    return write_manifest(repo, work_tree, branch, backend, tag, tag_tree, _old_tree(repo, source, tag, old))


def _old_tree(repo: Repository, branch: str, tag: str, old: str | None) -> GitTree | None:
    if old is not None:
        return GitTree.of_commit(repo, resolve_rev(repo, old).oid, old)
    try:
        rng = upgraded_range(repo, branch, onto=tag)[0]
    except SyncError:  # not a branch upgrade made, or no pin to read OLD from
        return None
    return GitTree.of_commit(repo, rng.old.oid, rng.old.ref)


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
