"""An --out this process cannot write in is refused before the replay, not after the whole run (a trial with
--out on a read-only mount waited for the replay and every analysis, then got "cannot write the report")."""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sync.demo.world import build_world
from tests.conftest import git

RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]


@pytest.fixture
def read_only_mount(tmp_path: Path) -> Iterator[Path]:
    """A read-only file system (a tmpfs mounted ro); skipped where this process may not mount one."""
    place = tmp_path / "ro"
    place.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(place)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield place
    finally:
        subprocess.run(["umount", str(place)], check=False)


@pytest.mark.parametrize("out", ["report", "deeper/report"])
def test_an_out_on_a_read_only_mount_is_refused_before_the_replay(tmp_path: Path, read_only_mount: Path,
                                                                  out: str) -> None:
    world = build_world(tmp_path / "world")
    branches = git(world.fork, "branch", "--list")
    done = subprocess.run([sys.executable, "-m", "sync", "upgrade", "--repo", str(world.fork), *RANGE,
                           "--out", str(read_only_mount / out)], capture_output=True, text=True)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert f"cannot write in {read_only_mount}" in done.stderr and "Traceback" not in done.stderr
    assert git(world.fork, "branch", "--list") == branches  # nothing replayed: no sync/ branch, no run to resume
    assert not (world.fork / ".git" / "flagtree-sync" / "upgrade.json").exists()
