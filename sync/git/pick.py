"""Cherry-pick one commit's tree onto another without a work tree or checkout: git's own merge-ort, or
a path-by-path fast path where that provably gives git's result.

Fast path: only the paths the commit changes are merged, and only the trees on their way to the
root are rewritten (TreeBuilder), so a pick costs what the commit touches, not the size of the tree.
It takes only the cases git's merge settles the same way with or without rename and directory
rename detection (one side unchanged, both sides alike, a file all three trees hold as a regular file of
one mode, whose content git merges on trees of only such files; a commit that deletes and adds files only where upstream left the
deleted ones and has none of the added ones, so that a rename the commit makes merges as the delete and
the add it is; no file added under a directory upstream removed, no directory removed that upstream
changed); anything else (add/add, modify/delete, renames or deletions upstream
under the paths the commit changes, directory/file clashes) goes to git merge-tree (ort.py), whose result the fast path
reproduces, conflicts included (tests/test_speed_replay.py compares both with git cherry-pick itself).
Neither reads attributes: merge drivers of the work tree, info/attributes or the user's never apply.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import os

import pygit2

from sync.git.merge import ConflictHunk, MergeFavor, conflict_hunks, merge_blobs
from sync.git.ort import OrtMerge, Stage, merge_pick


@dataclass
class PathConflict:
    path: str
    kind: str  # a conflict kind of sync/model/kinds.py: content, add/add, deleted-upstream, renamed-upstream, ...
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
    """git's own merge of the pick (merge-ort: renames and directory renames followed, every conflict
    type): the reference for pick_paths. Conflicts are settled by policy on git's stages; a content
    conflict's markers and hunks come from merge_blobs, as on the fast path."""
    merged = merge_pick(repo, commit.parents[0] if commit.parents else None, head_tree.id, commit.tree.id)
    if not merged.stages:
        return TreePick(merged.tree, [])
    labels = marker_labels(commit, onto_label)
    changes: dict[str, Entry | None] = {}
    conflicts = []
    for path in sorted(merged.stages, key=os.fsencode):  # the index's order
        conflict, entry = _settle(repo, parent_tree, merged, path, labels, policy, head_tree)
        conflicts.append(conflict)
        if entry is not _KEEP:
            changes[path] = entry  # type: ignore[assignment]
    if policy == "stop":
        return TreePick(None, conflicts)
    tree = repo[merged.tree].peel(pygit2.Tree)
    try:
        return TreePick(_rewrite(repo, tree, changes) if changes else merged.tree, conflicts)
    except _NeedsFullMerge:  # a side's entry where git's tree has a directory (git moved it to path~side)
        at_files = {path: entry for path, entry in changes.items() if _is_file(tree, path)}
        return TreePick(_rewrite(repo, tree, at_files), conflicts)


def _is_file(tree: pygit2.Tree, path: str) -> bool:
    try:
        return tree[path].type_str == "blob"
    except KeyError:
        return False


_KEEP = object()  # the entry git's merge left at the path stays

# git's conflict types (merge-ort's -z messages, e.g. "CONFLICT (rename/delete)") -> the catalogue's
# conflict kinds, strongest first; a CONFLICT type not listed is a tree-conflict
_ORT_KINDS = (("rename/rename", "rename/rename"), ("rename/delete", "rename/delete"),
              ("directory rename", "file-location"), ("file/directory", "type-clash"), ("distinct", "type-clash"),
              ("modify/delete", "modify/delete"), ("add/add", "add/add"), ("(contents)", "content"),
              ("(binary)", "content"))


def _kind(merged: OrtMerge, path: str, stages: dict[int, Stage], base_path: str | None, upstream_renamed: bool) -> str:
    said = [kind for kind in merged.kinds_of(path) if kind.startswith("CONFLICT")]
    kind = next((ours for git, ours in _ORT_KINDS if any(git in text for text in said)),
                "tree-conflict" if said else "content")
    if kind == "modify/delete" or (kind == "content" and not (2 in stages and 3 in stages)):
        return "deleted-upstream" if 2 not in stages else "deleted-by-flagtree"
    if kind == "content" and 1 not in stages:
        return "add/add"
    if kind == "content" and upstream_renamed:
        return "renamed-upstream"  # FlagTree's edit met upstream's in the file upstream renamed to path
    return kind


