"""Issue 50: `port` rewrites FlagTree's sites for upstream's certain renames, one commit per upstream change, and
leaves the rest as findings (an ambiguous rename, an overloaded target, a site in a macro or a conflict block)."""
from __future__ import annotations

from pathlib import Path

from sync.git import open_repo
from sync.jobs.port import PortOptions, PortResult, read_branch_text, run_port
from sync.jobs.port_edit import rename_cpp, rename_members_cpp, rename_python
from tests.conftest import git, invoke, snapshot
from tests.drift_helpers import drift_of, fork_world
from tests.test_symbols import commit

UTIL_V1 = ("namespace mlir::triton {\nint oldHelper(int v);\nint keep(int v);\nint overHelper(int v);\n"
           "int overHelper(int v, int w);\nint twinHelper(int v);\n}\n")
UTIL_RENAMED = ("namespace mlir::triton {\nint newHelper(int v);\nint keep(int v);\nint overHelper(int v);\n"
                "int overHelper(int v, int w);\nint twinHelper(int v);\n}\n")
UTIL_TWINS = UTIL_RENAMED.replace("int twinHelper(int v);\n", "int twinHelperA(int v);\nint twinHelperB(int v);\n")
UTIL_OVER_TARGET = ("namespace mlir::triton {\nint keep(int v);\nint targetHelper(int v);\n"
                    "int targetHelper(int v, int w);\n}\n")
UTIL_OVER = UTIL_TWINS.replace("int overHelper(int v);\nint overHelper(int v, int w);\n",
                               "int overHelperNew(int v);\nint overHelperNew(int v, int w);\n")
PY_V1 = "def old_api(x, y=1):\n    return x + y\n"
PY_V2 = "def new_api(x, y=1):\n    return x + y\n"
UPSTREAM_USE_V1 = '#include "triton/Util.h"\nint up() { return mlir::triton::oldHelper(0); }\n'
ALPHA = ('#include "triton/Util.h"\nnamespace tt = mlir::triton;\n'
         "int alpha() {\n  int local = 3;\n  return tt::oldHelper(1) + local;\n}\n"  # 5: the use
         "int alpha2() { return mlir::triton::twinHelper(2) + mlir::triton::overHelper(1); }\n")
BETA = ('#include "triton/Util.h"\n#define CALL_HELPER(x) mlir::triton::oldHelper(x)\n'
        "int beta() {\n  // oldHelper in a comment stays\n  return mlir::triton::oldHelper(2) + CALL_HELPER(3);\n}\n")
PY_USE = "from triton.util import old_api\n\n\ndef run(x):\n    return old_api(x, y=2) + len('old_api')\n"


def _world(tmp_path: Path) -> Path:
    """v1; FlagTree's backends alpha and beta (C++) and a trunk module (Python) on it; upstream's v2: four commits."""
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"include/triton/Util.h": UTIL_V1, "lib/Up.cpp": UPSTREAM_USE_V1, "python/triton/util.py": PY_V1,
                  "python/triton/__init__.py": ""}, "v1")
    git(repo, "tag", "v1")
    commit(repo, {"third_party/alpha/lib/Alpha.cpp": ALPHA, "third_party/beta/lib/Beta.cpp": BETA,
                  "python/triton/compiler/extra.py": PY_USE}, "[FlagTree] backends")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"include/triton/Util.h": UTIL_RENAMED,
                  "lib/Up.cpp": UPSTREAM_USE_V1.replace("oldHelper", "newHelper")}, "Rename oldHelper (#101)")
    commit(repo, {"python/triton/util.py": PY_V2}, "Rename old_api (#102)")
    commit(repo, {"include/triton/Util.h": UTIL_TWINS}, "Split twin (#103)")
    commit(repo, {"include/triton/Util.h": UTIL_OVER}, "Rename over (#104)")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "sync/v2", "v2")  # the upgraded branch: v2 with FlagTree's commit
    git(repo, "checkout", "-q", "sync/v2")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "cherry-pick", "main")
    git(repo, "checkout", "-q", "main")
    return repo


def _port(repo: Path, dry_run: bool = False) -> PortResult:
    return run_port(str(repo), old="v1", onto="v2", source="main", options=PortOptions(target="sync/v2",
                                                                                      dry_run=dry_run))


def _errors(repo: Path) -> dict[str, list[str]]:
    findings = drift_of(fork_world(repo), "v1", "v2", "main", target="sync/v2", symbols=True).findings
    return {f.details.get("declaration") or f.path: f.details.get("sites", []) for f in findings
            if f.kind == "symbol-removed"}


