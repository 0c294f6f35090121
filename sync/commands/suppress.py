"""`suppress`: record a reviewed drift finding in its backend's suppressions.toml."""
from __future__ import annotations

from pathlib import Path

import click

from ..drift import analyse_drift
from ..errors import SyncError
from ..suppressions import add_suppression
from ..git import GitTree, current_branch, open_repo, resolve_commit


def run_suppress(repo_path: str, old: str, onto: str, src: str | None, kind: str, path: str, reason: str) -> int:
    repo = open_repo(repo_path)
    if repo.workdir is None:
        raise SyncError("a bare repository has no work tree to write suppressions.toml in")
    src = src or current_branch(repo)
    old_commit, onto_commit, src_commit = (resolve_commit(repo, ref) for ref in (old, onto, src))
    result = analyse_drift(repo, str(old_commit.id), str(onto_commit.id), str(src_commit.id), None, None,
                           symbols=kind.startswith("symbol"))
    matches = [f for f in result.findings if f.kind == kind and f.path == path]
    if not matches:
        known = sorted({f.kind for f in result.findings if f.path == path})
        raise SyncError(f"no {kind} finding on {path}" + (f" (it has: {', '.join(known)})" if known else ""))
    if matches[0].suppressed:
        raise SyncError(f"{kind} on {path} is already suppressed for {matches[0].suppressed['reviewed_for']}")
    target = add_suppression(Path(repo.workdir), matches[0], GitTree(repo, onto_commit.tree, onto), onto, reason)
    click.echo(f"recorded in {target}; commit it with the backend")
    return 0
