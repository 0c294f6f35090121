"""The pinned upstream: one file on the FlagTree branch says which Triton tag and commit it is on."""
from __future__ import annotations

import re
from dataclasses import dataclass

import tomlkit

from sync.errors import SyncError
from sync.git import Commit, Oid, Repository, blob_text, commit_files, resolve_commit, resolves
from sync.model.revs import Rev
from sync.records.tomlfiles import OID, Table, Text, load_toml

PIN_FILE = "flagtree-upstream.toml"
PIN_SCHEMA = Table(fields={"tag": Text(), "commit": Text(pattern=OID, meaning="40 hex digits")})


@dataclass(frozen=True)
class Pin:
    tag: str
    commit: str

    def render(self) -> str:
        document = tomlkit.document()
        document.add(tomlkit.comment("The upstream Triton release this FlagTree branch is on. `flagtree-sync upgrade`"
                                     " rewrites it"))
        document.add(tomlkit.comment("on the branch it creates, and takes --from from it when --from is not given."))
        document["tag"] = self.tag
        document["commit"] = self.commit
        return tomlkit.dumps(document)


def parse_pin(text: str, where: str = PIN_FILE) -> Pin:
    data = load_toml(text, where, PIN_SCHEMA).data
    return Pin(data["tag"], data["commit"])


def read_pin(repo: Repository, commit: Commit) -> Pin | None:
    try:
        entry = commit.tree[PIN_FILE]
    except KeyError:
        return None
    return parse_pin(blob_text(repo, entry.id))


FROM_TRAILER = "Flagtree-sync-from"  # OLD of the replayed range: "<name> <commit>"
SOURCE_TRAILER = "Flagtree-sync-source"  # the FlagTree commit replayed
_RANGE_TRAILERS = re.compile(rf"^{FROM_TRAILER}: (\S+) ([0-9a-f]{{40}})\n{SOURCE_TRAILER}: ([0-9a-f]{{40}})$", re.MULTILINE)


@dataclass(frozen=True)
class RecordedRange:
    """The range a pin commit says its branch replays (written where the source branch had no pin to read OLD
    from)."""
    old: Rev
    source: str


def commit_pin(repo: Repository, head: Commit, pin: Pin, replayed: RecordedRange | None = None) -> Oid:
    """A commit on top of head that records pin (reruns give the same hash), and the replayed range in its
    trailers when given."""
    message = f"[CORE] Pin upstream {pin.tag}\n"
    if replayed is not None:
        message += (f"\n{FROM_TRAILER}: {replayed.old.ref} {replayed.old.oid}\n"
                    f"{SOURCE_TRAILER}: {replayed.source}\n")
    return commit_files(repo, head, {PIN_FILE: pin.render().encode()}, message)


def recorded_range(message: str) -> RecordedRange | None:
    """The range a pin commit's message records; None when it records none."""
    found = _RANGE_TRAILERS.search(message)
    if found is None:
        return None
    name, commit = found.group(1), found.group(2)
    return RecordedRange(Rev(commit[:9] if name == commit else name, commit), found.group(3))


def _tag_commit(repo: Repository, tag: str) -> str | None:
    """The commit refs/tags/<tag> names; None when there is no such tag."""
    ref = f"refs/tags/{tag}"
    return str(resolve_commit(repo, ref).id) if ref in repo.references and resolves(repo, ref) else None


def pinned_from(repo: Repository, pin: Pin, where: str) -> str:
    """--from as the pin gives it: its tag when that tag is the recorded commit, the commit itself when the
    clone lacks the tag. A pin's tag is a name, never a revision to compute: one that names another commit
    (a moved tag, HEAD~1, a branch) would replay the wrong range, so it is refused."""
    if len(pin.tag) >= 4 and pin.commit.startswith(pin.tag.lower()):  # the commit id itself, maybe abbreviated
        return pin.commit
    tagged = _tag_commit(repo, pin.tag)
    if tagged == pin.commit:
        return pin.tag
    names = (f"the tag {pin.tag} is {tagged[:9]}" if tagged is not None else
             f"{pin.tag!r} is no tag here" if resolves(repo, pin.tag) else None)
    if names is None:  # a clone without upstream's tags: the recorded commit says it
        return pin.commit
    raise SyncError(f"{PIN_FILE} on {where} pins tag {pin.tag!r} at {pin.commit[:9]}, but {names}: a pin names an "
                    "upstream tag and its commit; fix the file, or pass --from TAG")


def pin_name(repo: Repository, rev: Rev) -> str:
    """What a new pin records as the tag of rev: the tag as spelled when it is rev's commit, else the commit
    id (an --onto given as a branch or HEAD~1 is no name a later run can trust)."""
    tag = rev.ref.removeprefix("refs/tags/")
    return tag if _tag_commit(repo, tag) == rev.oid else rev.oid