def _settle(repo: pygit2.Repository, parent_tree: pygit2.Tree, merged: OrtMerge, path: str,
            labels: tuple[str, str, str], policy: str,
            head_tree: pygit2.Tree | None = None) -> tuple[PathConflict, Entry | None | object]:
    """The conflict at path and what the policy leaves there: markers keep both sides (a file deleted or renamed
    away on one side stays as the other side has it, so nothing is lost); ours and theirs take that side."""
    stages = {stage.stage: stage for stage in merged.stages[path]}
    base_path = _renamed_from(merged, path) or _base_path(parent_tree, path, stages.get(1))
    upstream_renamed = base_path is not None and head_tree is not None and not _is_file(head_tree, base_path)
    kind = _kind(merged, path, stages, base_path, upstream_renamed)
    ours, theirs, base = stages.get(2), stages.get(3), stages.get(1)
    if ours is not None and theirs is not None and ours.mode in _REGULAR and theirs.mode in _REGULAR \
            and (base is None or base.mode in _REGULAR):
        blob, hunks = _settled_blob(repo, path, base.oid if base else None, ours.oid, theirs.oid, labels, policy)
        if not hunks and policy in ("markers", "stop") and _is_file(repo[merged.tree].peel(pygit2.Tree), path):
            # libgit2's merge found no conflict where git's did: git's file, markers and all, is the one kept
            blob = repo[merged.tree].peel(pygit2.Tree)[path].id
            hunks = list(conflict_hunks(repo[blob].peel(pygit2.Blob).data.decode("utf-8", errors="replace")))
        return PathConflict(path, kind, hunks, base_path), _canonical((blob, ours.mode))
    keep: Entry | None | object = _KEEP
    if policy == "ours":
        keep = _canonical((ours.oid, ours.mode)) if ours is not None else None
    elif policy == "theirs":
        keep = _canonical((theirs.oid, theirs.mode)) if theirs is not None else None
    return PathConflict(path, kind, [], base_path), keep


def _renamed_from(merged: OrtMerge, path: str) -> str | None:
    """The old path git names for a renamed path: rename/rename lists (old, new, new), rename/delete (new, old)."""
    for message in merged.messages:
        if "rename/rename" in message.kind and path in message.paths[1:]:
            return message.paths[0]
        if "rename/delete" in message.kind and len(message.paths) == 2 and path == message.paths[0]:
            return message.paths[1]
    return None


def _base_path(parent_tree: pygit2.Tree, path: str, base: Stage | None) -> str | None:
    """Where the file was at the commit's parent when a rename brought it to path: the parent's path of the
    base stage's blob (git writes the base stage at the renamed path)."""
    if base is None:
        return None
    try:
        if parent_tree[path].id == base.oid:
            return None
    except KeyError:
        pass
    found = _find_blob(parent_tree, base.oid, "")
    return found if found != path else None


def _find_blob(tree: pygit2.Tree, oid: pygit2.Oid, prefix: str) -> str | None:
    for entry in tree:
        if entry.id == oid and entry.type_str == "blob":
            return prefix + str(entry.name)
    for entry in tree:
        if isinstance(entry, pygit2.Tree):
            found = _find_blob(entry, oid, f"{prefix}{entry.name}/")
            if found is not None:
                return found
    return None


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


def commit_like(repo: pygit2.Repository, source: pygit2.Commit, trailer: bytes, tree: pygit2.Oid | str,
                head: pygit2.Oid | str) -> pygit2.Oid:
    """A commit with source's message (trailer appended), author and committer, as git cherry-pick writes them, so
    that replaying twice gives the same hashes (see replayed_parts)."""
    author, committer, message, encoding = replayed_parts(source)
    # the tool's own trailer names a path byte for byte (a file name that is not UTF-8 stays findable)
    message = message.rstrip(b"\n") + trailer
    if encoding is not None:
        return repo.create_commit(None, author, committer, message, _oid(tree), [_oid(head)], encoding)
    return repo.create_commit(None, author, committer, message, _oid(tree), [_oid(head)])


def replayed_parts(source: pygit2.Commit) -> tuple[pygit2.Signature, pygit2.Signature, bytes, str | None]:
    """Author, committer, message and encoding header of source's replay, as git cherry-pick writes them: a message
    and signatures in a declared encoding (an `encoding` header) are re-encoded to UTF-8 together, without the
    header (where they do not decode, kept as they are, header included); then, as git commit does, every byte
    that is not valid UTF-8 is read as Latin-1."""
    signatures = [(sig.raw_name, sig.raw_email, sig.time, sig.offset) for sig in (source.author, source.committer)]
    message = source.raw_message
    declared = (source.message_encoding or "utf-8").lower().replace("_", "-")
    if declared not in ("utf-8", "utf8"):
        try:
            message = message.decode(declared).encode("utf-8")
            signatures = [(name.decode(declared).encode("utf-8"), email.decode(declared).encode("utf-8"), time,
                           offset) for name, email, time, offset in signatures]
        except (LookupError, UnicodeDecodeError):  # git keeps what it cannot re-encode, and says its encoding
            return source.author, source.committer, message, source.message_encoding
    author, committer = (pygit2.Signature(git_utf8(name).decode("utf-8"), git_utf8(email).decode("utf-8"), time, offset)
                         for name, email, time, offset in signatures)
    return author, committer, git_utf8(message), None


