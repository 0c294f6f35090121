"""The resolve job: one conflict per file on an upgraded branch (issue 48.1).

In markers mode every replayed commit that conflicts in a file merges on top of the markers an earlier one
committed there, so a file several commits touched holds nested conflicts whose hunks match no commit. What a
person needs is the file's single-level 3-way merge: base the file at OLD (upstream before), ours the file at
NEW (upstream now), theirs the file at SRC (FlagTree's final file). `resolve` writes that merge into the work
tree of the upgraded branch, for the files named or for every file still holding markers that a replayed
commit committed in conflict; the person resolves what is left (one level) and commits.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sync.errors import SyncError
from sync.git import GitTree, Repository, holds_conflict, merge_blobs, open_repo
from sync.git.merge import conflict_hunks
from sync.git.repo import checked_out_branch, resolve_commit
from sync.jobs.status import conflict_trailer_paths
from sync.jobs.filehunks import merge_labels
from sync.jobs.upgraded import upgraded_range
from sync.model import Range
from sync.records.tomlfiles import work_tree_path


@dataclass(frozen=True)
class Resolved:
    path: str
    blocks: int  # conflict blocks left in the written file (0: it merged cleanly)
    blocks_before: int  # marker blocks (<<<<<<< lines) the file held, nesting included
    note: str = ""  # why nothing was written


def resolve_files(repo_path: str, paths: tuple[str, ...], every: bool, target: str | None = None) -> list[Resolved]:
    repo = open_repo(repo_path)
    if repo.workdir is None:
        raise SyncError("a bare repository has no work tree to write the merges in")
    branch = target or checked_out_branch(repo)
    if branch is None or checked_out_branch(repo) != branch:
        raise SyncError(f"resolve writes into the work tree of the upgraded branch: check out {branch or 'it'} "
                        f"here (git switch {branch or 'sync/<NEW>'}) and run it again")
    rng, replayed = upgraded_range(repo, branch)
    tip = GitTree.of_commit(repo, resolve_commit(repo, branch).id, branch)
    chosen = list(paths)
    if every:
        committed = {path for item in replayed for path in conflict_trailer_paths(item.commit)}
        chosen += sorted(path for path in committed if (data := tip.read(path)) is not None and holds_conflict(data))
    if not chosen:
        return []
    work_tree = Path(repo.workdir)
    changed = [path for path in chosen if _on_disk(work_tree, path) != tip.read(path)]
    if changed:
        raise SyncError(f"local changes to {', '.join(changed)} would be overwritten: commit or stash them, then "
                        "run resolve again (nothing was written)")
    return [_resolve_one(repo, rng, tip, work_tree, path) for path in dict.fromkeys(chosen)]


def _resolve_one(repo: Repository, rng: Range, tip: GitTree, work_tree: Path, path: str) -> Resolved:
    old, new, fork = (GitTree.of_commit(repo, rev.oid, rev.ref) for rev in (rng.old, rng.onto, rng.source))
    before = (tip.read(path) or b"").count(b"\n<<<<<<<") + (tip.read(path) or b"").startswith(b"<<<<<<<")
    theirs = fork.blob_id(path)
    if theirs is None:
        return Resolved(path, 0, before, f"FlagTree's branch {rng.source.ref} has no {path}: keep upstream's "
                                         f"file (git checkout {rng.onto.ref} -- {path}) or delete it (git rm)")
    outcome = merge_blobs(repo, path, old.blob_id(path), new.blob_id(path), theirs, merge_labels(rng))
    _write(work_tree, path, outcome.data)
    left = 0 if outcome.clean else len(conflict_hunks(outcome.data.decode("utf-8", errors="replace")))
    return Resolved(path, left, before)


def _on_disk(work_tree: Path, path: str) -> bytes | None:
    target = work_tree_path(work_tree, path)
    return target.read_bytes() if target.is_file() and not target.is_symlink() else None


def _write(work_tree: Path, path: str, data: bytes) -> None:
    """Atomically, keeping the file's mode, through no symlink (work_tree_path refuses one)."""
    target = work_tree_path(work_tree, path)
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise

