"""The analysis's first parse, begun in worker processes before the replay (sync/drift/ahead.py): the
same findings as a run without it, begun only on a first run, and never left running."""
from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ContextManager

import pytest

from sync.drift import run as drift
from sync.drift import ahead
from sync.facts import pyblobs
from sync.facts.delta import forget_fork_diffs, fork_python_texts
from sync.support.cache import FactCache, content_id, using
from sync.demo.world import World
from sync.git import GitTree, open_repo
from sync.jobs import ReplayChoices, UpgradeOptions, run_upgrade
from sync.jobs import upgrade as upgrade_job
from sync.drift.analyses.callsigs import CALLS
from sync.drift.registry import python_facts
from sync.jobs.revs import resolve_range
from sync.replay.commits import Replayer


@pytest.fixture
def adopted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The content ids whose facts the caller took from the workers."""
    taken: list[str] = []
    real = ahead.adopt
    monkeypatch.setattr(ahead, "adopt", lambda found, stored=False: real(
        (taken.append(key) or (key, facts) for key, facts in found), stored=stored))
    return taken


@pytest.fixture
def workers_pay(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two cores, and the demo's few kilobytes of Python worth workers (a real fork has megabytes)."""
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", "2")
    monkeypatch.setattr(pyblobs, "PARALLEL_BYTES", 0)


@contextmanager
def _kept(begun: ContextManager[ahead.Ahead], handles: list[ahead.Ahead]) -> Iterator[ahead.Ahead]:
    with begun as handle:
        handles.append(handle)
        yield handle


def _forget() -> None:
    pyblobs.current().memo.clear()
    forget_fork_diffs()


def _drift_findings(world: World) -> str:
    _forget()
    repo = open_repo(world.fork)
    result = drift.analyse_drift(repo, resolve_range(repo, world.old_tag, world.new_tag, world.fork_branch), None,
                                 symbols=True)
    return json.dumps([dataclasses.asdict(finding) for finding in result.findings], sort_keys=True, default=str)


def test_drift_with_the_parse_begun_early_finds_what_it_finds_without(
        world: World, workers_pay: None, adopted: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "off")  # every run a first run
    early = _drift_findings(world)
    assert adopted, "the workers parsed the fork's Python and the analysis took it"
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", "1")  # one core: nothing is begun early
    adopted.clear()
    assert _drift_findings(world) == early and not adopted
    assert json.loads(early), "the demo's drift has findings to compare"


def test_upgrade_begins_the_parse_before_its_replay(
        world: World, workers_pay: None, adopted: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "off")
    _forget()
    handles: list[ahead.Ahead] = []
    real_ahead = upgrade_job.parsing_ahead
    monkeypatch.setattr(upgrade_job, "parsing_ahead", lambda *args: _kept(real_ahead(*args), handles))
    begun_while_replaying = []
    real_pick = Replayer.pick_tree
    monkeypatch.setattr(Replayer, "pick_tree", lambda self, *args: begun_while_replaying.append(
        len(handles) == 1 and handles[0].begun is not None) or real_pick(self, *args))
    first = run_upgrade(str(world.fork), old=world.old_tag, onto=world.new_tag, source_branch=world.fork_branch,
                        options=UpgradeOptions(replay=ReplayChoices(target_branch="sync/early")))
    assert begun_while_replaying and all(begun_while_replaying)
    assert adopted and handles[0].begun is None  # the analysis of this run took it
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", "1")
    _forget()
    second = run_upgrade(str(world.fork), old=world.old_tag, onto=world.new_tag, source_branch=world.fork_branch,
                         options=UpgradeOptions(replay=ReplayChoices(target_branch="sync/serial")))
    assert [f.to_json() for f in first.findings] == [f.to_json() for f in second.findings]


def test_a_run_that_diffed_these_trees_before_begins_nothing(world: World, workers_pay: None,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "on")
    repo = open_repo(world.fork)
    rng = resolve_range(repo, world.old_tag, world.new_tag, world.fork_branch)
    assert ahead._python_to_parse(repo, rng), "a first run parses the fork's Python early"
    _drift_findings(world)  # stores the diff and the facts
    assert ahead._python_to_parse(repo, rng) == []


def test_leaving_without_taking_stops_the_workers(world: World, workers_pay: None,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "off")
    repo = open_repo(world.fork)
    rng = resolve_range(repo, world.old_tag, world.new_tag, world.fork_branch)
    with ahead.parsing_ahead(repo, rng, python_facts()) as handle:
        begun = handle.begun
        assert begun is not None
        processes = list(begun.pool._processes.values())  # type: ignore[union-attr]
    assert handle.begun is None
    for process in processes:
        process.join(timeout=10)
        assert not process.is_alive()


