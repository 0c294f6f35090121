"""Each analysis's result kept with what it read of the upgraded branch (drift/analysis_cache.py, git/readlog.py):
after a fix on the branch, the analyses that read nothing the fix changed are reused, and the report is the
report of a run that kept nothing."""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace

import pygit2
import pytest

from sync.demo.world import World
from sync.drift import analysis_cache, result_cache
from sync.drift.analysis_cache import kept_piece
from sync.facts.includes import IncludeGraph
from sync.facts.parsing import analysing
from sync.git import GitTree
from sync.git.readlog import ReadLog, TreeMemo, logged_once, logging_reads
from sync.model import Finding
from sync.support.cache import FactCache
from sync.jobs import ConflictPolicy, DriftOptions, ReplayChoices, UpgradeOptions, run_drift, run_upgrade
from sync.report.document import render_json
from .conftest import git

BRANCH = "sync/v3.6.0"


pytestmark = pytest.mark.usefixtures("results_cached")


@pytest.fixture
def reused(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The analyses each run took from the cache."""
    names: list[str] = []
    real = analysis_cache.AnalysisCache.load

    def load(self: analysis_cache.AnalysisCache, name: str) -> analysis_cache.Kept | None:
        kept = real(self, name)
        if kept is not None:
            names.append(name)
        return kept
    monkeypatch.setattr(analysis_cache.AnalysisCache, "load", load)
    return names


def _report(world: World) -> str:
    return render_json(run_drift(str(world.fork), old=world.old_tag, onto=world.new_tag, source=world.fork_branch,
                                 options=DriftOptions(target=BRANCH, symbols=True)))


def _uncached(world: World, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as off:
        off.setenv(result_cache.SWITCH, "off")  # the whole result's cache and each analysis's
        return _report(world)


def _on_the_branch(world: World, change: str, *git_args: str) -> None:
    git(world.fork, "checkout", "-q", BRANCH)
    git(world.fork, *git_args)
    git(world.fork, "commit", "-qam", change)
    git(world.fork, "checkout", "-q", world.fork_branch)


def test_after_each_fix_the_report_is_the_uncached_one_and_the_rest_is_reused(
        world: World, reused: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run_upgrade(str(world.fork), old=world.old_tag, onto=world.new_tag, source_branch=world.fork_branch,
                options=UpgradeOptions(replay=ReplayChoices(conflicts=ConflictPolicy(policy="theirs"))))
    assert not reused  # the upgrade kept each analysis's result on its branch
    fixes = [  # each changes what some analysis reads: a finding goes, or the listing changes
        ("take compiler.py as upstream has it", "checkout", world.new_tag, "--", "python/triton/compiler/compiler.py"),
        ("drop an orphaned overlay", "rm", "-q", "third_party/alpha/backend/spec/triton/runtime/cache.py"),
        ("take the spec header as upstream's tag has none", "rm", "-q",
         "third_party/beta/backend/spec/include/flagtree_spec.h"),
    ]
    before = _report(world)
    for change, *args in fixes:
        _on_the_branch(world, change, *args)
        reused.clear()
        cached = _report(world)
        assert cached == _uncached(world, monkeypatch), change
        assert cached != before, change  # the fix shows
        assert reused, change  # and some analysis read nothing it changed
        before = cached
    assert "spec functions" not in reused  # the spec header's removal: a guard analysis read it


def test_a_note_in_a_file_no_analysis_reads_reuses_more(
        world: World, reused: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    run_upgrade(str(world.fork), old=world.old_tag, onto=world.new_tag, source_branch=world.fork_branch,
                options=UpgradeOptions(replay=ReplayChoices(conflicts=ConflictPolicy(policy="theirs"))))
    first = _report(world)
    ran_all = len(reused)
    git(world.fork, "checkout", "-q", BRANCH)
    (world.fork / "README.md").write_text("notes of a fix\n")
    git(world.fork, "commit", "-qam", "a note")
    git(world.fork, "checkout", "-q", world.fork_branch)
    reused.clear()
    assert _report(world) == first == _uncached(world, monkeypatch)
    assert len(reused) > ran_all


# --- the read log ------------------------------------------------------------------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> GitTree:
    return _tree_in(pygit2.init_repository(str(tmp_path / "r"), bare=True), files)


def _tree_in(repo: pygit2.Repository, files: dict[str, str]) -> GitTree:
    builder = repo.TreeBuilder()
    for name, text in files.items():
        builder.insert(name, repo.create_blob(text.encode()), pygit2.enums.FileMode.BLOB)
    tree = GitTree(repo, repo[builder.write()].peel(pygit2.Tree), "target:test")
    tree.watched = True
    return tree


def test_a_watched_tree_notes_entries_listing_and_whole_use(tmp_path: Path) -> None:
    tree = _tree(tmp_path, {"a.py": "a\n", "b.py": "b\n"})

    @lru_cache(maxsize=2)
    def keyed(t: GitTree) -> int:
        return 1
    with logging_reads(ReadLog()) as log:
        tree.read("a.py")
        tree.exists("gone.py")
    assert log.entries == {"a.py": tree.entry("a.py"), "gone.py": None} and not log.listed and not log.whole
    with logging_reads(ReadLog()) as log:
        tree.paths()
    assert log.listed and not log.whole and not log.entries
    with logging_reads(ReadLog()) as log:
        keyed(tree)  # a memo keyed by the tree hands out what any path gave
    assert log.whole
    with logging_reads(ReadLog()) as log:
        tree.tree  # noqa: B018 - its id or a diff of it
    assert log.whole
    tree.watched = False
    with logging_reads(ReadLog()) as log:
        tree.read("b.py"), tree.paths(), keyed(tree)
    assert not log.entries and not log.listed and not log.whole


def test_a_kept_value_replays_what_its_making_read_to_each_later_reader(tmp_path: Path) -> None:
    tree = _tree(tmp_path, {"a.py": "a\n", "b.py": "b\n"})
    memo: TreeMemo[bytes | None] = TreeMemo()

    class Holder:
        @logged_once
        def value(self) -> bytes | None:
            return tree.read("b.py")
    holder = Holder()
    with logging_reads(ReadLog()) as first:
        memo.get(tree, "k", lambda: tree.read("a.py"))
        assert holder.value == b"b\n"
    with logging_reads(ReadLog()) as second:
        assert memo.get(tree, "k", lambda: pytest.fail("made twice")) == b"a\n"
        assert holder.value == b"b\n"
    assert first.entries == second.entries == {"a.py": tree.entry("a.py"), "b.py": tree.entry("b.py")}
    assert not second.whole  # the memo is keyed by the tree's identity, not its hash


def test_an_entry_that_does_not_decode_is_a_miss() -> None:
    with pytest.raises(ValueError):
        ReadLog.from_json({"entries": {"a": ["x"]}, "listed": False, "whole": False})
    log = ReadLog.from_json({"entries": {"a": ["0" * 40, 33188], "b": None}, "listed": True, "whole": False})
    assert log.entries == {"a": ("0" * 40, 33188), "b": None} and log.listed


def test_a_piece_no_fix_read_is_kept_and_its_reads_count_for_the_whole(tmp_path: Path) -> None:
    """An analysis of pieces sharing one process's parses (declarations across the boundary): after a fix only
    the piece that read the fixed file runs again, and the kept piece's reads still ground the whole's entry."""
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    cache = FactCache(Path(repo.path))
    runs: list[str] = []

    def whole(context: SimpleNamespace) -> list[Finding]:
        def piece(path: str) -> Callable[[], list[Finding]]:
            return lambda: runs.append(path) or [Finding("symbol-removed", path, context.target.read(path).decode())]
        return [*kept_piece(context, "first", piece("a.h")),  # type: ignore[arg-type]
                *kept_piece(context, "second", piece("b.h"))]  # type: ignore[arg-type]

    def run(files: dict[str, str]) -> tuple[list[Finding], ReadLog]:
        tree = _tree_in(repo, files)
        context = SimpleNamespace(target=tree, trees=[tree],
                                  kept_results=analysis_cache.AnalysisCache(cache, repo, {"run": 1}, tree, dict))
        with analysing("boundary"), logging_reads(ReadLog()) as log:
            return whole(context), log
    first, _ = run({"a.h": "a", "b.h": "b"})
    assert runs == ["a.h", "b.h"]
    fixed, log = run({"a.h": "a", "b.h": "b fixed"})
    assert runs == ["a.h", "b.h", "b.h"]  # the first piece was kept
    assert [f.message for f in fixed] == ["a", "b fixed"] and [f.message for f in first] == ["a", "b"]
    assert set(log.entries) == {"a.h", "b.h"}  # what the kept piece read counts for the whole too


def test_the_include_graph_replays_what_a_kept_closure_read(tmp_path: Path) -> None:
    tree = _tree(tmp_path, {"a.cpp": '#include "b.h"\n', "b.h": '#include "c.h"\n', "c.h": "int c;\n"})
    with logging_reads(ReadLog()):
        assert IncludeGraph.of(tree).closure("a.cpp") == {"a.cpp", "b.h", "c.h"}
    with logging_reads(ReadLog()) as later:
        assert IncludeGraph.of(tree).closure("a.cpp") == {"a.cpp", "b.h", "c.h"}
        IncludeGraph.of(tree).closure("b.h")
    assert {"a.cpp", "b.h", "c.h"} <= set(later.entries) and later.listed and not later.whole
