"""Review jobs: record a reviewed finding (suppressions.toml) or each file's upstream base (provenance.toml)."""
from __future__ import annotations

from pathlib import Path

from ..drift import analyse_drift
from ..errors import SyncError
from ..git import GitTree, Repository, current_branch, open_repo
from ..layout import backend_names
from ..provenance import write_manifest
from ..suppressions import add_suppression
from .revs import resolve_range, resolve_rev


def _work_tree(repo: Repository, name: str) -> Path:
    if repo.workdir is None:
        raise SyncError(f"a bare repository has no work tree to write {name} in")
    return Path(repo.workdir)


def record_suppression(repo_path: str, old: str, onto: str, source: str | None, kind: str, path: str,
                       reason: str) -> Path:
    """Append the finding (kind, path) of drift OLD -> NEW to its backend's suppressions.toml."""
    repo = open_repo(repo_path)
    work_tree = _work_tree(repo, "suppressions.toml")
    rng = resolve_range(repo, old, onto, source)
    result = analyse_drift(repo, rng, None, None, symbols=kind.startswith("symbol"))
    matches = [f for f in result.findings if f.kind == kind and f.path == path]
    if not matches:
        known = sorted({f.kind for f in result.findings if f.path == path})
        raise SyncError(f"no {kind} finding on {path}" + (f" (it has: {', '.join(known)})" if known else ""))
    if matches[0].suppressed:
        raise SyncError(f"{kind} on {path} is already suppressed for {matches[0].suppressed.reviewed_for}")
    new = GitTree.of_commit(repo, rng.onto.oid, rng.onto.ref)
    return add_suppression(work_tree, matches[0], new, onto, reason)


def record_provenance(repo_path: str, tag: str, backend: str, source: str | None) -> tuple[Path, int]:
    """Write the backend's provenance.toml: each file's trunk counterpart and its blob at TAG."""
    repo = open_repo(repo_path)
    work_tree = _work_tree(repo, "provenance.toml")
    source = source or current_branch(repo)
    branch = GitTree.of_commit(repo, resolve_rev(repo, source).oid, source)
    if backend not in backend_names(branch):
        raise SyncError(f"no spec tree for backend {backend} on {source}")
    tag_tree = GitTree.of_commit(repo, resolve_rev(repo, tag).oid, tag)
    return write_manifest(repo, work_tree, branch, backend, tag, tag_tree)
