"""--out may replace only a report this tool wrote: never the repository, a parent of it, its git
directory or somebody's directory; it is checked before any replay, and reports get the user's umask."""
from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from sync.support.atomic import DIRECTORY_MARKER, publish_directory
from sync.cli import cli
from sync.errors import SyncError
from tests.conftest import git, snapshot
from tests.conftest import invoke as run_cli

UPGRADE = ["upgrade", "--from", "v3.5.0", "--onto", "v3.6.0", "-q"]
DRIFT = ["drift", "--from", "v3.5.0", "--onto", "v3.6.0"]


def invoke(args: list[str]):
    return CliRunner().invoke(cli, args)


def assert_no_run_left(repo: Path) -> None:
    assert "sync/v3.6.0" not in git(repo, "branch", "--list")
    assert not (repo / ".git" / "flagtree-sync" / "upgrade.json").exists()


def test_out_equal_to_the_repository_is_refused_before_the_replay(world) -> None:
    (world.fork / "report.json").write_text("{}\n")
    git(world.fork, "add", "report.json")
    git(world.fork, "commit", "-qm", "a file named like the report")
    result = invoke([*UPGRADE, "--repo", str(world.fork), "--out", str(world.fork)])
    assert result.exit_code == 2, result.output
    assert "is the repository or a directory above it" in result.output
    assert (world.fork / ".git").is_dir() and (world.fork / "report.json").exists()
    assert_no_run_left(world.fork)


@pytest.mark.parametrize("where", ["parent", "git-dir", "inside-git-dir"])
def test_out_above_or_inside_the_repository_is_refused(world, where: str) -> None:
    out = {"parent": world.root, "git-dir": world.fork / ".git", "inside-git-dir": world.fork / ".git" / "rep"}[where]
    result = invoke([*UPGRADE, "--repo", str(world.fork), "--out", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert_no_run_left(world.fork)
    assert (world.fork / ".git" / "HEAD").exists()


def test_directory_with_a_report_json_but_no_marker_is_refused(world) -> None:
    out = world.root / "mine"
    out.mkdir()
    (out / "report.json").write_text("{}")
    (out / "notes.txt").write_text("keep me")
    result = invoke([*DRIFT, "--repo", str(world.fork), "--out", str(out)])
    assert result.exit_code == 2 and "not a flagtree-sync report directory" in result.output, result.output
    assert (out / "notes.txt").read_text() == "keep me"


def test_earlier_report_is_replaced_but_not_with_a_foreign_file_in_it(world) -> None:
    out = world.root / "report"
    assert invoke([*DRIFT, "--repo", str(world.fork), "--out", str(out)]).exit_code == 1
    marker = json.loads((out / DIRECTORY_MARKER).read_text())
    assert set(marker["files"]) == {p.name for p in out.iterdir()} - {DIRECTORY_MARKER}
    assert invoke([*DRIFT, "--repo", str(world.fork), "--out", str(out)]).exit_code == 1  # ours: replaced
    (out / "notes.txt").write_text("mine")
    result = invoke([*DRIFT, "--repo", str(world.fork), "--out", str(out)])
    assert result.exit_code == 2 and "notes.txt" in result.output
    assert (out / "notes.txt").read_text() == "mine"


def test_symlinked_out_is_refused(world) -> None:
    elsewhere = world.root / "elsewhere"
    elsewhere.mkdir()
    (world.root / "link").symlink_to(elsewhere)
    result = invoke([*DRIFT, "--repo", str(world.fork), "--out", str(world.root / "link")])
    assert result.exit_code == 2 and "symbolic link" in result.output


def test_report_directory_gets_the_umask_not_0700(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        publish_directory(tmp_path / "r", {"report.json": "{}"})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "r").stat().st_mode) == 0o755


def test_leftover_staging_directory_is_removed_only_when_it_is_ours(tmp_path: Path) -> None:
    users = tmp_path / ".r.partial-mine"
    users.mkdir()
    (users / "thesis.tex").write_text("years of work")
    ours = tmp_path / ".r.partial-killed"
    ours.mkdir()
    (ours / DIRECTORY_MARKER).write_text(json.dumps({"schema": "flagtree-sync/report-dir/1",
                                                      "files": ["report.json", "summary.md"]}))
    (ours / "report.json").write_text("{")
    publish_directory(tmp_path / "r", {"report.json": "{}"})
    assert (users / "thesis.tex").exists() and not ours.exists()


def test_report_file_names_must_be_plain(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        publish_directory(tmp_path / "r", {"../x.md": ""})
    with pytest.raises(SyncError):
        (tmp_path / "file").write_text("x")
        publish_directory(tmp_path / "file", {"a.md": ""})


def test_out_on_a_mount_point_is_refused_before_the_replay(world, tmp_path: Path, monkeypatch) -> None:
    """The report replaces --out by a rename, which a mount point refuses (EBUSY): say so before any work."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    if os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                                            capture_output=True).returncode == 0:
        cleanup = ["umount", str(mount)]
    else:  # without root: a directory that os.path.ismount calls one
        real = os.path.ismount
        monkeypatch.setattr(os.path, "ismount", lambda path: Path(path) == mount or real(path))
        cleanup = ["true"]
    try:
        before = snapshot(world.fork)
        result = run_cli("upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                         "--out", str(mount))
        assert result.exit_code == 2 and "is a mount point" in result.output, result.output
        assert snapshot(world.fork) == before and not any(mount.iterdir())
        assert run_cli("drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                      "--out", str(mount)).exit_code == 2
    finally:
        subprocess.run(cleanup, check=True)
