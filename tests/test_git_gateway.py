"""The git gateway: revision suggestions, renames computed once, blob diffs, worktrees, demo hashes."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest
import unidiff

from sync.demo.world import World, build_world
from tests.drift_helpers import drift_of
from sync.errors import UnknownRef
from sync.git import blob_patch, object_ids, open_repo, resolve_commit
from sync.git import diff as git_diff
from sync.git.worktree import detached_worktree

ROOT = Path(__file__).resolve().parents[1]


def test_a_typo_in_a_tag_suggests_the_close_ones(world: World) -> None:
    repo = open_repo(world.fork)
    with pytest.raises(UnknownRef, match=r"unknown revision 'v3\.6\.1'.*did you mean v3\.6\.0"):
        resolve_commit(repo, "v3.6.1")
    with pytest.raises(UnknownRef) as raised:
        resolve_commit(repo, "no-such-thing-at-all")
    assert "did you mean" not in str(raised.value) and "fetch upstream's tags" not in str(raised.value)
    with pytest.raises(UnknownRef, match=r"did you mean v3\.6\.0.*fetch upstream's tags"):  # a release tag: maybe unfetched
        resolve_commit(repo, "v3.6.1")


def test_upstream_renames_are_found_once_per_run(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = open_repo(world.fork)
    ids = [str(resolve_commit(repo, ref).id) for ref in (world.old_tag, world.new_tag, world.fork_branch)]
    old_tree, new_tree = repo[ids[0]].tree.id, repo[ids[1]].tree.id
    pairs: list[tuple[pygit2.Oid, pygit2.Oid]] = []
    real_diff = pygit2.Repository.diff

    def counting_diff(self: pygit2.Repository, a: object = None, b: object = None, **kwargs: object) -> object:
        if isinstance(a, pygit2.Tree) and isinstance(b, pygit2.Tree):
            pairs.append((a.id, b.id))
        return real_diff(self, a, b, **kwargs)

    monkeypatch.setattr(pygit2.Repository, "diff", counting_diff)
    monkeypatch.setattr(git_diff, "_similar_cache", {})
    result = drift_of(world, symbols=True)
    assert any(f.kind == "overlay-orphan" and "renamed" in f.message for f in result.findings)
    assert any(f.kind in ("symbol-drift", "symbol-removed") for f in result.findings)
    assert pairs.count((old_tree, new_tree)) == 1  # context renames and the symbol index share it


def test_a_blob_patch_writes_nothing_and_reads_a_missing_side_as_empty(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    blob = repo.create_blob(b"one\ntwo\n")
    before = object_ids(repo)
    added = blob_patch(repo, None, blob, "a.py", "a.py").text
    removed = blob_patch(repo, blob, None, "a.py", "a.py").text
    assert "index e69de29..814f4a4" in added and added.endswith("@@ -0,0 +1,2 @@\n+one\n+two\n")
    assert removed.endswith("@@ -1,2 +0,0 @@\n-one\n-two\n")
    assert repo.create_blob(b"") not in before  # the empty blob was never written by the diffs
    assert blob_patch(repo, None, None, "a", "a").text == ""


@pytest.mark.parametrize("before, after", [
    (b"a\nb\nc\n" + b"x\n" * 20 + b"d\ne\n", b"a\nB\nc\n" + b"x\n" * 20 + b"d\nE\nf\n"),  # two hunks
    (b"one\ntwo", b"one\ntwo\nthree"),  # no newline at the end, on both sides
    (b"", b"new\nfile\n"), (b"gone\n", b""),  # added, deleted
    (b"\x00\x01binary", b"\x00\x02binary"),  # no hunks
])
def test_blob_patch_hunks_are_those_unidiff_reads_from_its_text(tmp_path: Path, before: bytes, after: bytes) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    old = repo.create_blob(before) if before else None
    new = repo.create_blob(after) if after else None
    patch = blob_patch(repo, old, new, "f.cpp", "f.cpp")
    parsed = unidiff.PatchSet(patch.text)
    assert patch.hunks == tuple((hunk.source_start, hunk.source_length) for file in parsed for hunk in file)
    assert (patch.added, patch.removed) == (sum(file.added for file in parsed), sum(file.removed for file in parsed))
    assert len(patch.hunks) == (2 if len(before) > 30 else 0 if b"\x00" in before else 1)


def test_trees_of_one_repository_read_a_shared_blob_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sync.git import GitTree

    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    shared, own = repo.create_blob(b"same in both\n"), repo.create_blob(b"only in the second\n")

    def tree(entries: dict[str, pygit2.Oid]) -> pygit2.Tree:
        builder = repo.TreeBuilder()
        for name, blob in entries.items():
            builder.insert(name, blob, pygit2.GIT_FILEMODE_BLOB)
        return repo[builder.write()].peel(pygit2.Tree)

    first = GitTree(repo, tree({"a.py": shared}), "first")
    second = GitTree(repo, tree({"b.py": shared, "c.py": own}), "second")
    looked_up: list[str] = []
    real_getitem = type(repo).__getitem__
    monkeypatch.setattr(type(repo), "__getitem__", lambda self, key: looked_up.append(str(key)) or real_getitem(self, key))
    assert first.read("a.py") == second.read("b.py") == b"same in both\n"
    assert second.read("c.py") == b"only in the second\n" and first.read("c.py") is None
    assert looked_up == [str(shared), str(own)]


def test_the_worktree_is_removed_even_when_the_body_fails(world: World) -> None:
    repo = open_repo(world.fork)
    path = Path(repo.path) / "flagtree-sync" / "probe"
    with pytest.raises(RuntimeError):
        with detached_worktree(repo, path) as worktree:
            worktree.checkout(world.new_tag)
            assert (path / ".git").exists()
            raise RuntimeError("boom")
    assert not path.exists()
    listed = subprocess.run(["git", "-C", str(world.fork), "worktree", "list"], capture_output=True, text=True,
                            check=True).stdout
    assert str(path) not in listed


def test_the_demo_world_has_the_same_commits_as_before_the_gateway(tmp_path: Path) -> None:
    """Commit ids pinned from the builder before it moved behind sync/git (tag objects carry the build
    time, so only what they point at is compared)."""
    world = build_world(tmp_path / "w")

    def rev(repo: Path, ref: str) -> str:
        return subprocess.run(["git", "-C", str(repo), "rev-parse", ref], capture_output=True, text=True,
                              check=True).stdout.strip()

    assert rev(world.fork, "main") == "481cc31f93d7546cc061498e5ba900b6c34c0ffa"
    assert rev(world.upstream, "main") == "7088b0a26431bd7a7f380c105f891e061ee454bc"
    assert rev(world.fork, "v3.5.0^{commit}") == "d003ea2ec11ba8cee074d4bdbead35966ccdb9df"
    assert rev(world.fork, "v3.6.0^{commit}") == "7088b0a26431bd7a7f380c105f891e061ee454bc"
