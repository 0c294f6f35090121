"""`describe`: the tool's model of a FlagTree tree, as JSON."""
from __future__ import annotations

import json

import click

from sync.git import GitTree, current_branch, open_repo
from sync.jobs.describe import describe_tree
from sync.jobs.revs import resolve_rev


def run_describe(repo_path: str, source_branch: str | None) -> int:
    repo = open_repo(repo_path)
    rev = resolve_rev(repo, source_branch or current_branch(repo))
    document = {"schema": "flagtree-sync/describe/1", "branch": rev.to_json(),
                **describe_tree(GitTree.of_commit(repo, rev.oid, rev.ref))}
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    return 0
