"""What every command does with a bug, a closed pipe and its crash log (sync/cli.py's wrapper)."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from sync.cli import _reported

ROOT = Path(__file__).resolve().parents[1]


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
        _failing(RuntimeError("boom"))(repo_path=".")  # as click passes --repo's default
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


def test_a_command_without_a_repository_leaves_its_log_out_of_the_current_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 31.11: demo (or check) crashing while the shell sits in some repository wrote its log there."""
    import tempfile
    from click.testing import CliRunner

    from sync import cli
    from sync.commands import demo
    repo, temporary = tmp_path / "repo", tmp_path / "tmp"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    temporary.mkdir()
    monkeypatch.chdir(repo)
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))

    def bug(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(demo, "build_world", bug)
    result = CliRunner().invoke(cli.cli, ["demo", str(tmp_path / "d"), "--no-run"])
    assert result.exit_code == 3
    assert not (repo / ".git" / "flagtree-sync").exists()
    assert [log.name.startswith("crash-") for log in temporary.iterdir()] == [True]


def test_demo_into_a_read_only_place_is_exit_2(tmp_path: Path) -> None:
    """Issue 31.11: it exited 3 (a raw PermissionError/EROFS)."""
    place = tmp_path / "ro"
    place.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(place)],
                                                   capture_output=True).returncode == 0
    if not mounted:
        if os.geteuid() == 0:
            pytest.skip("root ignores file modes and no read-only tmpfs could be mounted")
        place.chmod(0o555)
    try:
        for target in (place / "demo", place):
            run = subprocess.run([sys.executable, "-m", "sync", "demo", str(target), "--no-run"], cwd=tmp_path,
                                 capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
            assert run.returncode == 2, run.stderr
            assert run.stderr.startswith("flagtree-sync: error: cannot build the demo in ") and run.stderr.count("\n") == 1
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(place)], check=False)
        else:
            place.chmod(0o755)
