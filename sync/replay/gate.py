"""The test gate: run a command on the replayed tree, in a worktree of its own, and name the first
replayed commit that broke it (every commit with --exec-at each; at the end plus a bisection otherwise)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

from sync.errors import SyncError
from sync.git import Repository, tool_dir
from sync.git.environment import child_environment
from sync.git.worktree import Worktree, detached_worktree
from sync.model import GateResult, GateRun

# Enough for a C++ compiler diagnostic with its template notes; the report keeps only this tail.
OUTPUT_TAIL = 8000

# The gate's command runs as a child of this watchdog, which is a subreaper (Linux PR_SET_CHILD_SUBREAPER): what
# the command leaves orphaned, a daemon that left its group and session with setsid included, becomes the
# watchdog's child. When the command ends, times out, or the tool dies (Ctrl-C, SIGTERM, SIGHUP, kill -9: its
# end of the pipe closes), the watchdog kills the command's group and then every process left under it.
_WATCHDOG = r"""import ctypes, json, os, select, signal, subprocess, sys, time
job = json.loads(sys.stdin.readline())
try:
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
except (AttributeError, OSError):
    pass
process = subprocess.Popen(job["command"], shell=True, cwd=job["cwd"], stdin=subprocess.DEVNULL,
                           stdout=job["output"], stderr=subprocess.STDOUT, start_new_session=True)
os.close(job["output"])
sys.stdout.write(f"{process.pid}\n")
sys.stdout.flush()
deadline, status = time.monotonic() + job["timeout"], None
while status is None:
    ready, _, _ = select.select([sys.stdin], [], [], 0.05)
    if ready and not os.read(sys.stdin.fileno(), 1):
        break  # the tool is gone: end everything
    status = process.poll()
    if status is None and time.monotonic() >= deadline:
        status = 124
def children():
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[1] == str(os.getpid()):
                        found.add(int(entry))
            except (OSError, IndexError):
                pass
    return found
for _ in range(50):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    left = children() if os.path.isdir("/proc") else set()
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    if not left:
        break
    time.sleep(0.01)
sys.stdout.write(f"{status if status is not None else -9}\n")
sys.stdout.flush()
"""


def _run_at(worktree: Worktree, commit: str, label: str, command: str, timeout: float) -> GateRun:
    worktree.checkout(commit)
    status, output = run_command(command, worktree.path, timeout)
    return GateRun(commit, label, status == 0, status, output[-OUTPUT_TAIL:])


def run_command(command: str, cwd: Path, timeout: float) -> tuple[int, str]:
    """Run a shell command in a process group of its own, under the watchdog, and leave nothing of it running:
    its group and every process it left behind are killed when it ends or times out, and when this process
    dies first, however. Its output (stdout and stderr as they came) goes to a file, never a pipe a background
    child could hold open. Status 124 when it timed out."""
    with tempfile.TemporaryFile() as output:
        watchdog = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WATCHDOG], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                    start_new_session=True,  # not in the terminal's group: Ctrl-C leaves it its job
                                    pass_fds=(output.fileno(),), env=child_environment())
        assert watchdog.stdin is not None and watchdog.stdout is not None
        try:
            watchdog.stdin.write(json.dumps({"command": command, "cwd": str(cwd), "timeout": timeout,
                                             "output": output.fileno()}) + "\n")
            watchdog.stdin.flush()
            watchdog.stdout.readline()  # the command's pid: it runs
            said = watchdog.stdout.readline().strip()
        finally:
            watchdog.stdin.close()  # on Ctrl-C or any error: the watchdog ends the command and what it left
            watchdog.wait()
        if not said.lstrip("-").isdigit():
            raise SyncError(f"the test gate could not run {command!r}: its watchdog process failed")
        status = int(said)
        text = _tail(output)
    return status, text if status != 124 else f"timed out after {timeout:g} s\n{text}"


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