def git_utf8(data: bytes) -> bytes:
    """data as git commit stores a commit meant to be UTF-8 (commit.c, verify_utf8): each byte that starts no valid
    UTF-8 character (git also refuses surrogates, overlong forms, U+FDD0..U+FDEF and U+xxFFFE/F) is taken as Latin-1."""
    out, index = bytearray(), 0
    while index < len(data):
        size = _utf8_length(data, index)
        if size:
            out += data[index:index + size]
            index += size
        else:
            out += bytes([data[index]]).decode("latin-1").encode("utf-8")
            index += 1
    return bytes(out)


def _utf8_length(data: bytes, index: int) -> int:
    """The length of the valid UTF-8 character at index by git's rules; 0 when none starts there."""
    lead = data[index]
    if lead < 0x80:
        return 1
    size = 2 if lead & 0xE0 == 0xC0 else 3 if lead & 0xF0 == 0xE0 else 4 if lead & 0xF8 == 0xF0 else 0
    try:
        point = ord(data[index:index + size].decode("utf-8")) if size else -1  # refuses overlong and surrogates
    except (UnicodeDecodeError, TypeError):
        return 0
    if point < 0 or (point & 0xFFFE) == 0xFFFE or 0xFDD0 <= point <= 0xFDEF:
        return 0
    return size


def _oid(value: pygit2.Oid | str) -> pygit2.Oid:
    return value if isinstance(value, pygit2.Oid) else pygit2.Oid(hex=value)


Entry = tuple[pygit2.Oid, int]  # (object id, file mode)
_REGULAR = (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)


class _NeedsFullMerge(Exception):
    """The fast path cannot prove it gives git's result."""


def pick_paths(repo: pygit2.Repository, base: pygit2.Tree, ours: pygit2.Tree, theirs: pygit2.Tree,
               policy: str = "markers", labels: tuple[str, str, str] = ("base", "ours", "theirs")) -> TreePick | None:
    """merge(base, ours, theirs) by the paths base -> theirs changes, content conflicts settled by policy
    like merge_whole_trees settles them; None where a full merge is needed. A file both sides changed is
    merged by git itself (libgit2's content merge is not git's), all such files of the pick in one
    merge-tree of trees that hold only them: no path there is added or deleted, so no rename can differ."""
    changes: dict[str, Entry | None] = {}
    both: dict[str, _BothChanged] = {}
    deltas = list(base.diff_to_tree(theirs).deltas)  # no rename detection: every touched path by itself
    try:
        if not _renames_merge_as_paths(ours, deltas) or _directory_renames_may_move(base, ours, theirs, deltas):
            raise _NeedsFullMerge
        for delta in deltas:
            path = delta.new_file.path
            if path != delta.old_file.path or path in changes or path in both:  # a type change: delete + add
                raise _NeedsFullMerge
            was = _side(delta.old_file) if delta.status != pygit2.enums.DeltaStatus.ADDED else None
            now = _side(delta.new_file) if delta.status != pygit2.enums.DeltaStatus.DELETED else None
            have = _entry_at(ours, path)
            merged = _merge_entry(path, was, have, now)
            if isinstance(merged, _BothChanged):
                both[path] = merged
            elif merged != have:
                changes[path] = merged
        conflicts = _merge_files(repo, both, changes, labels, policy) if both else []
        tree = _rewrite(repo, ours, changes)
    except _NeedsFullMerge:
        return None
    return TreePick(None if conflicts and policy == "stop" else tree, conflicts)


@dataclass(frozen=True)
class _BothChanged:
    """A regular file all three trees hold at the same path with the same mode, changed by both sides."""

    base: Entry
    ours: Entry
    theirs: Entry


def _merge_files(repo: pygit2.Repository, both: dict[str, _BothChanged], changes: dict[str, Entry | None],
                 labels: tuple[str, str, str], policy: str) -> list[PathConflict]:
    """git's merge of the files both sides changed, on trees of only those files; the merged entries go
    into changes, the conflicts are settled like merge_whole_trees settles them."""
    empty = repo[repo.TreeBuilder().write()].peel(pygit2.Tree)
    trees = [_rewrite(repo, empty, {path: getattr(item, side) for path, item in both.items()})
             for side in ("base", "ours", "theirs")]
    root = repo[repo.create_commit(None, _MINI, _MINI, "base\n", trees[0], [])].peel(pygit2.Commit)
    merged = merge_pick(repo, root, trees[1], trees[2])
    result = repo[merged.tree].peel(pygit2.Tree)
    conflicts = []
    for path in sorted(both, key=os.fsencode):  # the index's order
        if path in merged.stages:
            conflict, entry = _settle(repo, root.tree, merged, path, labels, policy)
            conflicts.append(conflict)
            changes[path] = _canonical((result[path].id, both[path].ours[1])) if entry is _KEEP else entry  # type: ignore[assignment]
        else:
            changes[path] = _canonical((result[path].id, both[path].ours[1]))
    return conflicts


