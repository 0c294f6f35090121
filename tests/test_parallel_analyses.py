"""The heavy analyses run side by side in worker processes and give what a serial run gives: the same
findings in the same order, the same skipped files, facts stored in the fact cache for the next run."""
from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sync.drift import outcome, parallel
from sync.drift import registry
from sync.drift.context import DriftContext
from sync.facts.parsing import recording_skips, skipped
from sync.drift.registry import ANALYZERS, Analyzer
from sync.support.cache import FactCache, using
from sync.model import Finding, MergedOverlay
from sync.support.progress import Silent
from tests.test_speed_parity import _forget, _world
from .cache_rows import rows


def _pid_finding(context: DriftContext) -> list[Finding]:
    skipped("some/file.py", "left out on purpose")
    return [Finding("analysis-skipped", ".", f"ran in {os.getpid()}")]


def _run(context: DriftContext, analyzers: tuple[Analyzer, ...], cache: FactCache | None,
         parse_bytes: int, trees: tuple = ()) -> tuple[str, dict[tuple[str, str], str]]:
    _forget()
    fresh = dataclasses.replace(context, _facts={}, _tables={})
    with using(cache), recording_skips() as skips:
        fresh.prefetch_fork_python()
        found = parallel.run_analyses(analyzers, fresh, Silent(), skips,
                                      parse_bytes, trees)
    return json.dumps([dataclasses.asdict(f) for f in found.findings], sort_keys=True, default=str), dict(skips.skipped)


@pytest.fixture
def two_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", "2")


def test_workers_give_the_serial_findings_in_order(tmp_path: Path, two_workers: None) -> None:
    context = _world(tmp_path / "repo")
    serial, serial_skips = _run(context, ANALYZERS, None, parse_bytes=0)  # below the threshold: serial
    side_by_side, skips = _run(context, ANALYZERS, None, parse_bytes=parallel.PARALLEL_BYTES)
    kinds = [finding["kind"] for finding in json.loads(serial)]
    assert {"call-signature", "key-string", "symbol-removed"} <= set(kinds)
    assert side_by_side == serial and skips == serial_skips


# Order between processes is set by signals, never by sleeps: an analysis marks that it began (a file), and
# another waits for that mark. HANG is no timing assert: a wait that runs out only lets a wrong order show as
# a wrong process in the findings, where a plain wait would hang the suite.
HANG = 60.0


def _mark(where: Path, name: str) -> None:
    (where / name).touch()


def _await(where: Path, name: str) -> bool:
    deadline = time.monotonic() + HANG
    while not (where / name).exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def _probe(where: Path, name: str, *, waits_for: str | None = None) -> Callable[[DriftContext], list[Finding]]:
    """An analysis that marks it began, waits (when told) for another to have begun, and says where it ran."""
    def analyze(context: DriftContext) -> list[Finding]:
        _mark(where, name)
        if waits_for is not None:
            _await(where, waits_for)
        return _pid_finding(context)
    return analyze


def test_heavy_analyses_run_in_other_processes_and_their_skips_come_back(tmp_path: Path, two_workers: None) -> None:
    context = _world(tmp_path / "repo")
    # The light one keeps the parent busy until the worker has taken the first heavy one.
    probe = (Analyzer("light", _probe(tmp_path, "light", waits_for="heavy one")),
             Analyzer("heavy one", _probe(tmp_path, "heavy one"), on_request=True),
             Analyzer("heavy two", _pid_finding, on_request=True))
    found, skips = _run(context, probe, None, parse_bytes=parallel.PARALLEL_BYTES)
    pids = [finding["message"].split()[-1] for finding in json.loads(found)]
    assert pids[0] == str(os.getpid()) and pids[1] != str(os.getpid())
    assert set(skips) == {("light", "some/file.py"), ("heavy one", "some/file.py"), ("heavy two", "some/file.py")}

    serial, _ = _run(context, probe, None, parse_bytes=0)  # "heavy one" has begun before: the light one goes on
    assert {finding["message"] for finding in json.loads(serial)} == {f"ran in {os.getpid()}"}


def _merging(context: DriftContext) -> outcome.Found:
    """An analysis that made a clean merge, as the overlays analysis does, and says where it ran."""
    return outcome.Found(_pid_finding(context), [MergedOverlay(f"merged/in/{os.getpid()}.py", b"merged\n")])


def test_merges_come_back_from_whichever_process_made_them(tmp_path: Path, two_workers: None) -> None:
    """Issue 49: an analysis returns its merges, never writes them into the shared context (a worker's writes
    stay in the worker's copy); the runner gives them in registry order, as it gives the findings."""
    context = _world(tmp_path / "repo")
    probe = (Analyzer("light", _probe(tmp_path, "light", waits_for="heavy one")),
             Analyzer("heavy one", _probe(tmp_path, "heavy one", waits_for="heavy two"), on_request=True),
             Analyzer("heavy two", _merging, on_request=True))
    fresh = dataclasses.replace(context, _facts={}, _tables={})
    with recording_skips() as skips:
        found = parallel.run_analyses(probe, fresh, Silent(), skips, parallel.PARALLEL_BYTES)
    pids = [finding.message.split()[-1] for finding in found.findings]
    assert pids[1] != str(os.getpid()), "the first heavy one ran in the worker"
    assert [merge.path for merge in found.merged] == [f"merged/in/{pids[2]}.py"]
    assert not hasattr(fresh, "merged")