def test_a_cpp_rename_across_two_backends_and_a_python_rename_are_one_commit_each(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    assert {"oldHelper", "old_api"} <= set(_errors(repo))
    before = git(repo, "rev-parse", "sync/v2").strip()
    result = _port(repo)
    log = git(repo, "log", "--format=%s", f"{before}..sync/v2").splitlines()
    assert log == ["port: old_api -> new_api (#102)", "port: oldHelper -> newHelper (#101)"]  # newest first
    assert all(len(subject) <= 72 for subject in log)
    body = git(repo, "log", "-1", "--format=%b", "sync/v2~1")
    assert "Rule: renamed-declaration" in body and "third_party/alpha/lib/Alpha.cpp:5" in body
    assert "third_party/beta/lib/Beta.cpp:5" in body
    pygit = open_repo(str(repo))
    alpha = read_branch_text(pygit, "sync/v2", "third_party/alpha/lib/Alpha.cpp")
    beta = read_branch_text(pygit, "sync/v2", "third_party/beta/lib/Beta.cpp")
    assert alpha == ALPHA.replace("tt::oldHelper(1)", "tt::newHelper(1)")
    # the macro's body and the comment stay; the macro line is left for a person
    assert beta == BETA.replace("return mlir::triton::oldHelper(2)", "return mlir::triton::newHelper(2)")
    assert read_branch_text(pygit, "sync/v2", "python/triton/compiler/extra.py") == PY_USE.replace(
        "import old_api", "import new_api").replace("return old_api(x", "return new_api(x")
    helper = next(change for change in result.changes if change.pr == "101")
    assert helper.left == [("third_party/beta/lib/Beta.cpp:2", "oldHelper: inside a macro's body")]
    # the next drift no longer reports the ported findings; the refused ones stay
    left = _errors(repo)
    assert "old_api" not in left and "twinHelper" in left and "overHelper" in left
    assert "oldHelper" not in left
    # a second run finds nothing more to port and commits nothing
    tip = git(repo, "rev-parse", "sync/v2")
    assert not any(change.sites for change in _port(repo).changes) and git(repo, "rev-parse", "sync/v2") == tip


def test_ambiguous_and_overloaded_renames_are_refused(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    result = _port(repo, dry_run=True)
    reasons = {what: why for change in result.changes for what, why in change.left}
    assert reasons["twinHelper"].startswith("ambiguous rename: twinHelperA, twinHelperB")
    assert reasons["overHelper"].startswith("overloaded")
    assert not any(change.pr in ("103", "104") and change.sites for change in result.changes)


def test_a_rename_onto_an_overloaded_name_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"include/triton/Util.h": "namespace mlir::triton {\nint keep(int v);\nint sourceHelper(int v);\n}\n"},
           "v1")
    git(repo, "tag", "v1")
    commit(repo, {"third_party/alpha/lib/A.cpp": "int a() { return mlir::triton::sourceHelper(1); }\n"}, "[FlagTree] a")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"include/triton/Util.h": UTIL_OVER_TARGET}, "Fold sourceHelper into targetHelper (#105)")
    git(repo, "tag", "v2")
    git(repo, "branch", "sync/v2", "v2")
    git(repo, "checkout", "-q", "sync/v2")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "cherry-pick", "main")
    git(repo, "checkout", "-q", "main")
    result = _port(repo, dry_run=True)
    assert [change.left for change in result.changes] == [
        [("sourceHelper", "overloaded target: targetHelper has more than one signature")]]
    assert not result.changes[0].sites


