"""upgrade on the demo world: planted conflicts, reports, isolation, resume, bad input."""
from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest
from click.testing import CliRunner

from sync.cli import cli
from sync.errors import SyncError
from sync.jobs.upgrade import resolve_params
from sync.replay.engine import StateStore, run_upgrade

from tests.conftest import git, snapshot

PLANTED = [  # (commit subject, path, kind, owners)
    ("[CORE] Add the FlagTree spec interface", "CMakeLists.txt", "content", ["flagtree-core"]),
    ("[CORE] Hook trunk: spec_path, spec and spec_func call sites", "python/triton/language/__init__.py",
     "content", ["alpha"]),
    ("[CORE] Hook trunk: spec_path, spec and spec_func call sites", "python/triton/ops/__init__.py",
     "deleted-upstream", ["alpha"]),
    ("[CORE] Hook trunk: spec_path, spec and spec_func call sites", "python/triton/ops/matmul.py",
     "deleted-upstream", ["alpha", "beta"]),
    ("[CORE] Bind FlagTree types in ir.cc", "python/src/ir.cc", "content", ["shared-trunk"]),
]


def upgrade(world, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                                      *extra])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_demo_upgrade_finds_exactly_the_planted_conflicts(world, tmp_path: Path) -> None:
    before = snapshot(world.fork)
    status, output = upgrade(world, "--out", str(tmp_path / "report"), "--quiet")
    assert status == 1, output
    document = json.loads((tmp_path / "report" / "report.json").read_text())
    found = [(commit["summary"], c["path"], c["kind"], c["owners"])
             for commit in document["commits"] for c in commit["conflicts"]]
    assert found == PLANTED
    assert document["upgrade"]["releasable"] is False
    after = snapshot(world.fork)
    assert sorted(after.pop("refs").splitlines()) == sorted((before.pop("refs") + _branch_line(world.fork)).splitlines())
    assert after == before


def _branch_line(repo: Path) -> str:
    return f"refs/heads/sync/v3.6.0 {git(repo, 'rev-parse', 'sync/v3.6.0').strip()}\n"


def test_content_conflict_records_both_sides_and_base(world, tmp_path: Path) -> None:
    upgrade(world, "--out", str(tmp_path / "r"), "--quiet")
    document = json.loads((tmp_path / "r" / "report.json").read_text())
    ir = next(c for commit in document["commits"] for c in commit["conflicts"] if c["path"] == "python/src/ir.cc")
    assert ir["hunks"] == [{"line": 6, "ours": '  m.def("get_int16_ty", &getInt16Ty);\n', "base": "",
                            "theirs": '  m.def("get_flagtree_ty", &getFlagTreeTy);\n'}]
    text = git(world.fork, "show", "sync/v3.6.0:python/src/ir.cc")
    assert "<<<<<<< v3.6.0 (upgraded)" in text and "get_flagtree_ty" in text


def test_replayed_branch_keeps_every_fork_file_and_new_upstream(world) -> None:
    upgrade(world, "--quiet")
    files = set(git(world.fork, "ls-tree", "-r", "--name-only", "sync/v3.6.0").split())
    assert "python/triton/language/math.py" in files  # from the new tag
    assert "python/triton/runtime/_build.py" in files and "python/triton/runtime/build.py" not in files
    assert "third_party/beta/backend/spec/include/flagtree_spec.h" in files
    build = git(world.fork, "show", "sync/v3.6.0:python/triton/runtime/_build.py")
    assert 'spec("build_extra_flags", command)' in build  # the hook followed the upstream rename
    log = git(world.fork, "log", "--format=%s", "v3.6.0..sync/v3.6.0").splitlines()
    assert len(log) == 7 and log[0] == "[CORE] Pin upstream v3.6.0"  # six replayed commits, then the pin


@pytest.mark.parametrize("policy, expected", [("ours", "get_int16_ty"), ("theirs", "get_flagtree_ty")])
def test_conflict_policies_pick_a_side(world, policy: str, expected: str) -> None:
    status, _ = upgrade(world, "--on-conflict", policy, "--quiet")
    assert status == 1
    text = git(world.fork, "show", "sync/v3.6.0:python/src/ir.cc")
    assert expected in text and "<<<<<<<" not in text


def test_identical_runs_give_identical_commits(world) -> None:
    upgrade(world, "--quiet")
    first = git(world.fork, "rev-parse", "sync/v3.6.0")
    upgrade(world, "--quiet", "--force")
    assert git(world.fork, "rev-parse", "sync/v3.6.0") == first


