"""The tool's checked-in TOML files: read against a declared schema (sync/support/schema.py), written only inside
the work tree.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from sync.support.atomic import write_text_atomic
from sync.support.schema import Mapping, Strings, Table, Text, TomlDocument, TomlFileError, load_toml, locate
from sync.support.terminal import printable_lines
from sync.errors import SyncError

__all__ = ["OID", "Mapping", "Strings", "Table", "Text", "TomlDocument", "TomlFileError", "load_toml", "locate",
           "work_tree_path", "write_in_work_tree"]

OID = re.compile(r"[0-9a-f]{40}")


# --- writing ---------------------------------------------------------------------------------------

def work_tree_path(work_tree: Path, rel: str) -> Path:
    """work_tree/rel, refused (SyncError) when it or a directory on the way is a symlink or it leaves
    the tree: a committed symlink in place of a file the tool writes must never steer the write elsewhere."""
    root = work_tree.resolve()
    target = root / rel
    current = root
    for part in Path(rel).parts:
        if part == "..":
            raise SyncError(f"{rel} leaves the work tree {root}")
        current = current / part
        if current.is_symlink():
            raise SyncError(f"{current} is a symlink: refusing to write {rel} through it")
    if not target.resolve().is_relative_to(root):
        raise SyncError(f"{rel} leaves the work tree {root}")
    return target


def write_in_work_tree(work_tree: Path, rel: str, text: str) -> Path:
    """Write rel under work_tree atomically (temporary file + rename), through no symlink. Control characters
    tomlkit leaves raw (C1, bidi) are written as TOML's `\\uXXXX` escapes: the same string values, and a file
    `cat` cannot drive a terminal with (issue 47.12)."""
    target = work_tree_path(work_tree, rel)
    text = printable_lines(text)
    mode = target.stat().st_mode & 0o777 if target.exists() else _default_mode()
    try:
        write_text_atomic(target, text)
        target.chmod(mode)  # mkstemp creates 0600; keep the file's mode, or the user's umask for a new one
    except OSError as exc:
        raise SyncError(f"cannot write {target}: {exc.strerror or exc}") from exc
    return target


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
