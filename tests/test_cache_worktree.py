"""The fact cache lives in the repository's common git directory: `status` run in a linked worktree of the
upgraded branch (as UPGRADING.md does) reads the facts `upgrade` stored instead of parsing the trees again."""
from __future__ import annotations

from pathlib import Path

import pytest

from sync.demo.world import World
from sync.facts import declindex
from sync.support.cache import CACHE_DIR

from .conftest import git, invoke


def test_status_in_a_worktree_reads_the_cache_upgrade_filled(world: World, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "on")
    assert invoke("upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "-q",
                  "--out", str(tmp_path / "report")).exit_code == 1
    worktree = tmp_path / "sync"
    git(world.fork, "worktree", "add", "-q", str(worktree), "sync/v3.6.0")
    declindex.forget()  # what this process remembers: only the cache on disk may answer now
    parsed = sum(declindex.PARSES.values())
    assert invoke("status", "--repo", str(worktree), "--out", str(tmp_path / "again")).exit_code == 1
    assert sum(declindex.PARSES.values()) == parsed  # every declaration read back, none parsed again
    assert (world.fork / ".git").joinpath(*CACHE_DIR).is_dir()
    assert not (world.fork / ".git" / "worktrees" / "sync").joinpath(*CACHE_DIR).exists()
