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


def require_forward(repo: Repository, rng: Range, verb: str) -> None:
    """NEW must come after OLD: the same commit leaves nothing to compare, and a NEW that OLD descends from
    turns every file upstream added since into one it "deleted"."""
    if rng.onto.oid == rng.old.oid:
        raise SyncError(f"--onto {rng.onto.ref} is the commit --from {rng.old.ref} names ({rng.old.short}): upstream "
                        f"changed nothing between them, so there is nothing to {verb}; pass the new upstream tag "
                        "as --onto")
    if is_ancestor(repo, rng.onto.oid, rng.old.oid):
        raise SyncError(f"--onto {rng.onto.ref} ({rng.onto.short}) is older than --from {rng.old.ref} "
                        f"({rng.old.short}): the range runs backwards; pass the older tag as --from and the newer "
                        "as --onto")
