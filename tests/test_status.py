"""status: the upgrade report of sync/<NEW> re-derived after hand resolutions committed on it."""
from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from sync.cli import cli
from sync.jobs.status import StatusOptions, refresh_status

from tests.conftest import git

MARKER = re.compile(r"^(<<<<<<<|\|\|\|\|\|\|\||=======|>>>>>>>)")


def upgraded(world) -> None:
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--onto", "v3.6.0", "-q"])
    assert result.exit_code == 1, result.output


def resolve_on_branch(world, tmp_path: Path, keep: list[str], delete: list[str]) -> None:
    """A person's fix, committed on the branch: markers dropped (both sides kept), deleted files removed."""
    checkout = tmp_path / "checkout"
    git(world.fork, "worktree", "add", "-q", str(checkout), "sync/v3.6.0")
    for path in keep:
        lines, base = [], False
        for line in (checkout / path).read_text().splitlines(keepends=True):
            if MARKER.match(line):
                base = line.startswith("|||||||")
                continue
            if not base:
                lines.append(line)
        (checkout / path).write_text("".join(lines))
    git(checkout, "add", *keep)
    if delete:
        git(checkout, "rm", "-q", *delete)
    git(checkout, "commit", "-q", "-m", "Resolve the upgrade conflicts")


def status(world, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["status", "--repo", str(world.fork), "--target", "sync/v3.6.0", *extra])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_status_right_after_the_upgrade_finds_every_conflict_open(world, tmp_path: Path) -> None:
    upgraded(world)
    code, output = status(world, "-q", "--out", str(tmp_path / "report"))
    assert code == 1, output
    assert ": 5 open, 0 resolved" in output
    document = json.loads((tmp_path / "report" / "report.json").read_text())
    assert document["upgrade"]["from"]["ref"] == "v3.5.0"  # from the pin in the replayed commit
    assert document["upgrade"]["onto"]["ref"] == "v3.6.0"  # from the branch's pin
    resolutions = {c["path"]: c["resolution"] for g in document["groups"] for c in g["conflicts"]}
    assert set(resolutions.values()) == {"markers"} and len(resolutions) == 5


def test_resolved_files_become_manual_and_their_groups_unblock(world, tmp_path: Path) -> None:
    upgraded(world)
    resolve_on_branch(world, tmp_path, ["CMakeLists.txt", "python/src/ir.cc"], ["python/triton/ops/matmul.py"])
    report = refresh_status(str(world.fork), StatusOptions(target="sync/v3.6.0"))
    by_path = {c.path: c.resolution for commit in report.commits for c in commit.conflicts}
    assert by_path == {"CMakeLists.txt": "manual", "python/src/ir.cc": "manual",
                       "python/triton/ops/matmul.py": "manual",
                       "python/triton/language/__init__.py": "markers",  # still holds markers
                       "python/triton/ops/__init__.py": "markers"}  # still the FlagTree side, untouched
    verdicts = {group.name: group.verdict for group in report.groups}
    assert verdicts["flagtree-core"] == "clean" and verdicts["shared-trunk"] == "clean"
    assert verdicts["alpha"] == "blocked"
    assert not report.releasable
    code, output = status(world, "--out", str(tmp_path / "report"))
    assert code == 1 and ": 2 open, 3 resolved" in output
    summary = (tmp_path / "report" / "summary.md").read_text()
    assert "| [flagtree-core](flagtree-core.md) | core | clean | 0 |" in summary


def test_status_needs_a_range_it_can_find(world) -> None:
    code, output = status(world)  # no such branch yet
    assert code == 2 and output.startswith("flagtree-sync: error:")
    upgraded(world)
    result = CliRunner().invoke(cli, ["status", "--repo", str(world.fork), "--target", "main"])
    assert result.exit_code == 2 and "flagtree-sync: error:" in result.output and "pass --branch" in result.output


