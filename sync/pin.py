"""The pinned upstream: one file on the FlagTree branch says which Triton tag and commit it is on."""
from __future__ import annotations

from dataclasses import dataclass

import tomlkit

from .git import Commit, Oid, Repository, blob_text, commit_files
from .tomlfiles import OID, Table, Text, load_toml

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


def commit_pin(repo: Repository, head: Commit, pin: Pin) -> Oid:
    """A commit on top of head that records pin (reruns give the same hash)."""
    return commit_files(repo, head, {PIN_FILE: pin.render().encode()}, f"[CORE] Pin upstream {pin.tag}\n")
