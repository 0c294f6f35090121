"""Resolve what the user typed into Rev values once, at the edge of a job."""
from __future__ import annotations

from ..model import Range, Rev
from ..repository import current_branch, resolve_commit


def resolve_rev(repo, ref: str) -> Rev:
    return Rev(ref, str(resolve_commit(repo, ref).id))


def resolve_range(repo, old: str, onto: str, source: str | None) -> Range:
    source = source or current_branch(repo)
    return Range(resolve_rev(repo, old), resolve_rev(repo, onto), resolve_rev(repo, source))
