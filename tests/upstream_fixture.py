"""A tiny upstream with two tags and a fork based on the first, as a DriftContext (for analyzer tests)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from sync.drift.context import DriftContext
from sync.git import GitTree
from tests.test_symbols import commit


def context_of(tmp_path: Path, old: dict[str, str], new: dict[str, str], fork: dict[str, str],
               removed_upstream: tuple[str, ...] = ()) -> DriftContext:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    old_id = commit(tmp_path, old, "old")
    fork_id = commit(tmp_path, fork, "flagtree")
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", old_id], check=True)
    new_id = commit(tmp_path, new, "new", remove=removed_upstream)
    repo = pygit2.Repository(str(tmp_path))
    tree = lambda sha, label: GitTree(repo, repo[sha].tree, label)
    return DriftContext(repo, tree(old_id, "old"), tree(new_id, "new"), tree(fork_id, "fork"), None)
