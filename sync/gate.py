"""The test gate: run a command on the replayed tree, in a worktree of its own, and name the first
replayed commit that broke it (every commit with --exec-at each; at the end plus a bisection otherwise)."""
from __future__ import annotations

import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .git import Repository
from .git.worktree import Worktree, detached_worktree

OUTPUT_TAIL = 2000


@dataclass(frozen=True)
class GateRun:
    commit: str  # the replayed commit the command ran on
    label: str  # what it is: the new tag, or the FlagTree commit it replays
    passed: bool
    status: int
    output: str


@dataclass
class GateResult:
    command: str
    at: str
    runs: list[GateRun] = field(default_factory=list)
    first_failure: GateRun | None = None
    baseline_failed: bool = False  # the command fails on the new tag itself: nothing to blame

    @property
    def passed(self) -> bool:
        return all(run.passed for run in self.runs)

    def to_json(self) -> dict:
        return {"command": self.command, "at": self.at, "passed": self.passed,
                "baseline_failed": self.baseline_failed, "runs": [asdict(run) for run in self.runs],
                "first_failure": asdict(self.first_failure) if self.first_failure else None}


def _run_at(worktree: Worktree, commit: str, label: str, command: str, timeout: float) -> GateRun:
    worktree.checkout(commit)
    try:
        done = subprocess.run(command, shell=True, cwd=worktree.path, capture_output=True, text=True,
                              timeout=timeout, errors="replace")
        status, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        status, output = 124, f"timed out after {timeout:g} s\n{exc.stdout or ''}"
    return GateRun(commit, label, status == 0, status, output[-OUTPUT_TAIL:])


def run_gate(repo: Repository, base: tuple[str, str], replayed: list[tuple[str, str]], command: str,
             at: str, timeout: float) -> GateResult:
    """base: (new tag commit, label); replayed: (commit, label) oldest first, the last one the branch head."""
    result = GateResult(command, at)
    if not replayed:
        return result
    with detached_worktree(repo, Path(repo.path) / "flagtree-sync" / "gate") as worktree:
        def run(item: tuple[str, str]) -> GateRun:
            outcome = _run_at(worktree, item[0], item[1], command, timeout)
            result.runs.append(outcome)
            return outcome

        if at == "each":
            for item in replayed:
                if not run(item).passed:
                    result.first_failure = result.runs[-1]
                    break
            return result
        if run(replayed[-1]).passed:
            return result
        if not run(base).passed:
            result.baseline_failed = True
            return result
        low, high = 0, len(replayed) - 1  # replayed[high] fails; everything before low passes
        while low < high:
            middle = (low + high) // 2
            if run(replayed[middle]).passed:
                low = middle + 1
            else:
                high = middle
        result.first_failure = next(r for r in reversed(result.runs) if r.commit == replayed[high][0])
    return result
