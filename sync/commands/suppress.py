"""`suppress`: record a reviewed drift finding in its backend's suppressions.toml."""
from __future__ import annotations

import click

from ..jobs.review import record_suppression


def run_suppress(repo_path: str, old: str, onto: str, src: str | None, kind: str, path: str, reason: str) -> int:
    target = record_suppression(repo_path, old, onto, src, kind, path, reason)
    click.echo(f"recorded in {target}; commit it with the backend (drift reads the branch, not the work tree)")
    return 0
