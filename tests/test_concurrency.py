"""Two real processes on one repository at once: exactly one upgrade runs, the other exits 2 "another
upgrade is in progress" (never 3, never a journal of both), and the branch is what a single run makes."""
from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import git
from tests.synthetic_world import (NEW, Reference, SyntheticWorld, branch_chain, command,
                                   environment, finished, stable, state_file, users_view)


def assert_single_run_result(world: SyntheticWorld, reference: Reference, before: dict[str, str]) -> None:
    assert branch_chain(world) == reference.chain
    assert stable(json.loads((world.root / "report" / "report.json").read_text())) == stable(reference.document)
    assert users_view(world.repo) == before
    assert finished(world) and "refs/flagtree-sync" not in git(world.repo, "for-each-ref")


def test_two_upgrades_started_together_one_wins(tmp_path: Path, pristine, reference) -> None:
    world = pristine.copy(tmp_path / "world")
    before = users_view(world.repo)
    processes = [subprocess.Popen(command(world), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=environment()) for _ in range(2)]
    outcomes = sorted((process.wait(), process.communicate()[1]) for process in processes)
    assert [status for status, _ in outcomes] == [1, 2], outcomes
    loser = outcomes[1][1]
    # the loser met the winner's lock, or (started after the winner was done) the branch the winner made
    assert "another upgrade is in progress" in loser or f"branch sync/{NEW} already exists" in loser, loser
    assert "Traceback" not in loser
    assert_single_run_result(world, reference, before)


@pytest.mark.parametrize("second", [[], ["--continue"], ["--abort"], ["--target-branch", "sync/other"]],
                         ids=["same-command", "continue", "abort", "another-target"])
def test_a_second_process_while_the_first_runs_exits_2(tmp_path: Path, pristine, reference,
                                                       second: list[str]) -> None:
    """The first run is frozen (SIGSTOP) once its state exists, i.e. while it holds the lock; so the
    second certainly runs while the first is in the middle of its replay."""
    world = pristine.copy(tmp_path / "world")
    before = users_view(world.repo)
    first = subprocess.Popen(command(world), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=environment())
    while not state_file(world).exists() and first.poll() is None:
        time.sleep(0.002)
    first.send_signal(signal.SIGSTOP)
    try:
        assert first.poll() is None, first.communicate()  # it was still running: its state was there
        loser = subprocess.run(command(world, *second), capture_output=True, text=True, env=environment())
    finally:
        first.send_signal(signal.SIGCONT)
    assert loser.returncode == 2, loser.stderr
    assert "another upgrade is in progress" in loser.stderr and "Traceback" not in loser.stderr
    _, stderr = first.communicate()
    assert first.returncode == 1, stderr
    assert_single_run_result(world, reference, before)
    assert "sync/other" not in git(world.repo, "branch", "--list")
