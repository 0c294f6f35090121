"""Build the demo world: an upstream repo with two tags and a FlagTree fork with backends."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from sync.git.scripted import Change, ScriptedRepo
from sync.records.pin import PIN_FILE, Pin
from sync.demo.content import FORK_COMMITS, UPSTREAM_BASE, UPSTREAM_COMMITS

OLD_TAG = "v3.5.0"
NEW_TAG = "v3.6.0"
FORK_BRANCH = "main"
UPSTREAM_AUTHOR = ("Upstream Dev", "upstream@example.com")
FORK_AUTHOR = ("张伟 (FlagTree)", "flagtree@example.com")


@dataclass(frozen=True)
class World:
    root: Path
    upstream: Path
    fork: Path
    old_tag: str = OLD_TAG
    new_tag: str = NEW_TAG
    fork_branch: str = FORK_BRANCH


DEMO_USER = ("flagtree-sync demo", "demo@example.com")


def build_world(root: Path | str) -> World:
    """Create <root>/upstream and <root>/flagtree; root must be empty or absent."""
    return build_scripted_world(root, "Triton", UPSTREAM_BASE, UPSTREAM_COMMITS, FORK_COMMITS)


def build_scripted_world(root: Path | str, project: str, base: dict[str, str],
                         upstream_commits: Sequence[tuple[str, dict[str, Change]]],
                         fork_commits: Sequence[tuple[str, dict[str, Change]]]) -> World:
    """Upstream `project` tagged OLD_TAG and NEW_TAG around `upstream_commits`, and a fork cloned at
    OLD_TAG carrying `fork_commits` (the first also writes the pin); root must be empty or absent."""
    root = Path(root).resolve()
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty")
    upstream_path, fork_path = root / "upstream", root / "flagtree"

    upstream = ScriptedRepo.init(upstream_path, FORK_BRANCH, DEMO_USER, clock=1_700_000_000)
    upstream.commit(f"{project} 3.5.0", dict(base), UPSTREAM_AUTHOR)
    upstream.tag(OLD_TAG, message=f"{project} 3.5.0")
    for message, changes in upstream_commits:
        upstream.commit(message, changes, UPSTREAM_AUTHOR)
    upstream.tag(NEW_TAG, message=f"{project} 3.6.0")

    fork = ScriptedRepo.clone(upstream_path, fork_path, FORK_BRANCH, OLD_TAG, DEMO_USER, clock=1_700_100_000)
    pin = {PIN_FILE: Pin(OLD_TAG, fork.commit_id(OLD_TAG)).render()}
    for number, (message, changes) in enumerate(fork_commits):
        fork.commit(message, {**changes, **pin} if number == 0 else changes, FORK_AUTHOR)
    fork.rename_remote("origin", "upstream")
    return World(root=root, upstream=upstream_path, fork=fork_path)