def test_dry_run_prints_the_patch_and_writes_nothing(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    refs = git(repo, "for-each-ref")
    before = snapshot(repo)
    result = invoke("port", "--repo", str(repo), "--from", "v1", "--onto", "v2", "--branch", "main",
                    "--target", "sync/v2", "--dry-run", "-q")
    assert result.exit_code == 1, result.output  # the refused renames are left for a person
    assert "-  return tt::oldHelper(1) + local;\n+  return tt::newHelper(1) + local;" in result.stdout
    assert "+from triton.util import new_api" in result.stdout
    assert git(repo, "for-each-ref") == refs and snapshot(repo) == before


def test_a_branch_checked_out_is_refused_in_one_line(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    git(repo, "checkout", "-q", "sync/v2")
    result = invoke("port", "--repo", str(repo), "--from", "v1", "--onto", "v2", "--branch", "main",
                    "--target", "sync/v2")
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "is checked out in" in result.output
    result = invoke("port", "--repo", str(repo), "--target", "no-such-branch")
    assert result.exit_code == 2 and result.output.startswith("flagtree-sync: error:")


def test_a_symbolic_link_or_an_executable_file_is_never_rewritten(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    git(repo, "checkout", "-q", "sync/v2")
    (repo / "third_party/beta/lib/Beta.cpp").chmod(0o755)
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "[FlagTree] executable")
    git(repo, "checkout", "-q", "main")
    result = _port(repo)
    helper = next(change for change in result.changes if change.pr == "101")
    assert helper.sites == ["third_party/alpha/lib/Alpha.cpp:5"]
    assert ("third_party/beta/lib/Beta.cpp:5", "a symbolic link or an executable file: never rewritten") in helper.left
    assert git(repo, "ls-tree", "sync/v2", "third_party/beta/lib/Beta.cpp").startswith("100755")
    assert "oldHelper(2)" in git(repo, "show", "sync/v2:third_party/beta/lib/Beta.cpp")


def test_a_failing_gate_keeps_the_commit_off_the_branch(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    tip = git(repo, "rev-parse", "sync/v2")
    result = run_port(str(repo), old="v1", onto="v2", source="main",
                      options=PortOptions(target="sync/v2", gate="test ! -e third_party/alpha/lib/Alpha.cpp"))
    assert git(repo, "rev-parse", "sync/v2") == tip
    assert all(change.gate is None or not change.gate.passed for change in result.changes)
    result = run_port(str(repo), old="v1", onto="v2", source="main",
                      options=PortOptions(target="sync/v2", gate="grep -q newHelper third_party/alpha/lib/Alpha.cpp"))
    assert git(repo, "rev-list", "--count", f"{tip.strip()}..sync/v2").strip() == "2"


# --- the edits themselves ----------------------------------------------------------------------------------------

SCOPES = {"free:mlir::triton"}


def test_a_site_inside_conflict_markers_is_never_touched() -> None:
    text = ("int f() {\n<<<<<<< ours\n  return mlir::triton::oldHelper(1);\n=======\n"
            "  return mlir::triton::oldHelper(2);\n>>>>>>> theirs\n}\nint g() { return mlir::triton::oldHelper(3); }\n")
    edit = rename_cpp(text, "oldHelper", "newHelper", {3, 5, 8}, SCOPES)
    assert edit.changed == [8] and edit.refused == {3: "inside a conflict block", 5: "inside a conflict block"}
    assert edit.text == text.replace("oldHelper(3)", "newHelper(3)")
    python = "<<<<<<< ours\nfrom triton.util import old_api\n=======\nx = 1\n>>>>>>> theirs\n"
    assert rename_python(python, "old_api", "new_api", {2}, "triton.util").text == python


def test_a_site_in_a_macro_body_is_refused() -> None:
    text = "#define CALL(x) \\\n  mlir::triton::oldHelper(x)\nint g() { return CALL(1); }\n"
    edit = rename_cpp(text, "oldHelper", "newHelper", {2}, SCOPES)
    assert edit.text == text and edit.refused == {2: "inside a macro's body"}
    # a macro line that is no site is named too: the rename is not done while it still spells the old name
    assert rename_cpp(text, "oldHelper", "newHelper", set(), SCOPES).refused == {2: "inside a macro's body"}


def test_a_use_on_the_line_after_a_one_line_macro_is_renamed() -> None:
    """tree-sitter ends a #define at column 0 of the next line: that line is code, not the macro's body."""
    text = "#define K 1\nint g(X x) { return mlir::triton::oldHelper(K) + x.oldM(K); }\n"
    edit = rename_cpp(text, "oldHelper", "newHelper", {2}, SCOPES)
    assert edit.changed == [2] and "mlir::triton::newHelper(K)" in edit.text and not edit.refused
    members = rename_members_cpp(text, "oldM", "newM", {2})
    assert members.changed == [2] and "x.newM(K)" in members.text and not members.refused


def test_a_use_that_may_mean_another_declaration_is_refused() -> None:
    text = "int g(Other o) { return o.oldHelper(1) + mlir::triton::oldHelper(2); }\n"
    edit = rename_cpp(text, "oldHelper", "newHelper", {1}, SCOPES)
    assert edit.text == text and edit.refused == {1: "a use on the line may mean another declaration"}


def test_a_cpp_file_that_binds_the_name_itself_is_refused() -> None:
    text = "int g() {\n  int oldHelper = 1;\n  return mlir::triton::oldHelper(2) + oldHelper;\n}\n"
    edit = rename_cpp(text, "oldHelper", "newHelper", {3}, SCOPES)
    assert edit.text == text and edit.refused == {3: "the file binds the name itself"}


def test_a_python_module_that_binds_the_name_itself_is_refused() -> None:
    text = "from triton.util import old_api\n\n\ndef old_api_user():\n    old_api = 1\n    return old_api\n"
    edit = rename_python(text, "old_api", "new_api", {1}, "triton.util")
    assert edit.text == text and edit.refused == {1: "the module binds the name itself"}


def test_a_python_use_its_imports_do_not_tie_to_the_declaring_module_is_refused() -> None:
    tied = "import triton.util as tu\nfrom triton import util\n\n\ndef f():\n    return tu.old_api(1) + util.old_api(2)\n"
    edit = rename_python(tied, "old_api", "new_api", {6}, "triton.util")
    assert edit.text == tied.replace("old_api", "new_api") and edit.changed == [6]
    for text in ("def f(obj):\n    return obj.old_api(1)\n",  # a receiver nothing ties to the module
                 "from triton.other import old_api\n\nold_api(1)\n",  # another module's old_api
                 "from .util import old_api\n\nold_api(1)\n"):  # relative: not read here
        edit = rename_python(text, "old_api", "new_api", {2}, "triton.util")
        assert edit.text == text and set(edit.refused.values()) == {
            "a use the module's imports do not tie to triton.util"}, text
