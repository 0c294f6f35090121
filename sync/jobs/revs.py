"""Resolve what the user typed into Rev values once, at the edge of a job: every job (and the upgrade's
parameters) resolves a name here, and says here that --from is not what the branch is based on."""
from __future__ import annotations

from typing import Iterable

from sync.errors import SyncError
from sync.records.pin import PIN_FILE, pinned_from, read_pin
from sync.git import (Commit, GitTree, Repository, author_emails, commit_of, current_branch, first_parent_line, is_ancestor,
                   merge_base, range_commits, renames, resolve_commit)
from sync.model import Range, ReplayedCommit, Rev
from sync.model.build import forges_of
from sync.model.report import Forges


def resolve_rev(repo: Repository, ref: str) -> Rev:
    return Rev(ref, str(resolve_commit(repo, ref).id))


def pinned_rev(repo: Repository, source: Rev) -> Rev:
    """--from left out: the tag pinned in source's flagtree-upstream.toml, at its recorded commit (not what the name
    resolves to: refs/<tag> or a branch of that name may shadow it)."""
    pin = read_pin(repo, commit_of(repo, source.oid))
    if pin is None:
        raise SyncError(f"--from is required: {source.ref} has no {PIN_FILE}")
    return Rev(pinned_from(repo, pin, source.ref), str(resolve_commit(repo, pin.commit).id))


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


def require_delta(rng: Range) -> None:
    """OLD..SRC must hold the FlagTree commits: --from at SRC itself (or after it) leaves none, and a report of
    that range would drop the whole delta."""
    if rng.old.oid == rng.source.oid:
        raise SyncError(f"--from {rng.old.ref} is {rng.source.ref} itself ({rng.old.short}): {rng.old.ref}.."
                        f"{rng.source.ref} holds no FlagTree commit, so the report would leave the whole delta out; "
                        "pass the upstream tag the FlagTree branch is based on as --from")


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


def range_notes(repo: Repository, rng: Range) -> tuple[str, ...]:
    """What the report says about the range besides its findings: the doubt about --from (printed at the start
    too, where a user may miss it; seen on FlagTree main, whose merge-base with the new tag takes 22 upstream
    release commits into the range)."""
    doubt = from_doubt(repo, rng)
    return (doubt,) if doubt else ()


def from_doubt(repo: Repository, rng: Range) -> str | None:
    """A warning when --from looks older than where SRC left upstream, else None (a guess may be wrong, and
    the upgrade leaves out the commits it can tell are upstream's anyway: see upstream_in_range)."""
    return _based_later(repo, rng) or looks_like_upstream_after(repo, rng)


def _based_later(repo: Repository, rng: Range) -> str | None:
    """SRC's own line (first parents) reaches NEW's history at a commit after OLD: the branch was based there,
    and OLD..that commit is upstream's (NEW has it all). A branch that merged upstream later reaches it through a
    merge's second parent instead, and is told nothing: its --from is right."""
    base = merge_base(repo, rng.source.oid, rng.onto.oid)
    if base is None or str(base) in (rng.old.oid, rng.source.oid) or not is_ancestor(repo, rng.old.oid, base):
        return None
    if base not in first_parent_line(repo, rng.source.oid, rng.old.oid):
        return None
    between = len(range_commits(repo, commit_of(repo, rng.old.oid), commit_of(repo, base)))
    return (f"--from {rng.old.ref} ({rng.old.short}) is older than where {rng.source.ref} left upstream: the "
            f"{between} commit(s) after it up to {str(base)[:9]} are in --onto {rng.onto.ref}'s history, so they are "
            f"left out as already upstream; {rng.source.ref} is based on {str(base)[:9]}: pass --from {str(base)[:9]}")


# How far back NEW's history is read for its authors: its newest 1,000 commits (some months of Triton), about
# 15 ms (each commit read costs ~15 us: all 6,000 would cost 0.07 s a run). The commits right after a wrong
# --from are by people active then.
_AUTHOR_WINDOW = 1000


def looks_like_upstream_after(repo: Repository, rng: Range) -> str | None:
    """A warning when the commits right after OLD on SRC look like upstream's, else None.

    NEW's history does not always hold them: upstream's release branches part from its main line, so the
    commits a release branch added after OLD (cherry-picks, the release commit) reach NEW through no
    parent. What they share with NEW's history is their authors. The line of commits after OLD (each the
    first parent of the next, no merge) is read for where the authors of NEW's history give way to others:
    the prefix with the most commits by them over the others ends at the likely base, if it has more of
    them at all. A guess (FlagTree may open with a cherry-picked upstream fix, which keeps its author; one
    of its developers may have authored upstream commits too), so it warns, naming that commit.
    """
    commits = range_commits(repo, commit_of(repo, rng.old.oid), commit_of(repo, rng.source.oid))
    children: dict[str, list[Commit]] = {}
    for commit in commits:
        if commit.parent_ids:
            children.setdefault(str(commit.parent_ids[0]), []).append(commit)
    line: list[Commit] = []
    current = rng.old.oid
    while len(children.get(current, [])) == 1 and len(children[current][0].parent_ids) == 1:
        line.append(children[current][0])
        current = str(line[-1].id)
    if not line:
        return None
    authors = author_emails(repo, rng.onto.oid, _AUTHOR_WINDOW)
    upstream = [commit.author.email.lower() in authors for commit in line]
    score, best, end = 0, 0, -1
    for index, by_upstream in enumerate(upstream):
        score += 1 if by_upstream else -1
        if score > best:
            best, end = score, index
    if end < 0 or str(line[end].id) == rng.source.oid:  # the whole range looks upstream's: nothing of FlagTree's to tell apart
        return None
    last = line[end]
    subject = last.message.splitlines()[0] if last.message else ""
    return (f"--from {rng.old.ref} ({rng.old.short}) may be older than where {rng.source.ref} left upstream: "
            f"{sum(upstream[:end + 1])} of the {end + 1} commit(s) after it up to {str(last.id)[:9]} ({subject[:60]}) "
            f"are by authors of commits in {rng.onto.ref}'s history, and would be "
            f"replayed as FlagTree's; if {str(last.id)[:9]} is the upstream commit {rng.source.ref} is based on, "
            f"pass --from {str(last.id)[:9]}")


def repository_forges(repo: Repository) -> Forges:
    """Where the report links commits and PRs: the forges the repository's remotes name (none: no links)."""
    from sync.git.repo import config_entries
    remotes: dict[str, str] = {}
    for name, value in config_entries(repo):
        if name.startswith("remote.") and name.endswith(".url"):
            remotes.setdefault(name[len("remote."):-len(".url")], value)
    return forges_of(remotes)


def upstream_moves(repo: Repository, rng: Range, commits: Iterable[ReplayedCommit]) -> dict[str, str]:
    """Where upstream's own diff OLD -> NEW moved each file a replayed commit met as deleted upstream (git's
    similarity detection on upstream's versions; the pick compared FlagTree's, often too changed to follow)."""
    deleted = {c.path for commit in commits for c in commit.conflicts if c.kind == "deleted-upstream"}
    if not deleted:
        return {}
    moved = renames(GitTree.of_commit(repo, rng.old.oid, "old"), GitTree.of_commit(repo, rng.onto.oid, "new"))
    return {path: moved[path] for path in deleted if path in moved}
