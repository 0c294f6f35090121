"""The stop worktree of `upgrade --on-conflict stop`: one directory for every stop of a run, never wiped."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest
from click.testing import CliRunner

from sync.cli import cli
from sync.errors import SyncError
from sync.git.worktree import stop_worktree

from tests.conftest import git


def _upgrade(world, *extra: str):
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), *extra])
    assert "Traceback" not in result.output and result.exit_code != 3, result.output
    return result


def _start(world):
    return _upgrade(world, "--from", "v3.5.0", "--onto", "v3.6.0", "--on-conflict", "stop", "--quiet")


def _stop_dir(world) -> Path:
    return world.fork / ".git" / "flagtree-sync" / "worktree"


def _resolve_first_stop(worktree: Path) -> None:
    git(worktree, "checkout", "--theirs", "CMakeLists.txt")
    git(worktree, "add", "CMakeLists.txt")


def test_the_next_stop_reuses_the_directory_a_shell_sits_in(world) -> None:
    assert _start(world).exit_code == 4
    worktree = _stop_dir(world)
    shell = os.open(worktree, os.O_RDONLY)  # what a shell's current directory holds on to
    try:
        (worktree / "my-notes.txt").write_text("mine")  # untracked: not the tool's to delete
        _resolve_first_stop(worktree)
        result = _upgrade(world, "--continue", "--quiet")
        assert result.exit_code == 4 and "commit 2/6" in result.output, result.output
        assert os.fstat(shell).st_nlink > 0 and os.fstat(shell).st_ino == os.stat(worktree).st_ino
        # the shell's directory is the live worktree, at the new stop
        here = subprocess.run(["git", "status", "--porcelain"], cwd=f"/proc/self/fd/{shell}", capture_output=True,
                              text=True, check=True).stdout
        assert "python/triton/language/__init__.py" in here
        assert (worktree / "my-notes.txt").read_text() == "mine"
        assert "<<<<<<<" in (worktree / "python/triton/language/__init__.py").read_text()
        assert git(worktree, "rev-parse", "HEAD") == git(world.fork, "rev-parse", "refs/flagtree-sync/wip")
    finally:
        os.close(shell)


def test_an_edit_left_unstaged_is_refused_not_dropped(world) -> None:
    _start(world)
    worktree = _stop_dir(world)
    _resolve_first_stop(worktree)
    with open(worktree / "README.md", "a") as handle:
        handle.write("forgot to git add this\n")
    result = _upgrade(world, "--continue", "--quiet")
    assert result.exit_code == 2 and "changes not staged" in result.output and "README.md" in result.output
    assert "forgot to git add this" in (worktree / "README.md").read_text()
    git(worktree, "add", "README.md")
    result = _upgrade(world, "--continue", "--quiet")
    assert result.exit_code == 4 and "commit 2/6" in result.output
    assert "forgot to git add this" in git(world.fork, "show", "refs/flagtree-sync/wip:README.md")


def test_a_file_added_with_its_conflict_markers_is_refused_not_taken_as_resolved(world) -> None:
    """Seen by a trial user: `git add` of a file still in conflict, then --continue, gave a report that called
    the branch releasable while it held markers."""
    _start(world)
    worktree = _stop_dir(world)
    assert "<<<<<<<" in (worktree / "CMakeLists.txt").read_text()
    git(worktree, "add", "CMakeLists.txt")
    result = _upgrade(world, "--continue", "--quiet")
    assert result.exit_code == 2 and "still in conflict" in result.output and "CMakeLists.txt" in result.output
    (worktree / "CMakeLists.txt").write_text(git(worktree, "show", "HEAD:CMakeLists.txt") + "\n")  # edited out
    git(worktree, "add", "CMakeLists.txt")
    result = _upgrade(world, "--continue", "--quiet")
    assert result.exit_code == 4 and "commit 2/6" in result.output, result.output


def test_a_stop_whose_cherry_pick_is_gone_stops_there_again(world) -> None:
    """Killed between recording the stop and the cherry-pick, or the pick undone by hand: nothing was
    resolved, so --continue must not record the unchanged tree as the resolution."""
    _start(world)
    worktree = _stop_dir(world)
    git(worktree, "reset", "-q", "--hard")  # also drops CHERRY_PICK_HEAD
    result = _upgrade(world, "--continue", "--quiet")
    assert result.exit_code == 4 and "commit 1/6" in result.output and "CMakeLists.txt" in result.output
    assert "<<<<<<<" in (worktree / "CMakeLists.txt").read_text()


def test_a_foreign_directory_at_the_stop_path_is_refused_and_kept(world) -> None:
    foreign = _stop_dir(world)
    foreign.mkdir(parents=True)
    (foreign / "notes.txt").write_text("keep me")
    result = _start(world)
    assert result.exit_code == 2 and "not a worktree of this repository" in result.output
    assert (foreign / "notes.txt").read_text() == "keep me"
    foreign.rename(foreign.with_name("moved"))
    result = _upgrade(world, "--continue", "--quiet")
    assert result.exit_code == 4 and "commit 1/6" in result.output
    assert (foreign.with_name("moved") / "notes.txt").read_text() == "keep me"


def test_a_symlink_at_the_stop_path_is_not_followed(world, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("keep me")
    _stop_dir(world).parent.mkdir(parents=True)
    _stop_dir(world).symlink_to(elsewhere)
    result = _start(world)
    assert result.exit_code == 2 and "not a worktree of this repository" in result.output
    assert sorted(p.name for p in elsewhere.iterdir()) == ["notes.txt"]


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[pygit2.Repository, str, str]:
    path = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "a.txt").write_text("one\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-qm", "one")
    first = git(path, "rev-parse", "HEAD").strip()
    (path / "b.txt").write_text("two\n")
    git(path, "add", "b.txt")
    git(path, "commit", "-qm", "two")
    return pygit2.Repository(str(path)), first, git(path, "rev-parse", "HEAD").strip()


def test_stop_worktree_refuses_local_changes_and_keeps_them(tiny, tmp_path: Path) -> None:
    repo, first, second = tiny
    where = tmp_path / "stop"
    stop_worktree(repo, where, first)
    (where / "a.txt").write_text("edited\n")
    with pytest.raises(SyncError, match="local changes .*a.txt"):
        stop_worktree(repo, where, second)
    assert (where / "a.txt").read_text() == "edited\n"
    git(where, "checkout", "a.txt")
    inode = os.stat(where).st_ino
    assert stop_worktree(repo, where, second).head() == second and os.stat(where).st_ino == inode


def test_stop_worktree_refuses_an_ignored_file_the_next_commit_adds(tiny, tmp_path: Path) -> None:
    repo, first, second = tiny
    where = tmp_path / "stop"
    stop_worktree(repo, where, first)
    (Path(repo.path) / "info").mkdir(exist_ok=True)
    (Path(repo.path) / "info" / "exclude").write_text("b.txt\n")  # git itself would overwrite an ignored file
    (where / "b.txt").write_text("mine\n")  # b.txt is added by `second`
    with pytest.raises(SyncError, match="b.txt"):
        stop_worktree(repo, where, second)
    assert (where / "b.txt").read_text() == "mine\n"


def test_a_stop_worktree_removed_by_hand_stops_there_again(world) -> None:
    _start(world)
    git(world.fork, "worktree", "remove", "--force", str(_stop_dir(world)))
    result = _upgrade(world, "--continue", "--quiet")
    assert result.exit_code == 4 and "commit 1/6" in result.output
    assert "<<<<<<<" in (_stop_dir(world) / "CMakeLists.txt").read_text()


def test_a_stop_worktree_replaced_by_a_directory_is_refused_and_kept(world) -> None:
    _start(world)
    git(world.fork, "worktree", "remove", "--force", str(_stop_dir(world)))
    _stop_dir(world).mkdir()
    (_stop_dir(world) / "notes.txt").write_text("keep me")
    result = _upgrade(world, "--continue", "--quiet")
    assert result.exit_code == 2 and "no longer a worktree of this repository" in result.output
    assert (_stop_dir(world) / "notes.txt").read_text() == "keep me"


def _strip_markers(path: Path) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(line for line in lines if not line.startswith(("<<<<<<<", "|||||||", "=======", ">>>>>>>"))))


@pytest.mark.parametrize("notes", [True, False])
def test_the_end_of_the_run_keeps_the_worktree_only_for_files_of_yours(world, notes: bool) -> None:
    _start(world)
    worktree = _stop_dir(world)
    if notes:
        (worktree / "my-notes.txt").write_text("mine")
    _resolve_first_stop(worktree)
    assert "commit 2/6" in _upgrade(world, "--continue", "--quiet").output
    _strip_markers(worktree / "python/triton/language/__init__.py")
    git(worktree, "add", "python/triton/language/__init__.py")
    git(worktree, "rm", "-q", "python/triton/ops/__init__.py", "python/triton/ops/matmul.py")
    assert "commit 5/6" in _upgrade(world, "--continue", "--quiet").output
    _strip_markers(worktree / "python/src/ir.cc")
    git(worktree, "add", "python/src/ir.cc")
    result = _upgrade(world, "--continue", "--quiet")
    assert result.exit_code == 1 and "branch sync/v3.6.0" in result.output
    assert ("kept the stop worktree" in result.output) is notes
    assert worktree.exists() is notes
    if notes:
        assert (worktree / "my-notes.txt").read_text() == "mine"
        result = _upgrade(world, "--from", "v3.5.0", "--onto", "v3.6.0", "--on-conflict", "stop", "--force", "-q")
        assert result.exit_code == 4 and (worktree / "my-notes.txt").read_text() == "mine"  # reused by the next run


def test_abort_drops_the_conflict_and_keeps_files_of_yours(world) -> None:
    _start(world)
    worktree = _stop_dir(world)
    (worktree / "my-notes.txt").write_text("mine")
    result = _upgrade(world, "--abort")
    assert result.exit_code == 0 and "kept the stop worktree" in result.output
    assert (worktree / "my-notes.txt").read_text() == "mine"
    assert "<<<<<<<" not in (worktree / "CMakeLists.txt").read_text() and git(worktree, "status", "--porcelain") == \
        "?? my-notes.txt\n"
    assert "refs/flagtree-sync" not in git(world.fork, "for-each-ref")
    assert _start(world).exit_code == 4 and (worktree / "my-notes.txt").read_text() == "mine"  # reused


def test_continue_says_which_options_of_the_run_it_keeps(world) -> None:
    _start(world)
    _resolve_first_stop(_stop_dir(world))
    result = _upgrade(world, "--continue", "--quiet", "--on-conflict", "stop", "--target-branch", "sync/other")
    assert result.exit_code == 4 and "commit 2/6" in result.output
    # --on-conflict is taken from here on (tests/test_stop_policy.py); the range and branches are the run's
    assert "note: --target-branch left as the upgrade in progress has them" in result.output


def test_status_and_drift_on_the_branch_a_stopped_upgrade_is_making_say_so(world) -> None:
    _start(world)
    for command in (["status", "--repo", str(world.fork), "--target", "sync/v3.6.0", "--from", "v3.5.0",
                     "--onto", "v3.6.0"],
                    ["drift", "--repo", str(world.fork), "--target", "sync/v3.6.0", "--from", "v3.5.0",
                     "--onto", "v3.6.0"]):
        result = CliRunner().invoke(cli, command)
        assert result.exit_code == 2, result.output
        assert "sync/v3.6.0 does not exist yet: the upgrade that makes it is stopped at commit 1/6" in result.output
        assert "upgrade --continue" in result.output and "unknown revision" not in result.output
