"""The path-wise replay (pick_paths) gives exactly the trees and commits of the full merge (git merge-tree),
and both give what plain `git cherry-pick` gives, pick by pick: the same tree outside the conflicted files
and the same conflicted paths."""
from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from sync.demo.world import World
from sync.git.ort import OrtError
from sync.git.pick import TreePick, merge_whole_trees, pick_paths, pick_tree
from sync.git.reference import CherryPicker, GitPick, aside, cherry_picker, differing_paths
from sync.git.repo import commit_range
from sync.replay.commits import PickOutcome, Replayer

SIGNATURE = pygit2.Signature("Test", "test@example.com", 1700000000, 0)
FileMap = dict[str, tuple[bytes, int]]  # path -> (content, mode)


def write_tree(repo: pygit2.Repository, files: FileMap) -> pygit2.Oid:
    nested: dict = {}
    for path, entry in files.items():
        *dirs, name = path.split("/")
        node = nested
        for part in dirs:
            node = node.setdefault(part, {})
        node[name] = entry

    def build(node: dict) -> pygit2.Oid:
        builder = repo.TreeBuilder()
        for name, item in node.items():
            if isinstance(item, dict):
                builder.insert(name, build(item), pygit2.GIT_FILEMODE_TREE)
            else:
                builder.insert(name, repo.create_blob(item[0]), item[1])
        return builder.write()
    return build(nested)


def commit(repo: pygit2.Repository, files: FileMap, parents: list[pygit2.Oid], message: str) -> pygit2.Oid:
    return repo.create_commit(None, SIGNATURE, SIGNATURE, message, write_tree(repo, files), parents)


def replay_both_ways(repo: pygit2.Repository, old: pygit2.Oid, source: pygit2.Oid, onto: pygit2.Oid,
                     policy: str = "markers") -> tuple[list[tuple[str, str]], list[tuple[str, str]], int]:
    """(tree id, commit id) per replayed commit, path-wise and by the full merge; and how many took the fast
    path. Each path-wise pick is also held to git cherry-pick of the same commit onto the same head."""
    with cherry_picker(repo) as git:
        paths, fast_picks = _replay(repo, old, source, onto, policy, "paths", git)
        full, _ = _replay(repo, old, source, onto, policy, "full", None)
    return paths, full, fast_picks


def _replay(repo: pygit2.Repository, old: pygit2.Oid, source: pygit2.Oid, onto: pygit2.Oid, policy: str, way: str,
            git: CherryPicker | None) -> tuple[list, int]:
    replayer = Replayer(repo, policy, "onto")
    head = repo[onto]
    out: list = []
    fast_picks = 0
    for oid in commit_range(repo, repo[old], repo[source]):
        picked = repo[oid]
        parent_tree = picked.parents[0].tree
        if way == "paths":
            outcome = pick_tree(repo, picked, head.tree, policy, "onto")
            fast_picks += pick_paths(repo, parent_tree, head.tree, picked.tree, policy) is not None
        else:
            outcome = merge_whole_trees(repo, picked, parent_tree, head.tree, policy, "onto")
        if git is not None:
            assert_like_git(git, git.pick(str(head.id), str(oid)), outcome)
        conflicts = [(c.path, c.kind, tuple(c.hunks), c.base_path) for c in outcome.conflicts]
        if outcome.tree is None:  # policy stop: the pick stopped; go on from the head
            out.append((None, None, tuple(conflicts)))
            continue
        new = replayer.commit(picked, outcome.tree, head.id, [])
        out.append((str(outcome.tree), str(new), tuple(conflicts)))
        head = repo[new]
    return out, fast_picks


def assert_like_git(picker: CherryPicker, git: GitPick | None, outcome: TreePick | PickOutcome) -> None:
    """The pick equals git cherry-pick's: the same unmerged paths, the same files elsewhere (where git 2.39
    itself does not abort with a BUG on a directory rename that meets a file/directory clash)."""
    if git is None:
        return
    assert {aside(conflict.path) for conflict in outcome.conflicts} == git.conflicted
    if outcome.tree is not None:
        assert differing_paths(picker.repo, outcome.tree, git.tree, git.conflicted) == []


def test_demo_world_replays_identically(world: World) -> None:
    repo = pygit2.Repository(str(world.fork))
    rev = lambda name: repo.revparse_single(name).peel(pygit2.Commit).id
    paths, full, fast = replay_both_ways(repo, rev(world.old_tag), rev(world.fork_branch), rev(world.new_tag))
    assert paths == full
    assert fast > 0  # the comparison covers the fast path, not only the fallback


