"""The test gate: run a command on the replayed tree, in a worktree of its own, and name the first
replayed commit that broke it (every commit with --exec-at each; at the end plus a bisection otherwise)."""
from __future__ import annotations

import subprocess

from .git import Repository, tool_dir
from .git.worktree import Worktree, detached_worktree
from .model import GateResult, GateRun

# Enough for a C++ compiler diagnostic with its template notes; the report keeps only this tail.
OUTPUT_TAIL = 8000


def _run_at(worktree: Worktree, commit: str, label: str, command: str, timeout: float) -> GateRun:
    worktree.checkout(commit)
    try:
        done = subprocess.run(command, shell=True, cwd=worktree.path, capture_output=True, text=True,
                              timeout=timeout, errors="replace")
        status, output = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout.decode("utf-8", errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        status, output = 124, f"timed out after {timeout:g} s\n{partial}"
    return GateRun(commit, label, status == 0, status, output[-OUTPUT_TAIL:])


def run_gate(repo: Repository, base: tuple[str, str], replayed: list[tuple[str, str]], command: str,
             at: str, timeout: float) -> GateResult:
    """base: (new tag commit, label); replayed: (commit, label) oldest first, the last one the branch head."""
    runs: list[GateRun] = []
    if not replayed:
        return GateResult(command, at)
    with detached_worktree(repo, tool_dir(repo) / "gate") as worktree:
        def run(item: tuple[str, str]) -> GateRun:
            outcome = _run_at(worktree, item[0], item[1], command, timeout)
            runs.append(outcome)
            return outcome

        if at == "each":
            for item in replayed:
                if not run(item).passed:
                    return GateResult(command, at, tuple(runs), runs[-1])
            return GateResult(command, at, tuple(runs))
        if run(replayed[-1]).passed:
            return GateResult(command, at, tuple(runs))
        if not run(base).passed:
            return GateResult(command, at, tuple(runs), baseline_failed=True)
        low, high = 0, len(replayed) - 1  # replayed[high] fails; everything before low passes
        while low < high:
            middle = (low + high) // 2
            if run(replayed[middle]).passed:
                low = middle + 1
            else:
                high = middle
        first = next(r for r in reversed(runs) if r.commit == replayed[high][0])
    return GateResult(command, at, tuple(runs), first)
