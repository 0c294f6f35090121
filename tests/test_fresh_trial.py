"""Bad input a new user tried: each is exit 2 with one line that names the real problem, never exit 3 or a
silently ignored option."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from sync.cli import cli


def _run(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output and result.exit_code != 3, result.output
    return result


@pytest.mark.parametrize("where", ["afile", "afile/sub"])
def test_demo_into_a_file_is_refused(tmp_path: Path, where: str) -> None:
    (tmp_path / "afile").write_text("mine")
    result = _run("demo", str(tmp_path / where))
    assert result.exit_code == 2 and f"{tmp_path / 'afile'} exists and is not a directory" in result.output
    assert (tmp_path / "afile").read_text() == "mine"


def test_suppress_with_an_unknown_kind_names_the_kind(world) -> None:
    result = _run("suppress", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                  "--kind", "overlay-orphn", "--path", "x.py", "--reason", "r")
    assert result.exit_code == 2 and "unknown kind 'overlay-orphn'; did you mean overlay-orphan" in result.output


UPGRADE = ("upgrade", "--from", "v3.5.0", "--onto", "v3.6.0")


@pytest.mark.parametrize("extra, message", [
    (("--exec", "true", "--exec-timeout", "0"), "Invalid value for '--exec-timeout'"),
    (("--exec", "true", "--exec-timeout", "-1"), "Invalid value for '--exec-timeout'"),
    (("--exec-at", "each"), "--exec-at and --exec-timeout set the test gate: pass --exec CMD too"),
    (("--exec-timeout", "5"), "--exec-at and --exec-timeout set the test gate: pass --exec CMD too"),
    (("--continue", "--abort"), "--continue and --abort exclude each other"),
])
def test_options_that_cannot_work_are_refused_not_ignored(world, extra: tuple[str, ...], message: str) -> None:
    result = _run(UPGRADE[0], "--repo", str(world.fork), *UPGRADE[1:], *extra)
    assert result.exit_code == 2 and message in result.output
    assert not (world.fork / ".git" / "refs" / "heads" / "sync").exists()  # nothing ran


def test_status_on_a_branch_upgrade_did_not_make_says_to_pass_target(world, monkeypatch) -> None:
    monkeypatch.chdir(world.fork)  # on main, the FlagTree branch, as a new user would be
    result = _run("status")
    assert result.exit_code == 2
    assert "cannot read the upgrade's range from main" in result.output and "--target" in result.output


@pytest.mark.parametrize("command", [("upgrade", "--onto", "v1"), ("drift", "--from", "a", "--onto", "b"), ("status",),
                                     ("describe",)])
def test_a_repository_without_commits_says_so(tmp_path: Path, command: tuple[str, ...]) -> None:
    import subprocess
    subprocess.run(["git", "init", "-q", str(tmp_path / "empty")], check=True)
    result = _run(command[0], "--repo", str(tmp_path / "empty"), *command[1:])
    assert result.exit_code == 2 and "has no commits yet" in result.output and "not on a branch" not in result.output


def test_status_on_a_detached_head_asks_for_target_not_branch(world) -> None:
    from tests.conftest import git
    git(world.fork, "checkout", "-q", "--detach", "main")
    result = _run("status", "--repo", str(world.fork))
    assert result.exit_code == 2 and "name the upgraded branch with --target" in result.output


def test_check_on_a_directory_inside_the_tree_names_the_tree(tmp_path: Path) -> None:
    (tmp_path / "repo" / "python" / "triton" / "language").mkdir(parents=True)
    result = _run("check", str(tmp_path / "repo" / "python" / "triton"))
    assert result.exit_code == 2 and f"inside the FlagTree tree {tmp_path / 'repo'}; pass that directory" in result.output
    result = _run("check", str(tmp_path))  # not inside one: the plain message
    assert result.exit_code == 2 and "not a FlagTree tree" in result.output


def test_hooks_with_an_empty_hook_set_is_refused_not_a_silent_pass(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "triton").mkdir(parents=True)
    (tmp_path / "pkg" / "triton" / "__init__.py").write_text("")
    (tmp_path / "empty.toml").write_text("")
    result = _run("hooks", str(tmp_path / "pkg"), "--hook-set", str(tmp_path / "empty.toml"))
    assert result.exit_code == 2 and "names no hooks" in result.output


def test_hooks_on_a_wheel_says_to_extract_it(tmp_path: Path) -> None:
    (tmp_path / "triton-3.6.0-py3-none-any.whl").write_bytes(b"PK")
    result = _run("hooks", str(tmp_path / "triton-3.6.0-py3-none-any.whl"))
    assert result.exit_code == 2 and "it is a wheel; extract it" in result.output