def test_the_parent_takes_heavy_tasks_no_worker_has_begun(tmp_path: Path, two_workers: None) -> None:
    """Two cores: one worker and the parent. While the worker runs the first heavy analysis, the parent runs
    the others (none waits in the pool's queue for a busy worker); findings stay in registry order."""
    context = _world(tmp_path / "repo")
    # The worker's analysis lasts until the parent has begun the last of the others.
    probe = (Analyzer("light", _probe(tmp_path, "light", waits_for="heavy one")),
             Analyzer("heavy one", _probe(tmp_path, "heavy one", waits_for="heavy four"), on_request=True),
             *(Analyzer(f"heavy {name}", _probe(tmp_path, f"heavy {name}"), on_request=True)
               for name in ("two", "three", "four")))
    found, skips = _run(context, probe, None, parse_bytes=parallel.PARALLEL_BYTES)
    pids = [finding["message"].split()[-1] for finding in json.loads(found)]
    parent = str(os.getpid())
    assert pids[0] == parent and pids[1] != parent and pids[2:] == [parent] * 3, pids
    assert len(skips) == 5


def test_a_heavy_analysis_that_reads_what_the_light_ones_read_stays_in_the_parent(tmp_path: Path,
                                                                                   two_workers: None) -> None:
    """Analyzer.in_parent: the parent runs it with the light ones, though a worker is idle; the rest still go
    to the worker first (the longest), and the findings stay in registry order."""
    context = _world(tmp_path / "repo")
    probe = (Analyzer("light", _probe(tmp_path, "light", waits_for="heavy")),
             Analyzer("heavy", _probe(tmp_path, "heavy", waits_for="pinned"), on_request=True, cost=5.0),
             Analyzer("short", _pid_finding, on_request=True, cost=0.1),
             Analyzer("pinned", _probe(tmp_path, "pinned"), on_request=True, cost=9.0, in_parent=True))
    found, _ = _run(context, probe, None, parse_bytes=parallel.PARALLEL_BYTES)
    pids = [finding["message"].split()[-1] for finding in json.loads(found)]
    parent = str(os.getpid())
    assert pids[0] == parent and pids[1] != parent and pids[3] == parent, pids


def test_the_longest_heavy_analysis_is_handed_out_first(tmp_path: Path, two_workers: None) -> None:
    """Analyzer.cost orders the queue: the worker, free first, takes the long one registered last, and the
    parent, once through the light ones, the short ones; findings stay in registry order."""
    context = _world(tmp_path / "repo")
    probe = (Analyzer("light", _probe(tmp_path, "light", waits_for="long")),
             *(Analyzer(f"short {name}", _probe(tmp_path, f"short {name}"), on_request=True, cost=0.1)
               for name in ("one", "two")),
             Analyzer("long", _probe(tmp_path, "long", waits_for="short two"), on_request=True, cost=5.0))
    found, _ = _run(context, probe, None, parse_bytes=parallel.PARALLEL_BYTES)
    pids = [finding["message"].split()[-1] for finding in json.loads(found)]
    parent = str(os.getpid())
    assert pids[:3] == [parent] * 3 and pids[3] != parent, pids


def test_facts_computed_in_workers_reach_the_fact_cache(tmp_path: Path, two_workers: None) -> None:
    context = _world(tmp_path / "repo")
    (tmp_path / "git-dir").mkdir()
    _run(context, ANALYZERS, FactCache(tmp_path / "git-dir"), parse_bytes=parallel.PARALLEL_BYTES)
    kinds = {row.bucket for row in rows(tmp_path / "git-dir")}
    assert "function-table-v2" in kinds  # only the call-signature and co-change analyses read function tables


def test_an_error_in_a_worker_is_raised_in_the_caller(tmp_path: Path, two_workers: None) -> None:
    def broken(context: DriftContext) -> list[Finding]:
        raise KeyError("a bug in an analysis")

    context = _world(tmp_path / "repo")
    probe = (Analyzer("heavy one", _pid_finding, on_request=True), Analyzer("broken", broken, on_request=True))
    with pytest.raises(KeyError, match="a bug in an analysis"):
        _run(context, probe, None, parse_bytes=parallel.PARALLEL_BYTES)


def test_one_core_runs_everything_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", "1")
    context = _world(tmp_path / "repo")
    probe = (Analyzer("heavy one", _pid_finding, on_request=True), Analyzer("heavy two", _pid_finding, on_request=True))
    found, _ = _run(context, probe, None, parse_bytes=parallel.PARALLEL_BYTES)
    assert {finding["message"] for finding in json.loads(found)} == {f"ran in {os.getpid()}"}


