"""Run the drift analysis on a demo world from tests."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from sync.drift.run import DriftResult, analyse_drift
from sync.git import open_repo
from sync.jobs.revs import resolve_range, resolve_rev
from sync.model import Finding
from tests.conftest import git


def drift_of(world, old: str = "v3.5.0", onto: str = "v3.6.0", source: str = "main", target: str | None = None,
             backends: set[str] | None = None, symbols: bool = False) -> DriftResult:
    repo = open_repo(world.fork)
    return analyse_drift(repo, resolve_range(repo, old, onto, source), resolve_rev(repo, target) if target else None,
                         backends, symbols)


def alpha_findings(world, onto: str = "v3.6.0") -> dict[tuple[str, str], Finding]:
    return {(f.kind, f.path): f for f in drift_of(world, onto=onto, backends={"alpha"}).findings}


def fork_world(fork: Path) -> SimpleNamespace:
    """What drift_of needs of a world: the FlagTree repository, for tests that build their own history."""
    return SimpleNamespace(fork=fork)


def replayed_branch(repo: Path, onto: str, source: str, branch: str) -> None:
    """branch = onto with source's newest commit cherry-picked (an upgraded branch, as plain git makes it); the
    work tree goes back to source."""
    git(repo, "checkout", "-q", "-b", branch, onto)
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "cherry-pick", source)
    git(repo, "checkout", "-q", source)


def upgraded_world(tmp_path: Path, old: dict[str, str], fork: dict[str, str], new: dict[str, str],
                   subject: str) -> Path:
    """A repository with tag v1 (the old files), main = v1 and one FlagTree commit of the fork files, tag v2 = v1
    and one upstream commit of the new files (its subject given), and sync/v2 = v2 with FlagTree's commit
    cherry-picked; main is checked out."""
    from tests.test_symbols import commit  # a test module's helper: imported late, it imports this module
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, old, "v1")
    git(repo, "tag", "v1")
    commit(repo, fork, "[FlagTree] backends")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, new, subject)
    git(repo, "tag", "v2")
    replayed_branch(repo, "v2", "main", "sync/v2")
    return repo
