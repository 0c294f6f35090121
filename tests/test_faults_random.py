"""kill -9 at random wall-clock moments (not at the tool's own checkpoints) during `upgrade` of a
300-commit fork, several times over; rerunning the same command must end with exactly the commits,
trees and report of an uninterrupted run, and the user's branches, index and work tree never change."""
from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from sync.support.faults import EXIT_STATUS, VARIABLE
from tests.conftest import git
from tests.synthetic_world import (BRANCH, NEW, TARGET, SyntheticWorld, command,
                                   environment, finished, stable, users_view)

KILLS_PER_RUN = 4


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kill_9_at_random_moments_then_rerun_gives_the_uninterrupted_result(
        tmp_path: Path, pristine: SyntheticWorld, reference, seed: int) -> None:
    chain, tree, document, duration = reference.chain, reference.tree, reference.document, reference.duration
    world = pristine.copy(tmp_path / "world")
    before = users_view(world.repo)
    rng = random.Random(seed)
    killed = 0
    for attempt in range(KILLS_PER_RUN):
        process = subprocess.Popen(command(world), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   env=environment())
        # a moment within the run (the first well within it): startup, replay, analysis or report writing
        time.sleep(rng.uniform(0.05, 0.5 if attempt == 0 else 0.95) * duration)
        process.send_signal(signal.SIGKILL)
        _, stderr = process.communicate()
        if process.returncode != -signal.SIGKILL:  # it finished first: nothing left to interrupt
            assert process.returncode == 1, stderr
            break
        killed += 1
        assert users_view(world.repo) == before
        if finished(world):  # killed while exiting, its work done: a rerun would find the branch made
            break
    if not finished(world):
        rerun = subprocess.run(command(world), capture_output=True, text=True, env=environment())
        assert rerun.returncode == 1, rerun.stderr
    assert killed >= 1  # the test interrupted something
    assert git(world.repo, "rev-list", f"{NEW}..{TARGET}").split() == chain
    assert git(world.repo, "rev-parse", f"{TARGET}^{{tree}}").strip() == tree
    assert stable(json.loads((world.root / "report" / "report.json").read_text())) == stable(document)
    assert users_view(world.repo) == before
    assert git(world.repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == BRANCH
    assert "refs/flagtree-sync" not in git(world.repo, "for-each-ref")
    assert not (world.repo / ".git" / "flagtree-sync" / "upgrade.json").exists()
    assert not list(world.root.glob(".report.partial-*"))


def test_a_lock_file_left_on_the_tools_own_ref_by_a_kill_is_cleared(tmp_path: Path, pristine, reference) -> None:
    """libgit2 writes refs/flagtree-sync/wip.lock while moving that ref; a kill then left it behind and
    every rerun failed with exit 3. Under the run's lock it can only be stale."""
    world = pristine.copy(tmp_path / "world")
    killed = subprocess.run(command(world), capture_output=True, text=True, env={**environment(), VARIABLE: "commit:7"})
    assert killed.returncode == EXIT_STATUS
    (world.repo / ".git" / "refs" / "flagtree-sync" / "wip.lock").write_text("0" * 40 + "\n")
    rerun = subprocess.run(command(world), capture_output=True, text=True, env=environment())
    assert rerun.returncode == 1, rerun.stderr
    assert git(world.repo, "rev-list", f"{NEW}..{TARGET}").split() == reference.chain


def test_a_lock_file_on_the_target_branch_is_named_not_removed(tmp_path: Path, pristine, reference) -> None:
    """A lock on a ref of the user's may be a git command that is running: exit 2, name it, keep the replay."""
    world = pristine.copy(tmp_path / "world")
    lock = world.repo / ".git" / "refs" / "heads" / "sync" / f"{NEW}.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("0" * 40 + "\n")
    blocked = subprocess.run(command(world), capture_output=True, text=True, env=environment())
    assert blocked.returncode == 2 and str(lock) in blocked.stderr and "Traceback" not in blocked.stderr
    assert lock.exists() and (world.repo / ".git" / "flagtree-sync" / "upgrade.json").exists()
    lock.unlink()
    rerun = subprocess.run(command(world), capture_output=True, text=True, env=environment())
    assert rerun.returncode == 1, rerun.stderr
    assert git(world.repo, "rev-list", f"{NEW}..{TARGET}").split() == reference.chain
