"""Plain `git cherry-pick` in a throw-away worktree: the reference the in-memory replay is held to (by
bench/replay_vs_git.py on real moves and by the property tests on random histories).

A pick's result is the tree git would commit with its conflicts staged as they are (markers, or the file
git left in the work tree) and the set of paths git left unmerged. The worktree is a linked worktree of the
repository (or of a bare one); git runs with no system or global configuration, so only git's defaults
(ort, renames on) decide."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pygit2

from sync.git.ort import settings_free_environment
from sync.git.repo import common_git_dir


@dataclass(frozen=True)
class GitPick:
    tree: str  # what git commits once the conflicted files are added as they are
    conflicted: frozenset[str]  # paths git left unmerged (os.fsdecode of git's bytes)


def aside(path: str) -> str:
    """A path git moved aside for a file/directory clash (path~HEAD, path~<label>) as path~: git cherry-pick
    labels the picked commit "<short id>... <subject>", the replay by its id."""
    head, tilde, _ = path.rpartition("~")
    return f"{head}~" if tilde and "/" not in _ else path


def _env() -> dict[str, str]:
    return settings_free_environment(GIT_AUTHOR_NAME="reference", GIT_AUTHOR_EMAIL="reference@localhost",
                                     GIT_COMMITTER_NAME="reference", GIT_COMMITTER_EMAIL="reference@localhost",
                                     GIT_AUTHOR_DATE="1700000000 +0000", GIT_COMMITTER_DATE="1700000000 +0000")


class CherryPicker:
    """A work tree in which each pick starts, detached, from a given commit."""

    def __init__(self, worktree: Path) -> None:
        self.worktree = worktree
        self.env = _env()
        self.repo = pygit2.Repository(str(worktree))  # sees git's trees and, through alternates, the replay's

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        done = subprocess.run(["git", *args], cwd=self.worktree, env=self.env, capture_output=True, check=False)
        if check and done.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {done.stderr.decode('utf-8', 'replace').strip()}")
        return done

    def pick(self, head: str, commit: str) -> GitPick | None:
        """git cherry-pick commit onto head (no commit made): its tree and unmerged paths; None where git
        itself aborts (git 2.39 hits BUG() in merge-ort on some directory rename/file clashes)."""
        self.git("cherry-pick", "--quit", check=False)
        self.git("checkout", "-q", "-f", "--detach", head)
        self.git("clean", "-q", "-f", "-d", "-x")
        done = self.git("cherry-pick", "--no-commit", commit, check=False)  # exit 1 on conflicts
        if done.returncode not in (0, 1):
            (self.worktree / ".git" / "index.lock").unlink(missing_ok=True)  # our own throw-away repository
            self.git("reset", "-q", "--hard", head)
            return None
        unmerged = self.git("ls-files", "-u", "-z").stdout.split(b"\0")
        conflicted = frozenset(aside(os.fsdecode(line.split(b"\t", 1)[1])) for line in unmerged if b"\t" in line)
        self.git("add", "-A")
        tree = self.git("write-tree").stdout.decode("ascii").strip()
        return GitPick(tree, conflicted)

    def chain(self, onto: str, commits: list[str]) -> Iterator[tuple[str, GitPick]]:
        """git cherry-pick of each commit in turn, conflicts committed as they are: (new head, pick) each."""
        head = onto
        for commit in commits:
            picked = self.pick(head, commit)
            if picked is None:
                raise RuntimeError(f"git cherry-pick {commit} aborted (a bug of git's)")
            if picked.tree != self.git("rev-parse", f"{head}^{{tree}}").stdout.decode("ascii").strip() \
                    or picked.conflicted:
                head = self.git("commit-tree", picked.tree, "-p", head, "-m", commit).stdout.decode("ascii").strip()
            yield head, picked


@contextmanager
def cherry_picker(repo: pygit2.Repository) -> Iterator[CherryPicker]:
    """A throw-away repository with a work tree that borrows repo's objects (alternates): repo is only read.
    Its own object store takes git's results; picker.repo reads both."""
    directory = Path(tempfile.mkdtemp(prefix="flagtree-sync-reference-"))
    try:
        subprocess.run(["git", "init", "-q", str(directory)], env=_env(), capture_output=True, check=True)
        alternates = directory / ".git" / "objects" / "info" / "alternates"
        alternates.write_bytes(os.fsencode((common_git_dir(repo) / "objects").resolve()) + b"\n")
        yield CherryPicker(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def files_of(repo: pygit2.Repository, tree: str | pygit2.Oid) -> dict[str, tuple[str, int]]:
    """Every file of a tree: path -> (blob id, mode)."""
    found: dict[str, tuple[str, int]] = {}

    def walk(node: pygit2.Tree, prefix: str) -> None:
        for entry in node:
            if isinstance(entry, pygit2.Tree):
                walk(entry, f"{prefix}{entry.name}/")
            else:
                found[f"{prefix}{entry.name}"] = (str(entry.id), entry.filemode)
    walk(repo[tree].peel(pygit2.Tree), "")
    return found


def differing_paths(repo: pygit2.Repository, ours: str | pygit2.Oid, theirs: str | pygit2.Oid,
                    outside: frozenset[str] | set[str]) -> list[str]:
    """Paths whose file differs between two trees, outside the given (conflicted) paths and what git moved
    aside for them (path~side)."""
    if str(ours) == str(theirs):
        return []
    left, right = files_of(repo, ours), files_of(repo, theirs)
    def skipped(path: str) -> bool:
        return path in outside or aside(path) in outside or path.split("~", 1)[0] in outside
    return sorted(path for path in set(left) | set(right) if left.get(path) != right.get(path) and not skipped(path)
                  and not _same_but_marker_labels(repo, left.get(path), right.get(path)))


_LABELLED_MARKER = re.compile(rb"^(<{7,}|>{7,}) .*$", re.MULTILINE)


def _same_but_marker_labels(repo: pygit2.Repository, left: tuple[str, int] | None,
                            right: tuple[str, int] | None) -> bool:
    """Two versions of a file that differ only in the labels of conflict markers: what git writes, and commits
    without a conflict, for a rename that has content conflicts and collides with another path ("rename involved
    in collision", git 2.39: nested markers) names the picked commit by its short id and subject; a merge of the
    same trees elsewhere names it otherwise."""
    if left is None or right is None or left[1] != right[1]:
        return False
    strip = lambda oid: _LABELLED_MARKER.sub(rb"\1", repo[oid].peel(pygit2.Blob).data)
    return strip(left[0]) == strip(right[0]) and _LABELLED_MARKER.search(repo[left[0]].peel(pygit2.Blob).data) is not None
