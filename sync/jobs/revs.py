"""Resolve what the user typed into Rev values once, at the edge of a job."""
from __future__ import annotations

from ..errors import SyncError
from ..git import Repository, current_branch, is_ancestor, resolve_commit
from ..model import Range, Rev


def resolve_rev(repo: Repository, ref: str) -> Rev:
    return Rev(ref, str(resolve_commit(repo, ref).id))


def resolve_range(repo: Repository, old: str, onto: str, source: str | None) -> Range:
    source = source or current_branch(repo)
    return Range(resolve_rev(repo, old), resolve_rev(repo, onto), resolve_rev(repo, source))


def not_based_on(old: Rev, source: Rev) -> SyncError:
    """OLD must be what the FlagTree branch is based on: otherwise OLD..SRC is upstream's history too."""
    return SyncError(f"{old.ref} ({old.short}) is not an ancestor of {source.ref}: "
                     "pass the upstream tag the FlagTree branch is based on as --from")


def require_based_on(repo: Repository, rng: Range) -> None:
    if not is_ancestor(repo, rng.old.oid, rng.source.oid):
        raise not_based_on(rng.old, rng.source)
