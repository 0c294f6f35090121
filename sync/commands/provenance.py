"""`provenance`: record the upstream base of every file of a backend."""
from __future__ import annotations

from pathlib import Path

import click

from ..errors import SyncError
from ..layout import backend_names
from ..provenance import write_manifest
from ..git import GitTree, current_branch, open_repo, resolve_commit


def run_provenance(repo_path: str, tag: str, backend: str, src: str | None) -> int:
    repo = open_repo(repo_path)
    if repo.workdir is None:
        raise SyncError("a bare repository has no work tree to write provenance.toml in")
    src = src or current_branch(repo)
    branch = GitTree(repo, resolve_commit(repo, src).tree, src)
    if backend not in backend_names(branch):
        raise SyncError(f"no spec tree for backend {backend} on {src}")
    tag_tree = GitTree(repo, resolve_commit(repo, tag).tree, tag)
    target, count = write_manifest(repo, Path(repo.workdir), branch, backend, tag, tag_tree)
    click.echo(f"recorded {count} file(s) in {target}; commit it with the backend")
    return 0
