"""The fact cache: same reports with and without it, used when warm, safe to delete, no writes through symlinks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sync.facts import pyfacts
from sync.facts import pyfacts_cst
from sync.drift.analyses import symbols
from sync.support.cache import FactCache, content_id, using
from sync.demo.world import World
from sync.jobs import DriftOptions, run_drift
from sync.report.document import render_json

from .cache_rows import database_of, rows
from .conftest import git


def clear_memory_caches() -> None:
    for function in (pyfacts.parse_module_facts, pyfacts.function_table, pyfacts_cst._function_nodes,
                     symbols.python_shape):
        function.cache_clear()


def drift_document(world: World, monkeypatch: pytest.MonkeyPatch, cache: bool) -> str:
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "on" if cache else "off")
    clear_memory_caches()
    report = run_drift(str(world.fork), old=world.old_tag, onto=world.new_tag, source=world.fork_branch,
                       options=DriftOptions(symbols=True))
    return render_json(report)


def cache_dir(world: World) -> Path:
    return Path(git(world.fork, "rev-parse", "--absolute-git-dir").strip()) / "flagtree-sync" / "cache"


def test_reports_are_the_same_with_and_without_the_cache(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    without = drift_document(world, monkeypatch, cache=False)
    assert not cache_dir(world).exists()
    cold = drift_document(world, monkeypatch, cache=True)
    entries = rows(cache_dir(world).parent.parent)
    assert entries and {row.bucket for row in entries} >= {"module-facts-v2", "statements-v2"}
    parses = []
    real = pyfacts._parse_module_facts
    monkeypatch.setattr(pyfacts, "_parse_module_facts", lambda *args: parses.append(args) or real(*args))
    warm = drift_document(world, monkeypatch, cache=True)
    assert parses == []  # every module's facts came from the cache
    assert without == cold == warm
    assert json.loads(warm)["groups"]  # a report with something in it


def test_deleting_or_corrupting_the_cache_changes_nothing(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    first = drift_document(world, monkeypatch, cache=True)
    entries = rows(cache_dir(world).parent.parent)
    for entry in entries[::2]:
        entry.write_text("{not json")
    for entry in entries[1::4]:
        entry.write_text(json.dumps({"an entry of": "another shape"}))
    assert drift_document(world, monkeypatch, cache=True) == first
    assert json.loads(entries[0].read_text()) != "{not json"  # a bad entry is rewritten
    for entry in entries:
        entry.delete()
    assert drift_document(world, monkeypatch, cache=True) == first
    database_of(cache_dir(world).parent.parent).write_bytes(b"not a database at all")
    assert drift_document(world, monkeypatch, cache=True) == first  # run without it


@pytest.mark.parametrize("link", ["flagtree-sync", "flagtree-sync/cache", "flagtree-sync/cache/facts.sqlite",
                                  "flagtree-sync/cache/facts.sqlite-wal", "flagtree-sync/cache/facts.sqlite-shm",
                                  "flagtree-sync/cache/facts.sqlite-journal"])
def test_no_write_through_a_symlink(world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, link: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    git_dir = cache_dir(world).parent.parent
    target = git_dir / link
    target.parent.mkdir(parents=True, exist_ok=True)
    pointed = outside if link.count("/") < 2 else outside / "file"  # a directory, or a file that is not there
    target.symlink_to(pointed, target_is_directory=pointed == outside)
    reference = drift_document(world, monkeypatch, cache=False)
    assert drift_document(world, monkeypatch, cache=True) == reference
    assert list(outside.iterdir()) == []


def test_entries_are_keyed_by_blob_id_and_version(tmp_path: Path) -> None:
    git_dir = tmp_path / "repo.git"
    git_dir.mkdir()
    text = "x = 1\n"
    assert content_id(text) == "7d4290a117a4ddcc11daae7ea675841033830c8f"  # git hash-object
    cache = FactCache(git_dir)
    with using(cache):
        cache.put("kind", 1, content_id(text), ["value"])
        assert cache.get("kind", 1, content_id(text)) == ["value"]
        assert cache.get("kind", 2, content_id(text)) is None  # another analyzer version: a miss
        assert cache.keys("kind", 1) == [content_id(text)] and cache.keys("kind", 2) == []
    assert [(row.bucket, row.key) for row in rows(git_dir)] == [("kind-v1", content_id(text))]
    assert json.loads(rows(git_dir)[0].read_text()) == ["value"]


def test_rows_are_written_in_batches_that_other_connections_see_after_a_flush(tmp_path: Path) -> None:
    """A transaction per row wrote a whole page to the log each time (1.3 s of a first run): rows wait in the
    process's batch, which the process itself reads, until flush (a full batch, a worker's answer, close)."""
    git_dir = tmp_path / "repo.git"
    git_dir.mkdir()
    writer, reader = FactCache(git_dir), FactCache(git_dir)  # two connections, as two processes have
    writer.put("kind", 1, "a", ["one"])
    assert writer.get("kind", 1, "a") == ["one"] and writer.holds("kind", 1, "a")
    assert reader.get("kind", 1, "a") is None  # not written yet
    writer.flush()
    assert reader.get("kind", 1, "a") == ["one"]
    writer.put("kind", 1, "b", ["two"])
    writer.close()  # writes what is left
    assert reader.get("kind", 1, "b") == ["two"]
    reader.close()
    assert sorted(row.key for row in rows(git_dir)) == ["a", "b"]


def test_the_database_reads_a_large_fact_in_few_pages(tmp_path: Path) -> None:
    """Facts are a few KB to 1 MB of JSON: 64 KiB pages read through a mapping (4 KiB pages took a pread
    each, 200,000 on a first run of the 3.7 move), in WAL mode so that the workers write beside the parent."""
    git_dir = tmp_path / "repo.git"
    git_dir.mkdir()
    cache = FactCache(git_dir)
    with using(cache):
        cache.put("kind", 1, "key", ["x" * 300_000])
        assert cache.get("kind", 1, "key") == ["x" * 300_000]
    import sqlite3
    with sqlite3.connect(database_of(git_dir)) as connection:
        assert connection.execute("PRAGMA page_size").fetchone()[0] == 65536
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_the_forks_added_lines_come_from_the_cache_and_a_diff_that_missed_a_blob_is_not_kept(
        world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pygit2

    from sync.facts import delta
    from sync.git import GitTree
    repo = pygit2.Repository(str(world.fork))
    trees = [GitTree.of_commit(repo, repo.revparse_single(rev).peel(pygit2.Commit).id, rev)
             for rev in (world.old_tag, world.fork_branch)]
    delta.forget_fork_diffs()
    plain = delta.fork_added_lines(*trees)
    assert plain
    diffs: list[object] = []
    (tmp_path / "git-dir").mkdir()
    (tmp_path / "other-git-dir").mkdir()
    real = delta.tree_added_lines
    monkeypatch.setattr(delta, "tree_added_lines", lambda *args: diffs.append(args) or real(*args))
    with using(FactCache(tmp_path / "git-dir")):
        delta.forget_fork_diffs()
        assert delta.fork_added_lines(*trees) == plain and len(diffs) == 1
    with using(FactCache(tmp_path / "git-dir")):
        delta.forget_fork_diffs()
        assert delta.fork_added_lines(*trees) == plain and len(diffs) == 1  # read back, not diffed again

    def unreadable(old, new, wanted, unread):  # noqa: ANN001, ANN202
        unread.append("lib/x.cpp")
        return real(old, new, wanted)
    monkeypatch.setattr(delta, "tree_added_lines", unreadable)
    with using(FactCache(tmp_path / "other-git-dir")):
        delta.forget_fork_diffs()
        delta.fork_added_lines(*trees)
    assert rows(tmp_path / "other-git-dir") == []
    delta.forget_fork_diffs()
