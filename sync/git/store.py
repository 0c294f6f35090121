"""A scratch object store layered over a repository: reads see every object of the repository, writes
land in a temporary directory that is deleted afterwards. Read-only analyses that must build objects
(the in-memory replay of drift) run against it, so the user's store never grows.

The directory is <git dir>/flagtree-sync/scratch/<pid>-<random> (a system temporary directory where that
cannot be made): a run killed with -9 cannot delete its own, so each run first deletes the ones whose
process is gone. Only directories of that form, made by this tool, are ever deleted."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pygit2

from sync.git.repo import common_git_dir, tool_dir

_MINE = re.compile(r"\A(\d+)-[A-Za-z0-9_]{6,}\Z")  # what mkdtemp(prefix="<pid>-") makes


@contextmanager
def scratch_repository(repo: pygit2.Repository) -> Iterator[pygit2.Repository]:
    """A bare repository whose objects/info/alternates names repo's object directory (libgit2 reads
    alternates; new objects go to the scratch directory only)."""
    objects = object_directory(repo)
    parent = scratch_parent(repo)
    directory = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=parent) if parent is not None
                     else tempfile.mkdtemp(prefix="flagtree-sync-scratch-"))
    try:
        scratch = pygit2.init_repository(str(directory), bare=True)
        # bytes: a path that is not UTF-8 (or under a C locale without PYTHONUTF8) is written as the kernel has it
        (directory / "objects" / "info" / "alternates").write_bytes(os.fsencode(objects.resolve()) + b"\n")
        yield pygit2.Repository(scratch.path)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def scratch_parent(repo: pygit2.Repository) -> Path | None:
    """<git dir>/flagtree-sync/scratch, swept of dead runs' directories; None where it cannot be used."""
    tools = tool_dir(repo)
    parent = tools / "scratch"
    try:
        if tools.is_symlink() or parent.is_symlink():
            return None
        parent.mkdir(parents=True, exist_ok=True)
        for entry in parent.iterdir():
            match = _MINE.match(entry.name)
            if match and entry.is_dir() and not entry.is_symlink() and not _alive(int(match[1])):
                shutil.rmtree(entry, ignore_errors=True)
    except OSError:  # a read-only git directory: the system's temporary directory serves
        return None
    return parent


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
