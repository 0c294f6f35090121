"""Issue 45, class 3: a header FlagTree changed now clashes with an upstream file that meets it in one
translation unit -- a namespace alias, a type alias or a macro upstream defines differently."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import git
from tests.drift_helpers import drift_of, fork_world
from tests.test_symbols import commit

UTIL = "#pragma once\nnamespace mlir::triton {\nint helper(int v);\n}\n"
FLAGTREE_UTIL = UTIL + ("namespace ttg = mlir::triton::gpu;\n#define TRITON_FLAG 1\n"
                        "#ifndef TRITON_GUARDED\n#define TRITON_GUARDED 1\n#endif\n"
                        "namespace same = mlir::triton;\nnamespace rel = mlir::triton::gpu;\n")
PASS_OLD = '#include "triton/Util.h"\nint run() { return 0; }\n'
PASS_NEW = ('#include "triton/Util.h"\nnamespace ttg = mlir::triton::gluon;\n#define TRITON_FLAG 2\n'
            "#define TRITON_GUARDED 2\nnamespace same = mlir::triton;\n"
            "namespace mlir {\nnamespace rel = triton::gpu;\n}\nint run() { return 0; }\n")
ELSEWHERE = "namespace ttg = mlir::other;\n#define TRITON_FLAG 3\n"  # includes nothing of FlagTree's



def test_definitions_that_meet_upstream_s_new_ones_in_one_unit_clash(tmp_path: Path) -> None:
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"include/triton/Util.h": UTIL, "lib/Pass.cpp": PASS_OLD, "lib/Other.cpp": "int other();\n"}, "v1")
    git(repo, "tag", "v1")
    commit(repo, {"include/triton/Util.h": FLAGTREE_UTIL}, "[FlagTree] helpers")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"lib/Pass.cpp": PASS_NEW, "lib/Other.cpp": ELSEWHERE}, "v2")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "main")
    findings = drift_of(fork_world(repo), "v1", "v2", "main", symbols=True).findings
    clashes = {(f.path, f.line, f.details["declaration"], f.related_path) for f in findings
               if f.kind == "definition-clash"}
    assert clashes == {("include/triton/Util.h", 5, "ttg", "lib/Pass.cpp"),
                       ("include/triton/Util.h", 6, "TRITON_FLAG", "lib/Pass.cpp")}


def test_two_versions_of_one_definition_in_one_file_clash_only_where_the_branch_keeps_both(tmp_path: Path) -> None:
    """Seen on triton_v3.3.x onto 3.5.1: FlagTree and upstream each rewrote FOR_EACH_ARG_N in python/src/main.cc;
    the upgraded branch keeps FlagTree's alone, so no two definitions meet. Where the replay commits both sides of
    a conflict, both stand in the file, and they clash."""
    base = "#define ARGS(_1, _2, N, ...) N\n\nint main();\n"
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"python/src/main.cc": base}, "v1")
    git(repo, "tag", "v1")
    commit(repo, {"python/src/main.cc": base.replace("_2, N", "_2, _3, _4, N")}, "[FlagTree] more arguments")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"python/src/main.cc": base.replace("_2, N", "_2, _3, N")}, "v2")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "-b", "sync/v2", "v2")
    commit(repo, {"python/src/main.cc": base.replace("_2, N", "_2, _3, _4, N")}, "resolved: FlagTree's")
    git(repo, "checkout", "-q", "-b", "sync/both", "v2")
    commit(repo, {"python/src/main.cc": "#define ARGS(_1, _2, _3, N, ...) N\n" + base.replace("_2, N", "_2, _3, _4, N")},
           "both kept")
    git(repo, "checkout", "-q", "main")

    def clashes(target: str) -> list[str]:
        findings = drift_of(fork_world(repo), "v1", "v2", "main", target=target, symbols=True).findings
        return [f.details["declaration"] for f in findings if f.kind == "definition-clash"]

    assert clashes("sync/v2") == []
    assert clashes("sync/both") == ["ARGS"]
