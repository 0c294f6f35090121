"""The replay equals git cherry-pick where libgit2's merge_trees did not (issue 30): upstream renames are
followed, no phantom delete/modify, rename conflicts carry both paths. Each history is replayed path-wise
and by the full merge, and every pick is held to git cherry-pick (replay_both_ways)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pygit2

from sync.replay.commits import Replayer
from tests.test_speed_replay import LINES, commit, edit, replay_both_ways

BLOB = pygit2.GIT_FILEMODE_BLOB


def pick(repo: pygit2.Repository, onto: pygit2.Oid, picked: pygit2.Oid, policy: str = "markers"):  # noqa: ANN201
    return Replayer(repo, policy, "onto").pick_tree(repo[picked], repo[onto].tree)


def files(repo: pygit2.Repository, tree: pygit2.Oid | None) -> dict[str, bytes]:
    assert tree is not None
    out: dict[str, bytes] = {}

    def walk(node: pygit2.Tree, prefix: str) -> None:
        for entry in node:
            if isinstance(entry, pygit2.Tree):
                walk(entry, f"{prefix}{entry.name}/")
            else:
                out[prefix + str(entry.name)] = entry.peel(pygit2.Blob).data
    walk(repo[tree].peel(pygit2.Tree), "")
    return out


def test_flagtree_edit_lands_in_the_file_upstream_renamed(tmp_path: Path) -> None:
    """ProxFenceInsertion.cpp -> ProxyFenceInsertion.cpp on the 3.7 move: libgit2 said deleted-upstream and kept a
    stale file under the old name; git merges FlagTree's edit into the renamed file."""
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    old = commit(repo, {"lib/Prox.cpp": (LINES, BLOB), "k": (b"k\n", BLOB)}, [], "old")
    # 1806 paths changed upstream there: past libgit2's 1000 rename targets, so it saw no inexact rename
    many = {f"gen/{number}.txt": (b"generated %d\n" % number, BLOB) for number in range(1100)}
    onto = commit(repo, {"lib/Proxy.cpp": (edit(LINES, 1, b"upstream"), BLOB), "k": (b"k\n", BLOB), **many}, [old],
                  "rename")
    fork = commit(repo, {"lib/Prox.cpp": (edit(LINES, 30, b"flagtree"), BLOB), "k": (b"k\n", BLOB)}, [old], "edit")
    outcome = pick(repo, onto, fork)
    assert outcome.conflicts == []
    assert files(repo, outcome.tree) == {"lib/Proxy.cpp": edit(edit(LINES, 1, b"upstream"), 30, b"flagtree"),
                                         "k": b"k\n", **{path: data for path, (data, _) in many.items()}}
    paths, full, _ = replay_both_ways(repo, old, fork, onto)
    assert paths == full


def test_no_phantom_delete_modify_where_flagtree_left_the_file_alone(tmp_path: Path) -> None:
    """"[INIT] Init flagtree" on the 3.3 line: upstream moved x to c, FlagTree (x untouched) adds the same c.
    libgit2 reported add/add on c and delete/modify on x and kept x; git deletes x, cleanly."""
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    old = commit(repo, {"x.h": (LINES, BLOB), "k": (b"k\n", BLOB)}, [], "old")
    onto = commit(repo, {"third/c.h": (LINES, BLOB), "k": (b"k\n", BLOB)}, [old], "upstream moves x")
    fork = commit(repo, {"x.h": (LINES, BLOB), "third/c.h": (LINES, BLOB), "k": (b"k\n", BLOB)}, [old], "init")
    outcome = pick(repo, onto, fork)
    assert outcome.conflicts == []
    assert files(repo, outcome.tree) == {"third/c.h": LINES, "k": b"k\n"}
    paths, full, _ = replay_both_ways(repo, old, fork, onto)
    assert paths == full


