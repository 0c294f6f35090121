"""The target branch: what may be written there (a name git accepts, nothing a user made or checked out), the
commits the tool itself writes (made_by_tool), and the one compare-and-swap write at the end of a run."""
from __future__ import annotations

import errno
import re

from sync.errors import SyncError
from sync.git import Commit, Repository
from sync.git.pick import replayed_parts
from sync.git.repo import (branch_exists, branch_name_shadowed, branch_spelled, commit_of, commits_only_on,
                           direct_target, full_ref_name, has_object, is_commit, missing_in_history, ref_conflict,
                           update_ref, valid_branch_name)
from sync.git.worktree import branches_in_use, branches_in_worktrees
from sync.replay.applied import made_by_apply
from sync.replay.commits import CONFLICT_TRAILER, summary_of
from sync.replay.locks import FORCED_PREFIX
from sync.replay.plan import UpgradeParams
from sync.replay.store import StateStore, UpgradeState


TARGET_MESSAGE = "flagtree-sync upgrade: "  # the reflog message of the tool's write of the target branch
TOOL_EMAIL = "flagtree-sync@localhost"  # the committer of the commits the tool writes itself (pin, auto-merge)
RESUME_HINT = "the replay is kept: fix that and run the upgrade again (--continue), or upgrade --abort"


def made_by_tool(repo: Repository, commit: Commit) -> bool:
    """Whether commit is exactly what a run of this tool writes (and so can be recreated by rerunning it):

    - a replayed commit: one parent, the message of the commit named by its "(cherry picked from commit X)"
      line, followed by nothing but that line and the tool's conflict trailer, and author and committer
      (names, emails, dates) identical to X's, which the replay keeps. A cherry-pick -x by hand or an
      amend changes the committer, so it does not pass;
    - the pin commit: one parent and the tool's own committer (TOOL_EMAIL);
    - a drift --apply merge: one parent and the trailer that names its own tree (the user's identity signs it).
    """
    if len(commit.parent_ids) != 1:
        return False
    if commit.committer.email == TOOL_EMAIL or made_by_apply(commit):
        return True
    found = re.search(rb"\n\n\(cherry picked from commit ([0-9a-f]{40})\)\n(?:" + CONFLICT_TRAILER.encode()
                      + rb": [^\n]*\n)?\Z", commit.raw_message)
    if found is None or not has_object(repo, found.group(1).decode()):
        return False
    author, committer, message, _ = replayed_parts(commit_of(repo, found.group(1).decode()))
    same = lambda a, b: ((a.raw_name, a.raw_email, a.time, a.offset)  # noqa: E731
                         == (b.raw_name, b.raw_email, b.time, b.offset))
    return (commit.raw_message[:found.start()] == message.rstrip(b"\n")
            and same(commit.author, author) and same(commit.committer, committer))


def check_target(repo: Repository, params: UpgradeParams, hint: str) -> str | None:
    """What a fresh start checks about the target branch, checked again before it is written (the user may
    have made it, checked it out or edited the state since): a name git accepts, no ref in its way, not
    the source branch (full ref names compared, symbolic refs followed), no symbolic ref, checked out in no
    worktree. Returns the commit it is at; None: absent."""
    target = params.target_branch
    if not valid_branch_name(target):
        raise SyncError(f"{target!r} is not a valid branch name (git check-ref-format --branch refuses it); {hint}")
    shadowed = branch_name_shadowed(repo, target)
    if shadowed is not None:  # drift --target and git itself would read another commit by that name
        raise SyncError(f"refusing branch name {target!r}: {shadowed}; {hint}")
    ref = f"refs/heads/{target}"
    blocker = ref_conflict(repo, ref)
    if blocker is not None:  # git keeps refs as paths: refs/heads/sync blocks refs/heads/sync/v3.6.0
        raise SyncError(f"branch {target} cannot be created: {blocker} exists; rename that ref, or {hint}")
    current, symbolic = direct_target(repo, ref)
    odd = current is not None and not is_commit(repo, current)  # written by hand: git makes no such branch
    if symbolic or odd or _is_source(repo, params, ref, current):
        why = ("a symbolic ref" if symbolic else f"a ref to {current[:9]}, which is no commit" if odd and current
               else f"the source branch (--branch {params.source_branch})")
        raise SyncError(f"refusing to overwrite branch {target}: it is {why}; {hint}")
    for used, worktree in branches_in_use(repo).items():
        if ref in (used, full_ref_name(repo, used)):  # a worktree on a symbolic ref to it holds it too
            raise SyncError(f"branch {target} is checked out in the worktree {worktree} (or a rebase or bisect "
                            f"there returns to it): it will not be moved under it; switch that worktree to another "
                            f"branch, or {hint}")
    return current


