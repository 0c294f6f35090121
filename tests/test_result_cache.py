"""The drift result cache: a hit gives the uncached report without analysing; every input the result
depends on is in the key; a bad entry recomputes; FLAGTREE_SYNC_CACHE=off neither reads nor writes it."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from sync.drift import run as drift
from sync.drift import result_cache
from sync.git import inputs
from sync.demo.world import World
from sync.git import open_repo
from sync.jobs import ConflictPolicy, DriftOptions, ReplayChoices, UpgradeOptions, run_drift, run_upgrade
from sync.jobs.revs import resolve_range, resolve_rev
from sync.model import Finding, Review
from sync.support.progress import Silent
from sync.report.document import render_json

from .cache_rows import Row, rows
from .conftest import commit_files, git

A = "third_party/alpha/backend/spec/"


pytestmark = pytest.mark.usefixtures("results_cached")


@pytest.fixture
def analyses(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """One item per analysis that really ran (a miss); a hit adds none."""
    calls: list[tuple] = []
    real = drift._analyse
    monkeypatch.setattr(drift, "_analyse", lambda *args: calls.append(args[2:6]) or real(*args))
    return calls


def drift_json(world: World, target: str | None = None, backends: frozenset[str] = frozenset(),
               symbols: bool = True, old: str | None = None) -> str:
    report = run_drift(str(world.fork), old=old or world.old_tag, onto=world.new_tag, source=world.fork_branch,
                       options=DriftOptions(target=target, backends=backends, symbols=symbols))
    return render_json(report)


def entries(world: World) -> list[Row]:
    git_dir = Path(git(world.fork, "rev-parse", "--absolute-git-dir").strip())
    return rows(git_dir, f"{result_cache.KIND}-v")


def analyse(world: World, target: str | None = None, backends: set[str] | None = None) -> drift.DriftResult:
    repo = open_repo(world.fork)
    return drift.analyse_drift(repo, resolve_range(repo, world.old_tag, world.new_tag, world.fork_branch),
                               resolve_rev(repo, target) if target else None, backends, symbols=True)


def test_a_hit_gives_the_uncached_report_without_analysing(world: World, analyses: list[tuple],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "off")
    uncached = drift_json(world)
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "on")
    cold = drift_json(world)
    assert len(analyses) == 2 and len(entries(world)) == 1
    from sync.drift import registry
    failing = [dataclasses.replace(analyzer, analyze=lambda context: pytest.fail("an analyzer ran on a hit"))
               for analyzer in registry.ANALYZERS]
    monkeypatch.setattr(registry, "ANALYZERS", failing)  # a hit calls no analyzer at all
    warm = drift_json(world)
    assert len(analyses) == 2
    assert uncached == cold == warm
    assert json.loads(warm)["groups"]  # a report with something in it


def test_a_hit_rebuilds_the_same_result_field_by_field(world: World, analyses: list[tuple]) -> None:
    computed = analyse(world)
    reused = analyse(world)
    assert len(analyses) == 1 and isinstance(reused, drift.ReusedResult)
    assert isinstance(reused.owners, drift.ReusedOwners)
    assert reused.findings == computed.findings  # frozen dataclasses: every field, and its type, compared
    assert [type(f.details) for f in reused.findings] == [type(f.details) for f in computed.findings]
    assert reused.merged == computed.merged and computed.merged  # the demo has clean overlay merges
    assert reused.owners.backends == computed.owners.backends
    paths = [f.path for f in computed.findings] + ["CMakeLists.txt", "python/triton/ops/matmul.py", "README.md"]
    assert [reused.owners.owners(p) for p in paths] == [computed.owners.owners(p) for p in paths]


def test_each_input_of_the_result_misses(world: World, analyses: list[tuple]) -> None:
    first = drift_json(world)
    assert drift_json(world) == first and len(analyses) == 1
    drift_json(world, symbols=False)
    drift_json(world, backends=frozenset({"alpha"}))
    drift_json(world, backends=frozenset({"beta"}))
    old_commit = git(world.fork, "rev-parse", f"{world.old_tag}^{{commit}}").strip()
    drift_json(world, old=old_commit)  # the same commit by another name: the name is in findings and labels
    assert len(analyses) == 5
    for _ in range(2):  # and each of them is a hit now
        drift_json(world, symbols=False)
        drift_json(world, backends=frozenset({"beta"}))
    assert len(analyses) == 5
    commit_files(world, {A + "NOTES.md": "a new fork commit\n"}, "a new fork commit")
    drift_json(world)
    assert len(analyses) == 6 and len(entries(world)) == 6


def test_a_different_target_misses_and_a_remade_commit_of_the_same_tree_hits(world: World,
                                                                                analyses: list[tuple]) -> None:
    run_upgrade(str(world.fork), old=world.old_tag, onto=world.new_tag, source_branch=world.fork_branch,
                options=UpgradeOptions(replay=ReplayChoices(conflicts=ConflictPolicy(policy="theirs"))))
    assert len(analyses) == 1  # the upgrade's own analysis of its branch
    target = drift_json(world, target="sync/v3.6.0")
    assert len(analyses) == 1  # the same branch, the same key: upgrade and drift share the entry
    git(world.fork, "branch", "other", "sync/v3.6.0")
    drift_json(world, target="other")  # another name: findings carry it
    assert len(analyses) == 2
    git(world.fork, "checkout", "-q", "other")
    commit_files(world, {A + "NOTES.md": "changed on the target\n"}, "a fix on the target")
    git(world.fork, "checkout", "-q", world.fork_branch)
    drift_json(world, target="other")
    assert len(analyses) == 3
    tree = git(world.fork, "rev-parse", "sync/v3.6.0^{tree}").strip()
    parent = git(world.fork, "rev-parse", "sync/v3.6.0").strip()
    remade = git(world.fork, "commit-tree", tree, "-p", parent, "-m", "same tree, another commit").strip()
    git(world.fork, "branch", "-f", "sync/v3.6.0", remade)
    again = drift_json(world, target="sync/v3.6.0")
    assert len(analyses) == 3  # the analysis reads the target's tree only
    assert again == target


def test_corrupt_or_odd_entries_are_recomputed(world: World, analyses: list[tuple]) -> None:
    first = drift_json(world)
    entry, = entries(world)
    stored = json.loads(entry.read_text())
    odd_values = [
        "{not json",
        "[" * 200_000 + "]" * 200_000,  # nested past json's recursion limit
        json.dumps({**stored, "findings": [{"c": "Finding", "v": {"kind": "no-such"}}]}),
        json.dumps({**stored, "findings": [{"c": "os.system", "v": {}}]}),
        json.dumps({**stored, "findings": [1, 2]}),
        json.dumps({**stored, "merged": [["x", "not base64!"]]}),
        json.dumps({**stored, "backends": "alpha"}),
        json.dumps([1]),
    ]
    for number, odd in enumerate(odd_values, start=2):
        entry.write_text(odd)
        assert drift_json(world) == first
        assert len(analyses) == number
        assert json.loads(entry.read_text()) == stored  # rewritten whole
    assert drift_json(world) == first and len(analyses) == len(odd_values) + 1


def test_a_stored_entry_is_what_a_hit_reports(world: World, analyses: list[tuple],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Poison the entry: a hit shows the poison (it was read), FLAGTREE_SYNC_CACHE=off does not."""
    honest = drift_json(world)
    entry, = entries(world)
    stored = json.loads(entry.read_text())
    stored["findings"][0]["v"]["message"] = "POISON"
    entry.write_text(json.dumps(stored))
    assert "POISON" in drift_json(world) and len(analyses) == 1
    for switch in ("FLAGTREE_SYNC_CACHE", result_cache.SWITCH):
        monkeypatch.setenv(switch, "off")
        assert drift_json(world) == honest
        monkeypatch.setenv(switch, "on")
    assert len(analyses) == 3
    assert json.loads(entry.read_text())["findings"][0]["v"]["message"] == "POISON"  # not rewritten


