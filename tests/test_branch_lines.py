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


def test_a_changed_guarded_default_is_named_at_its_lines_on_the_upgraded_branch(tmp_path: Path) -> None:
    """Seen on triton_v3.4.x -> 3.6.0: guard-default-changed quoted the source branch's lines (44, in the guard at
    line 5) for a function at line 53 of the upgraded branch."""
    from tests.test_real_structures import small_world
    spec = "third_party/b/backend/spec/"
    head, body = "// one\n\n", "namespace t {\nint one(int a) {\n  int x = a;\n  int y = x;\n  return y;\n}\n}\n"
    guarded = head + "#ifndef FLAGTREE_SPEC_One\n" + body + "#endif\n"
    above = "".join(f"int added{n}();\n" for n in range(10))  # upstream's new lines above the guard
    repo = small_world(tmp_path, {"lib/One.cpp": head + body},
                       {"lib/One.cpp": above + head + body.replace("return y;", "return y + 1;")},
                       {"lib/One.cpp": guarded, spec + "include/flagtree_spec.h": "#define FLAGTREE_SPEC_One\n",
                        spec + "lib/One.cpp": "namespace t {\nint one(int a) { return -a; }\n}\n"})
    git(repo, "checkout", "-q", "-b", "sync/v2", "v2")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "cherry-pick", "main")
    git(repo, "checkout", "-q", "main")
    world = SimpleNamespace(fork=repo)

    def changed(target: str | None):
        findings = drift_of(world, "v1", "v2", "main", target=target).findings
        return next(f for f in findings if f.kind == "guard-default-changed")

    on_source = changed(None)
    assert "default one at lib/One.cpp:5 (in the guard at lib/One.cpp:3)" in on_source.message, on_source.message
    found = changed("sync/v2")
    branch = git(repo, "show", "sync/v2:lib/One.cpp").splitlines()
    assert "int one(int a)" in branch[14] and "FLAGTREE_SPEC_One" in branch[12]
    assert "default one at lib/One.cpp:15 (in the guard at lib/One.cpp:13)" in found.message, found.message
    assert (found.details["sites"], found.details["guard"]) == (["lib/One.cpp:15"], "lib/One.cpp:13")
    # the finding stands at the macro's definition, the line each of its actions changes
    assert (found.path, found.line) == (spec + "include/flagtree_spec.h", 1)


def test_the_changed_defaults_of_one_guard_are_one_finding(tmp_path: Path) -> None:
    """Seen on triton_v3.5.x -> 3.7: one #ifndef around the whole of ascend's Ops.cpp gave 24 guard-default-changed
    findings, one port of one file. The defaults of one guard that changed are one finding naming each at its line;
    another guard's stay its own."""
    from tests.test_real_structures import small_world
    spec = "third_party/b/backend/spec/"
    two = "int one(int a) {\n  return a;\n}\nint two(int a) {\n  return a;\n}\n"
    three = "int three(int a) {\n  return a;\n}\n"
    guarded = ("#ifndef FLAGTREE_SPEC_Both\n" + two + "#endif\n#ifndef FLAGTREE_SPEC_Three\n" + three + "#endif\n")
    new = (two + three).replace("return a;", "return a + 1;")
    repo = small_world(tmp_path, {"lib/Ops.cpp": two + three}, {"lib/Ops.cpp": new},
                       {"lib/Ops.cpp": guarded,
                        spec + "include/flagtree_spec.h": "#define FLAGTREE_SPEC_Both\n#define FLAGTREE_SPEC_Three\n",
                        spec + "lib/Ops.cpp": "int one(int a) { return 0; }\nint two(int a) { return 0; }\n"
                                              "int three(int a) { return 0; }\n"})
    found = [f for f in drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
             if f.kind == "guard-default-changed"]
    assert sorted(f.details["macro"] for f in found) == ["FLAGTREE_SPEC_Both", "FLAGTREE_SPEC_Three"]
    both = next(f for f in found if f.details["macro"] == "FLAGTREE_SPEC_Both")
    assert both.details["sites"] == ["lib/Ops.cpp:2", "lib/Ops.cpp:5"] and both.details["functions"] == ["one", "two"]
    assert "2 guarded trunk defaults in the guard at lib/Ops.cpp:1 changed upstream" in both.message
    assert both.diff is not None and both.diff.count("+  return a + 1;") == 2
