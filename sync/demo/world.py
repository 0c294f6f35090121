"""Build the demo world: an upstream repo with two tags and a FlagTree fork with backends."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import git

from ..pin import PIN_FILE, Pin
from .content import FORK_COMMITS, UPSTREAM_BASE, UPSTREAM_COMMITS, Change

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


class _Committer:
    """Commits with fixed authors and dates so every build has the same hashes."""

    def __init__(self, repo: git.Repo, start: int) -> None:
        self.repo = repo
        self.clock = start

    def commit(self, message: str, changes: dict[str, Change], author: tuple[str, str]) -> str:
        work = Path(self.repo.working_tree_dir)
        for path, change in changes.items():
            target = work / path
            if change is None:
                self.repo.git.rm("-q", path)
            elif isinstance(change, tuple):
                _, new_path, text = change
                (work / new_path).parent.mkdir(parents=True, exist_ok=True)
                self.repo.git.mv(path, new_path)
                (work / new_path).write_text(text, encoding="utf-8")
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(change, encoding="utf-8")
        self.repo.git.add("-A")
        self.clock += 3600
        stamp = f"{self.clock} +0000"
        env = {
            "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1], "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_NAME": author[0], "GIT_COMMITTER_EMAIL": author[1], "GIT_COMMITTER_DATE": stamp,
        }
        with self.repo.git.custom_environment(**env):
            self.repo.git.commit("-q", "--no-verify", "-m", message)
        return self.repo.head.commit.hexsha


def _init_repo(path: Path) -> git.Repo:
    path.mkdir(parents=True, exist_ok=True)
    repo = git.Repo.init(path, initial_branch=FORK_BRANCH)
    with repo.config_writer() as config:
        config.set_value("user", "name", "flagtree-sync demo")
        config.set_value("user", "email", "demo@example.com")
        config.set_value("commit", "gpgsign", "false")
    return repo


def build_world(root: Path | str) -> World:
    """Create <root>/upstream and <root>/flagtree; root must be empty or absent."""
    root = Path(root).resolve()
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty")
    upstream_path, fork_path = root / "upstream", root / "flagtree"

    upstream = _init_repo(upstream_path)
    committer = _Committer(upstream, start=1_700_000_000)
    committer.commit("Triton 3.5.0", dict(UPSTREAM_BASE), UPSTREAM_AUTHOR)
    upstream.create_tag(OLD_TAG, message="Triton 3.5.0")
    for message, changes in UPSTREAM_COMMITS:
        committer.commit(message, changes, UPSTREAM_AUTHOR)
    upstream.create_tag(NEW_TAG, message="Triton 3.6.0")

    fork = git.Repo.clone_from(str(upstream_path), str(fork_path), no_checkout=True)
    fork.git.checkout("-q", "-B", FORK_BRANCH, OLD_TAG)
    with fork.config_writer() as config:
        config.set_value("user", "name", "flagtree-sync demo")
        config.set_value("user", "email", "demo@example.com")
    fork_committer = _Committer(fork, start=1_700_100_000)
    pin = {PIN_FILE: Pin(OLD_TAG, fork.commit(OLD_TAG).hexsha).render()}
    for number, (message, changes) in enumerate(FORK_COMMITS):
        fork_committer.commit(message, {**changes, **pin} if number == 0 else changes, FORK_AUTHOR)
    fork.git.remote("rename", "origin", "upstream")
    return World(root=root, upstream=upstream_path, fork=fork_path)