_MINI = pygit2.Signature("flagtree-sync", "flagtree-sync@localhost", 0, 0)


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


def _directory_renames_may_move(base: pygit2.Tree, ours: pygit2.Tree, theirs: pygit2.Tree,
                                deltas: list[pygit2.DiffDelta]) -> bool:
    """Whether git's directory rename detection could move a file: a file the commit adds under a directory
    upstream removed (it may have been renamed), or a directory the commit removes where upstream changed it
    (upstream's new files there would follow the commit's rename)."""
    for delta in deltas:
        if delta.status == pygit2.enums.DeltaStatus.ADDED:
            if any(_tree_id(base, folder) is not None and _tree_id(ours, folder) is None
                   for folder in _folders(delta.new_file.path)):
                return True
        elif delta.status == pygit2.enums.DeltaStatus.DELETED:
            if any(_tree_id(theirs, folder) is None and _tree_id(ours, folder) not in (None, _tree_id(base, folder))
                   for folder in _folders(delta.old_file.path)):
                return True
    return False


def _folders(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[:depth]) for depth in range(1, len(parts) + 1)]


def _tree_id(tree: pygit2.Tree, folder: str) -> pygit2.Oid | None:
    try:
        entry = tree[folder]
    except KeyError:
        return None
    return entry.id if entry.type_str == "tree" else None


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


def _merge_entry(path: str, base: Entry | None, ours: Entry | None, theirs: Entry | None) -> Entry | None | _BothChanged:
    if ours == base:
        return _canonical(theirs)
    if base is None and ours is not None:
        raise _NeedsFullMerge  # both sides added it: an upstream rename onto the path may be a conflict
    if ours is not None and ours == theirs:
        return ours
    if base is None or ours is None or theirs is None or not base[1] == ours[1] == theirs[1] or base[1] not in _REGULAR:
        raise _NeedsFullMerge  # add/add, delete/modify, a mode change, a rename upstream
    return _BothChanged(base, ours, theirs)


def _canonical(entry: Entry | None) -> Entry | None:
    """The mode the index gives an entry (merge_trees' result goes through an index)."""
    if entry is None:
        return None
    oid, mode = entry
    if mode in (pygit2.GIT_FILEMODE_LINK, pygit2.GIT_FILEMODE_COMMIT):
        return entry
    return oid, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE if mode & 0o100 else pygit2.GIT_FILEMODE_BLOB


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
    updates: dict[str, Entry | None] = {}
    for name, item in node.items():
        existing = tree[name] if tree is not None and name in tree else None
        if isinstance(item, dict):
            if existing is not None and not isinstance(existing, pygit2.Tree):
                raise _NeedsFullMerge  # directory/file
            subtree = _write_tree(repo, existing, item)
            updates[name] = (subtree, pygit2.GIT_FILEMODE_TREE) if subtree is not None else None
        else:
            if existing is not None and existing.type_str == "tree":
                raise _NeedsFullMerge
            updates[name] = item
    try:
        builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
        for name, entry in updates.items():
            if entry is not None:
                builder.insert(name, entry[0], entry[1])
            elif builder.get(name) is not None:
                builder.remove(name)
        return builder.write() if len(builder) else None
    except UnicodeEncodeError:  # a name that is not UTF-8 (pygit2 gives it surrogate-escaped): write the bytes
        return _write_raw_tree(repo, tree, updates)


def _write_raw_tree(repo: pygit2.Repository, tree: pygit2.Tree | None,
                    updates: dict[str, Entry | None]) -> pygit2.Oid | None:
    """The tree object written byte for byte (names are bytes in git; TreeBuilder takes only UTF-8)."""
    entries: dict[bytes, tuple[int, pygit2.Oid]] = {}
    for entry in tree if tree is not None else ():
        entries[entry.raw_name or b""] = (entry.filemode, entry.id)
    for name, update in updates.items():
        if update is None:
            entries.pop(os.fsencode(name), None)
        else:
            entries[os.fsencode(name)] = (update[1], update[0])
    if not entries:
        return None
    # git's order: a directory sorts as if its name ended in "/"
    order = sorted(entries, key=lambda raw: raw + b"/" if entries[raw][0] == pygit2.GIT_FILEMODE_TREE else raw)
    data = b"".join(b"%o %s\0%s" % (entries[raw][0], raw, entries[raw][1].raw) for raw in order)
    return repo.odb.write(pygit2.enums.ObjectType.TREE, data)
