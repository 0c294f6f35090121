"""The environment of every git process the tool starts, built here only.

Git's repository variables (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, ...: what git itself clears before it
enters another repository, its `local_repo_env`) are set inside git hooks and by scripts. A git child that
inherited them would work on the repository they name, not on the tool's own worktree: stop mode once
overwrote another checkout's files and index that way. So:

- the repository the tool opens must be the one they name (each that is set, compared path for path): then
  the tool does what git would do with them; else it refuses, naming the variable (exit 2);
- the tool's process then forgets them (os.environ), so that no git child, GitPython's included, and no gate
  command inherits them; every git child the tool runs for a worktree of its own runs no hook either.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from sync.errors import SyncError

if TYPE_CHECKING:
    import git

# Each names a path git reads instead of the repository's own (compared with what the tool opened).
PATH_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")
# Each changes which objects or refs git sees; libgit2 cannot follow them, so they are refused when set.
UNFOLLOWED_VARIABLES = ("GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE",
                        "GIT_REPLACE_REF_BASE", "GIT_NO_REPLACE_OBJECTS")
# Forgotten without a check: they say where git was started from, or what `git -c` set for that repository.
CONTEXT_VARIABLES = ("GIT_IMPLICIT_WORK_TREE", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX", "GIT_CONFIG_PARAMETERS",
                     "GIT_CONFIG_COUNT", "GIT_QUARANTINE_PATH")
REPOSITORY_VARIABLES = PATH_VARIABLES + UNFOLLOWED_VARIABLES + CONTEXT_VARIABLES

_taken: dict[str, str] = {}  # what the process had, kept to check every repository it opens against


def forget_repository_variables() -> dict[str, str]:
    """Take the repository variables out of this process's environment (once; later calls see what was taken)."""
    for name in list(os.environ):
        if name in REPOSITORY_VARIABLES or name.startswith("GIT_CONFIG_KEY_") or name.startswith("GIT_CONFIG_VALUE_"):
            _taken.setdefault(name, os.environ.pop(name))
    return _taken


def child_environment(**extra: str) -> dict[str, str]:
    """The environment for a child process of the tool: this process's, less git's repository variables."""
    forget_repository_variables()
    return {**os.environ, **extra}


def adopt(git_dir: Path, common_dir: Path, work_tree: Path | None) -> None:
    """Check the repository variables the process was started with against the repository opened (its git
    directory, common directory and work tree); forget them. Refuses, naming the variable, where git would
    work on another repository or another index than the tool does."""
    taken = dict(forget_repository_variables())
    _taken.clear()  # checked once, against the repository the user named (later opens derive from it)
    expected = {"GIT_DIR": {git_dir, common_dir}, "GIT_COMMON_DIR": {common_dir},
                "GIT_OBJECT_DIRECTORY": {common_dir / "objects"}, "GIT_INDEX_FILE": {git_dir / "index"},
                "GIT_WORK_TREE": {work_tree} if work_tree is not None else set()}
    for name in PATH_VARIABLES:
        value = taken.get(name)
        if value and _resolved(value) not in {_resolved(str(path)) for path in expected[name]}:
            what = {"GIT_WORK_TREE": "work tree", "GIT_INDEX_FILE": "index"}.get(name, "repository")
            raise SyncError(f"{name}={value} is set (as inside a git hook) and names another {what} "
                            f"than {work_tree or git_dir}, which flagtree-sync works on: unset {name} "
                            f"(env -u {name} flagtree-sync ...) and name the repository with --repo")
    for name in UNFOLLOWED_VARIABLES:
        if taken.get(name):
            raise SyncError(f"{name} is set (as inside a git hook): flagtree-sync cannot read the repository as git "
                            f"would with it; unset it (env -u {name} flagtree-sync ...)")


def _resolved(path: str) -> Path:
    try:
        return Path(os.path.abspath(path)).resolve()
    except OSError:
        return Path(os.path.abspath(path))


def tool_git(path: Path | str) -> "git.Git":  # GitPython is imported when first needed
    """GitPython's git for a repository or worktree the tool works in: no repository variable inherited, no
    hook run (the hooks a relative core.hooksPath names would come from the replayed tree)."""
    import git

    forget_repository_variables()
    runner = git.Git(str(path))
    runner.set_persistent_git_options(c=f"core.hooksPath={os.devnull}")
    return runner
