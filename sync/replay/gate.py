"""The test gate: run a command on the replayed tree, in a worktree of its own, and name the first
replayed commit that broke it (every commit with --exec-at each; at the end plus a bisection otherwise)."""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Callable, Iterator

from sync.git import Repository, tool_dir
from sync.git.environment import child_environment
from sync.git.worktree import Worktree, detached_worktree
from sync.model import GateResult, GateRun

# Enough for a C++ compiler diagnostic with its template notes; the report keeps only this tail.
OUTPUT_TAIL = 8000

_PR_SET_CHILD_SUBREAPER = 36
_ROUNDS = 20  # of killing escaped processes and then their orphaned children

# Kills the gate's process group when the tool dies before saying "done" (kill -9 included: the pipe closes).
_WATCHDOG = """import os, signal, sys
group = sys.stdin.readline().strip()
if group and sys.stdin.read() != "done":
    try:
        os.killpg(int(group), signal.SIGKILL)
    except OSError:
        pass
"""


def _run_at(worktree: Worktree, commit: str, label: str, command: str, timeout: float) -> GateRun:
    worktree.checkout(commit)
    status, output = run_command(command, worktree.path, timeout)
    return GateRun(commit, label, status == 0, status, output[-OUTPUT_TAIL:])


def run_command(command: str, cwd: Path, timeout: float) -> tuple[int, str]:
    """Run a shell command in a process group of its own, and leave nothing of it running: the group is
    killed when the command ends or times out (its background children too), and by a watchdog process
    when this one dies first. Its output (stdout and stderr as they came) goes to a file, never a pipe a
    background child could hold open. Status 124 when it timed out."""
    known = _children()
    watchdog = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WATCHDOG], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
                                start_new_session=True)  # not in the terminal's group: Ctrl-C leaves it its job
    assert watchdog.stdin is not None
    with tempfile.TemporaryFile() as output, _subreaper():
        try:
            process = subprocess.Popen(command, shell=True, cwd=cwd, stdin=subprocess.DEVNULL, stdout=output,
                                       stderr=subprocess.STDOUT, start_new_session=True,
                                       env=child_environment())  # git in it finds the worktree, not GIT_DIR's
            watchdog.stdin.write(f"{process.pid}\n")
            watchdog.stdin.flush()
            finished = _exited(process.pid, time.monotonic() + timeout)
            _kill_group(process.pid)  # the shell is not reaped yet: its group id cannot have been reused
            code = process.wait()
            _kill_escaped(process.pid, known | {watchdog.pid})
            status = code if finished else 124
            watchdog.stdin.write("done")
        finally:
            watchdog.stdin.close()
            watchdog.wait()
        text = _tail(output)
    return status, text if finished else f"timed out after {timeout:g} s\n{text}"


def _exited(pid: int, deadline: float) -> bool:
    """Whether pid exited before deadline; it is left unreaped (WNOWAIT), so its id stays taken."""
    pause = 0.001
    while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if time.monotonic() >= deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return True


@contextmanager
def _subreaper() -> Iterator[None]:
    """While the command runs, what it leaves orphaned (a daemon that left its group with setsid) becomes a
    child of this process (Linux PR_SET_CHILD_SUBREAPER), where _kill_escaped finds it."""
    prctl = getattr(ctypes.CDLL(None), "prctl", None) if sys.platform.startswith("linux") else None
    if prctl is not None:
        prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        yield
    finally:
        if prctl is not None:
            prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def _kill_escaped(group: int, known: set[int]) -> None:
    """Kill and reap the command's processes that left its group: once the group is gone (its killed members'
    orphans come to this process then), every child that was not there before; theirs next, a few rounds."""
    deadline = time.monotonic() + 5
    while _processes(lambda fields: fields[2] == str(group)) and time.monotonic() < deadline:
        time.sleep(0.01)
    for _ in range(_ROUNDS):
        strays = _children() - known
        if not strays:
            return
        for pid in strays:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in strays:
            with suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _children() -> set[int]:
    """This process's children, exited ones too (an orphan that died here is reaped with the rest)."""
    me = str(os.getpid())
    return _processes(lambda fields: fields[1] == me, zombies=True)


def _processes(wanted: Callable[[list[str]], bool], zombies: bool = False) -> set[int]:
    """Processes whose /proc stat fields after the name (state, ppid, pgrp, ...) are wanted, running ones
    unless zombies; none without /proc."""
    found: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if (zombies or fields[0] not in ("Z", "X")) and wanted(fields):
            found.add(int(stat.parent.name))
    return found


def _kill_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _tail(output: IO[bytes]) -> str:
    size = output.seek(0, os.SEEK_END)
    output.seek(max(0, size - 4 * OUTPUT_TAIL))  # at most 4 bytes a character
    return output.read().decode("utf-8", errors="replace")


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
