"""The locks of a run: run_lock over the whole run, and the tool's refs (the wip ref that keeps replayed
objects reachable, the --force record) written past a lock file a killed run left behind."""
from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sync.errors import SyncError
from sync.git import Oid, Repository, tool_dir
from sync.git.repo import delete_ref, set_ref
from sync.support.workers import holding_lock, released_lock


WIP_REF = "refs/flagtree-sync/wip"
# refs/flagtree-sync/forced/<target branch>: the commit --force accepted to replace, written at the start; the state
# file alone (which a hand may edit) never lets a run move a branch that exists
FORCED_PREFIX = "refs/flagtree-sync/forced/"


def _stale_lock(repo: Repository, name: str) -> Path:
    """The lock file git (and libgit2) keep next to a ref while writing it. A kill -9 in that moment
    leaves it behind, and every later write of that ref fails. Under run_lock no other run of this
    tool is alive, and only this tool writes refs/flagtree-sync/: such a lock there is stale, removed."""
    lock = Path(repo.path) / f"{name}.lock"
    if name.startswith("refs/flagtree-sync/") and lock.is_file() and not lock.is_symlink():
        lock.unlink()
    return lock


def _ref_error(repo: Repository, name: str, lock: Path, exc: OSError) -> SyncError:
    """Another ref's lock may belong to a git command the user is running: the user decides."""
    held = [str(path) for path in (lock, Path(repo.path) / "packed-refs.lock") if path.exists()]
    hint = (f"if no git command is running, remove {' and '.join(held)} and rerun" if held
            else "fix that and rerun")
    return SyncError(f"cannot update {name}: {str(exc).strip() or exc.strerror}; {hint} (the replay is kept)")


def set_tool_ref(repo: Repository, name: str, target: str | Oid) -> None:
    lock = _stale_lock(repo, name)
    try:
        set_ref(repo, name, target)
    except OSError as exc:
        raise _ref_error(repo, name, lock, exc) from exc


def delete_tool_ref(repo: Repository, name: str) -> None:
    lock = _stale_lock(repo, name)
    try:
        delete_ref(repo, name)
    except OSError as exc:
        raise _ref_error(repo, name, lock, exc) from exc


@contextmanager
def run_lock(repo: Repository, name: str = "upgrade", running: str = "another upgrade") -> Iterator[None]:
    """Hold <git dir>/flagtree-sync/<name>.lock for a whole run: a second run on the same repository
    fails at once (exit 2) instead of interleaving its journal with this one. The kernel drops the
    lock when the process dies, so a killed run never leaves it held."""
    directory = tool_dir(repo)
    if directory.is_symlink() or (os.path.lexists(directory) and not directory.is_dir()):
        raise SyncError(f"{directory} is not flagtree-sync's directory (a symbolic link or a file): move it away "
                        "and rerun")
    directory.mkdir(exist_ok=True)
    path = directory / f"{name}.lock"
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        odd = path.is_symlink() or path.is_dir()  # no run can hold such a lock: it is safe to move away
        raise SyncError(f"cannot open the lock {path}: {exc.strerror or exc}" +
                        ("; it is not a file, so no upgrade holds it: move it away and rerun" if odd else "")) from exc
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise SyncError(f"{running} is in progress on {repo.workdir or repo.path} (it holds {path}); "
                            "wait for it to finish") from exc
        holding_lock(descriptor)  # forked workers close their copy (sync/support/workers.py)
        yield
    finally:
        released_lock(descriptor)
        os.close(descriptor)  # releases the lock
