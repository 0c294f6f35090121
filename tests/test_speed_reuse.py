"""drift without --target starts from the upgrade of the same range instead of replaying it again."""
from __future__ import annotations

from pathlib import Path

import pytest

from sync.drift import run as drift
from sync.demo.world import World
from sync.git import open_repo, scratch_repository
from sync.jobs.revs import resolve_range
from sync.report.document import render_json
from sync.jobs import DriftOptions, run_drift
from sync.jobs.upgrade import resolve_params
from sync.replay.options import ConflictPolicy, ReplayChoices
from sync.replay.engine import run_upgrade
from sync.replay.commits import Replayer

from .conftest import git


def drift_json(world: World, monkeypatch: pytest.MonkeyPatch, reuse: bool) -> tuple[str, int]:
    """The report, and how many commits the in-memory replay itself picked."""
    picks = []
    real_pick = Replayer.pick_tree
    monkeypatch.setattr(Replayer, "pick_tree", lambda self, *args: picks.append(args) or real_pick(self, *args))
    if not reuse:
        monkeypatch.setattr(drift, "reusable_replay",
                            lambda user_repo, repo, rng, commits: (0, repo[rng.onto.oid].tree))
    report = run_drift(str(world.fork), old=world.old_tag, onto=world.new_tag, source=world.fork_branch,
                       options=DriftOptions(symbols=True))
    monkeypatch.undo()
    return render_json(report), len(picks)


def replay_length(world: World) -> int:
    return int(git(world.fork, "rev-list", "--count", f"{world.old_tag}..{world.fork_branch}").strip())


@pytest.mark.parametrize("policy", ["theirs", "markers"])
def test_an_upgrade_state_is_reused(world: World, monkeypatch: pytest.MonkeyPatch, policy: str) -> None:
    repo, params = resolve_params(str(world.fork), old=world.old_tag, onto=world.new_tag,
                                  source_branch=world.fork_branch,
                                  choices=ReplayChoices(target_branch="sync/elsewhere",
                                                        conflicts=ConflictPolicy(policy=policy)))
    result = run_upgrade(repo, params, False, lambda *args: None)  # the state stays until the report is written
    fresh, fresh_picks = drift_json(world, monkeypatch, reuse=False)
    reused, reused_picks = drift_json(world, monkeypatch, reuse=True)
    assert reused == fresh
    assert fresh_picks == replay_length(world)
    first_conflict = next((n for n, r in enumerate(result.results) if r.conflicts), len(result.results))
    expected_done = len(result.results) if policy == "theirs" else first_conflict
    assert reused_picks == fresh_picks - expected_done
    if policy == "theirs":
        assert expected_done == fresh_picks  # nothing left to replay
    # markers: the demo's first commit conflicts, so nothing before it can be reused (and nothing is)


def upgrade_onto_old_tag(world: World) -> tuple[str, list]:
    """The fork's own range replayed onto its base tag: no conflicts, a branch of plain picks."""
    repo, params = resolve_params(str(world.fork), old=world.old_tag, onto=world.old_tag,
                                  source_branch=world.fork_branch)
    run_upgrade(repo, params, False, lambda *args: None)
    git(world.fork, "update-ref", "-d", "refs/flagtree-sync/wip")  # the upgrade finished: only its branch is left
    Path(open_repo(world.fork).path, "flagtree-sync", "upgrade.json").unlink()
    repo = open_repo(world.fork)
    rng = resolve_range(repo, world.old_tag, world.old_tag, world.fork_branch)
    return rng, drift.commit_range(repo, repo[rng.old.oid], repo[rng.source.oid])


def test_the_sync_branch_is_reused(world: World) -> None:
    rng, commits = upgrade_onto_old_tag(world)
    repo = open_repo(world.fork)
    with scratch_repository(repo) as scratch:
        done, tree = drift.reusable_replay(repo, scratch, rng, commits)
        fresh = drift.replayed_tree(scratch, rng)  # no user repository given: nothing to reuse
    assert done == len(commits) > 0
    assert tree.id == fresh.id


def test_an_amended_branch_commit_ends_the_reuse(world: World) -> None:
    rng, commits = upgrade_onto_old_tag(world)
    branch = f"sync/{world.old_tag}"
    first = git(world.fork, "rev-list", "--reverse", f"{world.old_tag}..{branch}").split()[0]
    # The first replayed commit again with another committer: the same message, no longer our replay.
    amended = git(world.fork, "-c", "user.name=Someone", "-c", "user.email=x@example.com", "commit-tree",
                  f"{first}^{{tree}}", "-p", f"{first}^", "-m", git(world.fork, "log", "-1", "--format=%B", first)).strip()
    git(world.fork, "update-ref", f"refs/heads/{branch}", amended)
    repo = open_repo(world.fork)
    with scratch_repository(repo) as scratch:
        assert drift.reusable_replay(repo, scratch, rng, commits)[0] == 0
