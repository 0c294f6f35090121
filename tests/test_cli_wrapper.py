"""What every command does with a bug, a closed pipe and its crash log (sync/cli.py's wrapper)."""
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from sync.cli import _reported


def _failing(exc: BaseException):
    def command(repo_path: str | None = None) -> int:
        raise exc
    return _reported(command)


def test_a_bug_leaves_its_traceback_under_the_git_dir_of_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "sub").mkdir()
    monkeypatch.chdir(repo / "sub")  # no --repo: the repository is found from the work tree
    with pytest.raises(SystemExit) as exit_info:
        _failing(RuntimeError("boom"))()
    assert exit_info.value.code == 3
    logs = list((repo / ".git" / "flagtree-sync").glob("crash-*.log"))
    assert len(logs) == 1 and "RuntimeError: boom" in logs[0].read_text()
    err = capfd.readouterr().err
    assert "internal error: RuntimeError: boom" in err and str(logs[0]) in err and "Traceback" not in err


def test_a_closed_pipe_is_a_quiet_exit_not_an_internal_error(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _failing(BrokenPipeError(32, "Broken pipe"))()
    assert exit_info.value.code == 1
    assert capfd.readouterr().err == ""


def test_drift_piped_into_head_exits_without_a_crash(world) -> None:
    """The user's case: `drift ... | head -3` wrote a crash log and exited 3."""
    # `true` exits without reading: by the time drift writes, nobody reads the pipe
    command = f"set -o pipefail; {shlex.quote(sys.executable)} -m sync drift --from v3.5.0 --onto v3.6.0 --json | true"
    run = subprocess.run(command, shell=True, executable="bash", cwd=world.fork, capture_output=True, text=True)
    assert "internal error" not in run.stderr and run.returncode in (0, 1), run.stderr
    assert not list((Path(world.fork) / ".git" / "flagtree-sync").glob("crash-*.log"))


@pytest.mark.parametrize("command, again", [("upgrade", "it resumes"), ("drift", "it starts again"),
                                            ("status", "it starts again")])
def test_ctrl_c_says_whether_the_rerun_resumes(command: str, again: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only upgrade keeps an interrupted run; the wording is declared by each command, not guessed."""
    from click.testing import CliRunner

    from sync import cli
    from sync.commands import drift, status, upgrade
    runner_of = {"upgrade": (upgrade, "run_upgrade_command"), "drift": (drift, "run_drift_command"),
                 "status": (status, "run_status_command")}
    module, name = runner_of[command]

    def interrupted(*args: object, **kwargs: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(module, name, interrupted)
    result = CliRunner().invoke(cli.cli, [command, "--onto", "v2"] if command != "status" else [command])
    assert result.exit_code == 130, result.output
    assert f"interrupted; rerun the same command: {again}" in result.output