def test_cache_off_never_writes(world: World, analyses: list[tuple], monkeypatch: pytest.MonkeyPatch) -> None:
    for switch in ("FLAGTREE_SYNC_CACHE", result_cache.SWITCH):
        monkeypatch.setenv(switch, "off")
        drift_json(world)
        drift_json(world)
        monkeypatch.setenv(switch, "on")
    assert len(analyses) == 4 and entries(world) == []


def test_code_and_repository_inputs_are_in_the_key(world: World, analyses: list[tuple],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    drift_json(world)
    monkeypatch.setattr(result_cache, "code_fingerprint", lambda: "another version of the tool")
    drift_json(world)
    assert len(analyses) == 2
    git(world.fork, "config", "merge.renameLimit", "3")  # libgit2 reads it in merges
    drift_json(world)
    attributes = Path(git(world.fork, "rev-parse", "--absolute-git-dir").strip()) / "info" / "attributes"
    attributes.parent.mkdir(exist_ok=True)
    attributes.write_text("*.py merge=union\n")
    drift_json(world)
    assert len(analyses) == 4
    drift_json(world)
    assert len(analyses) == 4


def test_code_fingerprint_follows_the_package_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "sync"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("A = 1\n")
    (package / "sub" / "schema.json").write_text("{}")
    monkeypatch.setattr(inputs, "_PACKAGE", package)
    fingerprints = []
    for change in (None, ("a.py", "A = 2\n"), ("sub/schema.json", "[]"), ("sub/new.py", "")):
        if change is not None:
            (package / change[0]).write_text(change[1])
        inputs.code_fingerprint.cache_clear()
        fingerprints.append(inputs.code_fingerprint())
    (package / "notes.txt").write_text("not code")
    inputs.code_fingerprint.cache_clear()
    fingerprints.append(inputs.code_fingerprint())
    inputs.code_fingerprint.cache_clear()
    assert len(set(fingerprints[:4])) == 4 and fingerprints[4] == fingerprints[3]


def test_a_partial_clone_bypasses_the_result_cache(world: World, analyses: list[tuple]) -> None:
    git(world.fork, "config", "remote.upstream.promisor", "true")
    drift_json(world)
    drift_json(world)
    assert len(analyses) == 2 and entries(world) == []


def test_a_blob_the_analysis_judged_absent_misses_once_present(world: World, analyses: list[tuple]) -> None:
    repo = open_repo(world.fork)
    data = b"the upstream counterpart at the recorded tag\n"
    blob = str(pygit2.hash(data))
    drift_json(world)
    entry, = entries(world)
    stored = json.loads(entry.read_text())
    stored["present"] = {blob: False}  # as _judged_presence records a provenance entry's blob
    entry.write_text(json.dumps(stored))
    drift_json(world)
    assert len(analyses) == 1
    entry.write_text(json.dumps(stored))
    repo.create_blob(data)
    drift_json(world)
    assert len(analyses) == 2


def test_provenance_blobs_are_recorded(world: World, analyses: list[tuple]) -> None:
    """A provenance entry naming a blob this repository lacks: the presence is stored and checked."""
    compile_py = "python/triton/tools/compile.py"
    manifest = (f'[[file]]\npath = "{A}triton/tools/compile.py"\ntrunk = "{compile_py}"\n'
                f'tag = "v3.4.0"\nblob = "{"ab" * 20}"\n')
    commit_files(world, {"third_party/alpha/backend/spec/provenance.toml": manifest}, "record provenance")
    drift_json(world)
    entry, = entries(world)
    assert json.loads(entry.read_text())["present"] == {"ab" * 20: False}


def test_apply_after_a_hit_commits_what_an_uncached_apply_commits(world: World, analyses: list[tuple],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The merged overlays' bytes are in the entry: a hit needs no object the analysis wrote."""
    for role in ("AUTHOR", "COMMITTER"):  # the commit is the user's, dated now: the two applies a second apart
        monkeypatch.setenv(f"GIT_{role}_DATE", "1700000000 +0000")  # would differ in their ids alone
    run_upgrade(str(world.fork), old=world.old_tag, onto=world.new_tag, source_branch=world.fork_branch,
                options=UpgradeOptions())
    before = git(world.fork, "rev-parse", "sync/v3.6.0").strip()
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "off")
    uncached = run_drift(str(world.fork), old=world.old_tag, onto=world.new_tag, source=world.fork_branch,
                         options=DriftOptions(target="sync/v3.6.0", apply=True))
    git(world.fork, "branch", "-f", "sync/v3.6.0", before)
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "on")
    drift_json(world, target="sync/v3.6.0", symbols=False)
    runs = len(analyses)
    cached = run_drift(str(world.fork), old=world.old_tag, onto=world.new_tag, source=world.fork_branch,
                       options=DriftOptions(target="sync/v3.6.0", apply=True))
    assert len(analyses) == runs  # a hit
    assert uncached.drift is not None and cached.drift is not None and uncached.drift.applied_commit
    assert cached.drift.applied_commit == uncached.drift.applied_commit
    assert render_json(cached) == render_json(uncached)


