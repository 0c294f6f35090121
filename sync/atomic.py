"""Write files and whole directories so that a reader never sees a half-written result."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .errors import SyncError
from .faults import checkpoint

REPORT_MARKER = "report.json"


def write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def publish_directory(target: Path, files: dict[str, str]) -> None:
    """Write every file into a sibling staging directory, then swap it in with renames.

    A target that exists must be an earlier report (it holds report.json) or empty, so that
    a mistyped --out never replaces somebody's directory.
    """
    target = target.resolve()
    if target.exists() and (not target.is_dir() or (any(target.iterdir()) and not (target / REPORT_MARKER).exists())):
        raise SyncError(f"{target} exists and is not a flagtree-sync report directory: choose another --out")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    except OSError as exc:
        raise SyncError(f"cannot write the report next to {target}: {exc.strerror or exc}") from exc
    for stale in target.parent.glob(f".{target.name}.partial-*"):
        if stale != staging:  # left by a run that was killed while writing
            shutil.rmtree(stale, ignore_errors=True)
    try:
        for number, (name, text) in enumerate(files.items()):
            (staging / name).write_text(text, encoding="utf-8")
            if number == 0:
                checkpoint("report")
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.replace(target, old)
        os.replace(staging, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise SyncError(f"cannot write the report to {target}: {exc.strerror or exc}; no report was written") from exc
