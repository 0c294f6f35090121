"""upgrade --exec: the test gate runs in its own worktree and names the first replayed commit that broke it."""
from __future__ import annotations

import json

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