LINES = b"".join(b"line %d\n" % n for n in range(40))


def edit(text: bytes, line: int, word: bytes) -> bytes:
    lines = text.splitlines(keepends=True)
    lines[line] = word + b"\n"
    return b"".join(lines)


@pytest.mark.parametrize("policy", ["markers", "ours", "theirs", "stop"])
def test_synthetic_world_replays_identically(tmp_path: Path, policy: str) -> None:
    """Renames, deletions, add/add, nested dirs, directory/file swaps, modes, clean content merges."""
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    blob, exe = pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE
    base: FileMap = {"a.py": (LINES, blob), "d.txt": (b"d\n", blob), "x/y/z.txt": (LINES, blob),
                     "gone/one.txt": (b"1\n", blob), "gone/two.txt": (b"2\n", blob), "run.sh": (b"#!/bin/sh\n", blob),
                     "f": (b"file\n", blob), "same.txt": (LINES, blob), "keep/k.txt": (b"k\n", blob)}
    old = commit(repo, base, [], "old")
    upstream = dict(base)
    upstream["moved/a.py"] = upstream.pop("a.py")  # rename
    del upstream["d.txt"]
    upstream["x/y/z.txt"] = (edit(LINES, 2, b"upstream"), blob)
    upstream["add.txt"] = (b"upstream add\n", blob)
    upstream["n/deep/new.txt"] = (b"new\n", blob)
    del upstream["gone/one.txt"], upstream["gone/two.txt"]
    upstream["run.sh"] = (b"#!/bin/sh\n", exe)
    upstream["same.txt"] = (edit(LINES, 5, b"both"), blob)
    onto = commit(repo, upstream, [old], "upstream")
    steps: list[FileMap] = []
    fork = dict(base)
    def step(**changes: tuple[bytes, int] | None) -> None:
        for key, value in changes.items():
            path = key.replace("__", "/").replace("_dot_", ".")
            if value is None:
                fork.pop(path, None)
            else:
                fork[path] = value
        steps.append(dict(fork))
    step(a_dot_py=(edit(LINES, 30, b"fork"), blob))  # modified where upstream renamed it
    step(d_dot_txt=(b"d changed\n", blob))  # modify/delete
    step(add_dot_txt=(b"fork add\n", blob))  # add/add
    step(x__y__z_dot_txt=(edit(edit(LINES, 2, b"upstream"), 30, b"fork"), blob))  # clean content merge
    step(new__deep__er__file_dot_txt=(b"deep\n", blob), keep__k_dot_txt=None)  # nested add, directory emptied
    step(gone__one_dot_txt=(b"1 changed\n", blob))  # modify in a directory upstream deleted
    step(f=None, f__g_dot_txt=(b"now a directory\n", blob))  # file -> directory
    step(run_dot_sh=(b"#!/bin/sh\necho\n", blob))  # content change where upstream changed the mode
    step(same_dot_txt=(edit(LINES, 5, b"both"), blob))  # the same change on both sides
    step(x__y__z_dot_txt=(edit(LINES, 2, b"conflict"), blob))  # a content conflict
    step(n__deep__new_dot_txt=(b"new\n", blob))  # add/add, identical
    step(plain_dot_txt=(b"plain\n", exe))  # a new executable file
    head = old
    for number, files in enumerate(steps):
        head = commit(repo, files, [head], f"fork {number}")
    paths, full, fast = replay_both_ways(repo, old, head, onto, policy)
    assert paths == full
    assert 0 < fast < len(steps)  # both the fast path and the fallback ran


PATHS = ["a", "b", "d/a", "d/b", "d/e/f", "e", "e/x", "d", "g/h/a", "g/h/b"]
CONTENTS = [LINES, edit(LINES, 3, b"x"), edit(LINES, 30, b"y"), edit(edit(LINES, 3, b"x"), 30, b"y"), b"tiny\n"]
file_maps = st.dictionaries(st.sampled_from(PATHS),
                            st.tuples(st.sampled_from(CONTENTS),
                                      st.sampled_from([pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB,
                                                       pygit2.GIT_FILEMODE_BLOB_EXECUTABLE])),
                            max_size=6)
