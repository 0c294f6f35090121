"""Detached worktrees under the git directory, driven through git itself (GitPython): the test gate runs
commands in one, and a stopped upgrade leaves git's conflicted `cherry-pick --no-commit` in one for the user."""
from __future__ import annotations

import os
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Iterator

import git
import pygit2

from sync.errors import SyncError
from sync.git.environment import tool_git
from sync.git.merge import merge_blobs
from sync.git.repo import common_git_dir


class Worktree:
    """A linked worktree of a repository, addressed by its path."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._git = tool_git(path)

    def checkout(self, commit: str) -> None:
        """Check out commit detached and remove every untracked file: each run starts clean."""
        try:
            self._git.checkout("--quiet", "--force", "--detach", commit)
        except git.GitCommandError as exc:  # a name the file system refuses, a full disk: said, never a crash
            raise SyncError(f"git cannot check out {commit[:9]} in {self.path}: {_why(exc)}; the replay is kept: "
                            "rerun without what needs a worktree (--exec, --on-conflict stop), or upgrade --abort"
                            ) from exc
        self._git.clean("-xdfq")

    def cherry_pick_no_commit(self, commit: str) -> str | None:
        """git cherry-pick --no-commit; git's message when it stopped (on conflicts, left for the user, or on
        what it could not write), None when the pick is clean."""
        try:
            self._git.cherry_pick("--no-commit", commit)
            return None
        except git.GitCommandError as exc:
            return str(exc.stderr or exc).strip().removeprefix("stderr:").strip().strip("'").strip() or "failed"

    def relabel_conflicts(self, repo: pygit2.Repository, labels: tuple[str, str, str]) -> None:
        """Rewrite each content conflict git left (stages 1, 2 and 3 at one path) as the markers policy writes it:
        diff3 style, with its labels (base, ours, theirs), so stop and markers mode read the same (issue 48.1)."""
        stages: dict[str, dict[str, str]] = {}
        for line in self._git.ls_files("-u", "-z").split("\0"):
            info, _, path = line.partition("\t")
            if path and len(info.split()) == 3:
                _, oid, stage = info.split()
                stages.setdefault(path, {})[stage] = oid
        for path, found in sorted(stages.items()):
            target = self.path / path
            if set(found) != {"1", "2", "3"} or target.is_symlink() or not target.is_file():
                continue
            base, ours, theirs = (pygit2.Oid(hex=found[stage]) for stage in ("1", "2", "3"))
            outcome = merge_blobs(repo, path, base, ours, theirs, labels)
            if not outcome.clean:
                target.write_bytes(outcome.data)

    def unmerged_paths(self) -> list[str]:
        return sorted({line.split("\t", 1)[1] for line in self._git.ls_files("-u").splitlines() if "\t" in line})

    def resolved_tree(self, started_at: str) -> str:
        """The tree the user resolved: HEAD's tree when they committed, else the index written as a tree."""
        repo = git.Repo(self.path)
        if repo.head.commit.hexsha != started_at:
            return repo.head.commit.tree.hexsha
        return self._git.write_tree()

    def quit_cherry_pick(self) -> None:
        if self.picking() is not None:
            self._git.cherry_pick("--quit")

    def head(self) -> str:
        return self._git.rev_parse("HEAD").strip()

    @cached_property
    def git_dir(self) -> Path:
        """The worktree's own git directory (.git/worktrees/<name>), where git marks operations in progress."""
        return Path(git.Repo(self.path).git_dir)

    def picking(self) -> str | None:
        """The commit of the cherry-pick in progress here, if any."""
        marker = self.git_dir / "CHERRY_PICK_HEAD"
        return marker.read_text(encoding="utf-8").strip() if marker.is_file() else None

    def unstaged_paths(self) -> list[str]:
        """Tracked files whose work-tree content differs from the index (edits not git-added)."""
        return sorted(set(self._git.diff("--name-only", "-z").split("\0")) - {""})

    def local_changes(self) -> list[str]:
        """Tracked files that differ from HEAD (staged or not), and an operation in progress."""
        changed = set(self._git.diff("HEAD", "--name-only", "-z").split("\0")) - {""}
        busy = [f"a {name.lower().replace('_head', '').replace('_', '-')} in progress" for name in
                ("CHERRY_PICK_HEAD", "MERGE_HEAD", "REVERT_HEAD", "REBASE_HEAD")
                if (self.git_dir / name).exists()]
        return sorted(changed) + busy

    def discard(self) -> None:
        """Drop the cherry-pick in progress and every change to tracked files (the tool's conflict and the
        resolution of it); files git does not track stay."""
        self.quit_cherry_pick()
        self._git.reset("--hard", "--quiet")

    def detach_at(self, commit: str) -> None:
        """Check out commit detached in place, without --force: git keeps untracked files and refuses to
        overwrite one; an ignored file at a path commit adds would be overwritten, so that is refused here."""
        added = set(self._git.diff("--name-only", "-z", "--diff-filter=A", "HEAD", commit).split("\0")) - {""}
        tracked = set(self._git.ls_files("-z", "--", *added).split("\0")) if added else set()
        in_the_way = sorted(path for path in added - tracked if os.path.lexists(self.path / path))
        if in_the_way:
            raise SyncError(f"{self.path} has files where the next commit adds them: {', '.join(in_the_way)}; "
                            "move them away and rerun flagtree-sync upgrade --continue")
        try:
            self._git.checkout("--quiet", "--detach", commit)
        except git.GitCommandError as exc:
            raise SyncError(f"git cannot check out {commit[:9]} in {self.path}: {_why(exc)}; fix that and rerun "
                            "flagtree-sync upgrade --continue") from exc


