"""Kill the upgrade (like kill -9) at every commit and while writing the report; the rerun must end
exactly where an uninterrupted run does, and the user's refs, index and work tree never change."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sync.support import atomic
from sync.cli import cli
from sync.demo.world import build_world
from sync.support.faults import EXIT_STATUS, VARIABLE
from tests.conftest import git, snapshot

ARGS = ["upgrade", "--from", "v3.5.0", "--onto", "v3.6.0", "-q"]


def upgrade_process(repo: Path, out: Path, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({VARIABLE: fault} if fault else {})}
    env.pop(VARIABLE, None) if fault is None else None
    return subprocess.run([sys.executable, "-m", "sync", *ARGS, "--repo", str(repo), "--out", str(out)],
                          capture_output=True, text=True, env=env)


def stable(document: dict) -> dict:
    return {key: value for key, value in document.items() if key != "tool"}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict]:
    world = build_world(tmp_path_factory.mktemp("reference") / "world")
    out = world.root / "report"
    assert upgrade_process(world.fork, out).returncode == 1
    return git(world.fork, "rev-parse", "sync/v3.6.0").strip(), json.loads((out / "report.json").read_text())


@pytest.mark.parametrize("fault", [f"commit:{n}" for n in range(1, 7)] + ["report"])
def test_killed_run_resumes_to_the_same_result(tmp_path: Path, reference, fault: str) -> None:
    world = build_world(tmp_path / "world")
    before = snapshot(world.fork)
    out = world.root / "report"
    killed = upgrade_process(world.fork, out, fault)
    assert killed.returncode == EXIT_STATUS
    assert not out.exists()  # no report, let alone a partial one presented as complete
    after_kill = snapshot(world.fork)
    if fault != "report":  # the branch appears only once every commit is replayed
        assert after_kill == before
    rerun = upgrade_process(world.fork, out)
    assert rerun.returncode == 1, rerun.stderr
    head, document = reference
    assert git(world.fork, "rev-parse", "sync/v3.6.0").strip() == head
    assert stable(json.loads((out / "report.json").read_text())) == stable(document)
    assert not list(world.root.glob(".report.partial-*"))
    final = snapshot(world.fork)
    assert {k: v for k, v in final.items() if k != "refs"} == {k: v for k, v in before.items() if k != "refs"}
    assert "refs/flagtree-sync" not in git(world.fork, "for-each-ref")


def test_disk_full_while_writing_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = build_world(tmp_path / "world")
    real_write = Path.write_text

    def full(self: Path, *args, **kwargs):
        if ".report.partial-" in str(self):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    result = CliRunner().invoke(cli, [*ARGS, "--repo", str(world.fork), "--out", str(world.root / "report")])
    assert result.exit_code == 2 and "No space left on device" in result.output
    assert "no report was written" in result.output and "Traceback" not in result.output
    assert not (world.root / "report").exists() and not list(world.root.glob(".report.partial-*"))
    assert atomic.REPORT_MARKER == "report.json"


def test_torn_journal_line_is_dropped_and_that_commit_redone(tmp_path: Path, reference) -> None:
    world = build_world(tmp_path / "world")
    out = world.root / "report"
    assert upgrade_process(world.fork, out, "commit:4").returncode == EXIT_STATUS
    journal = world.fork / ".git" / "flagtree-sync" / "upgrade.journal"
    lines = journal.read_text().splitlines(keepends=True)
    assert len(lines) == 4
    journal.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])  # killed mid-append
    assert upgrade_process(world.fork, out).returncode == 1
    assert git(world.fork, "rev-parse", "sync/v3.6.0").strip() == reference[0]
    assert stable(json.loads((out / "report.json").read_text())) == stable(reference[1])


def test_abort_after_a_kill_in_the_report_leaves_the_repository_as_it_was(tmp_path: Path) -> None:
    """The branch is made before the report: --abort deletes it with the state, and a rerun starts afresh."""
    world = build_world(tmp_path / "world")
    before = snapshot(world.fork)
    assert upgrade_process(world.fork, world.root / "report", "report").returncode == EXIT_STATUS
    assert "refs/heads/sync/v3.6.0" in git(world.fork, "for-each-ref")
    aborted = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--abort"])
    assert aborted.exit_code == 0 and "branch sync/v3.6.0 it had made deleted" in aborted.output
    assert snapshot(world.fork) == before
    assert upgrade_process(world.fork, world.root / "report").returncode == 1  # no "branch already exists"


def test_abort_keeps_a_branch_that_holds_commits_of_someone_else(tmp_path: Path) -> None:
    world = build_world(tmp_path / "world")
    assert upgrade_process(world.fork, world.root / "report", "report").returncode == EXIT_STATUS
    git(world.fork, "worktree", "add", "-q", str(tmp_path / "wt"), "sync/v3.6.0")
    git(tmp_path / "wt", "-c", "user.name=u", "-c", "user.email=u@e", "commit", "-q", "--allow-empty", "-m", "mine")
    git(world.fork, "worktree", "remove", str(tmp_path / "wt"))
    mine = git(world.fork, "rev-parse", "sync/v3.6.0").strip()
    aborted = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--abort"])
    assert aborted.exit_code == 0 and "deleted" not in aborted.output
    assert git(world.fork, "rev-parse", "sync/v3.6.0").strip() == mine
