"""Escape sequences in repository text never reach the terminal raw (issue 31.16).

A file name or a review reason holding OSC (window title), CSI (clear screen, also the one-byte C1 form),
BEL or a bidi override is printed escaped by check, upgrade's "[n/N] ... conflicts:" lines and drift.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sync.demo.content import FORK_COMMITS, UPSTREAM_BASE, UPSTREAM_COMMITS
from sync.demo.world import build_scripted_world
from tests.conftest import git

EVIL = "x\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e\ry.py"
RAW = [b"\x1b", b"\x07", b"\r", "\x9b".encode(), "\u202e".encode()]
RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return subprocess.run([sys.executable, "-m", "sync", *args], capture_output=True, cwd=cwd, env=env)


def assert_escaped(done: subprocess.CompletedProcess[bytes]) -> str:
    shown = done.stdout + done.stderr
    assert b"Traceback" not in shown, shown
    assert not [raw for raw in RAW if raw in shown], shown
    return shown.decode()


def test_printable_escapes_controls_and_keeps_text() -> None:
    from sync.support.terminal import printable, printable_lines
    assert printable("a\x1b[2Jb\n") == "a\\u001b[2Jb\\u000a"
    assert printable_lines("é\tb\n\x9b") == "é\tb\n\\u009b"
    assert json.loads(f'"{printable_lines(chr(0x9b) + chr(0x202e))}"') == "\x9b\u202e"  # JSON stays the same text


def test_check_prints_a_hostile_file_name_escaped(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "python/triton").mkdir(parents=True)
    (tree / "python/triton/__init__.py").write_text("")
    (tree / "python/triton" / EVIL).write_text("<<<<<<< a\nA = 1\n=======\nA = 2\n>>>>>>> b\n")
    done = run("check", str(tree))
    assert done.returncode == 1
    assert "x\\u001b]0;pwned\\u0007" in assert_escaped(done)


TRUNK = "python/triton/runtime/" + EVIL
OVERLAY = "third_party/alpha/backend/spec/triton/runtime/" + EVIL


def hostile_world(root: Path):
    """Upstream changes a trunk file with a hostile name; FlagTree changes it too, and overlays it in alpha."""
    return build_scripted_world(root, "Triton", {**UPSTREAM_BASE, TRUNK: "a = 0\nb = 0\n"},
                                [*UPSTREAM_COMMITS, ("evil", {TRUNK: "a = 1\nb = 0\n"})],
                                [*FORK_COMMITS, ("[CORE] evil", {TRUNK: "a = 2\nb = 0\n"}),
                                 ("[alpha] evil", {OVERLAY: "a = 0\nb = 3\n"})])


def test_upgrade_conflict_lines_print_a_hostile_file_name_escaped(tmp_path: Path) -> None:
    done = run("upgrade", "--repo", str(hostile_world(tmp_path / "w").fork), *RANGE)
    assert done.returncode == 1
    shown = assert_escaped(done)
    assert "conflicts: " in shown and "x\\u001b]0;pwned" in shown


def test_drift_prints_hostile_names_and_reasons_escaped(tmp_path: Path) -> None:
    world = hostile_world(tmp_path / "w")
    reviewed = run("suppress", *RANGE, "--kind", "overlay-conflicting", "--path",
                   "third_party/alpha/backend/spec/triton/runtime/autotuner.py", "--reason", "ok \x1b]0;t\x07 \x9b2J",
                   cwd=world.fork)
    assert reviewed.returncode == 0, reviewed.stderr
    written = [world.fork / line[3:] for line in git(world.fork, "status", "--porcelain", "-uall").splitlines()]
    assert written and all(b"\x1b" not in path.read_bytes() and "\x9b".encode() not in path.read_bytes()
                           for path in written), written  # issue 47.12: the record escapes them too
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "review")
    for output in ([], ["--format", "sarif"], ["--format", "github"], ["--json"]):
        done = run("drift", "--repo", str(world.fork), *RANGE, *output)
        assert done.returncode == 1
        shown = assert_escaped(done)
        assert "pwned" in shown and "2J" in shown
        if output[-1:] in (["sarif"], ["--json"]):
            assert "\x9b2J" in json.dumps(json.loads(done.stdout), ensure_ascii=False)  # the same text, as JSON escapes


SUBJECT_EVIL = "[CORE] evil \x1b]0;retitled\x07 \x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ \x9b2J"
WRITTEN_RAW = [b"\x1b", b"\x07", "\x9b".encode()]


def test_report_files_escape_controls_of_commit_subjects(tmp_path: Path) -> None:
    """Issue 47.12: a commit subject with ESC, BEL, an OSC-8 link and a C1 CSI reaches summary.md, the group
    pages, index.html and report.json only escaped; report.json stays valid JSON of the same text."""
    world = build_scripted_world(tmp_path / "w", "Triton", {**UPSTREAM_BASE, TRUNK: "a = 0\nb = 0\n"},
                                 [*UPSTREAM_COMMITS, ("evil", {TRUNK: "a = 1\nb = 0\n"})],
                                 [*FORK_COMMITS, (SUBJECT_EVIL, {TRUNK: "a = 2\nb = 0\n"})])
    out = tmp_path / "report"
    done = run("upgrade", "--repo", str(world.fork), *RANGE, "--out", str(out))
    assert done.returncode == 1, done.stderr
    written = {path.name: path.read_bytes() for path in out.iterdir()}
    assert {"summary.md", "index.html", "report.json", "shared-trunk.md"} <= set(written)
    for name, data in written.items():
        assert not [raw for raw in WRITTEN_RAW if raw in data], (name, data[:2000])
    assert b"retitled" in written["summary.md"] and b"retitled" in written["shared-trunk.md"]
    document = json.loads(written["report.json"])
    assert SUBJECT_EVIL in [commit["summary"] for commit in document["commits"]]