def _is_source(repo: Repository, params: UpgradeParams, ref: str, current: str | None) -> bool:
    """Whether the target ref is the source branch however --branch spelled it (main, heads/main, main~0,
    main@{0}, main^{commit}, HEAD~0); where the spelling starts from no branch (a commit id, a tag), every
    branch at the source commit may be the one meant, and counts as the source."""
    spelled = branch_spelled(repo, params.source_branch)
    if spelled is not None:
        return ref == spelled
    return current is not None and current == params.range.source.oid


def require_writable(repo: Repository, state: UpgradeState, current: str | None, tip: str | None) -> None:
    """The target may be written only when it is absent, already this run's tip (tip None: not known yet, so
    the replayed head or the pin on it) or the branch --force accepted at the start, still all the tool's."""
    target = state.params.target_branch
    if current is None or current == tip or (tip is None and _runs_tip(repo, state, current)):
        return
    if current == state.target_was and direct_target(repo, FORCED_PREFIX + target)[0] == current:
        # accepted by --force at the start (the tool's ref says so), still so
        check_replaceable(repo, target, state.params.range.onto.oid)
        return
    made = commit_of(repo, current)
    raise SyncError(f"branch {target} was made or moved since this upgrade started (it is at {current[:9]} "
                    f"{summary_of(made)!r}) and is left as it is: rename it (git branch -m {target} NAME) or "
                    f"delete it if nothing on it is yours, then run the upgrade again (--continue), or upgrade --abort")


def _runs_tip(repo: Repository, state: UpgradeState, current: str) -> bool:
    """Whether current is what this run writes once every commit is replayed: its head, or the pin on it."""
    if len(state.results) < len(state.commits):
        return False
    made = commit_of(repo, current)
    return current == state.head or ([str(p) for p in made.parent_ids] == [state.head] and made_by_tool(repo, made))


def write_target(repo: Repository, state: UpgradeState, tip: str) -> None:
    """Set the target branch to tip, re-checked under the run lock and compare-and-swapped against the value
    checked: a branch made, moved or checked out since loses nothing."""
    current = check_target(repo, state.params, RESUME_HINT)
    require_writable(repo, state, current, tip)
    if current == tip:
        return
    name = f"refs/heads/{state.params.target_branch}"
    if not has_object(repo, tip):  # libgit2 can report a commit written on a full disk that it never wrote
        raise OSError(errno.EIO, f"commit {tip} is not in the object store, though it was written")
    gone = missing_in_history(repo, tip, state.params.range.onto.oid)
    if gone:  # a git prune or gc racing the run removed what it wrote: never a branch that lacks it
        raise SyncError(f"objects this run wrote are gone from the object store (a git prune or gc while it ran?): "
                        f"{', '.join(gone[:3])}{f' and {len(gone) - 3} more' if len(gone) > 3 else ''}; "
                        f"{name} was not written: drop the run with upgrade --abort and run the upgrade again")
    failed = update_ref(repo, name, tip, current, f"{TARGET_MESSAGE}{state.params.range.onto.ref}")
    if failed is not None:
        raise SyncError(f"cannot update {name}: {failed}; {RESUME_HINT}")


def check_replaceable(repo: Repository, branch: str, base: str) -> None:
    """--force replaces only a branch that no worktree has checked out and whose commits that nothing
    else keeps are all the tool's own (made_by_tool): rerunning recreates them, nothing made by hand is lost.
    base (the commit the new branch starts from) and its history stay on the branch: upstream's commits
    of an `--onto` that no tag or branch names are not "made by hand"."""
    ref = f"refs/heads/{branch}"
    worktree = branches_in_worktrees(repo).get(ref)
    if worktree is not None:
        raise SyncError(f"branch {branch} is checked out in the worktree {worktree}: --force will not move it; "
                        "switch that worktree to another branch, or pass --target-branch NAME")
    by_hand = [commit for commit in commits_only_on(repo, ref, "refs/flagtree-sync/", [base])
               if not made_by_tool(repo, commit)]
    if by_hand:
        named = ", ".join(f"{str(c.id)[:9]} {summary_of(c)!r}" for c in by_hand[:5])
        more = f" and {len(by_hand) - 5} more" if len(by_hand) > 5 else ""
        raise SyncError(f"branch {branch} has {len(by_hand)} commit(s) that flagtree-sync did not make and that "
                        f"--force would lose: {named}{more}; keep them on another branch (git branch NAME {branch}) "
                        "or pass --target-branch NAME")


def branch_in_the_making(repo: Repository, name: str) -> str | None:
    """Why a branch does not exist yet when it is the target of the upgrade in progress; None otherwise."""
    try:
        state = StateStore(repo).load()
    except (SyncError, OSError, ValueError):
        return None
    if state is None or state.params.target_branch != name or branch_exists(repo, name):
        return None
    where = f"stopped at commit {len(state.results) + 1}/{len(state.commits)}" if state.stopped else \
        f"interrupted after {len(state.results)} of {len(state.commits)} commits"
    then = "resolve the conflict, then run upgrade --continue" if state.stopped else "rerun the upgrade to finish it"
    return f"{name} does not exist yet: the upgrade that makes it is {where}; {then}"
