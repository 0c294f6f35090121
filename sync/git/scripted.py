"""Repositories built by a script with fixed authors and dates (the demo world), through git's porcelain
(GitPython): every build gives the same hashes."""
from __future__ import annotations

from pathlib import Path
from typing import Union

import git

from sync.git.environment import forget_repository_variables

# What a scripted commit does to a path: None deletes it, (old, new path, text) renames it, text writes it.
Change = Union[None, str, tuple[str, str, str]]


class ScriptedRepo:
    """A repository with a work tree, committed to at a clock that advances an hour per commit."""

    def __init__(self, repo: git.Repo, clock: int) -> None:
        self.repo = repo
        self.clock = clock

    @classmethod
    def init(cls, path: Path, branch: str, user: tuple[str, str], clock: int) -> "ScriptedRepo":
        forget_repository_variables()  # GIT_DIR and the like name the user's repository, never the script's
        path.mkdir(parents=True, exist_ok=True)
        repo = git.Repo.init(path, initial_branch=branch)
        with repo.config_writer() as config:
            config.set_value("user", "name", user[0])
            config.set_value("user", "email", user[1])
            config.set_value("commit", "gpgsign", "false")
        return cls(repo, clock)

    @classmethod
    def clone(cls, source: Path, path: Path, branch: str, start: str, user: tuple[str, str],
              clock: int) -> "ScriptedRepo":
        """Clone without checkout, then put branch at start."""
        forget_repository_variables()
        repo = git.Repo.clone_from(str(source), str(path), no_checkout=True)
        repo.git.checkout("-q", "-B", branch, start)
        with repo.config_writer() as config:
            config.set_value("user", "name", user[0])
            config.set_value("user", "email", user[1])
        return cls(repo, clock)

    def commit(self, message: str, changes: dict[str, Change], author: tuple[str, str]) -> str:
        work = Path(self.repo.working_tree_dir or ".")
        for path, change in changes.items():
            target = work / path
            if change is None:
                self.repo.git.rm("-q", path)
            elif isinstance(change, tuple):
                _, new_path, text = change
                (work / new_path).parent.mkdir(parents=True, exist_ok=True)
                self.repo.git.mv(path, new_path)
                (work / new_path).write_text(text, encoding="utf-8")
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(change, encoding="utf-8")
        self.repo.git.add("-A")
        self.clock += 3600
        stamp = f"{self.clock} +0000"
        env = {
            "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1], "GIT_AUTHOR_DATE": stamp,
            "GIT_COMMITTER_NAME": author[0], "GIT_COMMITTER_EMAIL": author[1], "GIT_COMMITTER_DATE": stamp,
        }
        with self.repo.git.custom_environment(**env):
            self.repo.git.commit("-q", "--no-verify", "-m", message)
        return self.repo.head.commit.hexsha

    def tag(self, name: str, message: str) -> None:
        self.repo.create_tag(name, message=message)

    def commit_id(self, rev: str) -> str:
        return self.repo.commit(rev).hexsha

    def rename_remote(self, old: str, new: str) -> None:
        self.repo.git.remote("rename", old, new)
