"""`resolve`: write the single-level 3-way merge of a conflicted file into the upgraded branch's work tree."""
from __future__ import annotations

from dataclasses import dataclass

from sync.errors import SyncError
from sync.jobs.resolve import resolve_files
from sync.commands import echo_line


@dataclass(frozen=True, kw_only=True)
class ResolveRequest:
    """What `resolve` was given, by name (None or empty: not given)."""

    paths: tuple[str, ...] = ()
    repo_path: str = "."
    every: bool = False  # --all
    target: str | None = None


def run_resolve(request: ResolveRequest) -> int:
    if not request.paths and not request.every:
        raise SyncError("name the files to merge (PATH ...) or pass --all")
    done = resolve_files(request.repo_path, request.paths, request.every, request.target)
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
