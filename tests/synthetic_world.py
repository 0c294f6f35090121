"""A synthetic FlagTree world of any size, built in one `git fast-import` (a 300-commit fork in well
under a second): upstream tags OLD and NEW, and a fork branch of N commits on OLD, some of which
conflict with upstream. Fixed authors and dates: every build gives the same hashes."""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sync.support.faults import VARIABLE
from tests.conftest import git, snapshot

OLD, NEW, BRANCH = "v1.0", "v2.0", "main"
TARGET = f"sync/{NEW}"
FILES = 24  # files the fork edits; upstream edits every fourth of them too


@dataclass(frozen=True)
class SyntheticWorld:
    root: Path
    repo: Path  # the fork, with a work tree on BRANCH and a few changes of the user's not committed
    commits: int

    def args(self) -> list[str]:
        return ["upgrade", "--repo", str(self.repo), "--from", OLD, "--onto", NEW, "--branch", BRANCH, "-q"]

    def copy(self, root: Path) -> "SyntheticWorld":
        shutil.copytree(self.root, root, symlinks=True)
        return SyntheticWorld(root, root / self.repo.relative_to(self.root), self.commits)


def _data(text: str) -> str:
    """fast-import's exact-length data block (the count is in bytes), with its optional closing LF."""
    return f"data {len(text.encode())}\n{text}\n"


def _commit(ref: str, mark: int, parent: int | None, stamp: int, message: str, files: dict[str, str],
            who: str) -> str:
    parts = [f"commit {ref}\n", f"mark :{mark}\n", f"author {who} {stamp} +0000\n",
             f"committer {who} {stamp} +0000\n", _data(message)]
    if parent is not None:
        parts.append(f"from :{parent}\n")
    parts.extend(f"M 100644 inline {path}\n" + _data(text) for path, text in sorted(files.items()))
    return "".join(parts) + "\n"


def _lines(number: int) -> list[str]:
    return [f"line {row} of file {number}" for row in range(12)]


def build_synthetic_world(root: Path, commits: int = 300, seed: int = 0, conflict_rate: float = 0.05) -> SyntheticWorld:
    """root/flagtree: OLD (base), NEW (OLD plus 12 upstream edits), BRANCH (OLD plus `commits` fork edits,
    a share conflict_rate of them on the line upstream changed: a conflict where upstream edited that file)."""
    rng = random.Random(seed)
    repo = root / "flagtree"
    subprocess.run(["git", "init", "-q", "-b", BRANCH, str(repo)], check=True)
    files = {f"python/triton/backends/b{n % 3}/f{n}.py": _lines(n) for n in range(FILES)}
    paths = sorted(files)
    stream: list[str] = []
    upstream_who, fork_who = "Upstream <upstream@example.com>", "FlagTree <flagtree@example.com>"
    stamp = 1_700_000_000
    stream.append(_commit("refs/tags/" + OLD, 1, None, stamp, "base",
                          {path: "\n".join(text) + "\n" for path, text in files.items()}, upstream_who))
    upstream = {path: list(text) for path, text in files.items()}
    for number in range(12):  # upstream edits line 3 of every fourth file: the fork's edits there conflict
        path = paths[(number * 4) % FILES]
        upstream[path][3] = f"upstream change {number}"
        stamp += 3600
        stream.append(_commit("refs/tags/" + NEW, 2 + number, 1 if number == 0 else 1 + number, stamp,
                              f"upstream {number}", {path: "\n".join(upstream[path]) + "\n"}, upstream_who))
    fork = {path: list(text) for path, text in files.items()}
    mark = 100
    for number in range(commits):
        path = rng.choice(paths)
        row = 3 if rng.random() < conflict_rate else rng.randrange(5, 12)
        fork[path][row] = f"flagtree change {number}"
        stamp += 60
        stream.append(_commit("refs/heads/" + BRANCH, mark + 1, 1 if number == 0 else mark, stamp,
                              f"flagtree {number}: edit {path}", {path: "\n".join(fork[path]) + "\n"}, fork_who))
        mark += 1
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input="".join(stream).encode(), check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-f", BRANCH], check=True)
    # the user's work in progress, which no upgrade may touch: a staged change and an unstaged one
    (repo / paths[0]).write_text("staged by the user\n")
    subprocess.run(["git", "-C", str(repo), "add", paths[0]], check=True)
    (repo / paths[1]).write_text("edited by the user\n")
    return SyntheticWorld(root, repo, commits)


def command(world: SyntheticWorld, *extra: str) -> list[str]:
    """The upgrade as a user types it, in a process of its own, with a report under the world's root."""
    return [sys.executable, "-m", "sync", *world.args(), "--out", str(world.root / "report"), *extra]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop(VARIABLE, None)  # no checkpoint faults unless a test asks for one
    return env


def users_view(repo: Path) -> dict[str, str]:
    """What the user owns: every ref but the target branch the run creates, HEAD, index, work tree.
    The index as its entries: git status itself refreshes the stat data of a copied repository."""
    view = snapshot(repo)
    view["index"] = git(repo, "ls-files", "--stage")
    view["refs"] = "".join(line for line in view["refs"].splitlines(keepends=True)
                           if not line.startswith(f"refs/heads/{TARGET} "))
    return view


def state_file(world: SyntheticWorld) -> Path:
    return world.repo / ".git" / "flagtree-sync" / "upgrade.json"


def finished(world: SyntheticWorld) -> bool:
    """The run got as far as forgetting its state: the report is written, the upgrade over."""
    return (world.root / "report" / "report.json").exists() and not state_file(world).exists()


def stable(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key != "tool"}


@dataclass(frozen=True)
class Reference:
    """An uninterrupted run: the commit chain it made, its tree, its report, how long it took."""

    chain: list[str]
    tree: str
    document: dict[str, Any]
    duration: float


def branch_chain(world: SyntheticWorld) -> list[str]:
    return git(world.repo, "rev-list", f"{NEW}..{TARGET}").split()


def run_reference(pristine: SyntheticWorld, root: Path) -> Reference:
    world = pristine.copy(root / "world")
    start = time.monotonic()
    done = subprocess.run(command(world), capture_output=True, text=True, env=environment())
    duration = time.monotonic() - start
    assert done.returncode == 1, done.stderr  # the fork's edits of upstream's lines conflict
    chain = branch_chain(world)
    assert len(chain) == world.commits + 1  # every commit replayed, none empty, and the pin commit
    return Reference(chain, git(world.repo, "rev-parse", f"{TARGET}^{{tree}}").strip(),
                     json.loads((world.root / "report" / "report.json").read_text()), duration)
