"""One verdict per group, whatever command prints it (issue 48.6): drift --target counts the branch's open
conflicts as status does, shows the groups that own them (flagtree-core, ci, shared-trunk), and with --backend
B shows and exits on B alone."""
from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import invoke
from tests.test_status import resolve_on_branch, upgraded

TARGET = ["--target", "sync/v3.6.0"]


def verdicts(*args: str) -> tuple[int, dict[str, str], dict]:
    result = invoke(*args, "--json")
    document = json.loads(result.output)
    return result.exit_code, document["summary"]["verdicts"], document


def test_drift_and_status_agree_on_every_group_with_open_conflicts(world) -> None:
    upgraded(world)
    status_code, status_verdicts, _ = verdicts("status", "--repo", str(world.fork), *TARGET, "-q")
    drift_code, drift_verdicts, document = verdicts("drift", "--repo", str(world.fork), *TARGET)
    assert status_code == drift_code == 1
    assert "flagtree-core" in status_verdicts and status_verdicts["flagtree-core"] == "blocked"
    assert drift_verdicts == status_verdicts
    assert document["summary"]["conflicts"]["open"] == 5


def test_drift_and_status_agree_once_conflicts_are_resolved(world, tmp_path: Path) -> None:
    upgraded(world)
    resolve_on_branch(world, tmp_path, ["CMakeLists.txt", "python/src/ir.cc"], ["python/triton/ops/matmul.py"])
    _, status_verdicts, _ = verdicts("status", "--repo", str(world.fork), *TARGET, "-q")
    _, drift_verdicts, _ = verdicts("drift", "--repo", str(world.fork), *TARGET)
    assert drift_verdicts == status_verdicts and status_verdicts["flagtree-core"] == "clean"
    text = invoke("drift", "--repo", str(world.fork), *TARGET).output
    assert "alpha: blocked (conflicts=" in text


def test_drift_for_one_backend_shows_and_exits_on_it_alone(world, tmp_path: Path) -> None:
    upgraded(world)
    resolve_on_branch(world, tmp_path, ["CMakeLists.txt", "python/src/ir.cc", "python/triton/language/__init__.py"],
                      ["python/triton/ops/matmul.py"])
    for command in (["drift"], ["status", "-q"]):
        code, found, _ = verdicts(*command, "--repo", str(world.fork), *TARGET, "--backend", "beta")
        assert list(found) == ["beta"], (command, found)
        assert code == (0 if found["beta"] == "clean" else 1)


def test_markers_committed_by_hand_block_in_drift_and_status_alike(world, tmp_path: Path) -> None:
    """Conflict blocks no replayed commit accounts for (committed after the replay) are open too: drift's exit
    0 must mean nothing is left."""
    from tests.conftest import git
    upgraded(world)
    resolve_on_branch(world, tmp_path, ["CMakeLists.txt", "python/src/ir.cc", "python/triton/language/__init__.py"],
                      ["python/triton/ops/matmul.py"])
    checkout = tmp_path / "checkout"
    path = "third_party/beta/backend/spec/triton/_runtime.py"
    (checkout / path).write_text((checkout / path).read_text() + "<<<<<<< mine\nA = 1\n=======\nA = 2\n>>>>>>> theirs\n")
    git(checkout, "commit", "-qam", "beta: a half-done merge")
    for command in (["status", "-q"], ["drift"]):
        code, found, document = verdicts(*command, "--repo", str(world.fork), *TARGET)
        assert code == 1 and found["beta"] == "blocked", (command, found)
        marked = [f for g in document["groups"] for f in g["findings"] if f["kind"] == "conflict-markers"]
        assert [f["path"] for f in marked] == [path], command
