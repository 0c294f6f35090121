"""Read-only views of a file tree behind one interface: a directory on disk here, a git tree in sync.git."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Protocol

from sync.support.atomic import DIRECTORY_MARKER as REPORT_DIRECTORY_MARKER

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
            found: list[str] = []
            for directory, dirnames, filenames in os.walk(self.root):
                if REPORT_DIRECTORY_MARKER in filenames and Path(directory) != self.root:
                    dirnames[:] = []  # a report this tool wrote (status --out report/): its text is no source
                    continue
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
