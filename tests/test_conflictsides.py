"""Issue 45: FlagTree's side of a committed conflict hunk that uses names the upgraded tree lacks (a module, a
header or .td file, a module-level Python name, a C++ declaration) is a conflict-side-unresolved finding, with each
name at its line on the upgraded branch; a name the upgraded tree still declares elsewhere, or that only shares its
spelling with a declaration the file never reached, is not."""
from __future__ import annotations

from pathlib import Path

from sync.drift.analyses.conflictsides import conflict_side_findings, sides
from sync.drift.context import DriftContext
from sync.git import GitTree, open_repo
from sync.jobs.upgrade import UpgradeOptions, run_upgrade
from sync.model import Finding
from tests.conftest import git
from tests.test_symbols import commit

JIT = ("import itertools\n\nimport os\nfrom .._utils import find_paths\n\n\ndef run(args):\n"
       "    args = list(itertools.chain(args))\n    return find_paths(args)\n")
# FlagTree adds a line after each of upstream's: the import of itertools, three lines up, merges cleanly
JIT_FLAGTREE = JIT.replace("find_paths\n\n", "find_paths\nimport tokenize\n\n").replace(
    "chain(args))\n", "chain(args))\n    print('hint', tokenize.NAME)\n")
JIT_UPSTREAM = "\n\nimport os\n\n\ndef run(args):\n    return args\n"
UTIL = "namespace lib {\nint oldHelper(int x);\nint keptHelper(int x);\n}\n"
USER = '#include "lib/Util.h"\nint use(int v) {\n  int a = lib::keptHelper(v);\n  return lib::oldHelper(a);\n}\n'
USER_FLAGTREE = ('#include "lib/Util.h"\nint use(int v) {\n  int a = lib::keptHelper(v);\n  int numRepeats = 2;\n'
                 '  return lib::oldHelper(a) * numRepeats;\n}\n')
USER_UPSTREAM = '#include "lib/Util.h"\nint use(int v) {\n  int a = lib::keptHelper(v);\n  return a;\n}\n'
OPS = 'include "Base.td"\ninclude "Interfaces.td"\n\ndef AnOp : Op<"an"> {}\n'
OPS_FLAGTREE = OPS.replace('"Interfaces.td"\n', '"Interfaces.td"\ninclude "mlir/IR/BuiltinAttributes.td"\n')
OPS_UPSTREAM = 'include "Base.td"\ninclude "Types.td"\n\ndef AnOp : Op<"an"> {}\n'
ROOT = "add_executable(app main.cc)\ntarget_link_libraries(app\n  OldLib\n  KeptLib)\n"
LIBS = "add_library(OldLib a.cc)\nadd_library(KeptLib b.cc)\n"
# an unrelated header the conflicted file never includes: its field spells FlagTree's local variable
UNRELATED = "struct Layout {\n  int numRepeats;\n};\n"


def _upgrade(tmp_path: Path, upstream: dict[str, str], removed: tuple[str, ...]) -> list[Finding]:
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"python/triton/runtime/jit.py": JIT, "python/triton/_utils.py": "def find_paths(x):\n    return x\n",
                  "include/lib/Util.h": UTIL, "lib/User.cpp": USER, "include/Ops.td": OPS, "include/Base.td": "\n",
                  "include/Interfaces.td": "\n", "include/other/Layout.h": UNRELATED, "CMakeLists.txt": ROOT,
                  "lib/CMakeLists.txt": LIBS}, "v1")
    git(repo, "tag", "v1")
    commit(repo, {"python/triton/runtime/jit.py": JIT_FLAGTREE, "lib/User.cpp": USER_FLAGTREE,
                  "include/Ops.td": OPS_FLAGTREE, "CMakeLists.txt": ROOT.replace("OldLib\n", "OldLib\n  FlagLib\n"),
                  "lib/CMakeLists.txt": LIBS + "add_library(FlagLib f.cc)\n"}, "[FlagTree] hints")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, upstream, "[Upstream] drop old helpers (#7)", remove=removed)
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "main")
    report = run_upgrade(str(repo), old="v1", onto="v2", source_branch="main", options=UpgradeOptions())
    reported = [finding for finding in report.findings if finding.kind == "conflict-side-unresolved"]
    # the analysis alone: in the report, a warning an error already tells (symbol-removed on oldHelper) folds into it
    opened = open_repo(repo)
    trees = [GitTree.of_commit(opened, opened.revparse_single(rev).id, rev)
             for rev in ("v1", "v2", "main", "sync/v2")]
    found = conflict_side_findings(DriftContext(opened, *trees))
    assert {finding.path for finding in reported} <= {finding.path for finding in found}
    return found


def _names(finding: Finding) -> dict[str, int]:
    return {item["name"]: item["line"] for item in finding.details["names"]}


