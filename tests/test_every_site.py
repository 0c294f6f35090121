"""Issue 45, class 6: every site of a reported change -- a member call through a variable whose type a cast or a
builder spells, and a use outside the conflict hunks of a file that has other conflicts."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from sync.drift.analyses.symbols import symbol_findings
from sync.git import GitTree
from tests.test_symbols import commit, history_trees

OPS = ("namespace mlir::triton {\nclass LoadOp {\npublic:\n  int getBoundaryCheck();\n  int getPtr();\n};\n"
       "class StoreOp {\npublic:\n  int getPtr();\n};\n}\n")
OPS_NEW = OPS.replace("  int getBoundaryCheck();\n", "")
USES = ("#include \"triton/Ops.h\"\nusing namespace mlir;\nvoid f(Operation *op, OpBuilder &b) {\n"
        "  if (auto load = dyn_cast<triton::LoadOp>(op)) {\n"     # 4
        "    load.getBoundaryCheck();\n"                          # 5: the cast spells its type: a use
        "  }\n"
        "  auto made = b.create<triton::LoadOp>(op);\n"
        "  made.getBoundaryCheck();\n"                            # 8: the builder spells it: a use
        "  auto other = llvm::cast<Unrelated>(op);\n"
        "  other.getBoundaryCheck();\n"                           # 10: another class's member: none
        "}\n")


def _removed_sites(findings) -> dict[str, list[str]]:
    return {f.details["declaration"]: f.details["sites"] for f in findings if f.kind == "symbol-removed"}


def test_a_member_call_through_a_cast_or_a_builder_counts(tmp_path: Path) -> None:
    repo, trees = history_trees(tmp_path, {"include/triton/Ops.h": OPS}, {"include/triton/Ops.h": OPS_NEW},
                                {"lib/Pass.cpp": USES})
    sites = _removed_sites(symbol_findings(repo, *trees, lambda path: ["shared-trunk"]))
    assert sites == {"getBoundaryCheck": ["lib/Pass.cpp:5", "lib/Pass.cpp:8"]}


HELPERS_OLD = "int legacyHelper(int v) { return v; }\nint other() { return 1; }\n"
HELPERS_NEW = "int other() { return 2; }\n"
HELPERS_FORK = "int legacyHelper(int v) { return v; }\nint other() { return 3; }\nint flag() { return legacyHelper(1); }\n"


CONFLICTED = ("<<<<<<< HEAD\nint other() { return 2; }\n||||||| base\nint other() { return 1; }\n=======\n"
              "int other() { return 3; }\n>>>>>>> flagtree\nint flag() { return legacyHelper(1); }\n")
MERGED = "int other() { return 2; }\nint flag() { return legacyHelper(1); }\n"


@pytest.mark.parametrize("upgraded", [MERGED, CONFLICTED], ids=["merged", "conflicted"])
def test_a_use_of_a_function_upstream_removed_from_the_same_file_counts(tmp_path: Path, upgraded: str) -> None:
    """Upstream's own definition in the file does not declare the name once upstream removed it; a conflict
    elsewhere in the file leaves the use outside it FlagTree's alone."""
    repo, (old, new, fork) = history_trees(tmp_path, {"lib/Helpers.cpp": HELPERS_OLD}, {"lib/Helpers.cpp": HELPERS_NEW},
                                           {"lib/Helpers.cpp": HELPERS_FORK})
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", "-b", "upgraded"], check=True)
    target_id = commit(tmp_path, {"lib/Helpers.cpp": upgraded}, "replayed")
    target = GitTree(repo, pygit2.Repository(str(tmp_path))[target_id].tree, "target")
    sites = _removed_sites(symbol_findings(repo, old, new, fork, lambda path: ["shared-trunk"], target=target))
    assert sites == {"legacyHelper": ["lib/Helpers.cpp:3"]}
