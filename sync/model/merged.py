"""A clean 3-way merge of an overlay with upstream's change: what drift --apply may commit."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MergedOverlay:
    """A clean 3-way merge result that --apply may write."""

    path: str
    data: bytes
