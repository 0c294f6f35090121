"""`describe`: the tool's model of a FlagTree tree, as JSON."""
from __future__ import annotations

import json

import click

from sync.jobs.describe import describe_branch


def run_describe(repo_path: str, source_branch: str | None) -> int:
    click.echo(json.dumps(describe_branch(repo_path, source_branch), indent=2, ensure_ascii=False))
    return 0
