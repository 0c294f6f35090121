"""The journal of an upgrade in progress: one JSON line per replayed commit, appended and fsync'd after the
objects it names and the ref that keeps them exist; a line torn by a kill is dropped when it is read."""
from __future__ import annotations

import json
import os
from pathlib import Path

from sync.replay.commits import ReplayedCommit
from sync.replay.statefiles import read_bounded

JOURNAL_LIMIT = 1 << 30  # bytes: a line per commit, conflict hunks included


def journal_lines(journal: Path) -> list[str]:
    """The journal's lines (none: no journal); a last line a kill left torn is dropped from the file too."""
    text = read_bounded(journal, JOURNAL_LIMIT)
    if text is None:
        return []
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):  # killed mid-append: drop it, that commit is redone
        lines.pop()
        journal.write_text("".join(lines), encoding="utf-8")
    return [line for line in lines if line.strip()]


def append_entry(journal: Path, result: ReplayedCommit, head: str) -> None:
    """Append one replayed commit and the head after it, on disk before this returns."""
    with open(journal, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"result": result.to_json(), "head": head}) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
