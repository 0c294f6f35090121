"""Reading an upgraded branch: which FlagTree commits it replays (its `(cherry picked from commit X)` lines)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from sync.errors import SyncError, UnknownRef
from sync.git import Commit, Repository
from sync.git.repo import checked_out_branch, commit_of, resolve_commit, resolves
from sync.model import Range, Rev
from sync.records.pin import PIN_FILE, RecordedRange, read_pin, recorded_range
from sync.replay.engine import TOOL_EMAIL
from sync.jobs.revs import resolve_range, resolve_rev

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
        return resolve_rev(repo, source)
    if not replayed:
        raise SyncError("no commit of the branch says which FlagTree commit it replays "
                        "('(cherry picked from commit ...)'): pass --branch")
    newest = replayed[-1].source
    return Rev(str(newest.id)[:9], str(newest.id))


def upgraded_range(repo: Repository, branch: str, old: str | None = None, onto: str | None = None,
                   source: str | None = None, hint: str = "") -> tuple[Range, list[Replayed]]:
    """The range an upgrade made branch from, read from the branch itself: NEW is its pin; OLD and SRC the
    range its pin commit records, else SRC the newest FlagTree commit it replays and OLD the pin in SRC's tree;
    what the user gave wins. status, drift --target, suppress --target and provenance all derive it here. A
    branch it cannot be read from is named, with hint (what the caller can pass) where it does not look like
    upgrade's; where only a pin is missing, the message itself names --onto and --from."""
    head = resolve_commit(repo, branch)  # an unknown name stays "unknown revision"
    try:
        onto_rev = _onto(repo, head, onto)
        replayed = replayed_commits(repo, head, onto_rev.oid)
        recorded = _recorded(repo, head, onto_rev.oid)
        if source is None and recorded is not None:
            source_rev = Rev(recorded.source[:9], recorded.source)
        else:
            source_rev = replayed_source(repo, replayed, source)
        usable = recorded if recorded is not None and recorded.source == source_rev.oid else None
        return Range(_old(repo, source_rev, old, usable), onto_rev, source_rev), replayed
    except UnknownRef:
        raise
    except _NoPin as exc:
        raise SyncError(f"cannot read the upgrade's range from {branch}: {exc}") from exc
    except SyncError as exc:
        raise SyncError(f"cannot read the upgrade's range from {branch}, which does not look like a branch "
                        f"flagtree-sync upgrade made ({exc}){hint}") from exc


def _recorded(repo: Repository, head, onto_id: str) -> RecordedRange | None:
    """The range the newest pin commit of the tool above NEW records (first parents), if its commits are here."""
    commit = head
    while str(commit.id) != onto_id and commit.parents:
        found = recorded_range(commit.message) if commit.committer.email == TOOL_EMAIL else None
        if found is not None:
            return found if resolves(repo, found.old.oid) and resolves(repo, found.source) else None
        commit = commit.parents[0]
    return None


class _NoPin(SyncError):
    """The branch has no pin: upgrade writes one only over the pin of the FlagTree branch it replays."""


def _onto(repo: Repository, head, onto: str | None) -> Rev:
    if onto:
        return resolve_rev(repo, onto)
    pin = read_pin(repo, head)
    if pin is None:
        raise _NoPin(f"it has no {PIN_FILE} at its tip (upgrade ends every branch it makes with one; it was "
                     "deleted, or an older upgrade made the branch): pass --onto NEW (and --from OLD)")
    if not resolves(repo, pin.commit):
        raise SyncError(f"{PIN_FILE} pins {pin.tag} at {pin.commit[:9]}, which this repository does not have: "
                        "fetch the upstream tags")
    return Rev(pin.commit[:9] if pin.tag == pin.commit else pin.tag, pin.commit)  # a commit id named short


def _old(repo: Repository, source: Rev, old: str | None, recorded: RecordedRange | None = None) -> Rev:
    if old:
        return resolve_rev(repo, old)
    if recorded is not None:
        return recorded.old
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