def test_interrupted_run_resumes_to_the_same_result(world, tmp_path: Path) -> None:
    reference = build_reference(tmp_path)
    before = snapshot(world.fork)
    repo, params = resolve_params(str(world.fork), old="v3.5.0", onto="v3.6.0", source_branch=None)

    def interrupt(number: int, total: int, commit, result) -> None:
        if number == 3 and result is None:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_upgrade(repo, params, False, interrupt)
    assert snapshot(world.fork) == before  # no branch yet, nothing of the user's touched
    assert StateStore(repo).file.exists()
    status, output = upgrade(world, "--quiet")
    assert status == 1
    assert git(world.fork, "rev-parse", "sync/v3.6.0^{tree}") == reference
    assert not StateStore(repo).file.exists()
    assert "refs/flagtree-sync/wip" not in git(world.fork, "for-each-ref")


def build_reference(tmp_path: Path) -> str:
    from sync.demo.world import build_world

    other = build_world(tmp_path / "reference")
    upgrade(other, "--quiet")
    return git(other.fork, "rev-parse", "sync/v3.6.0^{tree}")


def test_stop_policy_then_continue(world) -> None:
    status, output = upgrade(world, "--on-conflict", "stop")
    assert status == 4 and "conflicts in CMakeLists.txt" in output and "--continue" in output
    assert "flagtree-sync: stopped:" in output and "error:" not in output  # the expected path, not a failure
    assert "sync/v3.6.0" not in git(world.fork, "branch")
    worktree = world.fork / ".git" / "flagtree-sync" / "worktree"
    assert "<<<<<<<" in (worktree / "CMakeLists.txt").read_text()
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue"])
    assert result.exit_code == 2 and "unresolved conflicts" in result.output
    git(worktree, "checkout", "--theirs", "CMakeLists.txt")
    git(worktree, "add", "CMakeLists.txt")
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "--quiet"])
    assert result.exit_code == 4 and "commit 2/6" in result.output  # resolved one, stopped at the next
    replayed = git(world.fork, "show", "refs/flagtree-sync/wip:CMakeLists.txt")
    assert "include(cmake/FlagTree.cmake)" in replayed and "<<<<<<<" not in replayed
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--abort"])
    assert result.exit_code == 0
    assert not worktree.exists() and "sync/v3.6.0" not in git(world.fork, "branch")
    assert "refs/flagtree-sync" not in git(world.fork, "for-each-ref")


def test_existing_target_branch_needs_force(world) -> None:
    git(world.fork, "branch", "sync/v3.6.0", "main")
    status, output = upgrade(world)
    assert status == 2 and "already exists" in output and "--force" in output
    assert upgrade(world, "--force", "--quiet")[0] == 1


@pytest.mark.parametrize("args, message", [
    (["--from", "v9.9.9", "--onto", "v3.6.0"], "unknown revision 'v9.9.9'"),
    (["--from", "v3.6.0", "--onto", "v3.5.0"], "is not an ancestor of main"),
    (["--from", "v3.5.0", "--onto", "v3.6.0", "--branch", "v3.5.0"], "nothing to replay"),
    (["--from", "v3.5.0", "--onto", "v3.6.0", "--target-branch", "bad..name"], "not a valid branch name"),
    (["--from", "v3.5.0"], "--onto is required"),
])
def test_bad_input_is_a_clear_error(world, args: list[str], message: str) -> None:
    before = snapshot(world.fork)
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert snapshot(world.fork) == before


def test_not_a_repository(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(tmp_path), "--from", "a", "--onto", "b"])
    assert result.exit_code == 2 and "is not a git repository" in result.output


def test_shallow_clone_is_refused(world, tmp_path: Path) -> None:
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{world.fork}", str(shallow))
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(shallow), "--from", "a", "--onto", "b"])
    assert result.exit_code == 2 and "shallow clone" in result.output


def test_another_run_in_progress_is_refused(world) -> None:
    repo, params = resolve_params(str(world.fork), old="v3.5.0", onto="v3.6.0", source_branch=None)

    def interrupt(number, total, commit, result):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_upgrade(repo, params, False, interrupt)
    status, output = upgrade(world, "--on-conflict", "ours")
    assert status == 2 and "another upgrade is in progress" in output
    assert upgrade(world, "--abort")[0] == 0
    assert upgrade(world, "--on-conflict", "ours", "--quiet")[0] == 1


def test_continue_without_state(world) -> None:
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue"])
    assert result.exit_code == 2 and "no upgrade in progress" in result.output


