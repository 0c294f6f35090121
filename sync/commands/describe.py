"""`describe`: the tool's model of a FlagTree tree, as JSON."""
from __future__ import annotations

import json
from dataclasses import dataclass

import click

from sync.jobs.describe import describe_branch


@dataclass(frozen=True, kw_only=True)
class DescribeRequest:
    """What `describe` was given, by name (None: not given)."""

    repo_path: str = "."
    source_branch: str | None = None  # --branch


def run_describe(request: DescribeRequest) -> int:
    click.echo(json.dumps(describe_branch(request.repo_path, request.source_branch), indent=2, ensure_ascii=False))
    return 0