def test_rename_conflicts_carry_both_paths(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    old = commit(repo, {"a.cpp": (LINES, BLOB), "k": (b"k\n", BLOB)}, [], "old")
    onto = commit(repo, {"b.cpp": (edit(LINES, 5, b"upstream"), BLOB), "k": (b"k\n", BLOB)}, [old], "rename a to b")
    edited = commit(repo, {"a.cpp": (edit(LINES, 5, b"flagtree"), BLOB), "k": (b"k\n", BLOB)}, [old], "edit a")
    deleted = commit(repo, {"k": (b"k\n", BLOB)}, [old], "delete a")
    moved = commit(repo, {"c.cpp": (LINES, BLOB), "k": (b"k\n", BLOB)}, [old], "rename a to c")
    found = {name: [(c.path, c.kind, c.base_path) for c in pick(repo, onto, oid).conflicts]
             for name, oid in (("edited", edited), ("deleted", deleted), ("moved", moved))}
    assert found == {"edited": [("b.cpp", "renamed-upstream", "a.cpp")],
                     "deleted": [("b.cpp", "rename/delete", "a.cpp")],
                     "moved": [("a.cpp", "rename/rename", None), ("b.cpp", "rename/rename", "a.cpp"),
                               ("c.cpp", "rename/rename", "a.cpp")]}  # git leaves all three unmerged
    hunks = pick(repo, onto, edited).conflicts[0].hunks
    assert [(h.ours, h.theirs) for h in hunks] == [("upstream\n", "flagtree\n")]
    for oid in (edited, deleted, moved):
        for policy in ("markers", "ours", "theirs", "stop"):
            paths, full, _ = replay_both_ways(repo, old, oid, onto, policy)
            assert paths == full


def _upgrade_branch(world, branch: str, out: Path) -> tuple[str, list[tuple[str, str]]]:
    from tests.conftest import git, invoke
    result = invoke("upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--target-branch",
                    branch, "--out", str(out), "--quiet")
    assert result.exit_code == 1, result.output  # the planted conflicts
    document = json.loads((out / "report.json").read_text())
    conflicts = [(c["path"], c["kind"]) for commit in document["commits"] for c in commit["conflicts"]]
    return git(world.fork, "rev-parse", f"{branch}^{{tree}}").strip(), conflicts


def test_merge_attributes_outside_the_merged_trees_change_nothing(world, tmp_path: Path) -> None:
    """Issue 31.6: `* merge=union` in the checked-out work tree, in info/attributes or in the user's global
    attributes file merged a conflict silently (and the branch depended on what was checked out). The replay
    reads no attributes: the same command gives the same branch and the same conflicts with or without them."""
    plain = _upgrade_branch(world, "sync/plain", tmp_path / "plain")
    union = "* merge=union\n"
    (world.fork / ".gitattributes").write_text(union)
    (world.fork / ".git" / "info").mkdir(exist_ok=True)
    (world.fork / ".git" / "info" / "attributes").write_text(union)
    global_attributes = Path(os.environ["HOME"]) / ".config" / "git" / "attributes"
    global_attributes.parent.mkdir(parents=True)
    global_attributes.write_text(union)
    assert _upgrade_branch(world, "sync/union", tmp_path / "union") == plain
    assert any(kind == "content" for _, kind in plain[1])


def test_a_file_name_that_is_not_utf8_is_carried_byte_for_byte(world, tmp_path: Path) -> None:
    """Issue 31.7: a name with the byte 0xff made upgrade and drift exit 3 (the tree writer took only UTF-8).
    Names are bytes in git: the upgraded branch holds the same bytes, drift and the report do not crash."""
    from tests.conftest import commit_files, git, invoke
    odd = os.fsdecode(b"python/triton/odd\xffname.py")
    commit_files(world, {odd: "x = 1\n"}, "A file whose name is not UTF-8")
    upgraded = invoke("upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                      "--out", str(tmp_path / "upgrade"), "--quiet")
    assert upgraded.exit_code == 1, upgraded.output  # the planted conflicts, not a crash (3)
    listed = subprocess.run(["git", "-C", str(world.fork), "ls-tree", "-z", "--name-only", "sync/v3.6.0",
                             "python/triton/"], capture_output=True, check=True).stdout.split(b"\0")
    assert b"python/triton/odd\xffname.py" in listed
    assert git(world.fork, "fsck", "--no-dangling") == ""
    drift = invoke("drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                   "--out", str(tmp_path / "drift"), "--quiet")
    assert drift.exit_code in (0, 1), drift.output
    json.loads((tmp_path / "drift" / "report.json").read_text())


def test_orphan_reverts_are_named_and_chained(tmp_path: Path) -> None:
    """B reverts A, which is left out as upstream's; C reverts B. Without dropping, B is an orphan and C is not
    (B is replayed); dropping B makes C's revert an orphan too. A revert of a commit outside the range is one."""
    from sync.replay.engine import LEFT_OUT, OUTSIDE_RANGE, orphan_reverts
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    base = commit(repo, {"k": (b"k\n", BLOB)}, [], "base")
    a = commit(repo, {"k": (b"a\n", BLOB)}, [base], "A")
    b = commit(repo, {"k": (b"k\n", BLOB)}, [a], f'Revert "A"\n\nThis reverts commit {a}.\n')
    c = commit(repo, {"k": (b"a\n", BLOB)}, [b], f'Revert "Revert "A""\n\nThis reverts commit {str(b)[:12]}.\n')
    d = commit(repo, {"k": (b"d\n", BLOB)}, [c], f"Undo the base\n\nThis reverts commit {base}.\n")
    plan = [str(a), str(b), str(c), str(d)]
    left_out = {str(a): "same-patch"}
    assert orphan_reverts(repo, plan, left_out, dropping=False) == {
        str(b): (str(a), LEFT_OUT), str(d): (str(base), OUTSIDE_RANGE)}
    assert orphan_reverts(repo, plan, left_out, dropping=True) == {
        str(b): (str(a), LEFT_OUT), str(c): (str(b), LEFT_OUT), str(d): (str(base), OUTSIDE_RANGE)}


def test_drop_orphan_reverts_leaves_the_revert_out_and_the_report_names_it(world, tmp_path: Path) -> None:
    from tests.conftest import commit_files, git, invoke
    upstream_commit = git(world.fork, "rev-list", "-1", "v3.5.0").strip()  # in OLD's history: outside the range
    commit_files(world, {"python/triton/flagtree_note.py": "NOTE = 1\n"},
                 f'Revert "an upstream change"\n\nThis reverts commit {upstream_commit}.')
    revert = git(world.fork, "rev-parse", "HEAD").strip()
    documents = {}
    for name, extra in (("kept", []), ("dropped", ["--drop-orphan-reverts"])):
        result = invoke("upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--target-branch",
                        f"sync/{name}", "--out", str(tmp_path / name), *extra)
        assert result.exit_code == 1, result.output
        assert f"{revert[:9]} reverts {upstream_commit[:9]}, which is not a commit of the range" in result.output
        documents[name] = json.loads((tmp_path / name / "report.json").read_text())
        entry = next(c for c in documents[name]["commits"] if c["source"] == revert)
        assert entry["reverts"] == {"commit": upstream_commit, "why": "outside-range", "dropped": name == "dropped"}
        assert (entry["result"] is None) == (name == "dropped")
        assert "Reverts of commits not replayed" in (tmp_path / name / "summary.md").read_text()
    kept_files = git(world.fork, "ls-tree", "-r", "--name-only", "sync/kept")
    dropped_files = git(world.fork, "ls-tree", "-r", "--name-only", "sync/dropped")
    assert "python/triton/flagtree_note.py" in kept_files and "python/triton/flagtree_note.py" not in dropped_files


def test_the_report_schema_knows_every_conflict_kind() -> None:
    from sync.model.kinds import family
    schema = json.loads((Path(__file__).parent.parent / "sync" / "model" / "report.schema.json").read_text())
    assert set(schema["$defs"]["conflict"]["properties"]["kind"]["enum"]) == {kind.id for kind in family("conflict")}


def test_a_rename_conflict_carries_both_paths_in_json_and_sarif() -> None:
    from sync.model.report import Conflict
    from sync.report.sarif import sarif_log
    conflict = Conflict("ab" * 20, "edit a", "b.cpp", "renamed-upstream", "markers", ("shared-trunk",), (), "a.cpp")
    assert conflict.to_json()["path"] == "b.cpp" and conflict.to_json()["base_path"] == "a.cpp"
    run = sarif_log([], "test", [conflict])["runs"][0]
    assert run["tool"]["driver"]["rules"][0]["id"] == "renamed-upstream"
    (result,) = run["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "b.cpp"
    assert result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "a.cpp"


def test_a_conflict_in_a_file_whose_name_is_not_utf8_is_reported(tmp_path: Path) -> None:
    """The conflicted file's name goes into the commit's trailer as its bytes and into the report escaped."""
    from tests.conftest import invoke
    repo = tmp_path / "repo"
    run = lambda *args: subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)  # noqa: E731
    repo.mkdir()
    run("init", "-q", "-b", "main")
    odd = repo / os.fsdecode(b"lib/odd\xffname.cpp")
    odd.parent.mkdir()
    odd.write_bytes(LINES)
    run("add", "-A"), run("commit", "-qm", "base"), run("tag", "v1")
    odd.write_bytes(edit(LINES, 2, b"upstream"))
    run("commit", "-qam", "upstream"), run("tag", "v2")
    run("checkout", "-q", "-b", "fork", "v1")
    odd.write_bytes(edit(LINES, 2, b"flagtree"))
    run("commit", "-qam", "FlagTree's edit")
    result = invoke("upgrade", "--repo", str(repo), "--from", "v1", "--onto", "v2", "--branch", "fork",
                    "--out", str(tmp_path / "out"), "--quiet")
    assert result.exit_code == 1, result.output
    document = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [(c["path"], c["kind"]) for commit in document["commits"] for c in commit["conflicts"]] == \
        [(os.fsdecode(b"lib/odd\xffname.cpp"), "content")]
    message = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%B", "sync/v2~1"],  # below the pin
                             capture_output=True, check=True).stdout
    assert b"FlagTree-Sync-Conflicts: lib/odd\xffname.cpp\n" in message
    assert "odd\\udcffname.cpp" in (tmp_path / "out" / "summary.md").read_text()


def test_git_merge_tree_leaves_no_scratch_directory_and_sweeps_a_killed_runs(tmp_path: Path) -> None:
    """git merge-tree runs in a scratch GIT_DIR under <git dir>/flagtree-sync/scratch: removed after each merge,
    and one a run killed with -9 left (its process gone) is removed by the next merge."""
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    old = commit(repo, {"a.cpp": (LINES, BLOB)}, [], "old")
    onto = commit(repo, {"b.cpp": (LINES, BLOB)}, [old], "rename a to b")
    fork = commit(repo, {"a.cpp": (edit(LINES, 5, b"flagtree"), BLOB)}, [old], "edit a")
    scratch = tmp_path / "repo" / "flagtree-sync" / "scratch"
    left = scratch / "999999999-abcdefgh"  # no such process
    (left / "refs").mkdir(parents=True)
    outcome = pick(repo, onto, fork)  # a rename upstream: git's full merge
    assert outcome.conflicts == [] and "b.cpp" in files(repo, outcome.tree)
    assert list(scratch.iterdir()) == []