def _why(exc: git.GitCommandError) -> str:
    """git's own message, its last line (the one that says what failed)."""
    lines = str(exc.stderr or exc).strip().removeprefix("stderr:").strip().strip("'").strip().splitlines()
    return lines[-1] if lines else "failed"


def add_worktree(repo: pygit2.Repository, path: Path, commit: str) -> Worktree:
    """Add a detached worktree at path; the caller removes it. A stale one a killed run left there (a linked
    worktree of this repository at path) is replaced; anything else in the way is refused, never removed."""
    if is_linked_worktree(repo, path):
        remove_worktree(repo, path)
    elif os.path.lexists(path) and (path.is_symlink() or not path.is_dir() or any(path.iterdir())):
        raise SyncError(f"{path} is in the way of the worktree flagtree-sync needs there and is not one of this "
                        "repository's worktrees, so it is left alone: move it away and rerun")
    main = tool_git(repo.workdir or repo.path)
    main.worktree("prune")  # forget a registered worktree whose directory is gone
    main.worktree("add", "--detach", "--quiet", str(path), commit)
    return Worktree(path)


def stop_worktree(repo: pygit2.Repository, path: Path, commit: str) -> Worktree:
    """The worktree an upgrade stops in, kept from one stop to the next so that a shell sitting in it keeps
    a valid current directory: created when missing; when it is this repository's linked worktree with no
    local change, commit is checked out in it in place. A directory that is not (a symlink, a file, another
    repository's checkout) or has local changes is refused with the reason, never wiped."""
    if not os.path.lexists(path) or (path.is_dir() and not path.is_symlink() and not any(path.iterdir())):
        return add_worktree(repo, path, commit)
    if not is_linked_worktree(repo, path):
        raise SyncError(f"{path} exists but is not a worktree of this repository, so it is not flagtree-sync's "
                        "stop worktree and is left alone: move it away and rerun flagtree-sync upgrade --continue")
    worktree = Worktree(path)
    changes = worktree.local_changes()
    if changes:
        raise SyncError(f"the stop worktree {path} has local changes ({', '.join(changes)}); commit or stash them "
                        "(or git worktree remove it), then rerun flagtree-sync upgrade --continue")
    worktree.detach_at(commit)
    return worktree


