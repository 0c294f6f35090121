"""Read-only views of a file tree, either a directory on disk or a git tree, behind one interface."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Protocol

import pygit2

SYMLINK_MODE = 0o120000


class FileTree(Protocol):
    """Paths are POSIX, relative to the tree's root."""

    label: str

    def paths(self) -> Iterable[str]: ...

    def read(self, path: str) -> bytes | None: ...

    def exists(self, path: str) -> bool: ...


def read_text(tree: FileTree, path: str) -> str | None:
    """Decoded text, or None for a missing file; undecodable bytes are replaced, never raised."""
    data = tree.read(path)
    if data is None:
        return None
    return data.decode("utf-8", errors="replace")


class DiskTree:
    """A directory on disk; symlinks are listed but never followed out of the tree."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.label = str(self.root)
        self._paths: list[str] | None = None

    def paths(self) -> list[str]:
        if self._paths is None:
            found = []
            for directory, dirnames, filenames in os.walk(self.root):
                dirnames[:] = sorted(d for d in dirnames if d != ".git")
                base = Path(directory).relative_to(self.root)
                found.extend((base / name).as_posix() for name in filenames)
            self._paths = sorted(found)
        return self._paths

    def exists(self, path: str) -> bool:
        return (self.root / path).is_file()

    def read(self, path: str) -> bytes | None:
        target = self.root / path
        if target.is_symlink() or not target.is_file():
            return None
        return target.read_bytes()


class GitTree:
    """A tree of a commit, read in-process through libgit2: no process per file."""

    def __init__(self, repo: pygit2.Repository, tree: pygit2.Tree, label: str) -> None:
        self.repo = repo
        self.tree = tree
        self.label = label
        index = pygit2.Index()
        index.read_tree(tree)
        self._entries = {entry.path: (entry.id, entry.mode) for entry in index}
        self._cache: dict[str, bytes] = {}

    def paths(self) -> list[str]:
        return sorted(self._entries)

    def exists(self, path: str) -> bool:
        return path in self._entries

    def is_symlink(self, path: str) -> bool:
        entry = self._entries.get(path)
        return entry is not None and entry[1] == SYMLINK_MODE

    def blob_id(self, path: str) -> pygit2.Oid | None:
        entry = self._entries.get(path)
        return entry[0] if entry else None

    def read(self, path: str) -> bytes | None:
        entry = self._entries.get(path)
        if entry is None or entry[1] == SYMLINK_MODE:
            return None
        if path not in self._cache:
            self._cache[path] = self.repo[entry[0]].data
        return self._cache[path]
