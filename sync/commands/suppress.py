"""`suppress`: record a reviewed drift finding in its backend's suppressions.toml."""
from __future__ import annotations

from difflib import get_close_matches

import click

from ..errors import SyncError
from ..kinds import BY_ID

from ..git import checked_out_branch, open_repo
from ..jobs.review import SuppressRequest, record_suppression


def run_suppress(repo_path: str, old: str | None, onto: str | None, source_branch: str | None,
                 request: SuppressRequest) -> int:
    if request.kind not in BY_ID:  # before the analysis, and not "no such finding", which reads as a wrong path
        close = get_close_matches(request.kind, list(BY_ID), n=2)
        raise SyncError(f"unknown kind {request.kind!r}" + (f"; did you mean {' or '.join(close)}?" if close else "")
                        + " (flagtree-sync kinds lists them)")
    written = record_suppression(repo_path, old, onto, source_branch, request)
    on = checked_out_branch(open_repo(repo_path))
    where = f"on {request.target}" if request.target else "on the FlagTree branch"
    hint = f" (the work tree is on {on or 'a detached HEAD'}: check out {request.target})" \
        if request.target and on != request.target else ""
    click.echo(f"recorded in {written}; commit it {where}{hint}: drift reads commits, not the work tree")
    return 0
