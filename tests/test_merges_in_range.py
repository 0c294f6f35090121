"""A merge in OLD..SRC is left out of the replay, as git rebase leaves it out; the upgrade says so instead of
dropping it silently (a trial on a real FlagTree branch that merges upstream found 22 upstream commits replayed
as FlagTree's and the merge itself named nowhere)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sync.demo.world import build_world
from tests.conftest import git

RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]


@pytest.mark.parametrize("quiet", [[], ["-q"]])  # what the branch leaves out is no progress: -q keeps it
def test_the_upgrade_names_the_merges_it_leaves_out(tmp_path: Path, quiet: list[str]) -> None:
    world = build_world(tmp_path / "world")
    fork = world.fork
    branch = git(fork, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(fork, "checkout", "-q", "-b", "side", "v3.5.0")
    (fork / "side-note.txt").write_text("from a side branch\n")
    git(fork, "add", "side-note.txt")
    git(fork, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "side work")
    git(fork, "checkout", "-q", branch)
    git(fork, "-c", "user.name=t", "-c", "user.email=t@example.com", "merge", "-q", "--no-ff", "-m",
        "Merge side into the fork", "side")
    merge = git(fork, "rev-parse", "HEAD").strip()

    done = subprocess.run([sys.executable, "-m", "sync", "upgrade", "--repo", str(fork), *RANGE, *quiet],
                          capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    said = done.stdout + done.stderr
    assert "holds 1 merge commit(s)" in said and f"{merge[:9]} Merge side into the fork" in said, said
    assert "Traceback" not in said


def test_a_range_without_merges_says_nothing_of_them(tmp_path: Path) -> None:
    world = build_world(tmp_path / "world")
    done = subprocess.run([sys.executable, "-m", "sync", "upgrade", "--repo", str(world.fork), *RANGE],
                          capture_output=True, text=True)
    assert "merge commit" not in done.stdout + done.stderr
