"""C++ guards in a trunk file that holds committed conflict markers (upgrade --on-conflict markers commits them):
the guards are still read, with both sides of each conflict kept, and the report says the file was conflicted.

Seen on the 3.4 -> 3.5 move: FlagTree closes a whole-file #ifndef at the file's end, upstream appends functions
there, and the conflict left the guard's #endif on FlagTree's side only."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from sync.drift.analyses.cppguards import both_sides
from sync.cli import cli
from sync.model import Finding
from tests.conftest import git
from tests.drift_helpers import drift_of
from tests.test_real_structures import small_world

B = "third_party/b/backend/spec/"
BASE = "namespace t {\nint one(int a) { return a; }\n\nint two(int b) { return b; }\n}\n"
# Upstream adds mid() in the middle (merges cleanly) and three() at the end (where FlagTree closes its guard).
UPSTREAM = ("namespace t {\nint one(int a) { return a; }\n\nint mid(int m) { return m; }\n\n"
            "int two(int b) { return b; }\n}\n\nint three(int c) { return c; }\n")
FORK_TRUNK = "#ifndef FLAGTREE_SPEC_Pipe\n" + BASE + "\n#endif // FLAGTREE_SPEC_Pipe\n"
LIBRARY = "namespace t {\nint one(int a) { return -a; }\nint two(int b) { return -b; }\n}\n"


# The header other files call them through: a default nothing outside the guard can call needs no replacement.
HEADER = "namespace t {\nint one(int a);\nint two(int b);\n}\n"
NEW_HEADER = "namespace t {\nint one(int a);\nint mid(int m);\nint two(int b);\n}\nint three(int c);\n"
# Another file calls them: declared and called elsewhere, each needs a definition in the backend's build.
CALLER = {"lib/Caller.cpp": '#include "t/Pipe.h"\nint all() { return t::mid(1) + three(2); }\n'}


def _world(tmp_path: Path) -> Path:
    fork = {B + "include/flagtree_spec.h": "#define FLAGTREE_SPEC_Pipe\n", B + "lib/Pipe.cpp": LIBRARY,
            "lib/Pipe.cpp": FORK_TRUNK, "include/t/Pipe.h": HEADER, "python/triton/__init__.py": ""}
    return small_world(tmp_path, {"lib/Pipe.cpp": BASE, "include/t/Pipe.h": HEADER, "python/triton/__init__.py": ""},
                       {"lib/Pipe.cpp": UPSTREAM, "include/t/Pipe.h": NEW_HEADER, **CALLER}, fork)


def _upgraded_with_markers(repo: Path, style: str) -> None:
    """Branch sync: FlagTree's commit cherry-picked onto v2 with its conflict committed as markers."""
    git(repo, "checkout", "-q", "-b", "sync", "v2")
    result = git_status(repo, "-c", f"merge.conflictStyle={style}", "cherry-pick", "main")
    assert result != 0  # the fixture must conflict, as the real file did
    assert "<<<<<<<" in (repo / "lib/Pipe.cpp").read_text()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "replayed with markers")
    git(repo, "checkout", "-q", "main")


def git_status(repo: Path, *args: str) -> int:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True).returncode


def _missing(findings: list[Finding]) -> list[str]:
    return sorted(f.message.split(" defines no ")[-1] for f in findings if f.kind == "guard-replacement-missing")


@pytest.mark.parametrize("style", ["merge", "diff3"])
def test_guards_in_a_trunk_file_with_committed_markers_are_still_read(tmp_path: Path, style: str) -> None:
    repo = _world(tmp_path)
    _upgraded_with_markers(repo, style)
    findings = drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main", target="sync").findings
    # Both functions upstream added inside the guard need replacements: mid() merged cleanly, three() sits in
    # the conflict, before FlagTree's #endif.
    assert _missing(findings) == ["mid", "three"]
    notes = [f for f in findings if f.kind == "analysis-conflicted"]
    assert [(f.path, f.backend) for f in notes] == [("lib/Pipe.cpp", "b")]
    assert "conflict markers" in notes[0].message and "both sides" in notes[0].message
    assert not [f for f in findings if f.kind == "guard-lost"]