def test_report_files_and_static_html(world, tmp_path: Path) -> None:
    out = tmp_path / "report"
    upgrade(world, "--out", str(out), "--quiet")
    names = sorted(path.name for path in out.iterdir() if path.name != ".flagtree-sync-report.json")
    assert names == ["alpha.md", "beta.md", "flagtree-core.md", "index.html", "kinds.md", "report.json", "shared-trunk.md",
                     "summary.md"]
    html = (out / "index.html").read_text()
    assert "<details>" in html and "http" not in html.replace("http-equiv", "")
    assert "merge conflict 1" in html  # the overlay-conflicting hunks, not only the upstream diff
    summary = (out / "summary.md").read_text()
    assert "| [alpha](alpha.md) | backend | blocked | 3 |" in summary
    assert "Not releasable" in summary


def test_report_refuses_to_replace_a_foreign_directory(world, tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    status, output = upgrade(world, "--out", str(foreign), "--quiet")
    assert status == 2 and "not a flagtree-sync report directory" in output
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_unwritable_output_is_a_clear_error_and_no_partial_report(world, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    status, output = upgrade(world, "--out", str(blocker / "report"), "--quiet")
    assert status == 2 and f"{blocker} is not a directory" in output
    assert blocker.read_text() == "not a directory"
    assert "sync/v3.6.0" not in git(world.fork, "branch")  # refused before the replay, not after it


def test_json_mode_prints_the_document(world) -> None:
    status, output = upgrade(world, "--json")
    document = json.loads(output)
    assert document["schema"] == "flagtree-sync/report/1"
    assert document["summary"]["conflicted_files"] == sorted(p for _, p, _, _ in PLANTED)


def test_engine_refuses_missing_refs(world) -> None:
    with pytest.raises(SyncError, match="unknown revision"):
        resolve_params(str(world.fork), old="v3.5.0", onto="nope", source_branch=None)
    assert isinstance(pygit2.Repository(str(world.fork)), pygit2.Repository)


def test_pinned_upstream_gives_from_and_is_updated_on_the_new_branch(world) -> None:
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--onto", "v3.6.0", "-q"])
    assert result.exit_code == 1, result.output
    pinned = git(world.fork, "show", "sync/v3.6.0:flagtree-upstream.toml")
    assert 'tag = "v3.6.0"' in pinned and git(world.fork, "rev-parse", "v3.6.0^{commit}").strip() in pinned
    assert git(world.fork, "log", "-1", "--format=%s", "sync/v3.6.0").strip() == "[CORE] Pin upstream v3.6.0"
    assert 'tag = "v3.5.0"' in git(world.fork, "show", "main:flagtree-upstream.toml")  # the user's branch: untouched


def test_missing_pin_needs_from(world) -> None:
    git(world.fork, "rm", "-q", "flagtree-upstream.toml")
    git(world.fork, "commit", "-qm", "drop the pin")
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--onto", "v3.6.0"])
    assert result.exit_code == 2 and "--from is required: main has no flagtree-upstream.toml" in result.output


def test_continue_runs_from_the_stop_worktree_with_a_relative_out(world, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the stop message sends the user: resolve in the worktree, git add, --continue right there."""
    monkeypatch.chdir(world.fork)
    result = CliRunner().invoke(cli, ["upgrade", "--from", "v3.5.0", "--onto", "v3.6.0", "--on-conflict", "stop",
                                      "--out", "../report"])
    assert result.exit_code == 4, result.output
    worktree = world.fork / ".git" / "flagtree-sync" / "worktree"
    git(worktree, "checkout", "--theirs", "CMakeLists.txt")
    git(worktree, "add", "CMakeLists.txt")
    monkeypatch.chdir(worktree)
    result = CliRunner().invoke(cli, ["upgrade", "--continue", "--quiet"])
    assert result.exit_code == 4 and "commit 2/6" in result.output, result.output  # not "no upgrade in progress"
    assert f"--out {world.fork.parent / 'report'}" in result.output  # stored absolute, not as typed
    result = CliRunner().invoke(cli, ["upgrade", "--abort"])
    assert result.exit_code == 0 and not worktree.exists()


def test_an_unknown_backend_is_refused_before_the_replay(world) -> None:
    """Seen by a trial user: the refusal came after the whole replay and left a run to --continue or --abort."""
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                                      "--backend", "gamma", "-q"])
    assert result.exit_code == 2 and "no backend gamma" in result.output and "known: alpha, beta" in result.output
    assert not (world.fork / ".git" / "flagtree-sync" / "upgrade.json").exists()
    assert "sync/v3.6.0" not in git(world.fork, "branch", "--list")
