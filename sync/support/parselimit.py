"""The size above which a file is not parsed: parsers' memory grows with the shape of the text, not only
its size (24 MB of plain Python statements took 4.8 GB through ast and libcst, 24 MB of C++ 1.4-2.0 GB
through tree-sitter), so a file over the limit is read as text (merges, diffs) but every parse sees it
empty, and drift names it in an `analysis-skipped` finding. Real Triton files are under 1 MB.

FLAGTREE_SYNC_PARSE_LIMIT sets the limit in bytes (a suffix K, M or G multiplies by 1024s); 0 turns it off.

A parser's memory follows the number of nodes it makes, not bytes: 2 MB of `x = 1` lines (a token every 2 bytes)
took 506 MB in drift, 822 MB in `ast.parse` alone, 3 GB in libcst. So the limit also caps the tokens (words and
punctuation) at one per TOKEN_BYTES bytes of it: real code has one every 5 bytes, so a real file of up to 60% of
the limit passes (Triton's largest are under 10% of the default), and a file of short statements is left out
before its parse costs a gigabyte (the most a parse under the budget cost: 350 MB).
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


TOKEN_BYTES = 8
# Each byte as a word byte (a), a space ( ) or punctuation (.): a token is a run of word bytes or one punctuation
# byte, about what a parser makes a node of; counted with bytes.count, in C, with one copy of the text.
_WORD = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_" + bytes(range(0x80, 0x100))
_CLASSES = bytes(ord("a") if byte in _WORD else ord(" ") if byte in b" \t\n\r\f\v" else ord(".")
                 for byte in range(256))


def oversized(text: str | bytes) -> bool:
    """Whether text's UTF-8 bytes are over the limit (as drift measures the blob), or its tokens over the
    limit's token budget (too_many_tokens)."""
    limit = parse_limit()
    if limit is None or len(text) * 4 <= limit // TOKEN_BYTES:  # UTF-8 takes at most 4 bytes a character
        return False
    data = text if isinstance(text, bytes) else text.encode("utf-8", errors="surrogatepass")
    return len(data) > limit or too_many_tokens(data) is not None


def too_many_tokens(data: bytes) -> int | None:
    """The number of tokens of data when over the limit's budget (limit // TOKEN_BYTES), else None."""
    limit = parse_limit()
    if limit is None or len(data) <= limit // TOKEN_BYTES:  # no more tokens than bytes
        return None
    classes = data.translate(_CLASSES)
    count = classes.count(b".") + classes.count(b" a") + classes.count(b".a") + classes.startswith(b"a")
    return count if count > limit // TOKEN_BYTES else None


def cache_tag() -> str:
    """What a stored fact or result depends on besides its inputs: '' at the default limit."""
    limit = parse_limit()
    return "" if limit == DEFAULT else f"-p{limit or 0}-t{TOKEN_BYTES}"
