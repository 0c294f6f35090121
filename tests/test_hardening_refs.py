"""Nothing of the user's is overwritten by the upgrade's ref writes (issue 31): the target branch is checked again,
under the run lock, whenever it is written (after a stop, a kill, an edited state), source and target are compared
as full ref names, names git refuses are refused, and the write is a compare-and-swap."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sync.replay import target as target_branch
import sync
from sync.cli import cli
from sync.git.repo import valid_branch_name
from tests.conftest import git
from tests.test_hardening_state import ARGS, resolve_every_stop, state_dir, stop_at_first_conflict, upgrade

CODE = str(Path(sync.__file__).parents[1])  # the code under test, for the subprocesses
TARGET = "sync/v3.6.0"


def rev(world, name: str) -> str:
    return git(world.fork, "rev-parse", name).strip()


def commit_on_new_branch(world, branch: str, message: str) -> str:
    """A branch of the user's with a commit of theirs on it; the fork is back on main afterwards."""
    git(world.fork, "checkout", "-q", "-b", branch, "main")
    (world.fork / "MINE.txt").write_text("the user's work\n")
    git(world.fork, "add", "MINE.txt")
    git(world.fork, "commit", "-qm", message)
    git(world.fork, "checkout", "-q", "main")
    return rev(world, branch)


def cont(world):
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "-q"])
    assert "Traceback" not in result.output and result.exit_code != 3, result.output
    return result


def test_a_branch_made_while_the_run_is_stopped_is_left_as_it_is(world) -> None:
    stop_at_first_conflict(world)
    mine = commit_on_new_branch(world, TARGET, "my own start on the upgrade")
    result = resolve_every_stop(world, "-q")
    assert result.exit_code == 2 and "left as it is" in result.output and mine[:9] in result.output, result.output
    assert rev(world, TARGET) == mine
    git(world.fork, "branch", "-m", TARGET, "mine")  # out of the way: the run finishes
    assert resolve_every_stop(world, "-q").exit_code == 1
    assert rev(world, "mine") == mine and rev(world, f"{TARGET}~1") != mine


def test_a_branch_made_while_the_run_was_killed_is_left_as_it_is(world) -> None:
    env = {"FLAGTREE_SYNC_FAULT": "commit:2"}
    killed = subprocess.run([sys.executable, "-m", "sync", *ARGS, "--repo", str(world.fork)],
                            env={**os.environ, **env, "PYTHONPATH": CODE},
                            capture_output=True, text=True)
    assert killed.returncode == 137, killed.stderr
    mine = commit_on_new_branch(world, TARGET, "made while the run was dead")
    result = upgrade(world)  # the same command resumes it
    assert result.exit_code == 2 and "left as it is" in result.output, result.output
    assert rev(world, TARGET) == mine


def test_a_branch_checked_out_in_a_worktree_while_stopped_is_not_moved(world, tmp_path: Path) -> None:
    stop_at_first_conflict(world)
    git(world.fork, "worktree", "add", "-q", "-b", TARGET, str(tmp_path / "wt"), "main")
    before = rev(world, TARGET)
    result = resolve_every_stop(world, "-q")
    assert result.exit_code == 2 and "checked out in the worktree" in result.output, result.output
    assert rev(world, TARGET) == before and git(tmp_path / "wt", "status", "--porcelain") == ""


@pytest.mark.parametrize("spelling", ["refs/heads/main", "heads/main", "HEAD"])
def test_the_source_branch_is_never_the_target_however_it_is_spelled(world, spelling: str) -> None:
    git(world.fork, "checkout", "-q", "-b", "elsewhere", "main")
    if spelling == "HEAD":
        git(world.fork, "checkout", "-q", "main")
    before = rev(world, "main")
    result = upgrade(world, "--branch", spelling, "--target-branch", "main", "--force")
    assert result.exit_code == 2 and "source branch" in result.output, result.output
    assert rev(world, "main") == before


