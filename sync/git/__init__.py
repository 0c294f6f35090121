"""The git gateway: the only package of flagtree-sync that imports pygit2 or GitPython.

Two libraries, each for what it does best:
- pygit2 (libgit2, in-process) for the object store: resolving revisions, reading trees and blobs,
  tree diffs and rename detection, the replay's path-by-path picks, commits and refs.
  No process per blob or per commit, and merges happen without a work tree or an index on disk.
- GitPython (drives the git binary) for porcelain that must behave exactly like the user's git:
  worktrees, the conflicted cherry-pick a stopped upgrade leaves in a worktree, checkouts for the
  test gate, and the scripted demo world (git commit with fixed authors and dates).
- the git binary itself (ort.py, reference.py) where only git has the semantics: merge-ort, the merge
  of a pick that could involve renames or that merges a file both sides changed (libgit2's merge is
  not git's: see docs/replay-vs-git.md), and plain git cherry-pick as the reference the replay is held to.

Other modules name the types below in type hints and call the functions of the submodules; they
never touch a pygit2 or GitPython object's API beyond what these modules return.
"""
from __future__ import annotations

import pygit2

from sync.git.diff import BlobDiff, Change, Hunk, added_lines, blob_hunks, blob_patch, commit_hunks, blobs_added_or_changed, changes_with_renames, renames
from sync.git.merge import (ConflictHunk, MergeOutcome, conflict_hunks, conflict_sections, holds_conflict, merge_blobs,
                             split_sides)
from sync.git.repo import (UnknownRevision, as_oid, blob_text, branch_exists, branch_head, checked_out_branch, close_names,
                   commit_files, commit_of, common_git_dir, commit_range, current_branch, delete_ref, file_in_tree, has_object, has_ref,
                   merges_in_range, upstream_in_range, first_parent_line, merge_base, range_commits, author_emails,
                   is_ancestor, open_repo, resolve_commit, resolves, set_ref, tool_dir, tree_of, valid_branch_name)
from sync.git.store import object_ids, scratch_repository
from sync.git.trees import GitTree

Repository = pygit2.Repository
Oid = pygit2.Oid
Commit = pygit2.Commit
Tree = pygit2.Tree
GitError = pygit2.GitError


def is_git_error(exc: BaseException) -> bool:
    """Whether exc was raised by the git libraries (libgit2 through pygit2, or the git binary through GitPython),
    for callers that must not name them: what it says is git's, errno aside."""
    from git.exc import GitCommandError  # GitPython, loaded by the few operations that run the git binary
    return isinstance(exc, (GitError, GitCommandError))

__all__ = [
    "Change", "Commit", "ConflictHunk", "GitError", "GitTree", "MergeOutcome", "Oid", "Repository", "Tree",
    "UnknownRevision", "added_lines", "as_oid", "BlobDiff", "Hunk", "blob_hunks", "blob_patch", "commit_hunks", "blobs_added_or_changed", "blob_text", "branch_exists", "branch_head", "changes_with_renames",
    "checked_out_branch", "close_names", "commit_files", "commit_of", "common_git_dir", "commit_range", "conflict_hunks", "conflict_sections", "split_sides",
    "merges_in_range", "upstream_in_range", "first_parent_line", "merge_base", "range_commits", "author_emails",
    "current_branch", "delete_ref", "file_in_tree", "has_object", "holds_conflict", "has_ref", "is_ancestor", "is_git_error", "merge_blobs", "object_ids",
    "open_repo", "renames", "resolve_commit", "resolves", "scratch_repository", "set_ref", "tool_dir", "tree_of", "valid_branch_name",
]
