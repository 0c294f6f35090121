"""The replay's pick memo: the same upgrade again merges nothing and gives the same branch and report; every
input of a merge is in the key; a remembered tree that left the object store, or an entry of another shape,
is merged again; FLAGTREE_SYNC_CACHE=off neither reads nor writes it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sync.demo.world import World
from sync.replay import commits
from sync.replay.pickmemo import KIND, VERSION

from .cache_rows import rows
from .conftest import git, invoke

UPGRADE = ["upgrade", "--from", "v3.5.0", "--onto", "v3.6.0", "-q"]


@pytest.fixture
def merges(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The commit of each pick that was really merged (a memo hit adds none)."""
    done: list[str] = []
    real = commits.pick_tree
    monkeypatch.setattr(commits, "pick_tree",
                        lambda repo, commit, *args: done.append(str(commit.id)) or real(repo, commit, *args))
    return done


def upgrade(world: World, out: Path, *extra: str) -> tuple[str, str, str]:
    """(the branch's tree, its replayed commits' conflicts as the journal of the report says, report.json)."""
    result = invoke(*UPGRADE, "--repo", str(world.fork), "--out", str(out), "--force", *extra)
    assert result.exit_code == 1, result.output  # the world's upgrade conflicts and drifts on purpose
    document = json.loads((out / "report.json").read_text())
    document.pop("generated", None)
    tree = git(world.fork, "rev-parse", "sync/v3.6.0^{tree}").strip()
    return tree, json.dumps(document["summary"], sort_keys=True), json.dumps(document["groups"], sort_keys=True)


def memo_rows(world: World) -> list:
    return rows(world.fork / ".git", f"{KIND}-v{VERSION}")


def test_the_same_upgrade_again_merges_nothing_and_gives_the_same_branch(world: World, merges: list[str],
                                                                        tmp_path: Path) -> None:
    first = upgrade(world, tmp_path / "one")
    merged = len(merges)
    assert merged > 0 and len(memo_rows(world)) == merged
    again = upgrade(world, tmp_path / "two")
    assert len(merges) == merged  # every pick read back
    assert again == first


def test_merge_inputs_are_in_the_key(world: World, merges: list[str], tmp_path: Path) -> None:
    upgrade(world, tmp_path / "one")
    picks = len(merges)
    upgrade(world, tmp_path / "two", "--on-conflict", "ours")  # another policy settles the conflicts
    assert len(merges) == 2 * picks
    git(world.fork, "config", "merge.renames", "false")  # git's merge reads the repository's configuration
    upgrade(world, tmp_path / "three")
    assert len(merges) == 3 * picks


def test_a_tree_gone_from_the_store_or_a_bad_entry_is_merged_again(world: World, merges: list[str],
                                                                  tmp_path: Path) -> None:
    first = upgrade(world, tmp_path / "one")
    merged = len(merges)
    stored = memo_rows(world)
    conflicted = [row for row in stored if json.loads(row.read_text())["conflicts"]]
    assert conflicted
    conflicted[0].write_text(json.dumps({"tree": "0" * 40, "conflicts": []}))  # a tree the store lacks
    stored[-1].write_text("[1, 2]")  # not an entry's shape
    again = upgrade(world, tmp_path / "two")
    assert len(merges) == merged + len({conflicted[0].key, stored[-1].key})
    assert again == first


def test_cache_off_neither_reads_nor_writes_the_memo(world: World, merges: list[str], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "off")
    first = upgrade(world, tmp_path / "one")
    merged = len(merges)
    upgrade(world, tmp_path / "two")
    assert len(merges) == 2 * merged and not (world.fork / ".git" / "flagtree-sync" / "cache").exists()
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "on")
    assert upgrade(world, tmp_path / "three") == first
