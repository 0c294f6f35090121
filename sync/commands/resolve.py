"""`resolve`: write the single-level 3-way merge of a conflicted file into the upgraded branch's work tree."""
from __future__ import annotations

from sync.errors import SyncError
from sync.jobs.resolve import resolve_files
from sync.commands import echo_line


def run_resolve(repo_path: str, paths: tuple[str, ...], every: bool, target: str | None) -> int:
    if not paths and not every:
        raise SyncError("name the files to merge (PATH ...) or pass --all")
    done = resolve_files(repo_path, paths, every, target)
    if not done:
        echo_line("no file of the branch holds conflict markers a replayed commit committed: nothing to merge")
        return 0
    for item in done:
        if item.note:
            echo_line(f"{item.path}: not written: {item.note}")
            continue
        was = f" (it held {item.blocks_before} marker block(s))" if item.blocks_before else ""
        now = "merged cleanly" if not item.blocks else f"{item.blocks} conflict block(s) left, one level deep"
        echo_line(f"{item.path}: {now}{was}")
    if any(item.blocks or item.note for item in done):
        echo_line("resolve what is left, then git add and commit; status tells what is still open")
        return 1
    echo_line("review the merges, then git add and commit them")
    return 0
