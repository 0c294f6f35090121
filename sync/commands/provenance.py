"""`provenance`: record the upstream base of every file of a backend."""
from __future__ import annotations

import click

from ..jobs.review import record_provenance


def run_provenance(repo_path: str, tag: str, backend: str, source_branch: str | None) -> int:
    target, count = record_provenance(repo_path, tag, backend, source_branch)
    if count == 0:
        click.echo(f"{target} already records these bases: nothing changed")
    else:
        click.echo(f"recorded {count} file(s) in {target}; commit it with the backend")
    return 0