def test_a_second_upgrade_of_the_same_range_hits_with_the_same_report(world: World, analyses: list[tuple]) -> None:
    first = run_upgrade(str(world.fork), old=world.old_tag, onto=world.new_tag, source_branch=world.fork_branch,
                        options=UpgradeOptions())
    second = run_upgrade(str(world.fork), old=world.old_tag, onto=world.new_tag, source_branch=world.fork_branch,
                         options=UpgradeOptions(force=True))
    assert len(analyses) == 1
    assert first.commits and any(commit.conflicts for commit in first.commits)  # owners of conflicts asked
    assert render_json(second) == render_json(first)


def test_the_encoding_gives_back_equal_values_of_the_same_types() -> None:
    details = {"hunks": [{"line": 3, "ours": "a", "base": None}], "pair": (1, "x"), 4: {"s", "t"},
               "frozen": frozenset({2}), "raw": b"\x00\xff", "flag": True, "ratio": 0.5, "nested": [(1, [2])]}
    finding = Finding("overlay-auto-mergeable", "p.py", "m", line=3, details=details,
                      suppressed=Review("why", "v3.6.0"))
    decoded = result_cache._decode(json.loads(json.dumps(result_cache._encode(finding))))
    assert decoded == finding and type(decoded.details["pair"]) is tuple and 4 in decoded.details
    with pytest.raises(result_cache.Unencodable):
        result_cache._encode(Finding("overlay-auto-mergeable", "p.py", "m", details={"x": object()}))


