"""Cherry-pick one commit's tree onto another in memory (libgit2: no work tree, no checkout).

Fast path: only the paths the commit changes are merged, and only the trees on their way to the
root are rewritten (TreeBuilder), so a pick costs what the commit touches, not the size of the tree.
It takes only the cases git's trivial merge rules settle the same way with or without rename
detection (one side unchanged, both sides alike, a content merge of a file all three trees hold as a
regular file, clean or conflicting; a commit that deletes and adds files only where upstream left the
deleted ones and has none of the added ones, so that a rename the commit makes merges as the delete and
the add it is); anything else (add/add, modify/delete, renames or deletions upstream under the paths the
commit changes, directory/file clashes, merge attributes) falls back to the full merge_trees, whose
result the fast path reproduces byte for byte, conflicts included (tests/test_speed_replay.py compares them).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

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
    parent_tree = commit.parents[0].tree if commit.parents else repo[repo.TreeBuilder().write()].peel(pygit2.Tree)
    fast = pick_paths(repo, parent_tree, head_tree, commit.tree, policy, marker_labels(commit, onto_label))
    if fast is not None:
        return fast
    return merge_whole_trees(repo, commit, parent_tree, head_tree, policy, onto_label)


def marker_labels(commit: pygit2.Commit, onto_label: str) -> tuple[str, str, str]:
    """The labels of a conflicted file's markers: base, ours (the upgraded branch), theirs (the commit)."""
    return (f"{short(commit.parents[0].id) if commit.parents else 'empty'} (parent)",
            f"{onto_label} (upgraded)", f"{short(commit.id)} ({summary_of(commit)})")


def merge_whole_trees(repo: pygit2.Repository, commit: pygit2.Commit, parent_tree: pygit2.Tree,
                      head_tree: pygit2.Tree, policy: str, onto_label: str) -> TreePick:
    """The full libgit2 merge (rename detection, every conflict kind): the reference for pick_paths."""
    index = repo.merge_trees(parent_tree, head_tree, commit.tree)
    if not index.conflicts:
        return TreePick(index.write_tree(repo), [])
    labels = marker_labels(commit, onto_label)
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
    path = str(present.path)
    base_path = str(ancestor.path) if ancestor is not None and ancestor.path != path else None
    for entry_path in {entry.path for entry in (ancestor, ours, theirs) if entry is not None}:
        conflicts = index.conflicts  # becomes None once the last conflict is gone
        if conflicts is not None and entry_path in conflicts:
            del conflicts[entry_path]
    if ours is not None and theirs is not None:
        kind = "content" if ancestor is not None else "add/add"
        blob, hunks = _settled_blob(repo, path, ancestor.id if ancestor else None, ours.id, theirs.id, labels, policy)
        index.add(pygit2.IndexEntry(path, blob, ours.mode))
        return PathConflict(path, kind, hunks, base_path)
    # One side deleted the file the other changed. Markers keep the changed file so nothing is lost.
    if ours is None:
        kind, keep = "deleted-upstream", theirs if policy != "ours" else None
    else:
        kind, keep = "deleted-by-flagtree", ours if policy != "theirs" else None
    if keep is not None:
        index.add(pygit2.IndexEntry(keep.path, keep.id, keep.mode))
    return PathConflict(path, kind, [], base_path)


def _settled_blob(repo: pygit2.Repository, path: str, base: pygit2.Oid | None, ours: pygit2.Oid, theirs: pygit2.Oid,
                  labels: tuple[str, str, str], policy: str) -> tuple[pygit2.Oid, list[ConflictHunk]]:
    """The blob a conflicted file is settled to by the policy (markers; ours or theirs favoured) and the
    conflict's hunks, as the markers show them."""
    marked = merge_blobs(repo, path, base, ours, theirs, labels)
    data = marked.data
    if policy in ("ours", "theirs"):
        favor = MergeFavor.OURS if policy == "ours" else MergeFavor.THEIRS
        data = merge_blobs(repo, path, base, ours, theirs, labels, favor, hunks=False).data
    return repo.create_blob(data), list(marked.hunks)


