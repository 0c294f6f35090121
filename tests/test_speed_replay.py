"""The path-wise replay (pick_paths) gives exactly the trees and commits of the full merge_trees replay."""
from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sync.demo.world import World
from sync.git.replay import merge_whole_trees, pick_paths, pick_tree
from sync.git.repo import commit_range
from sync.replay import Replayer

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
    """(tree id, commit id) per replayed commit, path-wise and by merge_trees; and how many took the fast path."""
    replayer = Replayer(repo, policy, "onto")
    results = {}
    fast_picks = 0
    for way in ("paths", "full"):
        head = repo[onto]
        out = []
        for oid in commit_range(repo, repo[old], repo[source]):
            picked = repo[oid]
            parent_tree = picked.parents[0].tree
            if way == "paths":
                outcome = pick_tree(repo, picked, head.tree, policy, "onto")
                fast_picks += pick_paths(repo, parent_tree, head.tree, picked.tree, policy) is not None
            else:
                outcome = merge_whole_trees(repo, picked, parent_tree, head.tree, policy, "onto")
            conflicts = [(c.path, c.kind, tuple(c.hunks), c.base_path) for c in outcome.conflicts]
            if outcome.tree is None:  # policy stop: the pick stopped; go on from the head
                out.append((None, None, tuple(conflicts)))
                continue
            new = replayer.commit(picked, outcome.tree, head.id, [])
            out.append((str(outcome.tree), str(new), tuple(conflicts)))
            head = repo[new]
        results[way] = out
    return results["paths"], results["full"], fast_picks


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


PATHS = ["a", "b", "d/a", "d/b", "d/e/f", "e", "e/x", "d"]
CONTENTS = [LINES, edit(LINES, 3, b"x"), edit(LINES, 30, b"y"), edit(edit(LINES, 3, b"x"), 30, b"y"), b"tiny\n"]
file_maps = st.dictionaries(st.sampled_from(PATHS),
                            st.tuples(st.sampled_from(CONTENTS),
                                      st.sampled_from([pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB,
                                                       pygit2.GIT_FILEMODE_BLOB_EXECUTABLE])),
                            max_size=6)


dropped = st.sets(st.sampled_from(PATHS), max_size=3)


def changed(files: FileMap, changes: FileMap, drops: set[str]) -> FileMap:
    return prefix_free({path: entry for path, entry in {**files, **changes}.items() if path not in drops})


def prefix_free(files: FileMap) -> FileMap:
    """Drop paths under a path that is a file: a tree cannot hold both."""
    return {path: entry for path, entry in files.items()
            if not any(path.startswith(other + "/") for other in files)}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=file_maps, upstream=st.tuples(file_maps, dropped),
       fork_steps=st.lists(st.tuples(file_maps, dropped), min_size=1, max_size=4),
       policy=st.sampled_from(["markers", "ours", "theirs", "stop"]))
def test_random_histories_replay_identically(tmp_path: Path, base: FileMap, upstream: tuple[FileMap, set[str]],
                                             fork_steps: list[tuple[FileMap, set[str]]], policy: str) -> None:
    repo_dir = tmp_path / "random"
    repo = pygit2.Repository(str(repo_dir)) if repo_dir.exists() else pygit2.init_repository(str(repo_dir), bare=True)
    old = commit(repo, prefix_free(base), [], "old")
    onto = commit(repo, changed(base, *upstream), [old], "upstream")
    head, files = old, base
    for number, (changes, drops) in enumerate(fork_steps):
        files = changed(files, changes, drops)
        head = commit(repo, files, [head], f"fork {number}")
    paths, full, _ = replay_both_ways(repo, old, head, onto, policy)
    assert paths == full


def test_a_rename_onto_a_file_upstream_added_replays_like_the_full_merge(tmp_path: Path) -> None:
    """Hypothesis found it: the fork moves b to a, upstream added the same a. Path by path that looks
    clean; merge_trees sees rename/add. The fast path must hand such a commit to the full merge."""
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    text = b"".join(b"line %d\n" % number for number in range(40))
    old = commit(repo, {}, [], "old")
    onto = commit(repo, {"a": (text, pygit2.GIT_FILEMODE_BLOB)}, [old], "upstream adds a")
    add_b = commit(repo, {"b": (text, pygit2.GIT_FILEMODE_BLOB)}, [old], "fork adds b")
    move = commit(repo, {"a": (text, pygit2.GIT_FILEMODE_BLOB)}, [add_b], "fork moves b to a")
    paths, full, _ = replay_both_ways(repo, old, move, onto)
    assert paths == full and full[1][2]  # the second pick conflicts, both ways


def fast_pick(repo: pygit2.Repository, onto: pygit2.Oid, picked: pygit2.Oid, policy: str = "markers"):  # noqa: ANN201
    commit_ = repo[picked]
    return pick_paths(repo, commit_.parents[0].tree, repo[onto].tree, commit_.tree, policy)


@pytest.mark.parametrize("policy", ["markers", "ours", "theirs", "stop"])
def test_a_content_conflict_takes_the_fast_path_and_settles_like_the_full_merge(tmp_path: Path, policy: str) -> None:
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    blob = pygit2.GIT_FILEMODE_BLOB
    old = commit(repo, {"a.txt": (LINES, blob), "b.txt": (LINES, blob)}, [], "old")
    onto = commit(repo, {"a.txt": (edit(LINES, 2, b"upstream"), blob), "b.txt": (LINES, blob)}, [old], "upstream")
    fork = commit(repo, {"a.txt": (edit(LINES, 2, b"fork"), blob), "b.txt": (edit(LINES, 9, b"fork"), blob)},
                  [old], "fork")
    fast = fast_pick(repo, onto, fork, policy)
    assert fast is not None and [c.path for c in fast.conflicts] == ["a.txt"]
    assert fast.conflicts[0].hunks  # the markers' hunks, as the full merge reports them
    paths, full, _ = replay_both_ways(repo, old, fork, onto, policy)
    assert paths == full


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
