"""The commit `drift --apply` writes: the user's (their identity, dated now), marked as the tool's by a trailer.

upgrade --force may drop a commit only it can make again. The trailer names the tree the tool wrote: an apply
commit amended by hand (another tree) no longer matches it, and is kept like any other commit of the user's.
"""
from __future__ import annotations

import re

from sync.git import Commit

TRAILER = "Flagtree-sync-applied-tree"
_TRAILER_LINE = re.compile(rf"\n\n{TRAILER}: ([0-9a-f]{{40}})\n\Z")


def apply_message(paths: list[str], tree: str) -> str:
    return ("Auto-merge drifted overlays\n\n" + "\n".join(f"- {path}" for path in paths)
            + f"\n\n{TRAILER}: {tree}\n")


def made_by_apply(commit: Commit) -> bool:
    """Whether commit is drift --apply's, as it wrote it: its trailer names the commit's own tree."""
    found = _TRAILER_LINE.search(commit.message)
    return found is not None and found.group(1) == str(commit.tree_id)
