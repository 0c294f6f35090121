"""The pinned upstream: one file on the FlagTree branch says which Triton tag and commit it is on."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

from .errors import SyncError
from .git import Commit, Oid, Repository, commit_files

PIN_FILE = "flagtree-upstream.toml"
_HEX = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class Pin:
    tag: str
    commit: str

    def render(self) -> str:
        return ("# The upstream Triton release this FlagTree branch is on. `flagtree-sync upgrade` rewrites it\n"
                "# on the branch it creates, and takes --from from it when --from is not given.\n"
                f'tag = "{self.tag}"\ncommit = "{self.commit}"\n')


def parse_pin(text: str) -> Pin:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SyncError(f"{PIN_FILE}: {exc}") from exc
    tag, commit = data.get("tag"), data.get("commit")
    if not isinstance(tag, str) or not tag or not isinstance(commit, str) or not _HEX.match(commit):
        raise SyncError(f"{PIN_FILE} needs tag = \"...\" and commit = \"<40 hex digits>\"")
    return Pin(tag, commit)


def read_pin(repo: Repository, commit: Commit) -> Pin | None:
    try:
        entry = commit.tree[PIN_FILE]
    except KeyError:
        return None
    return parse_pin(repo[entry.id].data.decode("utf-8", errors="replace"))


def commit_pin(repo: Repository, head: Commit, pin: Pin) -> Oid:
    """A commit on top of head that records pin (reruns give the same hash)."""
    return commit_files(repo, head, {PIN_FILE: pin.render().encode()}, f"[CORE] Pin upstream {pin.tag}\n")
