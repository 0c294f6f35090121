"""Reading an upgraded branch: which FlagTree commits it replays (its `(cherry picked from commit X)` lines)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from sync.errors import SyncError, UnknownRef
from sync.git import Commit, Repository
from sync.git.repo import checked_out_branch, commit_of, resolve_commit, resolves
from sync.model import Range, Rev
from sync.records.pin import PIN_FILE, read_pin
from sync.jobs.revs import resolve_range

CHERRY_PICKED = re.compile(r"^\(cherry picked from commit ([0-9a-f]{40})\)$", re.MULTILINE)


@dataclass(frozen=True)
class Replayed:
    commit: Commit  # the commit on the branch
    source: Commit  # the FlagTree commit it replays


def replayed_commits(repo: Repository, head, onto_id: str) -> list[Replayed]:
    """The branch's commits above NEW (first parents) that name the FlagTree commit they replay, oldest first."""
    found = []
    commit = head
    while str(commit.id) != onto_id:
        match = CHERRY_PICKED.search(commit.message)
        if match and resolves(repo, match.group(1)):
            found.append(Replayed(commit, commit_of(repo, match.group(1))))
        if not commit.parents:
            raise SyncError(f"the branch does not descend from {onto_id[:9]} (its pinned upstream): pass --onto")
        commit = commit.parents[0]
    return list(reversed(found))


def replayed_source(repo: Repository, replayed: list[Replayed], source: str | None) -> Rev:
    if source:
        return Rev(source, str(resolve_commit(repo, source).id))
    if not replayed:
        raise SyncError("no commit of the branch says which FlagTree commit it replays "
                        "('(cherry picked from commit ...)'): pass --branch")
    newest = replayed[-1].source
    return Rev(str(newest.id)[:9], str(newest.id))


def upgraded_range(repo: Repository, branch: str, old: str | None = None, onto: str | None = None,
                   source: str | None = None, hint: str = "") -> tuple[Range, list[Replayed]]:
    """The range an upgrade made branch from, read from the branch itself: NEW is its pin, SRC the newest
    FlagTree commit it replays, OLD the pin in SRC's tree; what the user gave wins. status and drift --target
    both derive it here. A branch it cannot be read from is named, with hint (what the caller can pass) where it
    does not look like upgrade's; where only a pin is missing, the message itself names --onto and --from."""
    head = resolve_commit(repo, branch)  # an unknown name stays "unknown revision"
    try:
        onto_rev = _onto(repo, head, onto)
        replayed = replayed_commits(repo, head, onto_rev.oid)
        source_rev = replayed_source(repo, replayed, source)
        return Range(_old(repo, source_rev, old), onto_rev, source_rev), replayed
    except UnknownRef:
        raise
    except _NoPin as exc:
        raise SyncError(f"cannot read the upgrade's range from {branch}: {exc}") from exc
    except SyncError as exc:
        raise SyncError(f"cannot read the upgrade's range from {branch}, which does not look like a branch "
                        f"flagtree-sync upgrade made ({exc}){hint}") from exc


class _NoPin(SyncError):
    """The branch has no pin: upgrade writes one only over the pin of the FlagTree branch it replays."""


def _onto(repo: Repository, head, onto: str | None) -> Rev:
    if onto:
        return Rev(onto, str(resolve_commit(repo, onto).id))
    pin = read_pin(repo, head)
    if pin is None:
        raise _NoPin(f"it has no {PIN_FILE} at its tip (upgrade rewrites that pin only when the FlagTree branch "
                     "it replays has one): pass --onto NEW (and --from OLD)")
    if not resolves(repo, pin.commit):
        raise SyncError(f"{PIN_FILE} pins {pin.tag} at {pin.commit[:9]}, which this repository does not have: "
                        "fetch the upstream tags")
    return Rev(pin.tag, pin.commit)


def _old(repo: Repository, source: Rev, old: str | None) -> Rev:
    if old:
        return Rev(old, str(resolve_commit(repo, old).id))
    pin = read_pin(repo, commit_of(repo, source.oid))
    if pin is None or not resolves(repo, pin.commit):
        raise _NoPin(f"the FlagTree commit it replays, {source.ref}, has no usable {PIN_FILE}: pass --from OLD")
    return Rev(pin.tag, pin.commit)


def source_when_on_target(repo: Repository, source: str | None, target: str | None, onto: str) -> str | None:
    """The FlagTree branch to use when none was given and a target upgrade made is: the newest FlagTree commit
    the target replays (as status reads it), not the current branch, which may be anything (main, or the target
    itself). A target upgrade did not make leaves the current branch, unless it is that target."""
    if source is not None or target is None:
        return source
    head = resolve_commit(repo, target)
    try:
        return replayed_source(repo, replayed_commits(repo, head, str(resolve_commit(repo, onto).id)), None).oid
    except SyncError:
        if checked_out_branch(repo) == target:
            raise
        return None


def range_of(repo: Repository, old: str | None, onto: str | None, source: str | None, target: str | None) -> Range:
    """The range drift and suppress judge: as given, or, with a target upgrade made, read from it the way
    status reads it (--from, --onto and --branch may each be left out)."""
    if old and onto:
        return resolve_range(repo, old, onto, source_when_on_target(repo, source, target, onto))
    if target is None:
        here = checked_out_branch(repo)
        try:
            on_upgraded = here is not None and bool(upgraded_range(repo, here))
        except SyncError:
            on_upgraded = False
        hint = f": pass --target {here}, the upgraded branch checked out here" if on_upgraded else ""
        raise SyncError("--from and --onto are required, unless --target names a branch flagtree-sync upgrade "
                        f"made (then they are read from it, as status does){hint}")
    return upgraded_range(repo, target, old, onto, source, "; or pass --from and --onto")[0]
