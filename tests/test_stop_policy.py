"""Issue #35: a way out of a long run of stops. --continue may change --on-conflict for the rest of the run,
and --stop-on GLOB stops only on conflicts in the files it matches, committing the others with markers."""
from __future__ import annotations

import json

from tests.conftest import git, invoke

RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]


def _resolutions(stdout: str) -> dict[str, str]:
    document = json.loads(stdout)
    return {c["path"]: c["resolution"] for commit in document["commits"] for c in commit["conflicts"]}


def _take_theirs(world, path: str) -> None:
    worktree = world.fork / ".git" / "flagtree-sync" / "worktree"
    git(worktree, "checkout", "--theirs", path)
    git(worktree, "add", path)


def test_stop_on_stops_only_where_the_glob_matches(world) -> None:
    result = invoke("upgrade", "--repo", str(world.fork), *RANGE, "--stop-on", "python/src/*", "-q")
    assert result.exit_code == 4 and "commit 5/6" in result.output, result.output  # 1 and 2 went on
    assert "python/src/ir.cc" in result.output
    _take_theirs(world, "python/src/ir.cc")
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "-q", "--json")
    assert result.exit_code == 1, result.output
    resolutions = _resolutions(result.stdout)
    assert resolutions.pop("python/src/ir.cc") == "manual"
    assert set(resolutions.values()) == {"markers"} and "CMakeLists.txt" in resolutions
    cmake = git(world.fork, "show", "sync/v3.6.0:CMakeLists.txt")
    assert "<<<<<<<" in cmake  # committed with markers, as --on-conflict markers does


def test_stop_on_goes_with_stop_only(world) -> None:
    result = invoke("upgrade", "--repo", str(world.fork), *RANGE, "--stop-on", "x/*", "--on-conflict", "ours")
    assert result.exit_code == 2 and "--stop-on" in result.output and "\n" == result.output[-1:]
    assert len(result.output.strip().splitlines()) == 1


def test_continue_changes_the_policy_for_the_rest_of_the_run(world) -> None:
    result = invoke("upgrade", "--repo", str(world.fork), *RANGE, "--on-conflict", "stop", "-q")
    assert result.exit_code == 4 and "commit 1/6" in result.output, result.output
    _take_theirs(world, "CMakeLists.txt")
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "--on-conflict", "markers", "-q", "--json")
    assert result.exit_code == 1, result.output  # no more stops
    assert "left as the upgrade in progress has them" not in result.output
    resolutions = _resolutions(result.stdout)
    assert resolutions.pop("CMakeLists.txt") == "manual" and set(resolutions.values()) == {"markers"}


def test_at_a_stop_files_added_with_markers_are_kept_once_the_policy_commits_markers(world) -> None:
    result = invoke("upgrade", "--repo", str(world.fork), *RANGE, "--on-conflict", "stop", "-q")
    worktree = world.fork / ".git" / "flagtree-sync" / "worktree"
    git(worktree, "add", "CMakeLists.txt")  # with its markers
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "-q")
    assert result.exit_code == 2 and "markers" in result.output, result.output  # still stop: refused
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "--stop-on", "python/src/*", "-q")
    assert result.exit_code == 4 and "commit 5/6" in result.output, result.output
    messages = git(world.fork, "log", "--format=%B", "refs/flagtree-sync/wip")
    assert "FlagTree-Sync-Conflicts: CMakeLists.txt" in messages  # kept with markers, and says so
    _take_theirs(world, "python/src/ir.cc")
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "-q", "--json")
    assert result.exit_code == 1, result.output
    resolutions = _resolutions(result.stdout)
    assert resolutions["CMakeLists.txt"] == "markers" and resolutions["python/src/ir.cc"] == "manual"


def test_a_stop_names_the_files_its_globs_matched(world) -> None:
    language = "python/triton/language/__init__.py"
    result = invoke("upgrade", "--repo", str(world.fork), *RANGE, "--stop-on", "python/triton/language/*", "-q")
    assert result.exit_code == 4 and "commit 2/6" in result.output, result.output
    assert f"(--stop-on matches {language}; git add the others as they are" in result.output
    _take_theirs(world, language)
    worktree = world.fork / ".git" / "flagtree-sync" / "worktree"
    git(worktree, "add", "-A", "python/triton/ops")  # FlagTree's files upstream deleted, kept as they are
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "-q", "--json")
    assert result.exit_code == 1, result.output
    resolutions = _resolutions(result.stdout)
    assert resolutions[language] == "manual" and resolutions["python/src/ir.cc"] == "markers"
