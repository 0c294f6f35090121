"""Issue 33: a removed declaration's finding names the upstream commit that removed it and its PR number."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from sync.facts.upstreamlog import one_per_change, removing_commits, with_upstream_commits
from sync.model import Finding
from tests.test_symbols import commit


def test_the_commit_that_took_the_name_out_is_named_with_its_pr(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    old = commit(tmp_path, {"include/a.h": "int legacy();\nint kept();\n"}, "old")
    commit(tmp_path, {"include/a.h": "int legacy();\nint kept();\nint other();\n"}, "Add other (#11)")  # touches, keeps
    commit(tmp_path, {"include/a.h": "int kept();\nint other();\n"}, "[BACKEND] Drop legacy (#12)")
    new = commit(tmp_path, {"include/b.h": "int unrelated();\n"}, "Unrelated (#13)")
    repo = pygit2.Repository(str(tmp_path))
    found = removing_commits(repo, old, new, "include/a.h", "legacy")
    assert [subject for _, subject in found] == ["[BACKEND] Drop legacy (#12)"]
    finding = Finding("symbol-removed", "lib/x.cpp", "legacy: removed", line=3, related_path="include/a.h",
                      details={"declaration": "legacy", "sites": ["lib/x.cpp:3"]})
    (named,) = with_upstream_commits(repo, old, new, [finding])
    assert named.details["prs"] == ["12"] and "(#12)" in named.message
    assert removing_commits(repo, old, new, "include/a.h", "kept") == []  # never removed: no commit


def test_the_commits_that_changed_a_declaration_are_named_oldest_first(tmp_path: Path) -> None:
    from sync.facts.upstreamlog import changing_commits, commit_details
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    old = commit(tmp_path, {"a.py": "def f(a):\n    pass\n"}, "old")
    commit(tmp_path, {"a.py": "def f(a):\n    return 1\n"}, "Body only (#1)")  # same parameters
    commit(tmp_path, {"a.py": "def f(a, b):\n    return 1\n"}, "Add b (#2)")
    new = commit(tmp_path, {"a.py": "def f(a, b, c):\n    return 1\n"}, "[FE] Add c")
    repo = pygit2.Repository(str(tmp_path))
    read = lambda text: text.splitlines()[0]
    found, total = changing_commits(repo, old, new, ("a.py",), read)
    assert [subject for _, subject in found] == ["Add b (#2)", "[FE] Add c"] and total == 2
    tail, details = commit_details(found[:1], total)
    assert tail.endswith("(#2) and 1 more") and details["prs"] == ["2"]
    assert commit_details([], 0) == ("", {})


def test_an_ods_record_and_accessor_are_found_under_their_tablegen_spelling(tmp_path: Path) -> None:
    """On the 3.7 move MakeTensorPtrOp, AdvanceOp and getBoundaryCheck named no commit: TableGen spells them
    `def TT_MakeTensorPtrOp` and `$boundaryCheck`."""
    td = ('def TT_LoadOp : TT_Op<"load"> {\n  let arguments = (ins TT_Ptr:$ptr, DenseI32ArrayAttr:$boundaryCheck);\n}\n'
          'def TT_AdvanceOp : TT_Op<"advance"> {\n  let arguments = (ins TT_Ptr:$ptr);\n}\n')
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    old = commit(tmp_path, {"include/Ops.td": td}, "old")
    commit(tmp_path, {"include/Ops.td": td + "def TT_OtherOp : TT_Op<\"other\">;\n"}, "Add other (#11)")
    new = commit(tmp_path, {"include/Ops.td": 'def TT_LoadOp : TT_Op<"load"> {\n  let arguments = (ins TT_Ptr:$ptr);\n}\n'},
                 "Rewrite block pointer to be python-only (#9668)")
    repo = pygit2.Repository(str(tmp_path))
    for name in ("AdvanceOp", "getBoundaryCheck"):
        assert [subject for _, subject in removing_commits(repo, old, new, "include/Ops.td", name)] == [
            "Rewrite block pointer to be python-only (#9668)"], name
    assert removing_commits(repo, old, new, "include/Ops.td", "Advance") == []  # a whole name, not a part of one


def test_one_per_change_asks_for_a_changes_commits_once_for_every_backend() -> None:
    """Reading the commits walks every version of the file: backends standing on one change share the walk."""
    asked: list[tuple[str, ...]] = []

    def commits(key: tuple[str, ...]) -> tuple[list[tuple[str, str]], int]:
        asked.append(key)
        return [("abc123456", "Change it (#42)")], 1
    key = ("override", "a.py", "a.py", "C.f")
    sited = [(key, [f"third_party/{b}/x.py:1"], Finding("override-signature", f"third_party/{b}/x.py", "m", line=1,
                                                        backend=b)) for b in ("a", "b")]
    found = one_per_change(sited, commits)
    assert asked == [key]
    assert [f.details["prs"] for f in found] == [["42"], ["42"]]