def is_linked_worktree(repo: pygit2.Repository, path: Path) -> bool:
    """path is a real directory (no symlink followed) that git lists as a linked worktree of this repository."""
    if path.is_symlink() or not path.is_dir():
        return False
    listing = tool_git(repo.workdir or repo.path).worktree("list", "--porcelain", "-z")
    paths = [Path(field[len("worktree "):]) for field in listing.split("\0") if field.startswith("worktree ")]
    return path.resolve() in {listed.resolve() for listed in paths[1:]}  # the first entry is the main worktree


def remove_worktree(repo: pygit2.Repository, path: Path, force: bool = True) -> bool:
    """git worktree remove; without force git keeps a worktree with changes or untracked files (False).
    Ignored files go either way: git treats them as expendable build output."""
    try:
        tool_git(repo.workdir or repo.path).worktree("remove", *(["--force"] if force else []), str(path))
    except git.GitCommandError:
        if force:
            raise
        return False
    return True


@contextmanager
def detached_worktree(repo: pygit2.Repository, path: Path, commit: str = "HEAD") -> Iterator[Worktree]:
    """A detached worktree that is always removed, whatever happens inside."""
    worktree = add_worktree(repo, path, commit)
    try:
        yield worktree
    finally:
        remove_worktree(repo, path)


def branches_in_worktrees(repo: pygit2.Repository) -> dict[str, Path]:
    """Every branch checked out in the main or a linked worktree (refs/heads/... -> its worktree)."""
    listing = tool_git(repo.workdir or repo.path).worktree("list", "--porcelain", "-z")
    found: dict[str, Path] = {}
    path = None
    for field in listing.split("\0"):
        if field.startswith("worktree "):
            path = Path(field[len("worktree "):])
        elif field.startswith("branch ") and path is not None:
            found[field[len("branch "):]] = path
    return found


def branches_in_use(repo: pygit2.Repository) -> dict[str, Path]:
    """What git itself will not move under a worktree (refs/heads/... -> the worktree): the branch each has
    checked out, and the branch a rebase or bisect in progress there returns to (HEAD is detached meanwhile)."""
    found = branches_in_worktrees(repo)
    common = common_git_dir(repo)
    linked = sorted(path for path in (common / "worktrees").glob("*") if path.is_dir())
    for git_dir in [common, *linked]:
        where = _worktree_of(git_dir, common)
        for marker in ("rebase-merge/head-name", "rebase-apply/head-name", "BISECT_START"):
            try:
                name = (git_dir / marker).read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                continue
            if name and not name.startswith("refs/"):  # BISECT_START holds the short name
                name = f"refs/heads/{name}"
            found.setdefault(name, where)
    return found


def _worktree_of(git_dir: Path, common: Path) -> Path:
    """The work tree of a git directory: the main one's parent, a linked one's from its gitdir file."""
    if git_dir == common:
        return common.parent
    try:
        return Path(os.fsdecode((git_dir / "gitdir").read_bytes().strip())).parent
    except (OSError, UnicodeDecodeError):
        return git_dir


def fast_forward(path: Path, commit: str) -> str | None:
    """git merge --ff-only in the worktree at path: its branch, index and files move together, and git
    refuses when a local change would be overwritten. None when done, else git's message."""
    try:
        tool_git(path).merge("--ff-only", "--quiet", commit)
    except git.GitCommandError as exc:
        return str(exc.stderr or exc).strip().removeprefix("stderr:").strip().strip("'").strip()
    return None


def longest_name(path: Path) -> tuple[int, int]:
    """The longest file name and the longest path (bytes) the file system at path takes: a worktree there cannot
    check out more."""
    while not path.exists() and path != path.parent:
        path = path.parent
    limits = []
    for name, default in (("PC_NAME_MAX", 255), ("PC_PATH_MAX", 4096)):
        try:
            limits.append(os.pathconf(path, name))
        except (OSError, ValueError):
            limits.append(default)
    return limits[0], limits[1]
