"""Issue #35: the release loop on a real branch: drift's defaults, one conflict model, check's baseline,
a report a busy engineer can scan."""
from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import git, invoke

RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]


def _drift_kinds(world, *extra: str) -> tuple[set[str], str]:
    result = invoke("drift", "--repo", str(world.fork), *RANGE, "--json", *extra)
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    return {finding["kind"] for group in document["groups"] for finding in group["findings"]}, result.stderr


def test_drift_runs_every_analysis_by_default_and_fast_leaves_the_slow_ones_out(world) -> None:
    full, _ = _drift_kinds(world)
    assert "symbol-drift" in full  # as upgrade and status report it
    fast, note = _drift_kinds(world, "--fast")
    assert "symbol-drift" not in fast and "--fast" in note
    deprecated, warning = _drift_kinds(world, "--symbols")  # old scripts keep working, and are told
    assert deprecated == full and "--symbols is deprecated" in warning


def _strip_markers(path: Path) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(line for line in lines if not line.startswith(("<<<<<<<", "|||||||", "=======", ">>>>>>>"))))


def _upgrade_resolving_every_stop(world, out: Path) -> str:
    """upgrade --on-conflict stop, each stop resolved by hand and --continue'd: every conflict resolved."""
    result = invoke("upgrade", "--repo", str(world.fork), *RANGE, "--on-conflict", "stop", "-q", "--out", str(out))
    worktree = world.fork / ".git" / "flagtree-sync" / "worktree"
    git(worktree, "checkout", "--theirs", "CMakeLists.txt")
    git(worktree, "add", "CMakeLists.txt")
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "-q")
    _strip_markers(worktree / "python/triton/language/__init__.py")
    git(worktree, "add", "python/triton/language/__init__.py")
    git(worktree, "rm", "-q", "python/triton/ops/__init__.py", "python/triton/ops/matmul.py")
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "-q")
    _strip_markers(worktree / "python/src/ir.cc")
    git(worktree, "add", "python/src/ir.cc")
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "-q")
    assert result.exit_code == 1, result.output
    return result.stdout


def test_after_continue_every_renderer_tells_the_same_open_and_resolved_conflicts(world, tmp_path: Path) -> None:
    out = tmp_path / "report"
    printed = _upgrade_resolving_every_stop(world, out)
    first, *rows = printed.splitlines()
    assert "5 conflicted files: 0 open, 5 resolved" in first  # not "5 conflicted files" over rows of zeros
    group_rows = [row for row in rows if "conflicts=" in row]
    assert group_rows and all("conflicts=0 " in row and "resolved=" in row for row in group_rows)
    assert sum(int(re.search(r"resolved=(\d+)", row).group(1)) for row in group_rows) >= 5
    document = json.loads((out / "report.json").read_text())
    assert document["summary"]["conflicts"]["open"] == 0 and document["summary"]["conflicts"]["resolved"] == 5
    assert document["summary"]["conflicts"]["resolved_files"] == document["summary"]["conflicted_files"]
    assert all(not conflict["open"] for group in document["groups"] for conflict in group["conflicts"])
    heading = "Conflicted files (5): 0 open, 5 resolved"
    summary = (out / "summary.md").read_text()
    assert f"## {heading}" in summary and "Resolved by hand:" in summary and "Open (resolve these)" not in summary
    assert heading in (out / "index.html").read_text()


def _checked_out_upgrade(world) -> Path:
    invoke("upgrade", "--repo", str(world.fork), *RANGE, "-q")
    git(world.fork, "checkout", "-q", "sync/v3.6.0")
    return world.fork


def test_check_baseline_fails_only_on_new_findings_and_survives_line_moves(world) -> None:
    tree = _checked_out_upgrade(world)
    before = invoke("check", str(tree))
    assert before.exit_code == 1 and "FT014 error" in before.output  # the branch's markers: pre-existing errors
    written = invoke("check", str(tree), "--write-baseline", str(tree / ".flagtree-sync" / "check-baseline.json"))
    assert written.exit_code == 0 and "check reads it from now on" in written.stderr
    known = invoke("check", str(tree))  # the committed default location is read when present
    assert known.exit_code == 0, known.output
    assert "FT014 error (in the baseline)" in known.output and " 0 error," in known.output
    cmake = tree / "CMakeLists.txt"
    cmake.write_text("# moved\n# down\n" + cmake.read_text())  # the flagged line moves: still the same finding
    assert invoke("check", str(tree)).exit_code == 0
    (tree / "python" / "triton" / "fresh.py").write_text("<<<<<<< a\nx = 1\n=======\nx = 2\n>>>>>>> b\n")
    new = invoke("check", str(tree), "--format", "json")
    assert new.exit_code == 1
    document = json.loads(new.stdout)
    errors = [f["path"] for f in document["findings"] if f["severity"] == "error" and "suppressed" not in f]
    assert errors == ["python/triton/fresh.py"] and document["baseline"]["known"] >= 1
    assert invoke("check", str(tree), "--no-baseline").output.count("(in the baseline)") == 0


def test_a_broken_baseline_is_one_line_exit_2(world, tmp_path: Path) -> None:
    tree = _checked_out_upgrade(world)
    for text in ("{", json.dumps({"schema": "other", "findings": []}),
                 json.dumps({"schema": "flagtree-sync/check-baseline/1", "findings": [{"rule": "FT014"}]})):
        (tmp_path / "b.json").write_text(text)
        result = invoke("check", str(tree), "--baseline", str(tmp_path / "b.json"))
        assert result.exit_code == 2 and result.output.startswith("flagtree-sync: error: ")
        assert len(result.output.splitlines()) == 1, result.output
    missing = invoke("check", str(tree), "--baseline", str(tmp_path / "none.json"))
    assert missing.exit_code == 2 and "--write-baseline" in missing.output
