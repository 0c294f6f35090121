"""The 3-way blob merge calls libgit2 through pygit2's private cffi handle: fail loudly when pygit2
stops exposing what sync/git/merge.py calls, or when the installed pygit2 is outside the pin."""
from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pygit2
from pygit2 import ffi
from pygit2.ffi import C

from sync.git.merge import merge_blobs

ROOT = Path(__file__).resolve().parents[1]


def _pin() -> tuple[tuple[int, ...], tuple[int, ...]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    spec = next(dep for dep in project["dependencies"] if dep.startswith("pygit2"))
    low = re.search(r">=\s*([\d.]+)", spec)
    high = re.search(r"<\s*([\d.]+)", spec)
    assert low and high, f"pygit2 needs a lower and an upper bound in pyproject.toml, got {spec!r}"
    return tuple(map(int, low[1].split("."))), tuple(map(int, high[1].split(".")))


def test_installed_pygit2_is_inside_the_pin() -> None:
    low, high = _pin()
    installed = tuple(int(part) for part in re.findall(r"\d+", version("pygit2"))[:3])
    assert low <= installed < high, f"pygit2 {version('pygit2')} is outside the pin {low}..{high}"


def test_pygit2_still_exposes_the_private_merge_api() -> None:
    for name in ("git_merge_file_from_index", "git_merge_file_result_free"):
        assert hasattr(C, name), f"pygit2's ffi lost C.{name}: sync/git/merge.py must be ported"
    options = ffi.new("git_merge_file_options *")
    for field in ("version", "ancestor_label", "our_label", "their_label", "favor", "flags"):
        assert hasattr(options, field), f"git_merge_file_options lost field {field}"
    result = ffi.new("git_merge_file_result *")
    for field in ("automergeable", "ptr", "len"):
        assert hasattr(result, field), f"git_merge_file_result lost field {field}"
    assert callable(getattr(pygit2.IndexEntry, "_to_c", None)), "pygit2.IndexEntry._to_c is gone"


def test_the_private_call_still_merges(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    base, ours, theirs = (repo.create_blob(text) for text in (b"a\nb\nc\n", b"A\nb\nc\n", b"a\nb\nC\n"))
    assert merge_blobs(repo, "f", base, ours, theirs).data == b"A\nb\nC\n"
    conflict = merge_blobs(repo, "f", base, ours, repo.create_blob(b"X\nb\nc\n"), ("base", "ours", "theirs"))
    assert not conflict.clean and conflict.hunks[0].ours == "A\n" and conflict.hunks[0].theirs == "X\n"