def test_upgrade_reads_the_conflict_it_committed(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(repo), "--from", "v1", "--onto", "v2", "--branch",
                                      "main", "--out", str(tmp_path / "out"), "--quiet"])
    assert result.exit_code == 1, result.output
    assert "<<<<<<<" in git(repo, "show", "sync/v2:lib/Pipe.cpp")
    document = json.loads((tmp_path / "out" / "report.json").read_text())
    findings = [f for group in document["groups"] for f in group["findings"]]
    missing = sorted(f["message"].split(" defines no ")[-1] for f in findings
                     if f["kind"] == "guard-replacement-missing")
    assert missing == ["mid", "three"]
    assert [f["path"] for f in findings if f["kind"] == "analysis-conflicted"] == ["lib/Pipe.cpp"]


def test_a_clean_file_gets_no_note(tmp_path: Path) -> None:
    fork = {B + "include/flagtree_spec.h": "#define FLAGTREE_SPEC_Pipe\n", B + "lib/Pipe.cpp": LIBRARY,
            "lib/Pipe.cpp": FORK_TRUNK, "python/triton/__init__.py": ""}
    upstream = {"lib/Pipe.cpp": BASE.replace("int two", "int mid(int m) { return m; }\n\nint two")}
    repo = small_world(tmp_path, {"lib/Pipe.cpp": BASE, "include/t/Pipe.h": HEADER, "python/triton/__init__.py": ""},
                       {**upstream, "include/t/Pipe.h": NEW_HEADER, **CALLER}, {**fork, "include/t/Pipe.h": HEADER})
    findings = drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
    assert _missing(findings) == ["mid"]
    assert not [f for f in findings if f.kind == "analysis-conflicted"]


def test_both_sides_keeps_each_sides_lines_where_the_file_has_them() -> None:
    text = "a\n<<<<<<< ours\nb\n||||||| base\nold\n=======\nc\n>>>>>>> theirs\nd\n"
    # Marker and base lines become empty lines: line numbers stay those of the committed file.
    assert both_sides(text) == "a\n\nb\n\n\n\nc\n\nd\n"
    assert both_sides("a\n=======\nb\n") is None  # a lone separator is no conflict


def test_markers_committed_on_the_flagtree_branch_are_read_and_named(tmp_path: Path) -> None:
    marked = ("#ifndef FLAGTREE_SPEC_Pipe\n" + BASE + "<<<<<<< HEAD\nint extra(int e) { return e; }\n=======\n\n"
              "#endif // FLAGTREE_SPEC_Pipe\n>>>>>>> flagtree\n")
    header = HEADER + "int extra(int e);\n"  # FlagTree's extra, called through the header
    fork = {B + "include/flagtree_spec.h": "#define FLAGTREE_SPEC_Pipe\n", B + "lib/Pipe.cpp": LIBRARY,
            "lib/Pipe.cpp": marked, "include/t/Pipe.h": header, "python/triton/__init__.py": "",
            "lib/Caller.cpp": '#include "t/Pipe.h"\nint all() { return t::extra(1); }\n'}
    repo = small_world(tmp_path, {"lib/Pipe.cpp": BASE, "python/triton/__init__.py": ""}, {"README.md": "v2\n"}, fork)
    findings = drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
    notes = [f.message for f in findings if f.kind == "analysis-conflicted"]
    # Upstream left the file alone, so the upgraded tree carries the same markers: each tree is named once.
    assert sorted(note.split(" on ")[1].split(";")[0] for note in notes) == ["the FlagTree branch", "the upgraded tree"]
    assert _missing(findings) == ["extra"]  # read inside the guard, before FlagTree's #endif
