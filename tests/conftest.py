"""Shared fixtures: a fresh demo world per test, a home directory that is not the user's, and the Python facts
of one run (the analyses' shared parse) per test."""
from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from sync.cli import cli
from sync.demo.world import World, build_world
from sync.drift.registry import python_facts
from sync.facts.pyblobs import PythonFacts, reading


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "test@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "test@example.com")
    # A second drift of the same inputs would reuse the first's result: tests of what an analysis
    # computes must compute it. Tests of the result caches turn it on (results_cached).
    monkeypatch.setenv("FLAGTREE_SYNC_RESULT_CACHE", "off")


@pytest.fixture
def results_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fact cache and the result caches on (drift/result_cache.py, drift/analysis_cache.py)."""
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "on")
    monkeypatch.setenv("FLAGTREE_SYNC_RESULT_CACHE", "on")


@pytest.fixture(autouse=True)
def run_python_facts() -> Iterator[PythonFacts]:
    """What a drift run reads Python facts through (sync/drift/run.py): a test that calls an analysis or the
    parsers directly reads through one of its own, nothing known yet."""
    with reading(python_facts()) as facts:
        yield facts


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path / "world")


def invoke(*args: str) -> Result:
    """The CLI in this process; a traceback is never an acceptable answer."""
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output, result.output
    return result


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def snapshot(repo: Path) -> dict[str, str]:
    """Everything of the user's that the tools must leave alone: refs, HEAD, index, work tree."""
    work_files = {}
    for path in sorted(repo.rglob("*")):
        if ".git" not in path.relative_to(repo).parts and path.is_file():
            work_files[str(path.relative_to(repo))] = path.read_bytes().hex()
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags")
    return {
        "refs": refs,
        "head": (repo / ".git" / "HEAD").read_text(),
        "index": (repo / ".git" / "index").read_bytes().hex(),
        "status": git(repo, "status", "--porcelain"),
        "work": repr(work_files),
    }


def commit_files(world, files: dict[str, str] | dict[str, bytes], message: str) -> None:
    """Write files (text or bytes) into the demo fork's work tree and commit them all."""
    for path, data in files.items():
        target = world.fork / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            target.write_bytes(data)
        else:
            target.write_text(data)
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", message)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory):
    """A 300-commit synthetic world, built once per module (the fault and concurrency tests copy it)."""
    from tests.synthetic_world import build_synthetic_world
    return build_synthetic_world(tmp_path_factory.mktemp("pristine") / "world", commits=300)


@pytest.fixture(scope="module")
def reference(pristine, tmp_path_factory: pytest.TempPathFactory):
    """The uninterrupted single run on the pristine world: what every interrupted run must reproduce."""
    from tests.synthetic_world import run_reference
    return run_reference(pristine, tmp_path_factory.mktemp("reference"))