dropped = st.sets(st.sampled_from(PATHS), max_size=3)
moves = st.lists(st.tuples(st.sampled_from(PATHS), st.sampled_from(PATHS)), max_size=2)  # renames, across folders
Step = tuple[FileMap, set[str], list[tuple[str, str]]]
steps = st.tuples(file_maps, dropped, moves)


def changed(files: FileMap, changes: FileMap, drops: set[str], moved: list[tuple[str, str]] = []) -> FileMap:
    """files with entries moved (a rename, maybe into another directory; a directory's files move with it),
    then changed (edits, mode changes, re-adds) and dropped."""
    files = dict(files)
    for source, target in moved:
        for path in [path for path in files if path == source or path.startswith(source + "/")]:
            files[target + path[len(source):]] = files.pop(path)
    return prefix_free({path: entry for path, entry in {**files, **changes}.items() if path not in drops})


def prefix_free(files: FileMap) -> FileMap:
    """Drop paths under a path that is a file: a tree cannot hold both."""
    return {path: entry for path, entry in files.items()
            if not any(path.startswith(other + "/") for other in files)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=file_maps, upstream=st.lists(steps, min_size=1, max_size=2),
       fork_steps=st.lists(steps, min_size=1, max_size=4),
       policy=st.sampled_from(["markers", "ours", "theirs", "stop"]))
def test_random_histories_replay_identically(tmp_path: Path, base: FileMap, upstream: list[Step],
                                             fork_steps: list[Step], policy: str) -> None:
    """Random histories that rename, move files between directories, delete, re-add and change modes on
    both sides: the fast path, the full merge and git cherry-pick agree pick by pick."""
    repo_dir = tmp_path / "random"
    repo = pygit2.Repository(str(repo_dir)) if repo_dir.exists() else pygit2.init_repository(str(repo_dir), bare=True)
    old = commit(repo, prefix_free(base), [], "old")
    onto, files = old, prefix_free(base)
    for number, step in enumerate(upstream):
        files = changed(files, *step)
        onto = commit(repo, files, [onto], f"upstream {number}")
    head, files = old, prefix_free(base)
    for number, step in enumerate(fork_steps):
        files = changed(files, *step)
        head = commit(repo, files, [head], f"fork {number}")
    try:
        paths, full, _ = replay_both_ways(repo, old, head, onto, policy)
    except OrtError as exc:
        # git 2.39's merge-ort aborts on some directory renames (process_renames' assertion, seen here): git
        # cherry-pick cannot pick that commit either, and the tool says git failed (exit 2). Not a divergence.
        if "failed (-6)" in str(exc) and "Assertion" in str(exc):
            reject()
        raise
    assert paths == full


def test_a_rename_onto_a_file_upstream_added_replays_like_the_full_merge(tmp_path: Path) -> None:
    """Hypothesis found it: the fork moves b to a, upstream added the same a. The fast path hands it to the
    full merge, which (like git cherry-pick, checked pick by pick) merges the two identical files cleanly;
    libgit2's merge_trees called it a conflict."""
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    text = b"".join(b"line %d\n" % number for number in range(40))
    old = commit(repo, {}, [], "old")
    onto = commit(repo, {"a": (text, pygit2.GIT_FILEMODE_BLOB)}, [old], "upstream adds a")
    add_b = commit(repo, {"b": (text, pygit2.GIT_FILEMODE_BLOB)}, [old], "fork adds b")
    move = commit(repo, {"a": (text, pygit2.GIT_FILEMODE_BLOB)}, [add_b], "fork moves b to a")
    paths, full, _ = replay_both_ways(repo, old, move, onto)
    assert paths == full and full[1][2] == ()
    assert fast_pick(repo, onto, move) is None


def fast_pick(repo: pygit2.Repository, onto: pygit2.Oid, picked: pygit2.Oid, policy: str = "markers"):  # noqa: ANN201
    commit_ = repo[picked]
    return pick_paths(repo, commit_.parents[0].tree, repo[onto].tree, commit_.tree, policy)