def test_a_symbolic_ref_as_the_target_is_refused(world) -> None:
    git(world.fork, "checkout", "-q", "-b", "elsewhere", "main")
    git(world.fork, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    before = rev(world, "main")
    result = upgrade(world, "--branch", "main", "--target-branch", "alias", "--force")
    assert result.exit_code == 2 and "symbolic ref" in result.output, result.output
    assert rev(world, "main") == before


@pytest.mark.parametrize("edited", ["main", "keep", "-rf", "HEAD"])
def test_a_target_edited_in_the_state_is_checked_as_on_a_fresh_start(world, edited: str) -> None:
    kept = commit_on_new_branch(world, "keep", "a branch of mine")
    stop_at_first_conflict(world)
    header = json.loads((state_dir(world) / "upgrade.json").read_text())
    header["params"]["target_branch"] = edited
    (state_dir(world) / "upgrade.json").write_text(json.dumps(header))
    before = {name: rev(world, name) for name in ("main", "keep")}
    result = resolve_every_stop(world, "-q")
    assert result.exit_code == 2, result.output
    assert {name: rev(world, name) for name in ("main", "keep")} == before and before["keep"] == kept
    assert upgrade(world, "--abort").exit_code == 0
    assert {name: rev(world, name) for name in ("main", "keep")} == before


@pytest.mark.parametrize("name", ["HEAD", "-rf", "@", "refs/heads/x", "a..b", "x.lock", "x@{1}"])
def test_target_branch_names_git_refuses_are_refused(world, name: str) -> None:
    result = upgrade(world, "--target-branch", name)
    assert result.exit_code == 2 and "not a valid branch name" in result.output, result.output
    assert not (state_dir(world) / "upgrade.json").exists()
    assert git(world.fork, "for-each-ref", "--format=%(refname)", "refs/heads") == "refs/heads/main\n"


@pytest.mark.parametrize("name", ["HEAD", "-rf", "-", "a..b", "x.lock", "x@{1}", "a b", "a:b", "a/.b", "/a",
                                  "a//b", ".a", "a.", "sync/v3.6.0", "x", "ünï", "FETCH", "a-b"])
def test_the_branch_name_check_never_accepts_what_git_refuses(name: str) -> None:
    git_accepts = subprocess.run(["git", "check-ref-format", "--branch", name], capture_output=True).returncode == 0
    assert not valid_branch_name(name) or git_accepts


def test_a_branch_made_between_the_check_and_the_write_loses_nothing(world, monkeypatch) -> None:
    """The last check passes, then a concurrent `git branch` makes the target: the compare-and-swap refuses."""
    checked = target_branch.require_writable
    mine: list[str] = []

    def then_made(repo, state, current, tip) -> None:
        checked(repo, state, current, tip)
        if tip is not None:
            mine.append(commit_on_new_branch(world, TARGET, "made in the race"))
    monkeypatch.setattr(target_branch, "require_writable", then_made)
    result = upgrade(world)
    assert result.exit_code == 2 and f"cannot update refs/heads/{TARGET}" in result.output, result.output
    assert rev(world, TARGET) == mine[0]


def pin_upgrade(world, *extra: str):
    result = CliRunner().invoke(cli, ["upgrade", "--onto", "v3.6.0", "-q", "--repo", str(world.fork), *extra])
    assert "Traceback" not in result.output and result.exit_code != 3, result.output
    return result


def commit_pin(world, tag: str, commit: str) -> None:
    (world.fork / "flagtree-upstream.toml").write_text(f'tag = "{tag}"\ncommit = "{commit}"\n')
    git(world.fork, "commit", "-qam", "pin by hand")


@pytest.mark.parametrize("tag", ["HEAD~1", "main", "v3.6.0", "v3.5.0^{}"])
def test_a_pin_whose_tag_is_no_tag_of_its_commit_is_refused(world, tag: str) -> None:
    commit_pin(world, tag, rev(world, "v3.5.0^{commit}"))
    result = pin_upgrade(world)
    assert result.exit_code == 2 and f"pins tag {tag!r}" in result.output, result.output
    assert "sync/v3.6.0" not in git(world.fork, "branch") and not (state_dir(world) / "upgrade.json").exists()


@pytest.mark.parametrize("tag", ["v3.5.0", "COMMIT", "v9.9.9"])  # its tag; its commit id; a tag this clone lacks
def test_a_pin_that_names_its_commit_is_used(world, tag: str) -> None:
    old = rev(world, "v3.5.0^{commit}")
    commit_pin(world, old[:12] if tag == "COMMIT" else tag, old)
    result = pin_upgrade(world)
    assert result.exit_code == 1, result.output


@pytest.mark.parametrize("onto, pinned", [("refs/tags/v3.6.0", "v3.6.0"), ("v3.6.0~0", None)])
def test_the_pin_a_run_writes_names_a_tag_only_when_it_is_one(world, onto: str, pinned: str | None) -> None:
    assert upgrade(world, "--onto", onto, "--target-branch", "new").exit_code == 1
    text = git(world.fork, "show", "new:flagtree-upstream.toml")
    assert f'tag = "{pinned or rev(world, "v3.6.0^{commit}")}"' in text, text


# What attacking the checks above found.

def test_a_branch_a_rebase_in_another_worktree_returns_to_is_not_moved(world, tmp_path: Path) -> None:
    stop_at_first_conflict(world)
    git(world.fork, "worktree", "add", "-q", "-b", TARGET, str(tmp_path / "wt"), "main")
    git(tmp_path / "wt", "checkout", "-q", "--detach")  # as git rebase does, then it moves the branch back
    marker = Path(git(tmp_path / "wt", "rev-parse", "--absolute-git-dir").strip()) / "rebase-merge"
    marker.mkdir()
    (marker / "head-name").write_text(f"refs/heads/{TARGET}\n")
    before = rev(world, TARGET)
    result = resolve_every_stop(world, "-q")
    assert result.exit_code == 2 and "checked out in the worktree" in result.output, result.output
    assert rev(world, TARGET) == before


def test_a_worktree_on_a_symbolic_ref_to_the_target_holds_it(world, tmp_path: Path) -> None:
    stop_at_first_conflict(world)
    git(world.fork, "branch", TARGET, "main")
    git(world.fork, "symbolic-ref", "refs/heads/alias", f"refs/heads/{TARGET}")
    git(world.fork, "worktree", "add", "-q", str(tmp_path / "wt"), "alias")
    header = json.loads((state_dir(world) / "upgrade.json").read_text())
    header["target_was"] = rev(world, TARGET)  # as if --force had accepted it: the worktree still holds it
    (state_dir(world) / "upgrade.json").write_text(json.dumps(header))
    before = rev(world, TARGET)
    result = resolve_every_stop(world, "-q")
    assert result.exit_code == 2 and "checked out in the worktree" in result.output, result.output
    assert rev(world, TARGET) == before


def test_a_target_was_edited_into_the_state_still_keeps_commits_made_by_hand(world) -> None:
    mine = commit_on_new_branch(world, "keep", "a branch of mine")
    stop_at_first_conflict(world)
    header = json.loads((state_dir(world) / "upgrade.json").read_text())
    header["params"]["target_branch"], header["target_was"] = "keep", mine
    (state_dir(world) / "upgrade.json").write_text(json.dumps(header))
    result = resolve_every_stop(world, "-q")
    # no --force accepted it (refs/flagtree-sync/forced/keep is the tool's record of that): left as it is
    assert result.exit_code == 2 and "left as it is" in result.output, result.output
    assert rev(world, "keep") == mine


def test_the_tool_directory_replaced_by_a_file_is_exit_2(world) -> None:
    state_dir(world).write_text("not a directory\n")
    for args in ([], ["--abort"]):
        result = upgrade(world, *args)
        assert result.exit_code == 2 and "move it away" in result.output, result.output
    assert state_dir(world).read_text() == "not a directory\n"


def test_a_pin_is_read_as_its_commit_where_another_ref_shadows_its_tag(world) -> None:
    pinned = rev(world, "v3.5.0^{commit}")
    commit_pin(world, "v3.5.0", pinned)
    git(world.fork, "update-ref", "refs/v3.5.0", "main~2")  # refs/<name> comes first in git's lookup
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--onto", "v3.6.0", "--json"])
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["range"]["from"]["commit"] == pinned


def test_a_target_ref_to_no_commit_is_refused_not_a_crash(world) -> None:
    """A ref file written by hand (git itself will not put a blob on a branch) is nobody's branch to replace."""
    blob = subprocess.run(["git", "-C", str(world.fork), "hash-object", "-w", "--stdin"], input=b"blob\n",
                          capture_output=True, check=True).stdout.decode().strip()
    ref_file = world.fork / ".git" / "refs" / "heads" / TARGET
    ref_file.parent.mkdir(parents=True, exist_ok=True)
    ref_file.write_text(blob + "\n")
    result = upgrade(world, "--force")
    assert result.exit_code == 2 and "which is no commit" in result.output, result.output
    ref_file.unlink()
    stop_at_first_conflict(world)
    ref_file.write_text(blob + "\n")
    assert resolve_every_stop(world, "-q").exit_code == 2
    assert upgrade(world, "--abort").exit_code == 0 and ref_file.read_text() == blob + "\n"