def test_blobs_a_worker_could_not_read_are_marked_missing_in_the_caller(tmp_path: Path, two_workers: None) -> None:
    def unreadable(context: DriftContext) -> list[Finding]:
        context.fork.missing.add("python/triton/gone.py")  # what GitTree.read notes for a blob not in the store
        return []

    context = _world(tmp_path / "repo")
    probe = (Analyzer("heavy one", unreadable, on_request=True), Analyzer("heavy two", _pid_finding, on_request=True))
    _run(context, probe, None, parse_bytes=parallel.PARALLEL_BYTES, trees=(context.fork, context.upstream_old))
    assert context.fork.missing == {"python/triton/gone.py"} and not context.upstream_old.missing


def _split_probe(context: DriftContext, part: int, parts: int) -> tuple[int, int, int]:
    skipped(f"part/{part}.py", "left out on purpose")
    return part, parts, os.getpid()


def _joined(context: DriftContext, shares: list[tuple[int, int, int]]) -> list[Finding]:
    return [Finding("analysis-skipped", ".", f"{[share[:2] for share in shares]} from {len({s[2] for s in shares})} "
                    f"processes joined in {os.getpid()}")]


def _split_analyzer() -> Analyzer:
    return Analyzer("split", lambda context: [Finding("analysis-skipped", ".", "whole")], on_request=True,
                    parts=registry.Parts(_split_probe, _joined, most=3))


def test_cores_left_over_split_an_analysis_into_parts_joined_in_the_parent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four cores, two heavy analyses: the two spare cores give the splitting one three parts (its most),
    which are joined, in part order, in the parent; their skips come back."""
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", "4")
    context = _world(tmp_path / "repo")
    (tmp_path / "git-dir").mkdir()
    probe = (_split_analyzer(), Analyzer("heavy two", _pid_finding, on_request=True))
    found, skips = _run(context, probe, FactCache(tmp_path / "git-dir"), parse_bytes=parallel.PARALLEL_BYTES)
    messages = [finding["message"] for finding in json.loads(found)]
    assert messages[0].startswith("[(0, 3), (1, 3), (2, 3)] from ") and messages[0].endswith(f"in {os.getpid()}")
    assert {("split", f"part/{part}.py") for part in range(3)} <= set(skips)


@pytest.mark.parametrize("jobs, cache", [("2", True), ("4", False)])
def test_an_analysis_runs_whole_without_spare_cores_or_a_fact_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str, cache: bool) -> None:
    """No core left over (two for two heavy analyses), or no fact cache to share what the parts all read."""
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", jobs)
    context = _world(tmp_path / "repo")
    (tmp_path / "git-dir").mkdir()
    probe = (_split_analyzer(), Analyzer("heavy two", _pid_finding, on_request=True))
    found, _ = _run(context, probe, FactCache(tmp_path / "git-dir") if cache else None,
                    parse_bytes=parallel.PARALLEL_BYTES)
    assert json.loads(found)[0]["message"] == "whole"


def test_split_analyses_give_the_serial_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Six cores more than heavy analyses: symbols in four parts, call signatures in three, key strings in two."""
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", str(sum(analyzer.on_request and not analyzer.in_parent
                                                      for analyzer in ANALYZERS) + 6))
    context = _world(tmp_path / "repo")
    serial, serial_skips = _run(context, ANALYZERS, None, parse_bytes=0)
    (tmp_path / "git-dir").mkdir()
    tasks = parallel._tasks
    seen: list[list[parallel.Task]] = []
    monkeypatch.setattr(parallel, "_tasks", lambda *args: seen.append(tasks(*args)) or seen[-1])
    split, skips = _run(context, ANALYZERS, FactCache(tmp_path / "git-dir"), parse_bytes=parallel.PARALLEL_BYTES)
    parts = {ANALYZERS[number].name: of for number, _, of in seen[0] if of > 1}
    assert parts == {"symbols": 4, "call signatures": 3, "key strings": 2}
    assert {"symbol-removed", "call-signature", "key-string"} <= {finding["kind"] for finding in json.loads(serial)}
    assert split == serial and skips == serial_skips


def test_a_split_analysis_is_joined_while_other_tasks_still_run(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", "4")  # two heavy analyses: three parts for the one that splits

    def slow(context: DriftContext) -> list[Finding]:  # lasts until the split one is joined, or HANG runs out
        return [Finding("analysis-skipped", ".", f"saw the join: {_await(tmp_path, 'joined')}")]

    def joined_at(context: DriftContext, shares: list[tuple[int, int, int]]) -> list[Finding]:
        _mark(tmp_path, "joined")
        return [Finding("analysis-skipped", ".", "joined")]

    context = _world(tmp_path / "repo")
    (tmp_path / "git-dir").mkdir()
    probe = (Analyzer("slow", slow, on_request=True),
             Analyzer("split", lambda context: [], on_request=True,
                      parts=registry.Parts(_split_probe, joined_at, most=3)))
    found, _ = _run(context, probe, FactCache(tmp_path / "git-dir"), parse_bytes=parallel.PARALLEL_BYTES)
    assert [finding["message"] for finding in json.loads(found)] == ["saw the join: True", "joined"]
