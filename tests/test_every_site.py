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


# A module that compiles a C launcher from an f-string template (synthetic): upstream drops the `countX` parameter.
LAUNCHER_OLD = '''import os

TEMPLATE = f"""
static void kick(int gridX, int countX, int mode{"" if os.sep else ", int extra"}) {{
  int total = gridX * countX;
  report(total, "countX");
}}
"""
NOTE = "countX is documented elsewhere"
'''
LAUNCHER_NEW = LAUNCHER_OLD.replace("int countX, ", "").replace("gridX * countX", "gridX * 2")
LAUNCHER_FORK = LAUNCHER_OLD.replace('  int total = gridX * countX;\n',
                                     '  int total = gridX * countX;\n  int scaled = countX + gridX;\n')
LAUNCHER_BRANCH = LAUNCHER_NEW.replace('  int total = gridX * 2;\n',
                                       '  int total = gridX * 2;\n  int scaled = countX + gridX;\n')


@pytest.mark.parametrize("upgraded", ["merged", "conflicted", "none"])
def test_a_c_name_upstream_removed_from_a_modules_embedded_source_counts(tmp_path: Path, upgraded: str) -> None:
    """The C a Python module's strings hold is one program: FlagTree's line that uses a parameter upstream's C there
    no longer declares will not compile at the first launch (3.5 -> 3.6: clusterDimX in a launcher template).
    The name in a C string literal, in a comment or in a Python string of prose is no use; a name upstream's C
    still declares (gridX) is none either; in a conflicted file, only a use outside the conflicts counts."""
    path = "third_party/acme/backend/driver.py"
    repo, (old, new, fork) = history_trees(tmp_path, {path: LAUNCHER_OLD}, {path: LAUNCHER_NEW},
                                           {path: LAUNCHER_FORK})
    target = None
    if upgraded != "none":
        text = LAUNCHER_BRANCH if upgraded == "merged" else LAUNCHER_BRANCH.replace(
            "import os\n", '<<<<<<< HEAD\nimport os\n||||||| base\nimport os\n=======\nimport os, sys\n>>>>>>> x\n')
        subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", "-b", "upgraded"], check=True)
        target_id = commit(tmp_path, {path: text}, "replayed")
        target = GitTree(repo, pygit2.Repository(str(tmp_path))[target_id].tree, "target")
    findings = symbol_findings(repo, old, new, fork, lambda path: ["acme"], target=target)
    # the FlagTree branch's line (the runner moves it to the upgraded branch's)
    assert _removed_sites(findings) == {"countX": [f"{path}:6"]}
    assert "will not compile when the module builds that C" in findings[0].message


def test_a_c_use_the_conflict_holds_is_the_replays_and_a_kept_declaration_is_no_removal(tmp_path: Path) -> None:
    path = "third_party/acme/backend/driver.py"
    repo, (old, new, fork) = history_trees(tmp_path, {path: LAUNCHER_OLD}, {path: LAUNCHER_NEW},
                                           {path: LAUNCHER_FORK})
    inside = LAUNCHER_NEW.replace('  int total = gridX * 2;\n', '<<<<<<< HEAD\n  int total = gridX * 2;\n=======\n'
                                  '  int total = gridX * countX;\n  int scaled = countX + gridX;\n>>>>>>> x\n')
    kept = LAUNCHER_BRANCH.replace("int gridX, int mode", "int gridX, int countX, int mode")  # a person put it back
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", "-b", "upgraded"], check=True)
    for text in (inside, kept):
        target_id = commit(tmp_path, {path: text}, "replayed")
        target = GitTree(repo, pygit2.Repository(str(tmp_path))[target_id].tree, "target")
        assert _removed_sites(symbol_findings(repo, old, new, fork, lambda path: ["acme"], target=target)) == {}


def test_a_name_in_an_fstring_replacement_field_is_a_use(tmp_path: Path) -> None:
    """Python 3.11 reads an f-string as one token: `f"{util.legacy_dims()}"` uses legacy_dims all the same."""
    util_old = "def legacy_dims():\n    return (1, 1, 1)\n\n\ndef other():\n    return 0\n"
    util_new = "def other():\n    return 0\n"
    show = "from triton.tools import util\n\n\ndef show():\n    return util.other()\n"
    fork_show = show + '\n\ndef describe(x):\n    return f"dims={util.legacy_dims()!r:>8} of {x}"\n'
    repo, trees = history_trees(tmp_path, {"python/triton/tools/util.py": util_old, "python/triton/runtime/show.py": show},
                                {"python/triton/tools/util.py": util_new, "python/triton/runtime/show.py": show},
                                {"python/triton/tools/util.py": util_old, "python/triton/runtime/show.py": fork_show})
    sites = _removed_sites(symbol_findings(repo, *trees, lambda path: ["shared-trunk"]))
    assert sites == {"legacy_dims": ["python/triton/runtime/show.py:9"]}
