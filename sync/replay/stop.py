"""The stop worktree: a conflict left as git's own cherry-pick in a separate worktree for the user to resolve, and
the up-front check that the file system can hold that worktree's files."""
from __future__ import annotations


from sync.errors import SyncError
from sync.git import Commit, Repository, tool_dir
from sync.git.pick import marker_labels
from sync.git.repo import commit_of, names_longer_than, paths_written_longer_than
from sync.git.worktree import longest_name, stop_worktree
from sync.model.revs import Range
from sync.replay.commits import FileConflict, stops_on
from sync.replay.plan import UpgradeParams
from sync.replay.store import StateStore, UpgradeState


def stop_in_worktree(repo: Repository, store: StateStore, state: UpgradeState, commit: Commit) -> None:
    """Leave git's own conflicted cherry-pick in a separate worktree, for the user's usual tools. The same
    worktree serves every stop of the run (a shell sitting in it stays valid); it is made ready first, so a
    refused one (local changes, not ours) leaves the run unstopped and the next --continue comes back here."""
    worktree = stop_worktree(repo, store.worktree, state.head)
    state.stopped = True
    store.save(state)
    # The worktree outlives this run on purpose: the user resolves the conflict there.
    failed = worktree.cherry_pick_no_commit(str(commit.id))
    worktree.relabel_conflicts(repo, marker_labels(commit, state.params.range.onto.ref))  # as markers mode writes
    if failed is not None and not worktree.unmerged_paths():  # git stopped on what it could not write
        worktree.discard()
        stop_again(store, state)
        raise SyncError(f"git cannot leave commit {str(commit.id)[:9]} in the stop worktree {store.worktree} "
                        f"({failed.splitlines()[0]}), so there is nothing to resolve there; {CHECKOUT_HINT}")


CHECKOUT_HINT = ("drop this run with upgrade --abort and start it with --on-conflict markers, ours or theirs, "
                 "which replay in memory")


def require_checkoutable(repo: Repository, rng: Range, needs: str, hint: str) -> None:
    """Refuse up front what a worktree will fail to check out: a file name or path longer than the file system
    takes (git stores it, the kernel refuses it), in the commits the worktree would hold."""
    name_max, path_max = longest_name(tool_dir(repo))
    for rev in (rng.onto, rng.source):  # git writes paths relative to the worktree: PATH_MAX less the NUL
        found = next(names_longer_than(repo, commit_of(repo, rev.oid).tree_id, name_max, path_max - 1), None)
        if found is not None:
            longest = max(len(part.encode()) for part in found.split("/"))
            what = (f"a name of {longest} bytes; it takes {name_max}" if longest > name_max else
                    f"a path of {len(found.encode())} bytes; it takes {path_max} in all")
            raise SyncError(f"{needs} needs a worktree, and this file system cannot hold {rev.ref}'s file "
                            f"{found[:80]!r}{'...' if len(found) > 80 else ''} ({what}): {hint}")
    # a path an intermediate commit adds (and a later one removes) is in the worktree at that commit's stop
    written = next(paths_written_longer_than(repo, commit_of(repo, rng.old.oid), commit_of(repo, rng.source.oid),
                                             name_max, path_max - 1), None)
    if written is not None:
        commit, found = written
        raise SyncError(f"{needs} needs a worktree, and this file system cannot hold the file {found[:80]!r}"
                        f"{'...' if len(found) > 80 else ''} that commit {str(commit.id)[:9]} writes (a name over "
                        f"{name_max} bytes or a path over {path_max}): {hint}")


def stop_on_matches(params: UpgradeParams, conflicts: list[FileConflict]) -> str:
    """At a --stop-on stop: which files stopped it, the others may keep their markers."""
    if not params.stop_on:
        return ""
    matched = sorted({c.path for c in conflicts if stops_on(params.stop_on, c.path)})
    if len(matched) == len({c.path for c in conflicts}):
        return ""
    return f" (--stop-on matches {', '.join(matched)}; git add the others as they are to keep their markers)"


def stop_again(store: StateStore, state: UpgradeState) -> None:
    """Nothing to take as the resolution: the run is no longer stopped, so the replay meets the commit
    again and stops there anew."""
    state.stopped = False
    store.save(state)
