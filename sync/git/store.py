"""A scratch object store layered over a repository: reads see every object of the repository, writes
land in a temporary directory that is deleted afterwards. Read-only analyses that must build objects
(the in-memory replay of drift) run against it, so the user's store never grows."""
from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pygit2

from .repo import common_git_dir


@contextmanager
def scratch_repository(repo: pygit2.Repository) -> Iterator[pygit2.Repository]:
    """A bare repository whose objects/info/alternates names repo's object directory (libgit2 reads
    alternates; new objects go to the scratch directory only)."""
    objects = object_directory(repo)
    with tempfile.TemporaryDirectory(prefix="flagtree-sync-scratch-") as directory:
        scratch = pygit2.init_repository(directory, bare=True)
        (Path(directory) / "objects" / "info" / "alternates").write_text(f"{objects.resolve()}\n",
                                                                        encoding="utf-8")
        yield pygit2.Repository(scratch.path)


def object_directory(repo: pygit2.Repository) -> Path:
    """The objects directory (in the common git directory, also from a linked worktree)."""
    return common_git_dir(repo) / "objects"


def object_ids(repo: pygit2.Repository) -> set[str]:
    """Every object id in repo's own store (loose and packed, not alternates): for tests and audits."""
    directory = object_directory(repo)
    found: set[str] = set()
    for entry in directory.glob("??/*"):
        found.add(entry.parent.name + entry.name)
    for pack in directory.glob("pack/*.idx"):
        found.add(f"pack:{pack.name}")
    return found
