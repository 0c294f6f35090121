"""Detached worktrees under the git directory, driven through git itself (GitPython): the test gate runs
commands in one, and a stopped upgrade leaves git's own conflicted cherry-pick in one for the user."""
from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import git
import pygit2


class Worktree:
    """A linked worktree of a repository, addressed by its path."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._git = git.Repo(path).git

    def checkout(self, commit: str) -> None:
        """Check out commit detached and remove every untracked file: each run starts clean."""
        self._git.checkout("--quiet", "--force", "--detach", commit)
        self._git.clean("-xdfq")

    def cherry_pick_no_commit(self, commit: str) -> bool:
        """git cherry-pick --no-commit; False when it stopped on conflicts (left for the user)."""
        try:
            self._git.cherry_pick("--no-commit", commit)
            return True
        except git.GitCommandError:
            return False

    def unmerged_paths(self) -> list[str]:
        return sorted({line.split("\t", 1)[1] for line in self._git.ls_files("-u").splitlines() if "\t" in line})

    def resolved_tree(self, started_at: str) -> str:
        """The tree the user resolved: HEAD's tree when they committed, else the index written as a tree."""
        repo = git.Repo(self.path)
        if repo.head.commit.hexsha != started_at:
            return repo.head.commit.tree.hexsha
        return self._git.write_tree()

    def quit_cherry_pick(self) -> None:
        if (Path(git.Repo(self.path).git_dir) / "CHERRY_PICK_HEAD").exists():
            self._git.cherry_pick("--quit")


def add_worktree(repo: pygit2.Repository, path: Path, commit: str) -> Worktree:
    """Add a detached worktree at path (replacing a stale one); the caller removes it."""
    main = git.Repo(repo.path)
    if path.exists():
        shutil.rmtree(path)
    main.git.worktree("prune")
    main.git.worktree("add", "--detach", "--quiet", str(path), commit)
    return Worktree(path)


def remove_worktree(repo: pygit2.Repository, path: Path) -> None:
    git.Repo(repo.path).git.worktree("remove", "--force", str(path))


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
    listing = git.Repo(repo.path).git.worktree("list", "--porcelain", "-z")
    found: dict[str, Path] = {}
    path = None
    for field in listing.split("\0"):
        if field.startswith("worktree "):
            path = Path(field[len("worktree "):])
        elif field.startswith("branch ") and path is not None:
            found[field[len("branch "):]] = path
    return found


def fast_forward(path: Path, commit: str) -> str | None:
    """git merge --ff-only in the worktree at path: its branch, index and files move together, and git
    refuses when a local change would be overwritten. None when done, else git's message."""
    try:
        git.Repo(path).git.merge("--ff-only", "--quiet", commit)
    except git.GitCommandError as exc:
        return str(exc.stderr or exc).strip().removeprefix("stderr:").strip().strip("'").strip()
    return None
