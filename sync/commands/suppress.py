"""`suppress`: record a reviewed drift finding in its backend's suppressions.toml."""
from __future__ import annotations

import click

from ..git import checked_out_branch, open_repo
from ..jobs.review import SuppressRequest, record_suppression


def run_suppress(repo_path: str, old: str, onto: str, source_branch: str | None, request: SuppressRequest) -> int:
    written = record_suppression(repo_path, old, onto, source_branch, request)
    on = checked_out_branch(open_repo(repo_path))
    where = f"on {request.target}" if request.target else "on the FlagTree branch"
    hint = f" (the work tree is on {on or 'a detached HEAD'}: check out {request.target})" \
        if request.target and on != request.target else ""
    click.echo(f"recorded in {written}; commit it {where}{hint}: drift reads commits, not the work tree")
    return 0
