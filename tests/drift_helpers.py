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
