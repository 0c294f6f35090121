"""Resources measured from the process and the file system, not from Python's view (issue 13).

Peak RSS (VmHWM, which counts libgit2's and libcst's native memory that tracemalloc cannot see) of
drift and upgrade on a world with one large overlay stays within a multiple of that file over the
peak of the same run on the tiny world. A real full disk (a small tmpfs) is exit 2, loses nothing of
the user's, and the run resumes once space is freed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sync.demo.world import build_world
from sync.support.parselimit import DEFAULT, ENV
from tests.conftest import git, invoke, snapshot

PROBE = """import sys
from sync.cli import main
try:
    main(sys.argv[2:])
finally:
    with open(sys.argv[1], "w") as out:
        out.write(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
"""
OVERLAY = "third_party/alpha/backend/spec/triton/runtime/autotuner.py"
BIG_BYTES = 24 * 1024 * 1024
MULTIPLE = 20  # generous: measured about 7 (drift) and 10 (upgrade) on this world
RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]


def peak_rss_bytes(tmp_path: Path, name: str, args: list[str]) -> int:
    probe, result = tmp_path / "probe.py", tmp_path / f"{name}.hwm"
    probe.write_text(PROBE)
    run = subprocess.run([sys.executable, str(probe), str(result), *args], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr  # the demo plants findings: 1, never 3
    return int(result.read_text()) * 1024


CPP_OVERLAY = "third_party/beta/backend/spec/lib/Analysis/Alias.cpp"
# Shapes whose parse costs differ (issue 31.18): one big string was cheap; plain statements took 200x the file.
SHAPES = {
    "python-string": (OVERLAY, lambda n: "0123456789abcdef" * 4 + "\n", 'TABLE = """\n', '"""\n'),
    "python-statements": (OVERLAY, lambda n: f"x_{n} = y_{n} + 1\n", "", ""),
    "python-definitions": (OVERLAY, lambda n: f"def f_{n}(a, b=1):\n    return g(a, b, [1, 2], {{'k': a}})\n", "", ""),
    "cpp-statements": (CPP_OVERLAY, lambda n: f"int v_{n} = w_{n} + foo(a, b);\n", "", ""),
}


def with_big_overlay(repo: Path, shape: str = "python-string") -> tuple[str, int]:
    """The overlay of that shape grown to BIG_BYTES; its path and size."""
    relative, line, opening, closing = SHAPES[shape]
    path = repo / relative
    parts, size, number = [path.read_text(), opening], 0, 0
    while size < BIG_BYTES:
        parts.append(line(number))
        size += len(parts[-1])
        number += 1
    path.write_text("".join(parts) + closing)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"a large generated {shape}")
    return relative, path.stat().st_size


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc/self/status (Linux) for VmHWM")
@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("command", ["drift", "upgrade"])
def test_peak_rss_is_bounded_by_the_largest_file(tmp_path: Path, command: str, shape: str) -> None:
    tiny, big = build_world(tmp_path / "tiny"), build_world(tmp_path / "big")
    relative, size = with_big_overlay(big.fork, shape)
    extra = ["-q"] if command == "upgrade" else []
    baseline = peak_rss_bytes(tmp_path, "tiny", [command, *extra, "--repo", str(tiny.fork), *RANGE,
                                                 "--out", str(tmp_path / "tiny-out")])
    peak = peak_rss_bytes(tmp_path, "big", [command, *extra, "--repo", str(big.fork), *RANGE,
                                            "--out", str(tmp_path / "big-out")])
    assert peak > baseline  # the probe measures this process: a larger input must show
    assert peak <= baseline + MULTIPLE * size, (peak, baseline, size)
    document = json.loads((tmp_path / "big-out" / "report.json").read_text())
    skipped = [f["message"] for g in document["groups"] for f in g["findings"]
               if f["kind"] == "analysis-skipped" and f["path"] == relative]
    assert skipped and f"{size} bytes is over the parse limit of {DEFAULT} bytes" in skipped[0]


def test_the_parse_limit_is_configurable(world, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["drift", "--repo", str(world.fork), *RANGE, "--json"]
    monkeypatch.setenv(ENV, "500")  # the demo's files are under 1 KB
    document = json.loads(invoke(*args).output)
    skipped = {f["path"]: f["message"] for g in document["groups"] for f in g["findings"]
               if f["kind"] == "analysis-skipped"}
    by_size = [path for path, message in skipped.items() if "tokens" not in message]  # else over the token budget
    sizes = {path: len(git(world.fork, "show", f"main:{path}").encode()) for path in by_size}
    assert by_size and all(size > 500 for size in sizes.values()), sizes
    assert all(" tokens are over the parse limit's 62 " in message for path, message in skipped.items()
               if path not in by_size)
    monkeypatch.setenv(ENV, "0")  # no limit
    assert "analysis-skipped" not in invoke(*args).output
    monkeypatch.setenv(ENV, "lots")
    result = invoke(*args)
    assert result.exit_code == 2 and result.output.startswith(f"flagtree-sync: error: {ENV}='lots' is not a size")


@pytest.fixture
def tiny_disk(tmp_path: Path):
    if os.geteuid() != 0:
        pytest.skip("a real full disk needs root to mount a small tmpfs")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Take all of disk's free space but about leave bytes."""
    filler = disk / "filler"
    free = shutil.disk_usage(disk).free
    with open(filler, "wb") as out:
        out.truncate(0)
        out.write(b"\0" * max(free - leave, 0))
    return filler


@pytest.mark.parametrize("where", ["repo", "out"])
def test_a_full_disk_is_exit_2_loses_nothing_and_resumes(tmp_path: Path, tiny_disk: Path, where: str) -> None:
    world = build_world(tmp_path / "world")
    repo = world.fork
    if where == "repo":
        repo = tiny_disk / "flagtree"
        shutil.copytree(world.fork, repo, symlinks=True)
        git(repo, "status")  # the copy has new inodes: let git refresh the index's stat cache first
    out = (tiny_disk if where == "out" else tmp_path) / "report"
    before = snapshot(repo)
    filler = fill(tiny_disk, leave=16 * 1024)
    command = [sys.executable, "-m", "sync", "upgrade", "-q", "--repo", str(repo), *RANGE, "--out", str(out)]
    full = subprocess.run(command, capture_output=True, text=True)
    assert full.returncode == 2, (full.returncode, full.stderr)
    assert "no space left on device" in full.stderr.lower()
    assert "Traceback" not in full.stderr
    filler.unlink()  # first: git status itself needs space for its index lock
    after = snapshot(repo)
    # The target branch may already exist (the report is what failed); everything of the user's is as it was.
    after["refs"] = "".join(line for line in after["refs"].splitlines(keepends=True) if " " not in line
                            or not line.startswith("refs/heads/sync/"))
    assert after == before
    resumed = subprocess.run(command, capture_output=True, text=True)
    assert resumed.returncode == 1, resumed.stderr
    assert (out / "report.json").exists()
    assert git(repo, "rev-parse", "--verify", "sync/v3.6.0").strip()


def on_tiny_disk(tmp_path: Path, tiny_disk: Path) -> Path:
    world = build_world(tmp_path / "world")
    repo = tiny_disk / "flagtree"
    shutil.copytree(world.fork, repo, symlinks=True)
    git(repo, "status")  # the copy has new inodes: let git refresh the index's stat cache first
    return repo


@pytest.mark.parametrize("leave_kib", [150, 160, 170, 180])
def test_a_nearly_full_disk_is_exit_2_and_the_upgrade_resumes(tmp_path: Path, tiny_disk: Path, leave_kib: int) -> None:
    """Issue 31.10: with 150-180 KiB left, libgit2 reported a commit written that it never wrote ('target OID
    ... doesn't exist', exit 3), lost the errno ('no error'), and the crash log itself hit ENOSPC."""
    repo = on_tiny_disk(tmp_path, tiny_disk)
    before = snapshot(repo)
    filler = fill(tiny_disk, leave=leave_kib * 1024)
    command = [sys.executable, "-m", "sync", "upgrade", "-q", "--repo", str(repo), *RANGE, "--out",
               str(tiny_disk / "report")]
    full = subprocess.run(command, capture_output=True, text=True)
    assert full.returncode == 2, (full.returncode, full.stderr)
    assert "no space left on device" in full.stderr.lower() and full.stderr.count("\n") == 1, full.stderr
    filler.unlink()
    after = snapshot(repo)
    after["refs"] = "".join(line for line in after["refs"].splitlines(keepends=True)
                            if not line.startswith("refs/heads/sync/"))
    assert after == before
    resumed = subprocess.run(command, capture_output=True, text=True)
    assert resumed.returncode == 1, resumed.stderr
    assert (tiny_disk / "report" / "report.json").exists()


@pytest.mark.parametrize("leave_kib", [0, 20, 100])
def test_drift_on_a_nearly_full_disk_is_exit_2(tmp_path: Path, tiny_disk: Path, leave_kib: int) -> None:
    repo = on_tiny_disk(tmp_path, tiny_disk)
    fill(tiny_disk, leave=leave_kib * 1024)
    done = subprocess.run([sys.executable, "-m", "sync", "drift", "--repo", str(repo), *RANGE], capture_output=True,
                          text=True)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "no space left on device" in done.stderr.lower() and done.stderr.count("\n") == 1, done.stderr
