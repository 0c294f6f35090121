"""Worker processes never outlive the run, never take Ctrl-C themselves and never hold the run's lock
(seen by a trial user: orphans kept upgrade.lock after kill -9; Ctrl-C gave a broken pool or a hang)."""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest

REPO = Path(__file__).resolve().parent.parent

SCRIPT = """
import os, sys, time
sys.path.insert(0, {repo!r})
import pygit2
from sync.replay.engine import run_lock
from sync.support.workers import worker_pool


def pid(_):
    return os.getpid()


repo = pygit2.Repository({git!r})
with run_lock(repo):
    try:
        with worker_pool(2) as pool:
            pids = set()
            while len(pids) < 2:
                pids |= set(pool.map(pid, range(8)))
            # the workers now wait on their queue, where a Ctrl-C of their own would raise
            open({pids!r}, "w").write(" ".join(map(str, sorted(pids))))
            go = {pids!r} + ".go"
            while not os.path.exists(go):
                time.sleep(0.02)
            print("pool ok" if len(set(pool.map(pid, range(8)))) >= 1 else "pool empty", flush=True)
            time.sleep(60)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
"""


def _start(tmp_path: Path) -> tuple[subprocess.Popen, list[int], Path]:
    git_dir = tmp_path / "repo"
    pygit2.init_repository(str(git_dir), bare=True)
    pids = tmp_path / "pids"
    script = SCRIPT.format(repo=str(REPO), git=str(git_dir), pids=str(pids))
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    deadline = time.monotonic() + 30
    while not (pids.exists() and pids.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = [int(pid) for pid in pids.read_text().split()]
    assert len(workers) == 2, workers
    return process, workers, git_dir / "flagtree-sync" / "upgrade.lock"


def _gone(pids: list[int], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = []
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0]
            except OSError:
                continue
            if state != "Z":
                alive.append(pid)
        if not alive:
            return True
        time.sleep(0.05)
    return False


def test_kill_9_of_the_parent_frees_the_lock_at_once_and_takes_the_workers_with_it(tmp_path: Path) -> None:
    process, workers, lock = _start(tmp_path)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    descriptor = os.open(lock, os.O_RDWR)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises while any worker still holds a copy
    finally:
        os.close(descriptor)
    assert _gone(workers)


def test_ctrl_c_to_the_process_group_stops_the_parent_alone_and_ends_the_workers(tmp_path: Path) -> None:
    process, workers, _ = _start(tmp_path)
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in a terminal sends
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0 and out.strip() == "interrupted", (out, err)
    assert "Traceback" not in err, err  # no worker answered the signal
    assert _gone(workers)


def test_a_worker_sent_ctrl_c_of_its_own_keeps_serving_the_pool(tmp_path: Path) -> None:
    process, workers, _ = _start(tmp_path)
    for pid in workers:
        os.kill(pid, signal.SIGINT)
    time.sleep(0.3)
    (tmp_path / "pids.go").write_text("")
    assert process.stdout is not None
    line = process.stdout.readline()
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert line.strip() == "pool ok", line


def test_a_dispatch_whose_pool_is_shut_hands_out_nothing_more_quietly(caplog: pytest.LogCaptureFixture) -> None:
    """Ctrl-C stops the pool while callbacks still hand out tasks: the one refused carries the error, the rest
    stay for the parent, and no callback raises (concurrent.futures would log each one with its traceback;
    a trial run printed 25 KB of them, ending in a RecursionError)."""
    from concurrent.futures import Future

    from sync.support.workers import Dispatch

    handed: list[int] = []
    first: Future[int] = Future()

    def submit(task: int) -> Future[int]:
        if handed:
            raise RuntimeError("cannot schedule new futures after shutdown")
        handed.append(task)
        return first

    dispatch: Dispatch[int, int] = Dispatch(list(range(2000)), 1, submit)
    first.set_result(0)  # its callback hands out the next task, which the shut pool refuses
    assert handed == [0] and set(dispatch.futures) == {0, 1}
    with pytest.raises(RuntimeError, match="after shutdown"):
        dispatch.futures[1].result()
    assert dispatch.take_last() == 1999 and "exception calling callback" not in caplog.text


def _what_the_worker_inherited(_: int) -> tuple[int, str]:
    from sync.support.workers import inherited
    given = inherited()
    return given["one"], given["unpicklable"]()


def test_a_worker_reads_what_its_pool_was_given_through_the_fork() -> None:
    """Issue 49: the runner hands the workers their inputs through the pool, not through a module global it sets
    before the fork; the inputs are never pickled (a lambda cannot be), and the caller reads none of it."""
    from sync.support.workers import inherited, worker_pool
    with worker_pool(2, inherited={"one": 1, "unpicklable": lambda: "from the parent"}) as pool:
        assert set(pool.map(_what_the_worker_inherited, range(4))) == {(1, "from the parent")}
    with pytest.raises(RuntimeError, match="worker"):
        inherited()
