"""Issue 50: port renames a CMake target FlagTree names when upstream renamed it in one commit (the 3.7 move's
TritonGPUCTAAttrIncGen -> TritonGPUCGAAttrIncGen), on exact CMake tokens; otherwise the build-file finding
stays, with the reason."""
from __future__ import annotations

from pathlib import Path

from sync.git import open_repo
from sync.jobs.port import PortOptions, PortResult, read_branch_text, run_port
from sync.jobs.port_cmake import rename_cmake, targets
from tests.conftest import git
from tests.drift_helpers import drift_of, fork_world
from tests.test_symbols import commit

INC = ("set(LLVM_TARGET_DEFINITIONS Attrs.td)\nmlir_tablegen(Attrs.h.inc -gen-attrdef-decls)\n"
       "add_public_tablegen_target(OldAttrIncGen)\n")
INC_RENAMED = INC.replace("OldAttrIncGen", "NewAttrIncGen")
INC_TWO = INC_RENAMED + "add_public_tablegen_target(OtherAttrIncGen)\n"
LIB = "add_triton_library(TritonIR\n  Ops.cpp\n\n  DEPENDS\n  OldAttrIncGen\n)\n"
LIB_FLAGTREE = ("add_triton_library(TritonIR\n  Ops.cpp\n  Extra.cpp\n\n  DEPENDS\n  OldAttrIncGen\n"
                "  FlagTreeGen OldAttrIncGen # OldAttrIncGen in a comment stays\n)\n")  # 7: FlagTree's line


def _world(tmp_path: Path, upstream_inc: str = INC_RENAMED) -> Path:
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"include/triton/IR/CMakeLists.txt": INC, "include/triton/IR/Attrs.td": "// attrs\n",
                  "lib/IR/CMakeLists.txt": LIB, "lib/IR/Ops.cpp": "int ops;\n"}, "v1")
    git(repo, "tag", "v1")
    commit(repo, {"lib/IR/CMakeLists.txt": LIB_FLAGTREE, "lib/IR/Extra.cpp": "int extra;\n"}, "[FlagTree] extra")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"include/triton/IR/CMakeLists.txt": upstream_inc,
                  "lib/IR/CMakeLists.txt": LIB.replace("OldAttrIncGen", "NewAttrIncGen")},
           "[NFC] Rename OldAttr as NewAttr (#301)")
    git(repo, "tag", "v2")
    git(repo, "branch", "sync/v2", "v2")
    git(repo, "checkout", "-q", "sync/v2")
    # the upgraded branch: upstream's file with FlagTree's line replayed on it
    commit(repo, {"lib/IR/CMakeLists.txt": LIB_FLAGTREE.replace("  OldAttrIncGen\n  FlagTree", "  NewAttrIncGen\n"
                                                                "  FlagTree"), "lib/IR/Extra.cpp": "int extra;\n"},
           "[FlagTree] extra")
    git(repo, "checkout", "-q", "main")
    return repo


def _port(repo: Path, dry_run: bool = False) -> PortResult:
    return run_port(str(repo), old="v1", onto="v2", source="main",
                    options=PortOptions(target="sync/v2", dry_run=dry_run))


def _build_errors(repo: Path) -> list[str]:
    findings = drift_of(fork_world(repo), "v1", "v2", "main", target="sync/v2", symbols=True).findings
    return [f.details.get("entry") for f in findings if f.kind == "build-file"]


def test_a_target_upstream_renamed_in_one_commit_is_renamed_in_flagtree_cmake(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    assert _build_errors(repo) == ["OldAttrIncGen"]
    result = _port(repo)
    change = next(change for change in result.changes if change.pr == "301")
    assert change.committed and change.sites == ["lib/IR/CMakeLists.txt:7"]
    text = read_branch_text(open_repo(str(repo)), "sync/v2", "lib/IR/CMakeLists.txt")
    assert text == LIB_FLAGTREE.replace("  OldAttrIncGen\n  FlagTreeGen OldAttrIncGen #",
                                        "  NewAttrIncGen\n  FlagTreeGen NewAttrIncGen #")
    body = git(repo, "log", "-1", "--format=%B", "sync/v2")
    assert body.startswith("port: OldAttrIncGen -> NewAttrIncGen (#301)") and "Rule: renamed-target" in body
    # a second run finds the site already ported (build-file reads the FlagTree branch's lines: its finding stays)
    tip = git(repo, "rev-parse", "sync/v2")
    assert not any(change.sites for change in _port(repo).changes) and git(repo, "rev-parse", "sync/v2") == tip


def test_a_commit_that_defined_two_new_targets_is_refused(tmp_path: Path) -> None:
    repo = _world(tmp_path, upstream_inc=INC_TWO)
    result = _port(repo, dry_run=True)
    assert not any(change.sites for change in result.changes)
    assert ("OldAttrIncGen", "the commit that removed it defined 2 new add_public_tablegen_target target(s) in "
            "include/triton/IR/CMakeLists.txt, not one") in [item for change in result.changes for item in change.left]


def test_cmake_edits_are_on_unquoted_tokens_outside_conflict_blocks() -> None:
    text = ('add_dependencies(x OldGen)\n<<<<<<< ours\n  OldGen\n=======\n  NewGen\n>>>>>>> theirs\n'
            'set(DEPS "OldGen")\nset(MORE OldGen_extra OldGen) # OldGen\n')
    edit = rename_cmake(text, "OldGen", "NewGen", {1, 3, 7, 8})
    assert edit.changed == [1, 8]
    assert edit.refused == {3: "inside a conflict block", 7: "the target is named in quotes on the line"}
    assert edit.text == text.replace("(x OldGen)", "(x NewGen)").replace("OldGen_extra OldGen)",
                                                                           "OldGen_extra NewGen)")
    assert targets("# add_library(A x)\nadd_dependencies(B C)\nadd_mlir_library(D\n  d.cpp)\n") == [
        ("add_mlir_library", "D")]


def test_an_escaped_quote_in_an_unquoted_argument_quotes_nothing() -> None:
    """FlagTree's root CMakeLists.txt passes `-DFLAGTREE_BACKEND=\\"${FLAGTREE_BACKEND}\\"`: the regex tokenizer
    opened a quoted token at the escaped quote and lost every target after it; a rename there edits the bytes
    of the argument, whatever precedes it."""
    text = ('add_definitions(-DB=\\"${B}\\") # é\nif(B STREQUAL "x")\n  add_library(triton SHARED a.cpp)\nendif()\n'
            'target_link_libraries(triton OldGen)\nmessage("done")\n')
    assert targets(text) == [("add_library", "triton")]
    edit = rename_cmake(text, "OldGen", "NewGen", {5})
    assert edit.changed == [5] and edit.text == text.replace("OldGen", "NewGen")