@pytest.mark.parametrize("policy", ["markers", "ours", "theirs", "stop"])
def test_a_content_conflict_takes_the_fast_path_and_settles_like_the_full_merge(tmp_path: Path, policy: str) -> None:
    """A file both sides changed is merged by git (libgit2's content merge is not git's) on a tree of only
    that file; the conflict's hunks and the policy's file come from merge_blobs on git's stages."""
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    blob = pygit2.GIT_FILEMODE_BLOB
    old = commit(repo, {"a.txt": (LINES, blob), "b.txt": (LINES, blob)}, [], "old")
    onto = commit(repo, {"a.txt": (edit(LINES, 2, b"upstream"), blob), "b.txt": (LINES, blob)}, [old], "upstream")
    fork = commit(repo, {"a.txt": (edit(LINES, 2, b"fork"), blob), "b.txt": (edit(LINES, 9, b"fork"), blob)},
                  [old], "fork")
    fast = fast_pick(repo, onto, fork, policy)
    full = merge_whole_trees(repo, repo[fork], repo[old].tree, repo[onto].tree, policy, "onto")
    picked = pick_tree(repo, repo[fork], repo[onto].tree, policy, "onto")  # the fast path, with the markers' labels
    assert fast is not None and (picked.tree, picked.conflicts) == (full.tree, full.conflicts)
    assert [(c.path, c.kind) for c in full.conflicts] == [("a.txt", "content")]
    assert [(h.ours, h.base, h.theirs) for h in full.conflicts[0].hunks] == [("upstream\n", "line 2\n", "fork\n")]
    if full.tree is not None:
        kept = repo[full.tree].peel(pygit2.Tree)["a.txt"].data
        assert {"markers": b"<<<<<<< onto (upgraded)" in kept, "ours": b"upstream" in kept and b"fork\n" not in kept,
                "theirs": b"fork\n" in kept and b"upstream" not in kept}[policy]
        assert repo[full.tree].peel(pygit2.Tree)["b.txt"].data == edit(LINES, 9, b"fork")
    else:
        assert policy == "stop"
    paths, full_replay, _ = replay_both_ways(repo, old, fork, onto, policy)
    assert paths == full_replay


def test_a_rename_upstream_left_alone_takes_the_fast_path(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    blob = pygit2.GIT_FILEMODE_BLOB
    old = commit(repo, {"a.txt": (LINES, blob), "c.txt": (LINES, blob)}, [], "old")
    onto = commit(repo, {"a.txt": (LINES, blob), "c.txt": (edit(LINES, 1, b"upstream"), blob)}, [old], "upstream")
    move = commit(repo, {"b.txt": (edit(LINES, 30, b"fork"), blob), "c.txt": (LINES, blob)}, [old], "fork moves a")
    assert fast_pick(repo, onto, move) is not None
    paths, full, _ = replay_both_ways(repo, old, move, onto)
    assert paths == full


def test_a_rename_of_a_file_upstream_changed_goes_to_the_full_merge(tmp_path: Path) -> None:
    """The full merge carries upstream's change into the renamed file: path by path it would be lost."""
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    blob = pygit2.GIT_FILEMODE_BLOB
    old = commit(repo, {"a.txt": (LINES, blob)}, [], "old")
    onto = commit(repo, {"a.txt": (edit(LINES, 1, b"upstream"), blob)}, [old], "upstream")
    move = commit(repo, {"b.txt": (edit(LINES, 30, b"fork"), blob)}, [old], "fork moves a")
    assert fast_pick(repo, onto, move) is None
    paths, full, _ = replay_both_ways(repo, old, move, onto)
    assert paths == full
    assert repo[full[0][0]]["b.txt"].data == edit(edit(LINES, 1, b"upstream"), 30, b"fork")


def test_a_rename_that_collides_with_an_added_path_replays_as_git_does(tmp_path: Path) -> None:
    """Found by the property test below: upstream moves a to d/a with an edit, FlagTree rewrites a and adds d/a as
    upstream has it. git 2.39 commits nested conflict markers in d/a without a conflict ("rename involved in
    collision"); the replay writes the same file, its markers naming the picked commit by its id, not by git's
    short id and subject."""
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    blob = pygit2.GIT_FILEMODE_BLOB
    moved = edit(LINES, 3, b"x")
    old = commit(repo, {"a": (LINES, blob)}, [], "old")
    onto = commit(repo, {"d/a": (moved, blob)}, [old], "upstream")
    fork = commit(repo, {"a": (b"tiny\n", blob), "b": (LINES, blob), "d/a": (moved, blob)}, [old], "fork")
    paths, full, _ = replay_both_ways(repo, old, fork, onto)  # each pick held to git cherry-pick inside
    assert paths == full
    merged = repo[repo[paths[0][0]].peel(pygit2.Tree)["d/a"].id].data
    assert merged.startswith(b"<<<<<<<< ") and b"\ntiny\n" in merged  # git's nested markers, kept as git keeps them
