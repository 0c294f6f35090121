"""Write files and whole directories so that a reader never sees a half-written result.

A report directory carries a marker (DIRECTORY_MARKER) naming the files this tool wrote into it; an
existing --out is replaced only when it holds exactly those files, so that no --out can ever delete
something the tool did not create (a repository, a parent of one, somebody's directory).
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

from sync.errors import SyncError
from sync.support.faults import checkpoint

REPORT_MARKER = "report.json"  # the report document (its name is part of the report's interface)
DIRECTORY_MARKER = ".flagtree-sync-report.json"  # proof that a directory is a report this tool wrote
DIRECTORY_SCHEMA = "flagtree-sync/report-dir/1"


def write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        # a git path that is not UTF-8 travels surrogate-escaped: shown as \udcff, never a crash
        with os.fdopen(descriptor, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _written_files(directory: Path) -> set[str] | None:
    """The file names the marker of directory lists, or None when it is not a report this tool wrote."""
    marker = directory / DIRECTORY_MARKER
    try:
        if not stat.S_ISREG(marker.lstat().st_mode):
            return None
        document = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = document.get("files") if isinstance(document, dict) else None
    if document.get("schema") != DIRECTORY_SCHEMA or not isinstance(files, list) \
            or not all(isinstance(name, str) and _plain_name(name) for name in files):
        return None
    return set(files)


def _plain_name(name: str) -> bool:
    return bool(name) and "/" not in name and "\0" not in name and name not in (".", "..") \
        and name != DIRECTORY_MARKER


def _foreign_entries(directory: Path, allow_subset: bool) -> list[str] | None:
    """What in directory this tool did not write (None: no marker at all). With allow_subset, a
    directory whose writing was interrupted (some listed files missing) still counts as ours."""
    listed = _written_files(directory)
    if listed is None:
        return None
    foreign = []
    present = set()
    for entry in directory.iterdir():
        if entry.name == DIRECTORY_MARKER:
            continue
        if entry.name not in listed or not stat.S_ISREG(entry.lstat().st_mode):
            foreign.append(entry.name)
        present.add(entry.name)
    if not allow_subset and present != listed:
        foreign.extend(sorted(f"{name} (listed, missing)" for name in listed - present))
    return sorted(foreign)


def _inside(path: Path, ancestor: Path) -> bool:
    return path == ancestor or ancestor in path.parents


def check_report_target(target: Path, work_tree: Path | None = None, git_dir: Path | None = None) -> None:
    """Refuse an --out that the report must not replace; call it before any work that an --out error wastes.

    --out may be neither the repository's work tree nor its git directory, nor a parent of either,
    nor inside the git directory.
    """
    resolved = target.resolve()
    for place in (work_tree, git_dir):
        if place is not None and _inside(place.resolve(), resolved):
            raise SyncError(f"--out {target} is the repository or a directory above it ({place}): "
                            "choose a directory of its own for the report")
    if git_dir is not None and _inside(resolved, git_dir.resolve()):
        raise SyncError(f"--out {target} is inside the git directory {git_dir}: choose another --out")
    if target.is_symlink():
        raise SyncError(f"--out {target} is a symbolic link: name the directory itself")
    _require_writable_parent(target)
    if not target.exists():
        return
    if not target.is_dir():
        raise SyncError(f"--out {target} exists and is not a directory")
    if os.path.ismount(target):  # the report is staged next to it and renamed into place: EBUSY after the run
        raise SyncError(f"--out {target} is a mount point, which cannot be replaced: choose a directory inside it, "
                        f"e.g. --out {target / 'report'}")
    if not any(target.iterdir()):
        return
    foreign = _foreign_entries(target, allow_subset=False)
    if foreign is None:
        raise SyncError(f"--out {target} exists and is not a flagtree-sync report directory (no {DIRECTORY_MARKER}): "
                        "choose another --out, or remove it yourself")
    if foreign:
        raise SyncError(f"--out {target} holds files flagtree-sync did not write ({', '.join(foreign[:5])}): "
                        "choose another --out, or move them away")


def _require_writable_parent(target: Path) -> None:
    """The report is staged next to target and renamed into place (publish_directory): refuse, before any
    work, a target whose nearest existing parent this process cannot write (permissions, read-only mount)."""
    parent = target.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise SyncError(f"--out {target}: {parent} is not a directory: choose another --out")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise SyncError(f"--out {target}: cannot write in {parent} (the report is written next to {target.name} "
                        "and moved into place): choose another --out")


def _remove_leftover(directory: Path) -> None:
    """A staging or old directory of a run that was killed: removed only when all of it is ours."""
    if directory.is_symlink() or not directory.is_dir():
        return
    if not any(directory.iterdir()) or _foreign_entries(directory, allow_subset=True) == []:
        shutil.rmtree(directory, ignore_errors=True)


def publish_directory(target: Path, files: dict[str, str]) -> None:
    """Write every file into a sibling staging directory, then swap it in with renames.

    A target that exists must be empty or exactly an earlier report (check_report_target). The marker
    is written first, so that a staging directory left by a kill is recognisably ours.
    """
    if not all(_plain_name(name) for name in files):
        raise ValueError(f"report file names must be plain names: {sorted(files)}")
    check_report_target(target)
    target = target.resolve()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
        os.chmod(staging, 0o777 & ~_current_umask())  # mkdtemp makes it 0700; a report is the user's
    except OSError as exc:
        raise SyncError(f"cannot write the report next to {target}: {exc.strerror or exc}") from exc
    for pattern in (f".{target.name}.partial-*", f".{target.name}.old-*"):
        for stale in target.parent.glob(pattern):
            if stale != staging:  # left by a run that was killed while writing
                _remove_leftover(stale)
    try:
        marker = {"schema": DIRECTORY_SCHEMA, "files": sorted(files)}
        (staging / DIRECTORY_MARKER).write_text(json.dumps(marker, indent=1) + "\n", encoding="utf-8")
        for number, (name, text) in enumerate(files.items()):
            (staging / name).write_text(text, encoding="utf-8", errors="backslashreplace")  # non-UTF-8 paths
            if number == 0:
                checkpoint("report")
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.replace(target, old)
        os.replace(staging, target)
        if old is not None:
            _remove_leftover(old)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise SyncError(f"cannot write the report to {target}: {exc.strerror or exc}; no report was written") from exc
