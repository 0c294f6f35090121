"""A broken upgrade state (issue 31): upgrade.json or the journal replaced by a directory, nested beyond any
parser's depth, or a symbolic link to an endless device, is refused with exit 2 by --continue and by the rerun,
is never read without a bound, and --abort clears it, so the next run starts."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import sync
from sync.cli import cli
from tests.conftest import git
from tests.test_hardening_state import ARGS, state_dir, upgrade

CODE = str(Path(sync.__file__).parents[1])  # the code under test, for the subprocesses
NAMES = {"state": "upgrade.json", "journal": "upgrade.journal"}


def interrupted(world) -> Path:
    """A run killed after its second commit: a state file and a journal of two lines."""
    env = {**os.environ, "FLAGTREE_SYNC_FAULT": "commit:2", "PYTHONPATH": CODE}
    killed = subprocess.run([sys.executable, "-m", "sync", *ARGS, "--repo", str(world.fork)], env=env,
                            capture_output=True, text=True)
    assert killed.returncode == 137, killed.stderr
    return state_dir(world)


def break_it(path: Path, how: str) -> None:
    path.unlink()
    if how == "directory":
        path.mkdir()
        (path / "inside").write_text("someone's\n")
    elif how == "deep":
        path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    elif how == "dev-zero":
        path.symlink_to("/dev/zero")


def run_bounded(world, *args: str) -> subprocess.CompletedProcess:
    """The CLI in a process that may not take more than 1 GiB: reading an endless file fails there, not here."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    env = {**os.environ, "PYTHONPATH": CODE}
    return subprocess.run([sys.executable, "-m", "sync", "upgrade", "--repo", str(world.fork), *args], env=env,
                          capture_output=True, text=True, preexec_fn=limit, timeout=300)


@pytest.mark.parametrize("which", ["state", "journal"])
@pytest.mark.parametrize("how", ["directory", "deep", "dev-zero"])
def test_a_broken_state_is_exit_2_and_abort_clears_it(world, which: str, how: str) -> None:
    path = interrupted(world) / NAMES[which]
    break_it(path, how)
    for args in (["--continue", "-q"], [a for a in ARGS if a != "upgrade"]):
        result = run_bounded(world, *args)
        assert result.returncode == 2 and "--abort" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr
    aborted = run_bounded(world, "--abort")
    assert aborted.returncode == 0, aborted.stderr
    if how == "directory":  # not the tool's: kept under another name
        assert (path.parent / f"{path.name}.moved-aside" / "inside").read_text() == "someone's\n"
        assert "moved it aside" in aborted.stderr
    assert not os.path.lexists(path)
    assert upgrade(world).exit_code == 1
    assert "sync/v3.6.0" in git(world.fork, "branch")


def test_abort_clears_a_state_that_is_a_dangling_link(world) -> None:
    path = interrupted(world) / "upgrade.json"
    path.unlink()
    path.symlink_to(world.root / "nowhere")
    assert CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "-q"]).exit_code == 2
    assert CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--abort"]).exit_code == 0
    assert not os.path.lexists(path) and not (world.root / "nowhere").exists()


@pytest.mark.parametrize("how", ["directory", "dev-zero"])
def test_a_lock_that_is_no_file_says_it_may_be_moved_away(world, how: str) -> None:
    lock = interrupted(world) / "upgrade.lock"
    lock.unlink()
    lock.mkdir() if how == "directory" else lock.symlink_to("/dev/zero")
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--abort"])
    assert result.exit_code == 2 and "move it away and rerun" in result.output, result.output
    lock.rmdir() if how == "directory" else lock.unlink()
    assert CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--abort"]).exit_code == 0
