"""The size above which a file is not parsed: parsers' memory grows with the shape of the text, not only
its size (24 MB of plain Python statements took 4.8 GB through ast and libcst, 24 MB of C++ 1.4-2.0 GB
through tree-sitter), so a file over the limit is read as text (merges, diffs) but every parse sees it
empty, and drift names it in an `analysis-skipped` finding. Real Triton files are under 1 MB.

FLAGTREE_SYNC_PARSE_LIMIT sets the limit in bytes (a suffix K, M or G multiplies by 1024s); 0 turns it off.
"""
from __future__ import annotations

import os
import re

from sync.errors import SyncError

ENV = "FLAGTREE_SYNC_PARSE_LIMIT"
DEFAULT = 2 * 1024 * 1024
_SIZE = re.compile(r"\A\s*(\d+)\s*([KMG]?)i?B?\s*\Z", re.IGNORECASE)
_UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}


def parse_limit() -> int | None:
    """The limit in bytes; None when turned off."""
    given = os.environ.get(ENV)
    if given is None or not given.strip():
        return DEFAULT
    found = _SIZE.match(given)
    if found is None:
        raise SyncError(f"{ENV}={given!r} is not a size: give bytes, e.g. 2097152, 2048K or 2M (0: no limit)")
    limit = int(found[1]) * _UNITS[found[2].upper()]
    return limit or None


def oversized(text: str | bytes) -> bool:
    """Whether text's UTF-8 bytes are over the limit (as drift measures the blob)."""
    limit = parse_limit()
    if limit is None or len(text) * 4 <= limit:  # UTF-8 takes at most 4 bytes a character
        return False
    if isinstance(text, bytes) or len(text) > limit:
        return len(text) > limit
    return len(text.encode("utf-8", errors="surrogatepass")) > limit


def cache_tag() -> str:
    """What a stored fact or result depends on besides its inputs: '' at the default limit."""
    limit = parse_limit()
    return "" if limit == DEFAULT else f"-p{limit or 0}"
