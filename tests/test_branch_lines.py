"""Issue 45: every finding's path and line are on the branch the user edits (the upgraded one), not the source."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from sync.drift.branchlines import moved_line
from sync.git import Hunk
from tests.conftest import git
from tests.drift_helpers import drift_of, fork_world
from tests.test_symbols import commit

HEADER = "namespace mlir::triton {\nint legacyHelper(int v);\nint keptHelper(int v);\n}\n"
PASS = "".join(f"int filler{n}();\n" for n in range(1, 9))  # 8 lines of upstream's own


def _hunk(old_start: int, removed: list[str], new_start: int, added: list[str]) -> Hunk:
    return Hunk(old_start, len(removed), new_start, len(added), tuple(removed), tuple(added))


def test_a_line_shifts_by_the_hunks_above_and_follows_its_text_inside_a_hunk() -> None:
    hunks = (_hunk(2, [], 3, ["a\n", "b\n"]),          # two lines inserted after line 2
             _hunk(5, ["x\n", "use\n"], 7, ["use\n"]),   # line 5 dropped, line 6 kept as the hunk's only line
             _hunk(9, ["fixed(a)\n"], 10, ["fixed(a, b)\n"]),
             _hunk(14, ["dropped\n"], 14, []))       # deleted, nothing in its place
    assert moved_line(hunks, 1) == 1 and moved_line(hunks, 3) == 5
    assert moved_line(hunks, 6) == 7        # its text is among the hunk's new lines
    assert moved_line(hunks, 8) == 9        # below: shifted by +2 then -1
    assert moved_line(hunks, 9) == 10       # rewritten in place: the line that replaced it
    assert moved_line(hunks, 12) == 13
    assert moved_line(hunks, 14) is None    # deleted from the branch



def _world(tmp_path: Path, rename: bool) -> SimpleNamespace:
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"include/triton/Utility.h": HEADER, "lib/Pass.cpp": PASS}, "v1")
    git(repo, "tag", "v1")
    use = PASS.replace("int filler5();\n", "int filler5();\nint flag() { return legacyHelper(1); }\n")
    commit(repo, {"lib/Pass.cpp": use}, "[FlagTree] call the helper")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    header = HEADER.replace("int legacyHelper(int v);\n", "")
    moved = "".join(f"int added{n}();\n" for n in range(10)) + PASS  # 10 lines above FlagTree's
    if rename:
        (repo / "lib/Pass.cpp").unlink()
        commit(repo, {"include/triton/Utility.h": header, "lib/Transforms/Pass.cpp": PASS + "int tail();\n"}, "v2")
    else:
        commit(repo, {"include/triton/Utility.h": header, "lib/Pass.cpp": moved}, "v2")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "-b", "sync/v2", "v2")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "cherry-pick", "main")
    git(repo, "checkout", "-q", "main")
    return fork_world(repo)


def _removed(world: SimpleNamespace, target: str | None) -> dict:
    findings = drift_of(world, "v1", "v2", "main", target=target, symbols=True).findings
    return next(f for f in findings if f.kind == "symbol-removed" and f.details.get("declaration") == "legacyHelper")


def test_findings_of_an_upgraded_branch_point_at_its_lines(tmp_path: Path) -> None:
    world = _world(tmp_path, rename=False)
    on_source = _removed(world, None)  # no upgraded branch: the source branch is the one edited
    assert (on_source.path, on_source.line, on_source.details["sites"]) == ("lib/Pass.cpp", 6, ["lib/Pass.cpp:6"])
    found = _removed(world, "sync/v2")
    assert (found.path, found.line, found.details["sites"]) == ("lib/Pass.cpp", 16, ["lib/Pass.cpp:16"])
    assert "lib/Pass.cpp:16" in found.message and "lib/Pass.cpp:6" not in found.message
    branch_text = git(world.fork, "show", "sync/v2:lib/Pass.cpp").splitlines()
    assert "legacyHelper" in branch_text[found.line - 1]


def test_a_file_upstream_renamed_is_named_by_its_path_on_the_branch(tmp_path: Path) -> None:
    world = _world(tmp_path, rename=True)
    found = _removed(world, "sync/v2")
    assert found.path == "lib/Transforms/Pass.cpp"
    assert found.details["sites"] == ["lib/Transforms/Pass.cpp:6"]
    assert "legacyHelper" in git(world.fork, "show", "sync/v2:lib/Transforms/Pass.cpp").splitlines()[5]