def _upstream_deletes_a_file_flagtree_edits(tmp_path: Path, edits: int) -> Path:
    """v1: a.py and keep.py; v2 (upstream) deletes a.py; branch fork edits a.py in `edits` commits on v1."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    lines = "".join(f"line {n}\n" for n in range(20))
    (repo / "a.py").write_text(lines)
    (repo / "keep.py").write_text(lines)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "tag", "v1")
    git(repo, "rm", "-q", "a.py")
    git(repo, "commit", "-qm", "upstream drops a.py")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "-b", "fork", "v1")
    for number in range(1, edits + 1):
        (repo / "a.py").write_text(lines + f"flagtree {number}\n")
        git(repo, "commit", "-qam", f"FlagTree edit {number}")
    return repo


def test_a_delete_modify_conflict_a_later_pick_touched_stays_open(tmp_path: Path) -> None:
    """Upstream deletes a.py, FlagTree edits it in two commits: the first pick conflicts (the markers policy
    keeps FlagTree's file), the second changes that file cleanly. Nobody resolved anything: still open."""
    from sync.jobs import UpgradeOptions, run_upgrade
    repo = _upstream_deletes_a_file_flagtree_edits(tmp_path, 2)
    run_upgrade(str(repo), old="v1", onto="v2", source_branch="fork", options=UpgradeOptions())
    result = CliRunner().invoke(cli, ["status", "--repo", str(repo), "--target", "sync/v2"])
    assert result.exit_code == 1, result.output  # fork has no pin, yet the branch carries its range:
    fork = git(repo, "rev-parse", "fork").strip()
    assert f"(v1..{fork[:9]} onto v2)" in result.output
    git(repo, "branch", "old-style", "sync/v2~1")  # as upgrades made it before: no pin commit
    result = CliRunner().invoke(cli, ["status", "--repo", str(repo), "--target", "old-style"])
    assert result.exit_code == 2 and "has no flagtree-upstream.toml at its tip" in result.output, result.output
    assert "does not look like" not in result.output  # upgrade made it: the pin is what is missing
    result = CliRunner().invoke(cli, ["status", "--repo", str(repo), "--target", "old-style", "--onto", "v2"])
    assert result.exit_code == 2 and "has no usable flagtree-upstream.toml: pass --from OLD" in result.output
    assert "does not look like" not in result.output, result.output
    git(repo, "checkout", "-q", "old-style")  # on the upgraded branch: no advice to go there
    result = CliRunner().invoke(cli, ["status", "--repo", str(repo)])
    assert result.exit_code == 2 and "run status on the upgraded branch" not in result.output, result.output
    git(repo, "-c", "user.name=u", "-c", "user.email=u@e", "commit", "-q", "--allow-empty", "-m", "hand fix")
    result = CliRunner().invoke(cli, ["status", "--repo", str(repo)])  # nor with hand fixes on top
    assert result.exit_code == 2 and "run status on the upgraded branch" not in result.output, result.output
    git(repo, "checkout", "-q", "fork")
    result = CliRunner().invoke(cli, ["status", "--repo", str(repo)])  # the FlagTree branch: go there
    assert result.exit_code == 2 and "run status on the upgraded branch" in result.output, result.output
    git(repo, "checkout", "-q", "fork")
    report = refresh_status(str(repo), StatusOptions(target="sync/v2", old="v1", onto="v2"))
    found = [(c.path, c.kind, c.resolution) for commit in report.commits for c in commit.conflicts]
    assert found == [("a.py", "deleted-upstream", "markers")]
    git(repo, "checkout", "-q", "sync/v2")
    git(repo, "rm", "-q", "a.py")
    git(repo, "commit", "-qm", "Resolve: follow upstream")
    report = refresh_status(str(repo), StatusOptions(target="sync/v2", old="v1", onto="v2"))
    assert [c.resolution for commit in report.commits for c in commit.conflicts] == ["manual"]


def test_a_delete_modify_conflict_resolved_at_a_stop_stays_resolved(tmp_path: Path) -> None:
    """Seen by a trial user: at a stop, `git add` kept the file (the side the markers policy keeps too); the
    upgrade's report said resolved, status said open. The pick's commit has no conflict trailer: a person
    decided it."""
    repo = _upstream_deletes_a_file_flagtree_edits(tmp_path, 1)
    args = ["upgrade", "--repo", str(repo), "--from", "v1", "--onto", "v2", "--branch", "fork", "-q"]
    assert CliRunner().invoke(cli, [*args, "--on-conflict", "stop"]).exit_code == 4
    worktree = repo / ".git" / "flagtree-sync" / "worktree"
    git(worktree, "add", "a.py")  # keep FlagTree's file
    finished = CliRunner().invoke(cli, ["upgrade", "--repo", str(repo), "--continue", "-q"])
    assert finished.exit_code in (0, 1), finished.output
    report = refresh_status(str(repo), StatusOptions(target="sync/v2", old="v1", onto="v2"))
    assert [(c.path, c.resolution) for commit in report.commits for c in commit.conflicts] == [("a.py", "manual")]


def test_a_delete_modify_conflict_kept_as_is_is_resolved_by_a_trailer(tmp_path: Path) -> None:
    """Seen by a trial user: a file the replay kept that is right as it is could never count as resolved (only a
    change to it did). A commit after the replay naming it in a FlagTree-Sync-Resolved line resolves it."""
    from sync.jobs import UpgradeOptions, run_upgrade
    repo = _upstream_deletes_a_file_flagtree_edits(tmp_path, 1)
    run_upgrade(str(repo), old="v1", onto="v2", source_branch="fork", options=UpgradeOptions())
    status = lambda: [c.resolution for commit in refresh_status(
        str(repo), StatusOptions(target="sync/v2", old="v1", onto="v2")).commits for c in commit.conflicts]
    assert status() == ["markers"]
    git(repo, "checkout", "-q", "sync/v2")
    commit = ["-c", "user.name=u", "-c", "user.email=u@e", "commit", "-q", "--allow-empty", "-m"]
    git(repo, *commit, "Keep b.py", "-m", "FlagTree-Sync-Resolved: b.py")  # another file: a.py stays open
    assert status() == ["markers"]
    git(repo, *commit, "Keep a.py as FlagTree has it", "-m", "FlagTree-Sync-Resolved: a.py")
    assert status() == ["manual"]
