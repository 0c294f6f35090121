"""Declarations that left a header upstream changed between two tags (issue 45): the start of every question about
a declaration that moved, to another namespace or to another header. A header is parsed (declindex) only when a
line it lost opens or names a declaration, and the answer is kept per pair of trees.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from sync.facts.declindex import HEADER_SUFFIXES, Decl, declarations_of
from sync.facts.filekinds import not_built
from sync.facts.trees import read_text
from sync.git import GitTree, blob_hunks, changes_with_renames

HEADERS = HEADER_SUFFIXES
SCOPED_KINDS = frozenset({"function", "method", "class", "struct", "union", "enum", "enumerator", "alias",
                          "namespace-alias"})
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_memo: dict[tuple[str, str, str], dict[str, list["Left"]]] = {}


@dataclass(frozen=True)
class Left:
    header: str  # the old tag's header that declared it
    decl: Decl  # as that header declared it


def declarations_that_left(old: GitTree, new: GitTree) -> dict[str, list[Left]]:
    """Name -> each declaration (of a scoped kind, not local) an upstream-changed header made at the old tag and
    its new version (same path, or its rename) no longer makes under that name and scope."""
    key = (old.repo.path, str(old.tree.id), str(new.tree.id))
    if key in _memo:
        return _memo[key]
    found: dict[str, list[Left]] = {}
    for change in changes_with_renames(old, new):
        if not change.old_path.endswith(HEADERS) or not_built(change.old_path):
            continue
        before = old.blob_id(change.old_path)
        after = new.blob_id(change.new_path) if change.new_path else None
        if before is None:
            continue
        if after is not None:
            removed = "".join(text for hunk in blob_hunks(old.repo, before, after) for text in hunk.removed)
            if not _IDENTIFIER.search(removed):
                continue  # only blank lines or punctuation left it
        declared = [decl for decl in declarations_of(change.old_path, read_text(old, change.old_path) or "")
                    if decl.kind in SCOPED_KINDS and "local" not in decl.flags]
        if declared and change.new_path is not None:
            kept = {(decl.name, decl.scope) for decl in declarations_of(
                change.new_path, read_text(new, change.new_path) or "")}
            declared = [decl for decl in declared if (decl.name, decl.scope) not in kept]
        for decl in declared:
            found.setdefault(decl.name, []).append(Left(change.old_path, decl))
    if len(_memo) > 4:
        _memo.clear()
    _memo[key] = found
    return found
