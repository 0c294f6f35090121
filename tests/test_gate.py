"""upgrade --exec: the test gate runs in its own worktree and names the first replayed commit that broke it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from sync.cli import cli
from tests.conftest import git, snapshot

BREAKS_AT_IR = "! grep -q get_flagtree_ty python/src/ir.cc"  # commit 5 of 6 adds that binding


def gate(world, *extra: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--onto", "v3.6.0", "-q",
                                      "--out", str(world.root / "report"), *extra])
    assert "Traceback" not in result.output
    return result.exit_code, json.loads((world.root / "report" / "report.json").read_text())["gate"], result.output


@pytest.mark.parametrize("at, runs", [("each", 5), ("end", 5)])
def test_gate_names_the_first_breaking_commit(world, at: str, runs: int) -> None:
    before = snapshot(world.fork)
    status, report, output = gate(world, "--exec", BREAKS_AT_IR, "--exec-at", at)
    assert status == 1 and report["passed"] is False
    assert report["first_failure"]["label"].endswith("[CORE] Bind FlagTree types in ir.cc")
    assert len(report["runs"]) == runs  # each: commits 1-5; end: head, base, then a 3-step bisection
    assert "first fails at" in (world.root / "report" / "summary.md").read_text()
    after = snapshot(world.fork)
    assert {k: v for k, v in after.items() if k != "refs"} == {k: v for k, v in before.items() if k != "refs"}
    assert "flagtree-sync/gate" not in git(world.fork, "worktree", "list")


def test_gate_that_passes_and_one_that_fails_on_the_base(world) -> None:
    status, report, output = gate(world, "--exec", "test -f python/triton/flagtree_spec.py")
    assert report["passed"] and len(report["runs"]) == 1
    summary = (world.root / "report" / "summary.md").read_text()
    assert "## Test gate" in summary
    assert "Command `test -f python/triton/flagtree_spec.py` (at end): passed (1 run(s))." in summary
    status, report, output = gate(world, "--force", "--exec", "exit 3")
    assert status == 1 and report["baseline_failed"] and report["first_failure"] is None
    assert [run["status"] for run in report["runs"]] == [3, 3]


def test_gate_timeout(world) -> None:
    status, report, _ = gate(world, "--exec", "sleep 5", "--exec-timeout", "0.2", "--exec-at", "each")
    assert report["runs"][0]["status"] == 124 and "timed out" in report["runs"][0]["output"]


def test_a_failing_gate_makes_the_branch_not_releasable(world) -> None:
    """Seen by a trial user: releasable said true while the gate failed (it only looked for markers)."""
    fails = "test ! -f python/triton/flagtree_spec.py"  # FlagTree's own file: passes on the tag, fails above it
    status, _, output = gate(world, "--on-conflict", "ours", "--exec", fails)  # ours: no markers committed
    document = json.loads((world.root / "report" / "report.json").read_text())
    assert status == 1 and document["upgrade"]["releasable"] is False
    summary = (world.root / "report" / "summary.md").read_text()
    assert f"**Not releasable:** the test gate ({fails}) first fails at" in summary.replace("\\", "")
    assert "test-gate=failed" in output
    gate(world, "--force", "--on-conflict", "ours", "--exec", "true")
    assert json.loads((world.root / "report" / "report.json").read_text())["upgrade"]["releasable"] is True


def alive(pid: int) -> bool:
    """Running, not a zombie (a container's init may never reap the orphan)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError):
        return False


def gone_soon(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("command, status", [("sleep 300 & echo $! > {pid}; wait", 124),
                                             ("sleep 300 & echo $! > {pid}", 0),
                                             ("setsid sleep 300 & echo $! > {pid}; wait", 124),
                                             ("setsid sh -c 'sleep 300 & echo $! > {pid}; wait' & until [ -s {pid} ]; do sleep 0.05; done", 0)])
def test_the_gate_leaves_no_child_running(world, tmp_path: Path, command: str, status: int) -> None:
    """Issue 31.19: a timed-out gate, and one whose command left a background child, leave nothing behind
    (the child used to outlive the tool; one holding the output pipe also made a passing gate time out)."""
    pid_file = tmp_path / "pid"
    _, report, _ = gate(world, "--exec", command.format(pid=pid_file), "--exec-timeout", "3")
    assert report["runs"][0]["status"] == status
    assert gone_soon(int(pid_file.read_text()), 1)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_killing_the_tool_during_the_gate_kills_the_gate(world, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    tool = subprocess.Popen([sys.executable, "-m", "sync", "upgrade", "-q", "--repo", str(world.fork), "--onto",
                             "v3.6.0", "--exec", f"sleep 300 & echo $! > {pid_file}; wait"],
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    child = int(pid_file.read_text())
    tool.kill()
    tool.wait()
    assert gone_soon(child)