def commit_like(repo: pygit2.Repository, source: pygit2.Commit, message: str, tree: pygit2.Oid | str,
                head: pygit2.Oid | str) -> pygit2.Oid:
    """A commit with source's author and committer, so that replaying twice gives the same hashes."""
    return repo.create_commit(None, source.author, source.committer, message, _oid(tree), [_oid(head)])


def _oid(value: pygit2.Oid | str) -> pygit2.Oid:
    return value if isinstance(value, pygit2.Oid) else pygit2.Oid(hex=value)


Entry = tuple[pygit2.Oid, int]  # (object id, file mode)
_REGULAR = (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)


class _NeedsFullMerge(Exception):
    """The fast path cannot prove it gives merge_trees' result."""


def pick_paths(repo: pygit2.Repository, base: pygit2.Tree, ours: pygit2.Tree, theirs: pygit2.Tree,
               policy: str = "markers", labels: tuple[str, str, str] = ("base", "ours", "theirs")) -> TreePick | None:
    """merge(base, ours, theirs) by the paths base -> theirs changes, content conflicts settled by policy
    like merge_whole_trees settles them; None where a full merge is needed."""
    changes: dict[str, Entry | None] = {}
    conflicts: list[PathConflict] = []
    deltas = list(base.diff_to_tree(theirs).deltas)  # no rename detection: every touched path by itself
    try:
        if not _renames_merge_as_paths(ours, deltas):
            raise _NeedsFullMerge
        for delta in deltas:
            path = delta.new_file.path
            if path != delta.old_file.path or path in changes:  # a type change comes as delete + add
                raise _NeedsFullMerge
            was = _side(delta.old_file) if delta.status != pygit2.enums.DeltaStatus.ADDED else None
            now = _side(delta.new_file) if delta.status != pygit2.enums.DeltaStatus.DELETED else None
            have = _entry_at(ours, path)
            merged = _merge_entry(repo, ours, base, theirs, path, was, have, now)
            if isinstance(merged, _Conflicted):
                conflict, merged = _settle_content(repo, path, merged, labels, policy)
                conflicts.append(conflict)
            if merged != have:
                changes[path] = merged
        tree = _rewrite(repo, ours, changes)
    except _NeedsFullMerge:
        return None
    conflicts.sort(key=lambda conflict: conflict.path.encode("utf-8"))  # the index's order, as merge_trees lists them
    return TreePick(None if conflicts and policy == "stop" else tree, conflicts)


def _renames_merge_as_paths(ours: pygit2.Tree, deltas: list[pygit2.DiffDelta]) -> bool:
    """Whether a rename the commit may make (it deletes some paths and adds others) merges exactly as its
    delete and its add: so it does when upstream left every deleted file as the parent had it and has none
    of the added paths (then rename detection pairs nothing upstream touched)."""
    deleted = [delta for delta in deltas if delta.status == pygit2.enums.DeltaStatus.DELETED]
    added = [delta for delta in deltas if delta.status == pygit2.enums.DeltaStatus.ADDED]
    if not deleted or not added:
        return True
    return all(_entry_at(ours, delta.old_file.path) == _side(delta.old_file) for delta in deleted) \
        and all(_entry_at(ours, delta.new_file.path) is None for delta in added)


@dataclass(frozen=True)
class _Conflicted:
    """A content merge of a regular file all three trees hold that does not merge cleanly."""

    base: Entry
    ours: Entry
    theirs: Entry


def _settle_content(repo: pygit2.Repository, path: str, conflicted: _Conflicted, labels: tuple[str, str, str],
                    policy: str) -> tuple[PathConflict, Entry | None]:
    """The conflict as merge_whole_trees reports it, and the entry it settles the path to (ours's mode)."""
    blob, hunks = _settled_blob(repo, path, conflicted.base[0], conflicted.ours[0], conflicted.theirs[0], labels, policy)
    return PathConflict(path, "content", hunks), _canonical((blob, conflicted.ours[1]))


def _side(file: pygit2.DiffFile) -> Entry:
    return file.id, int(file.mode)


