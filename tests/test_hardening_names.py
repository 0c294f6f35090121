"""File names the file system refuses (issue 31): git stores a name of more than NAME_MAX bytes, a worktree cannot
check it out. Whatever needs a worktree (--on-conflict stop, --exec) says so up front with exit 2 and the way on;
the replay in memory is not hindered; and a stop git cannot write is an error that names it, never a stop
to "resolve" forever."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import sync
from sync.replay import engine as resumable_replay
from sync.cli import cli
from tests.conftest import git
from tests.test_hardening_state import ARGS, state_dir

LONG = "third_party/alpha/" + "n" * 300 + ".txt"  # 304 bytes: more than any Linux file system's NAME_MAX


DEEP = "third_party/alpha/" + "/".join(["d" * 200] * 21) + "/f.txt"  # 200-byte names, 4,245 bytes in all: over PATH_MAX


def commit_long_name(world, conflicting: bool, path: str = LONG) -> None:
    """A FlagTree commit on main that adds a file of an over-long name (made with git's plumbing: no work tree
    can hold it), and with conflicting, also changes the line v3.6.0 changes."""
    index = {**os.environ, "GIT_INDEX_FILE": str(world.root / "long.index")}

    def plumb(*args: str, data: bytes | None = None) -> str:
        return subprocess.run(["git", "-C", str(world.fork), *args], input=data, env=index, capture_output=True,
                              check=True).stdout.decode().strip()
    plumb("read-tree", "main")
    blob = plumb("hash-object", "-w", "--stdin", data=b"long")
    plumb("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    if conflicting:
        blob = plumb("hash-object", "-w", "--stdin", data=b"FlagTree's own link.py\n")  # upstream changed it
        plumb("update-index", "--cacheinfo", f"100644,{blob},python/triton/tools/link.py")
    commit = plumb("commit-tree", plumb("write-tree"), "-p", "main", "-m", "[alpha] a file of a long name")
    git(world.fork, "update-ref", "refs/heads/main", commit)


def upgrade(world, *extra: str):
    result = CliRunner().invoke(cli, [*ARGS, "--repo", str(world.fork), *extra])
    assert "Traceback" not in result.output and result.exit_code != 3, result.output
    return result


@pytest.mark.parametrize("path, said", [(LONG, "a name of 304 bytes"), (DEEP, "bytes; it takes 4096 in all")])
@pytest.mark.parametrize("needs", [["--on-conflict", "stop"], ["--exec", "true"]])
def test_what_needs_a_worktree_refuses_such_a_name_up_front(world, needs: list[str], path: str, said: str) -> None:
    commit_long_name(world, conflicting=False, path=path)
    result = upgrade(world, *needs)
    assert result.exit_code == 2 and "needs a worktree" in result.output and said in result.output, result.output
    assert not (state_dir(world) / "upgrade.json").exists() and "sync/v3.6.0" not in git(world.fork, "branch")
    assert upgrade(world).exit_code == 1  # the replay in memory takes it
    assert path in git(world.fork, "ls-tree", "-r", "--name-only", "sync/v3.6.0")


def test_a_stop_git_cannot_write_is_an_error_not_a_stop_forever(world, monkeypatch) -> None:
    """Where the up-front check cannot see it (a name limit that differs), the stop says what failed."""
    commit_long_name(world, conflicting=True)
    monkeypatch.setattr(resumable_replay, "require_checkoutable", lambda *args: None, raising=False)
    result = upgrade(world, "--on-conflict", "stop")
    for _ in range(10):  # the demo's own conflicts before it: take FlagTree's side (a stop forever ends here too)
        if result.exit_code != 4:
            break
        worktree = state_dir(world) / "worktree"
        for path in git(worktree, "diff", "--name-only", "--diff-filter=U").split():
            git(worktree, "checkout", "--theirs", "--", path)
        git(worktree, "add", "-A")
        result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "-q"])
    assert result.exit_code == 2 and "cannot leave commit" in result.output and "--abort" in result.output, \
        result.output
    assert "resolve them" not in result.output
    again = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "-q"])
    assert again.exit_code == 2 and "cannot leave commit" in again.output, again.output
    assert CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--abort"]).exit_code == 0
    assert upgrade(world, "--on-conflict", "markers").exit_code == 1


def test_a_gate_first_asked_for_by_continue_is_checked_too(world) -> None:
    """A run killed mid-replay, continued with --exec: the check the start would have made is made there."""
    commit_long_name(world, conflicting=False)
    env = {**os.environ, "FLAGTREE_SYNC_FAULT": "commit:2", "PYTHONPATH": str(Path(sync.__file__).parents[1])}
    killed = subprocess.run([sys.executable, "-m", "sync", *ARGS, "--repo", str(world.fork)], env=env,
                            capture_output=True, text=True)
    assert killed.returncode == 137, killed.stderr
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "-q", "--exec", "true"])
    assert result.exit_code == 2 and "the test gate (--exec) needs a worktree" in result.output, result.output
    assert "sync/v3.6.0" not in git(world.fork, "branch")
    assert CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "-q"]).exit_code == 1