def test_names_gone_from_the_upgraded_tree_are_reported_at_their_lines(tmp_path: Path) -> None:
    found = _upgrade(tmp_path, {"python/triton/runtime/jit.py": JIT_UPSTREAM, "include/lib/Util.h":
                                UTIL.replace("int oldHelper(int x);\n", ""), "lib/User.cpp": USER_UPSTREAM,
                                "include/Ops.td": OPS_UPSTREAM, "include/Types.td": "\n",
                                "include/other/Layout.h": "struct Layout {};\n",
                                "CMakeLists.txt": ROOT.replace("  OldLib\n", ""), "lib/CMakeLists.txt":
                                LIBS.replace("add_library(OldLib a.cc)\n", "")},
                     removed=("python/triton/_utils.py", "include/Interfaces.td"))
    by_path = {finding.path: finding for finding in found}
    assert sorted(by_path) == ["CMakeLists.txt", "include/Ops.td", "lib/User.cpp", "python/triton/runtime/jit.py"]
    branch = tmp_path / "fork"
    for path, finding in by_path.items():
        text = git(branch, "show", f"sync/v2:{path}").splitlines()
        for name, line in _names(finding).items():
            assert name.rsplit(".", 1)[-1].split("/")[-1].removesuffix(".td") in text[line - 1] \
                or name == "triton._utils" and "_utils" in text[line - 1], (path, name, line)
        assert finding.severity == "warning" and finding.line == min(_names(finding).values())
    assert set(_names(by_path["python/triton/runtime/jit.py"])) == {"triton._utils", "itertools"}
    assert set(_names(by_path["include/Ops.td"])) == {"Interfaces.td"}
    assert set(_names(by_path["lib/User.cpp"])) == {"oldHelper"}  # numRepeats: a local, Layout.h never included
    assert set(_names(by_path["CMakeLists.txt"])) == {"OldLib"}  # FlagLib: FlagTree's own library, still there


def test_names_the_upgraded_tree_still_declares_elsewhere_are_not_reported(tmp_path: Path) -> None:
    """oldHelper moved to another header, itertools is still imported above the conflict, _utils.py stays, and
    Interfaces.td stays: every name on FlagTree's side still resolves, though each conflict is the same."""
    found = _upgrade(tmp_path, {"python/triton/runtime/jit.py": "import itertools" + JIT_UPSTREAM,
                                "include/lib/Util.h": UTIL.replace("int oldHelper(int x);\n", ""),
                                "include/lib/Moved.h": "namespace lib {\nint oldHelper(int x);\n}\n",
                                "lib/User.cpp": USER_UPSTREAM, "include/Ops.td": OPS_UPSTREAM, "include/Types.td": "\n",
                                "include/other/Layout.h": "struct Layout {};\n"},
                     removed=())
    assert found == []
    for path in ("python/triton/runtime/jit.py", "lib/User.cpp", "include/Ops.td"):  # each still conflicted
        assert sides(git(tmp_path / "fork", "show", f"sync/v2:{path}")) is not None


def test_nested_blocks_read_each_flagtree_side() -> None:
    text = ("a\n<<<<<<< new (upgraded)\n<<<<<<< new (upgraded)\nup\n||||||| p (parent)\n=======\nfirst\n"
            ">>>>>>> c1 (one)\n||||||| p (parent)\nbase\n=======\nsecond\n>>>>>>> c2 (two)\nz\n")
    read = sides(text)
    assert read is not None
    assert sorted(read.lines) == [7, 12]
    assert read.ours.splitlines()[3] == "up" and read.ours.splitlines()[6] == ""
    assert read.theirs.splitlines()[6] == "first" and read.theirs.splitlines()[11] == "second"
    assert sides("a\n<<<<<<< new (upgraded)\nb\n=======\n") is None


def test_a_file_flagtree_changed_and_changed_back_has_no_side_to_keep(tmp_path: Path) -> None:
    """Proton's HsaApi.h on two moves: commits of the range change the file and later restore it, so the FlagTree
    branch holds the old tag's file, yet the replay commits the intermediate conflicts. Its FlagTree side keeps
    nothing of FlagTree's: upstream's new file is the answer, and no name on that side is a finding."""
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"include/lib/Util.h": UTIL, "lib/User.cpp": USER}, "v1")
    git(repo, "tag", "v1")
    commit(repo, {"lib/User.cpp": USER_FLAGTREE}, "[FlagTree] try a repeat count")
    commit(repo, {"lib/User.cpp": USER}, "[FlagTree] back out the repeat count")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"include/lib/Util.h": UTIL.replace("int oldHelper(int x);\n", ""), "lib/User.cpp": USER_UPSTREAM},
           "[Upstream] drop old helpers (#7)")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "main")
    run_upgrade(str(repo), old="v1", onto="v2", source_branch="main", options=UpgradeOptions())
    opened = open_repo(repo)
    trees = [GitTree.of_commit(opened, opened.revparse_single(rev).id, rev) for rev in ("v1", "v2", "main", "sync/v2")]
    assert sides(git(repo, "show", "sync/v2:lib/User.cpp")) is not None  # the replay left its conflicts
    assert conflict_side_findings(DriftContext(opened, *trees)) == []
    from sync.drift.run import analyse_drift
    from sync.jobs.revs import resolve_range, resolve_rev
    findings = analyse_drift(opened, resolve_range(opened, "v1", "v2", "main"), resolve_rev(opened, "sync/v2")).findings
    said = [(f.kind, f.severity, f.path, f.next_step) for f in findings if f.path == "lib/User.cpp"]
    assert ("conflict-take-upstream", "info", "lib/User.cpp", "git checkout v2 -- lib/User.cpp") in said