def test_a_forked_process_never_waits_on_its_parents_workers(world: World, workers_pay: None,
                                                            adopted: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "off")
    repo = open_repo(world.fork)
    rng = resolve_range(repo, world.old_tag, world.new_tag, world.fork_branch)
    with ahead.parsing_ahead(repo, rng, python_facts()) as handle:
        assert handle.begun is not None
        monkeypatch.setattr(handle.begun, "owner", os.getpid() + 1)  # what a worker forked later sees
        ahead.settle(handle)
        assert not adopted and handle.begun is None


def test_known_facts_are_those_in_memory_or_the_cache(tmp_path: Path) -> None:
    text = "def f(x):\n    return x\n"
    (tmp_path / "git").mkdir()
    with using(FactCache(tmp_path / "git")):
        pyblobs.python_fact("calls", text)  # parsed and stored
        pyblobs.current().memo.clear()
        assert pyblobs.known(text)
    with using(FactCache(tmp_path / "git")):
        assert not pyblobs.known("def g():\n    pass\n")


def test_the_workers_put_what_they_parse_in_the_fact_cache_and_send_none_of_it(
        world: World, workers_pay: None, adopted: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Facts a worker stored stay in the fact cache, where the caller reads them as its analyses ask: sent through
    the pipe too, the caller held every file's facts twice while it replayed (issue 46: 25 MB on the 3.7 move)."""
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "on")
    put_here: list[tuple[str, str]] = []  # (kind, key) this process stored (a forked worker's list is its own)
    real = FactCache.put
    monkeypatch.setattr(FactCache, "put", lambda self, kind, version, key, value: put_here.append((kind, key))
                        or real(self, kind, version, key, value))
    _drift_findings(world)
    assert not adopted, "nothing sent back: the cache holds it"
    repo = open_repo(world.fork)
    rng = resolve_range(repo, world.old_tag, world.new_tag, world.fork_branch)
    keys = {content_id(text) for text in fork_python_texts(GitTree.of_commit(repo, rng.old.oid, "old"),
                                                           GitTree.of_commit(repo, rng.source.oid, "fork"))}
    assert keys - {key for kind, key in put_here if kind == pyblobs._CACHE_KIND}, "the workers parsed some"
    pyblobs.current().memo.clear()
    with using(FactCache.for_git_dir(repo.path)):
        assert all(pyblobs._lookup(key) is not None for key in keys)


def test_without_a_fact_cache_the_workers_send_what_they_parse(world: World, workers_pay: None,
                                                               adopted: list[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "off")
    _drift_findings(world)
    assert adopted


def test_a_begun_parse_is_taken_only_by_the_run_that_holds_it(world: World, workers_pay: None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse begun is the run's (its Ahead), not the process's: another analysis meanwhile begins and takes
    its own, and leaves this one to its holder."""
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "off")
    repo = open_repo(world.fork)
    rng = resolve_range(repo, world.old_tag, world.new_tag, world.fork_branch)
    with ahead.parsing_ahead(repo, rng, python_facts()) as held:
        assert held.begun is not None
        _drift_findings(world)
        assert held.begun is not None  # still there for the run that began it
        ahead.settle(held)
        assert held.begun is None


def test_the_workers_parse_with_the_extractors_of_the_run(world: World, workers_pay: None,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """What the workers begun before the replay compute is what the run's PythonFacts lists, handed to them."""
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "off")
    sent: list[set[str]] = []
    real = ahead.adopt
    monkeypatch.setattr(ahead, "adopt", lambda found, stored=False: real(
        (sent.append(set(facts)) or (key, facts) for key, facts in found), stored=stored))
    repo = open_repo(world.fork)
    rng = resolve_range(repo, world.old_tag, world.new_tag, world.fork_branch)
    only_calls = pyblobs.PythonFacts([CALLS])
    with ahead.parsing_ahead(repo, rng, only_calls) as held, pyblobs.reading(only_calls):
        ahead.settle(held)
    assert sent and all(names == {"calls"} for names in sent)
    assert only_calls.memo and all(set(facts) == {"calls"} for facts in only_calls.memo.values())


def test_a_drift_leaves_no_parse_in_memory(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 46: once the analyses are done, the trees, declarations, fork diff and Python facts they kept go,
    so that the report is built in that memory instead of on top of it (the fact cache keeps what a rerun reads)."""
    from sync.facts import cpp, declindex, delta, parsing
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", "1")
    from sync.drift import registry
    kept: list[pyblobs.PythonFacts] = []
    made = registry.python_facts
    monkeypatch.setattr(registry, "python_facts", lambda: kept.append(made()) or kept[-1])
    assert json.loads(_drift_findings(world)), "the demo's drift has findings"
    assert kept and not kept[-1].memo
    assert not cpp._TREES._trees and not parsing._TREES._trees
    assert not declindex._memo and not delta._added_memo