def test_a_result_that_does_not_encode_is_not_stored(world: World, tmp_path: Path) -> None:
    from sync.support.cache import FactCache
    cache = FactCache(tmp_path)
    odd = Finding("overlay-auto-mergeable", "p.py", "m", details={"x": Path("p")})
    nan = Finding("overlay-auto-mergeable", "p.py", "m", details={"x": float("nan")})  # never equal to itself
    fine = Finding("overlay-auto-mergeable", "p.py", "m", details={"x": 1})
    assert not result_cache.store(cache, "ab" * 20, [odd], [], ["alpha"], {})
    assert not result_cache.store(cache, "ab" * 20, [nan], [], ["alpha"], {})
    assert result_cache.store(cache, "cd" * 20, [fine], [], ["alpha"], {})
    cache.close()
    assert [(row.bucket, row.key) for row in rows(tmp_path)] == [("drift-result-v1", "cd" * 20)]


class Phases(Silent):
    """Progress that records the phases it was told."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def phase(self, name: str, total: int | None = None) -> None:
        self.names.append(name)


def test_progress_says_a_hit_reused_the_analyses(world: World) -> None:
    runs = []
    for _ in range(2):
        progress = Phases()
        run_drift(str(world.fork), old=world.old_tag, onto=world.new_tag, source=world.fork_branch,
                  options=DriftOptions(symbols=True), progress=progress)
        runs.append(progress.names)
    assert "analyses" in runs[0] and drift.REUSED_PHASE not in runs[0]
    assert runs[1] == [drift.REUSED_PHASE]


def test_a_hit_imports_no_analyzer(world: World) -> None:
    """What makes a hit fast: neither the analyzers nor libcst are imported (a fresh process each run)."""
    script = ("import sys\nfrom sync.jobs import DriftOptions, run_drift\n"
              f"run_drift({str(world.fork)!r}, old='v3.5.0', onto='v3.6.0', source='main', "
              "options=DriftOptions(symbols=True))\n"
              "print(sorted(name for name in sys.modules if name.startswith(('sync.drift.analyses', 'sync.drift.registry', 'libcst'))))\n")
    runs = [subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout
            for _ in range(2)]
    assert "sync.drift.registry" in runs[0] and runs[1].strip() == "[]"
