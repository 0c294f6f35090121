"""Cherry-pick one commit's tree onto another in memory: merge_trees, then settle each conflicted
path in the index by a policy (libgit2: no work tree, no checkout)."""
from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from .merge import ConflictHunk, MergeFavor, merge_blobs


@dataclass
class PathConflict:
    path: str
    kind: str  # content | add/add | deleted-upstream | deleted-by-flagtree
    hunks: list[ConflictHunk] = field(default_factory=list)
    base_path: str | None = None  # where the file was at the commit's parent, when renamed


@dataclass
class TreePick:
    """The merged tree; None when the policy is 'stop' and the pick conflicted."""

    tree: pygit2.Oid | None
    conflicts: list[PathConflict]


def short(oid: pygit2.Oid | str) -> str:
    return str(oid)[:9]


def summary_of(commit: pygit2.Commit) -> str:
    return commit.message.split("\n", 1)[0].strip()


def pick_tree(repo: pygit2.Repository, commit: pygit2.Commit, head_tree: pygit2.Tree, policy: str,
              onto_label: str) -> TreePick:
    """merge(parent tree, head tree, commit tree) like git cherry-pick; conflicts settled by policy
    (markers | ours | theirs | stop). Merged blobs and the tree are written into repo's object store."""
    parent_tree = commit.parents[0].tree if commit.parents else repo[repo.TreeBuilder().write()]
    index = repo.merge_trees(parent_tree, head_tree, commit.tree)
    if not index.conflicts:
        return TreePick(index.write_tree(repo), [])
    labels = (f"{short(commit.parents[0].id) if commit.parents else 'empty'} (parent)",
              f"{onto_label} (upgraded)", f"{short(commit.id)} ({summary_of(commit)})")
    conflicts = [_settle(repo, index, ancestor, ours, theirs, labels, policy)
                 for ancestor, ours, theirs in list(index.conflicts)]
    if policy == "stop":
        return TreePick(None, conflicts)
    return TreePick(index.write_tree(repo), conflicts)


def _settle(repo: pygit2.Repository, index: pygit2.Index, ancestor: pygit2.IndexEntry | None,
            ours: pygit2.IndexEntry | None, theirs: pygit2.IndexEntry | None, labels: tuple[str, str, str],
            policy: str) -> PathConflict:
    present = ours or theirs or ancestor
    assert present is not None
    path = present.path
    base_path = ancestor.path if ancestor is not None and ancestor.path != path else None
    for entry_path in {entry.path for entry in (ancestor, ours, theirs) if entry is not None}:
        conflicts = index.conflicts  # becomes None once the last conflict is gone
        if conflicts is not None and entry_path in conflicts:
            del conflicts[entry_path]
    if ours is not None and theirs is not None:
        kind = "content" if ancestor is not None else "add/add"
        base = ancestor.id if ancestor else None
        marked = merge_blobs(repo, path, base, ours.id, theirs.id, labels)
        data = marked.data
        if policy in ("ours", "theirs"):
            favor = MergeFavor.OURS if policy == "ours" else MergeFavor.THEIRS
            data = merge_blobs(repo, path, base, ours.id, theirs.id, labels, favor).data
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), ours.mode))
        return PathConflict(path, kind, list(marked.hunks), base_path)
    # One side deleted the file the other changed. Markers keep the changed file so nothing is lost.
    if ours is None:
        kind, keep = "deleted-upstream", theirs if policy != "ours" else None
    else:
        kind, keep = "deleted-by-flagtree", ours if policy != "theirs" else None
    if keep is not None:
        index.add(pygit2.IndexEntry(keep.path, keep.id, keep.mode))
    return PathConflict(path, kind, [], base_path)


def commit_like(repo: pygit2.Repository, source: pygit2.Commit, message: str, tree: pygit2.Oid | str,
                head: pygit2.Oid | str) -> pygit2.Oid:
    """A commit with source's author and committer, so that replaying twice gives the same hashes."""
    return repo.create_commit(None, source.author, source.committer, message, _oid(tree), [_oid(head)])


def _oid(value: pygit2.Oid | str) -> pygit2.Oid:
    return value if isinstance(value, pygit2.Oid) else pygit2.Oid(hex=value)
