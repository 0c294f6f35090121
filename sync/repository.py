"""Open a repository and resolve user-given revisions, turning libgit2 errors into clear messages."""
from __future__ import annotations

from pathlib import Path

import pygit2
from pygit2.enums import SortMode

from .errors import NotARepository, SyncError, UnknownRef


def open_repo(path: Path | str) -> pygit2.Repository:
    path = Path(path)
    if not path.exists():
        raise SyncError(f"{path} does not exist")
    found = pygit2.discover_repository(str(path))
    if found is None:
        raise NotARepository(str(path))
    repo = pygit2.Repository(found)
    if repo.is_shallow:
        raise SyncError(f"{path} is a shallow clone: the range cannot be read; run git fetch --unshallow first")
    return repo


def resolve_commit(repo: pygit2.Repository, ref: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(ref).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise UnknownRef(ref, repo.workdir or repo.path) from exc


def current_branch(repo: pygit2.Repository) -> str:
    if repo.head_is_detached or repo.head_is_unborn:
        raise SyncError("HEAD is not on a branch: name the FlagTree branch with --branch")
    return repo.head.shorthand


def commit_range(repo: pygit2.Repository, old: pygit2.Commit, src: pygit2.Commit) -> list[pygit2.Oid]:
    """Non-merge commits old..src, oldest first (what git rebase would replay)."""
    walker = repo.walk(src.id, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    walker.hide(old.id)
    return [commit.id for commit in walker if len(commit.parents) <= 1]


def is_ancestor(repo: pygit2.Repository, ancestor: pygit2.Oid, descendant: pygit2.Oid) -> bool:
    return ancestor == descendant or repo.descendant_of(descendant, ancestor)


def commit_files(repo: pygit2.Repository, head: pygit2.Commit, files: dict[str, bytes], message: str,
                 ref: str | None = None) -> pygit2.Oid:
    """A commit on top of head that writes files (in memory, no checkout); head itself when nothing changes.

    Signed by flagtree-sync and dated like head, so that doing the same twice gives the same commit.
    """
    index = pygit2.Index()
    index.read_tree(head.tree)
    for path, data in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB))
    tree = index.write_tree(repo)
    if tree == head.tree.id:
        return head.id
    signature = pygit2.Signature("flagtree-sync", "flagtree-sync@localhost", head.committer.time,
                                 head.committer.offset)
    return repo.create_commit(ref, signature, signature, message, tree, [head.id])


def branch_exists(repo: pygit2.Repository, name: str) -> bool:
    return f"refs/heads/{name}" in repo.references


def valid_branch_name(name: str) -> bool:
    return pygit2.reference_is_valid_name(f"refs/heads/{name}")
