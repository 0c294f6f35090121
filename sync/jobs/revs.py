"""Resolve what the user typed into Rev values once, at the edge of a job."""
from __future__ import annotations

from ..git import Repository, current_branch, resolve_commit
from ..model import Range, Rev


def resolve_rev(repo: Repository, ref: str) -> Rev:
    return Rev(ref, str(resolve_commit(repo, ref).id))


def resolve_range(repo: Repository, old: str, onto: str, source: str | None) -> Range:
    source = source or current_branch(repo)
    return Range(resolve_rev(repo, old), resolve_rev(repo, onto), resolve_rev(repo, source))
