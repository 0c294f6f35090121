"""A read-only analysis never writes objects into the user's store (drift without --apply)."""
from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from sync.demo.world import World
from sync.drift.run import replayed_tree
from sync.jobs.revs import resolve_range
from tests.drift_helpers import drift_of
from sync.git import object_ids, open_repo, resolve_commit, scratch_repository
from sync.jobs.upgrade import resolve_params
from sync.replay.options import ReplayChoices
from sync.replay.engine import run_upgrade


def _ids(repo: pygit2.Repository, world: World) -> list[str]:
    return [str(resolve_commit(repo, ref).id) for ref in (world.old_tag, world.new_tag, world.fork_branch)]


def test_the_object_count_sees_an_in_memory_replay(world: World) -> None:
    """The measure below can fail: replaying straight into the repository does write objects."""
    repo = open_repo(world.fork)
    before = object_ids(repo)
    replayed_tree(repo, resolve_range(repo, world.old_tag, world.new_tag, world.fork_branch))
    assert object_ids(repo) - before


@pytest.mark.parametrize("with_target", [False, True])
def test_drift_writes_no_object(world: World, with_target: bool) -> None:
    repo = open_repo(world.fork)
    target = None
    if with_target:  # a real replayed branch, as drift --target reads it
        repo, params = resolve_params(str(world.fork), old=world.old_tag, onto=world.new_tag,
                                      source_branch=world.fork_branch,
                                      choices=ReplayChoices(target_branch="sync/target"))
        run_upgrade(repo, params, False, lambda *args: None)
        target = "sync/target"
    before = object_ids(repo)
    result = drift_of(world, target=target, symbols=True)
    assert result.findings  # the analysis ran: the demo drifts
    if not with_target:
        assert not any(f.kind == "target-unavailable" for f in result.findings)
    assert object_ids(repo) == before


def test_scratch_repository_reads_the_store_and_keeps_its_writes(world: World) -> None:
    repo = open_repo(world.fork)
    before = object_ids(repo)
    with scratch_repository(repo) as scratch:
        tag_commit = resolve_commit(repo, world.new_tag)
        assert scratch[tag_commit.id].tree.id == tag_commit.tree.id  # objects come through the alternates
        blob = scratch.create_blob(b"only in the scratch store\n")
        assert blob in scratch
    assert blob not in repo
    assert object_ids(repo) == before


def test_a_dead_runs_scratch_store_is_swept_and_nothing_else(tmp_path) -> None:
    """A run killed with -9 cannot delete its scratch store (a trial user found one per kill under /tmp)."""
    import os
    import subprocess
    repo = pygit2.init_repository(str(tmp_path / "repo"), bare=True)
    parent = tmp_path / "repo" / "flagtree-sync" / "scratch"
    parent.mkdir(parents=True)
    finished = subprocess.Popen(["true"])  # its pid belongs to no process any more
    finished.wait()
    dead = finished.pid
    (parent / f"{dead}-abcdef12" / "objects").mkdir(parents=True)  # what a killed run leaves
    (parent / f"{os.getpid()}-live0001").mkdir()  # a run still going (this process)
    (parent / "notes-of-mine").mkdir()  # not a name the tool makes
    (tmp_path / "elsewhere").mkdir()
    (parent / f"{dead}-symlink1").symlink_to(tmp_path / "elsewhere")
    with scratch_repository(repo) as scratch:
        inside = Path(scratch.path).resolve()
        assert inside.parent == parent.resolve()
        assert sorted(entry.name for entry in parent.iterdir() if entry.resolve() != inside) == sorted(
            [f"{os.getpid()}-live0001", "notes-of-mine", f"{dead}-symlink1"])
    assert not inside.exists() and (tmp_path / "elsewhere").is_dir()