def _entry_at(tree: pygit2.Tree, path: str) -> Entry | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    if entry.type_str == "tree":  # a directory where the commit has a file
        raise _NeedsFullMerge
    return entry.id, entry.filemode


def _merge_entry(repo: pygit2.Repository, ours_tree: pygit2.Tree, base_tree: pygit2.Tree, theirs_tree: pygit2.Tree,
                 path: str, base: Entry | None, ours: Entry | None, theirs: Entry | None) -> Entry | None | _Conflicted:
    if ours == base:
        return _canonical(theirs)
    if base is None and ours is not None:
        raise _NeedsFullMerge  # both sides added it: an upstream rename onto the path may be a conflict
    if ours is not None and ours == theirs:
        return ours
    if (base is None or ours is None or theirs is None or not base[1] == ours[1] == theirs[1]
            or base[1] not in _REGULAR or _has_merge_attributes(repo, (ours_tree, base_tree, theirs_tree), path)):
        raise _NeedsFullMerge  # add/add, delete/modify, a mode change, a rename upstream, a merge driver
    merged = merge_blobs(repo, path, base[0], ours[0], theirs[0], mode=base[1], hunks=False)
    if not merged.clean:
        return _Conflicted(base, ours, theirs)  # merge_trees leaves the same three entries to settle
    return repo.create_blob(merged.data), base[1]


def _canonical(entry: Entry | None) -> Entry | None:
    """The mode the index gives an entry (merge_trees' result goes through an index)."""
    if entry is None:
        return None
    oid, mode = entry
    if mode in (pygit2.GIT_FILEMODE_LINK, pygit2.GIT_FILEMODE_COMMIT):
        return entry
    return oid, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE if mode & 0o100 else pygit2.GIT_FILEMODE_BLOB


def _has_merge_attributes(repo: pygit2.Repository, trees: tuple[pygit2.Tree, ...], path: str) -> bool:
    """A .gitattributes on the way to path (or info/attributes) could name a merge driver: not ours to apply."""
    local = Path(repo.path) / "info" / "attributes"
    if local.is_file() and _mentions_merge(local.read_bytes()):
        return True
    parts = path.split("/")[:-1]
    for tree in trees:
        for depth in range(len(parts) + 1):
            name = "/".join([*parts[:depth], ".gitattributes"])
            try:
                entry = tree[name]
            except KeyError:
                continue
            if not isinstance(entry, pygit2.Blob) or _mentions_merge(entry.data):
                return True
    return False


def _mentions_merge(data: bytes) -> bool:
    return b"merge" in data or b"binary" in data


def _rewrite(repo: pygit2.Repository, root: pygit2.Tree, changes: dict[str, Entry | None]) -> pygit2.Oid:
    """root with changes applied, rewriting only the trees on the way to each changed path."""
    nested: dict = {}
    for path, entry in changes.items():
        *dirs, name = path.split("/")
        node = nested
        for part in dirs:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise _NeedsFullMerge  # a file where the commit needs a directory
        if name in node:
            raise _NeedsFullMerge
        node[name] = entry
    written = _write_tree(repo, root, nested)
    return written if written is not None else repo.TreeBuilder().write()


def _write_tree(repo: pygit2.Repository, tree: pygit2.Tree | None, node: dict) -> pygit2.Oid | None:
    """The new tree, or None when it ends up empty (git stores no empty directories)."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    for name, item in node.items():
        existing = tree[name] if tree is not None and name in tree else None
        if isinstance(item, dict):
            if existing is not None and not isinstance(existing, pygit2.Tree):
                raise _NeedsFullMerge  # directory/file
            subtree = _write_tree(repo, existing, item)
            if subtree is not None:
                builder.insert(name, subtree, pygit2.GIT_FILEMODE_TREE)
            elif existing is not None:
                builder.remove(name)
        else:
            if existing is not None and existing.type_str == "tree":
                raise _NeedsFullMerge
            if item is not None:
                builder.insert(name, item[0], item[1])
            elif existing is not None:
                builder.remove(name)
    return builder.write() if len(builder) else None
