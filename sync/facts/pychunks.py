"""A large Python text parsed a piece at a time, so that only one piece's `ast` tree is alive.

An `ast` tree holds some 200 bytes per byte of source (about 170 MB for 1 MB of Python), so the read-only
analyses parse a text above CHUNK_THRESHOLD in chunks of whole top-level statements and read each
chunk's facts before the next one is parsed. Chunk boundaries are lines that start at column 0 with
`def `, `async def `, `class ` or `@` (a cheap line scan), merged greedily into chunks of CHUNK_BYTES.

Why a chunk that parses gives the whole parse's nodes: the first chunk starts where the text starts, and
a chunk that parses on its own ends outside every string, bracket and backslash continuation; so,
by induction, every chunk starts where the whole text's tokenizer is at a fresh line, and the boundary
line at column 0 closes every indented block. No compound statement continues after that with `def`,
`class` or `@` (else, except, finally and elif do not start that way), so the whole module's statements
are the chunks' statements one after the other. A boundary that fell inside a string, a bracket or
between a decorator and its def makes its chunk a syntax error (a backslash continuation is checked by
hand: CPython accepts one before a CR LF line end at the end of a text): it is merged with the next one and
parsed again. Anything else (the syntax error is real, nesting CPython refuses, a NUL byte) ends in one
parse of the whole text, which gives exactly the outcome a whole parse always gave.

Each chunk is parsed behind as many newlines as lines precede it, so its line numbers are the whole
text's (columns are too: chunks start at column 0). The newlines cost the tokenizer little, but they
add up over many chunks: past MAX_CHUNKS chunks grow with the text instead.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from typing import TypeVar

from sync.support.parselimit import oversized

from sync.facts.parsing import _CPYTHON_LIMITS, cpython_tree_once

T = TypeVar("T")
R = TypeVar("R")

CHUNK_THRESHOLD = 256 * 1024  # characters; a text up to this size is parsed whole
CHUNK_BYTES = 64 * 1024  # the smallest chunk (characters)
MAX_CHUNKS = 64  # chunks per text at most: each parse tokenizes the newlines that stand for the lines before it
MAX_RETRIES = 8  # merges of a chunk that does not parse with the next one, per text, before one whole parse

_BOUNDARY = re.compile(r"(?<![^\r\n])(?:def |async def |class |@)")


class _Whole(Exception):
    """A chunk cannot stand for its part of the text: parse the text whole."""


def over_chunks(text: str, whole: Callable[[str], ast.Module | R],
                consume: Callable[[Iterator[ast.Module]], T]) -> T | R:
    """consume(trees) over the trees of text's chunks (one tree when text is small); whole(text) when
    the chunks cannot stand for the text: what it returns that is no tree (an Unparseable, None) is
    returned as it is, a tree is consumed. consume may be called twice (once more after a chunk that
    cannot stand): it must build its result from scratch, like the work of parsing.guarded."""
    if oversized(text):  # parsed as empty, like every parse of it (parselimit)
        text = ""
    bounds = _bounds(text) if len(text) > CHUNK_THRESHOLD else []
    if len(bounds) > 2:
        try:
            return consume(_trees(text, bounds))
        except _Whole:
            pass
    tree = whole(text)
    return consume(iter([tree])) if isinstance(tree, ast.Module) else tree


def merge_levels(parts: list[list[list[T]]]) -> list[T]:
    """Items found per chunk and per depth of a breadth-first walk (astwalk.walk_levels), in the order a walk
    of the whole module finds them: depth by depth, and within a depth chunk by chunk (a node's children
    follow its siblings' children, so each depth of the whole walk is the chunks' same depth in turn)."""
    merged: list[T] = []
    for depth in range(max(map(len, parts), default=0)):
        for part in parts:
            if depth < len(part):
                merged.extend(part[depth])
    return merged


def _bounds(text: str) -> list[int]:
    """Offsets where chunks start, and the text's end."""
    size = max(CHUNK_BYTES, len(text) // MAX_CHUNKS)
    bounds = [0]
    match = _BOUNDARY.search(text, size)
    while match is not None:
        start = match.start()
        if _after_decorator(text, start):
            match = _BOUNDARY.search(text, start + 1)
            continue
        bounds.append(start)
        match = _BOUNDARY.search(text, start + size)
    bounds.append(len(text))
    return bounds


def _after_decorator(text: str, start: int) -> bool:
    """A def or class whose previous line is a decorator: the chunk would end between the two."""
    previous = max(text.rfind("\n", 0, start - 1), text.rfind("\r", 0, start - 1)) + 1
    return text.startswith("@", previous)


def _line_breaks(text: str, start: int, end: int) -> int:
    """Lines ended in text[start:end] the way ast counts them (\\r\\n, \\r and \\n; not form feeds)."""
    breaks = text.count("\n", start, end)
    returns = text.count("\r", start, end)
    return breaks + returns - text.count("\r\n", start, end) if returns else breaks


def _trees(text: str, bounds: list[int]) -> Iterator[ast.Module]:
    retries, index, line = 0, 0, 0
    last = len(bounds) - 1
    while index < last:
        end = index + 1
        tree = _chunk_tree(text, bounds[index], bounds[end], line)
        while tree is None:  # a boundary inside a string, a bracket, or a real syntax error
            retries += 1
            if end == last or retries > MAX_RETRIES:
                raise _Whole
            end += 1
            tree = _chunk_tree(text, bounds[index], bounds[end], line)
        yield tree
        tree = None  # only the consumer holds the tree it reads while the next one is parsed
        line += _line_breaks(text, bounds[index], bounds[end])
        index = end


def _continued(text: str, end: int) -> bool:
    """The line that ends at end ends with a backslash. CPython accepts a backslash and a CR LF line end
    at the end of a text as if the backslash were not there; in the whole text the next line continues it."""
    cut = end - 2 if text.startswith("\r\n", end - 2) else end - 1
    return cut > 0 and text[cut - 1] == "\\"


def _chunk_tree(text: str, start: int, end: int, line: int) -> ast.Module | None:
    """CPython's tree of text[start:end] (which starts after `line` lines), at its default recursion
    limit; None on a plain syntax error."""
    if end < len(text) and _continued(text, end):
        return None
    source = "\n" * line + text[start:end]
    try:
        return cpython_tree_once(source)
    except SyntaxError as exc:
        if any(limit in (exc.msg or "") for limit in _CPYTHON_LIMITS):
            raise _Whole from None
        return None
    except (RecursionError, MemoryError, ValueError):  # nesting, a NUL byte: the whole parse says what
        raise _Whole from None
