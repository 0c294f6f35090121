"""In-memory three-way file merges through libgit2, with labelled diff3 markers and their hunks.

pygit2 has no public wrapper for git_merge_file_from_index (merge three blobs by id, with labels and
diff3 style), so this calls it through pygit2's cffi handle. That is private API: pyproject.toml pins
pygit2 below the next minor, and tests/test_git_merge_api.py fails loudly if what we call goes away.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pygit2
from pygit2 import ffi
from pygit2.enums import FileMode, MergeFavor, MergeFileFlag
from pygit2.errors import check_error
from pygit2.ffi import C

__all__ = ["ConflictHunk", "MergeFavor", "MergeOutcome", "conflict_hunks", "conflict_layers", "holds_conflict",
           "merge_blobs"]

_MERGE_FILE_OPTIONS_VERSION = 1  # GIT_MERGE_FILE_OPTIONS_VERSION in libgit2
_MARKERS = ("<<<<<<<", "|||||||", "=======", ">>>>>>>")


@dataclass(frozen=True)
class ConflictHunk:
    line: int  # first line of the <<<<<<< marker in the merged text (1-based)
    ours: str
    base: str
    theirs: str


@dataclass(frozen=True)
class MergeOutcome:
    clean: bool
    data: bytes
    hunks: tuple[ConflictHunk, ...] = ()


def _entry(path: str, blob: pygit2.Oid | None, mode: int) -> pygit2.IndexEntry | None:
    return None if blob is None else pygit2.IndexEntry(path, blob, FileMode(mode))


def merge_blobs(repo: pygit2.Repository, path: str, base: pygit2.Oid | None, ours: pygit2.Oid | None,
                theirs: pygit2.Oid | None, labels: tuple[str, str, str] = ("base", "ours", "theirs"),
                favor: MergeFavor = MergeFavor.NORMAL, mode: int = pygit2.GIT_FILEMODE_BLOB,
                hunks: bool = True) -> MergeOutcome:
    """Merge three blobs (any may be None) the way git merge-file --diff3 would; hunks=False leaves a
    conflict's hunks out (a caller that only asks whether it is clean)."""
    options = ffi.new("git_merge_file_options *")
    options.version = _MERGE_FILE_OPTIONS_VERSION
    keep = [ffi.new("char[]", label.encode("utf-8")) for label in labels]
    options.ancestor_label, options.our_label, options.their_label = keep
    options.favor = int(favor)
    options.flags = int(MergeFileFlag.STYLE_DIFF3)
    result = ffi.new("git_merge_file_result *")
    entries = [_entry(path, oid, mode) for oid in (base, ours, theirs)]
    c_entries = [entry._to_c() if entry is not None else (ffi.NULL, ffi.NULL) for entry in entries]
    err = C.git_merge_file_from_index(result, repo._repo, c_entries[0][0], c_entries[1][0], c_entries[2][0],
                                      options)
    check_error(err)
    try:
        data = bytes(ffi.buffer(result.ptr, result.len)) if result.ptr != ffi.NULL else b""
        clean = bool(result.automergeable)
    finally:
        C.git_merge_file_result_free(result)
    found = conflict_hunks(data.decode("utf-8", errors="replace")) if hunks and not clean else ()
    return MergeOutcome(clean, data, found)


def holds_conflict(data: bytes) -> bool:
    """Whether a file's content still holds a whole conflict block (a binary file never does)."""
    return b"<<<<<<<" in data and b"\0" not in data and bool(conflict_hunks(data.decode("utf-8", errors="replace")))


_MARKER_FIRSTS = frozenset("<|=>")


def _marker(line: str) -> int | None:
    """Index of the conflict marker this line is, if any: 7 marker characters, then a label or the end."""
    if line[:1] not in _MARKER_FIRSTS:  # most lines: one test, not four
        return None
    body = line.rstrip("\r\n")
    for index, marker in enumerate(_MARKERS):
        if body.startswith(marker) and (len(body) == 7 or (index != 2 and body[7] == " ")):
            return index
    return None


def conflict_sections(text: str) -> Iterator[tuple[int, str, str | None]]:
    """Each line of text (1-based number, the line) with the conflict section it is in: None outside a conflict,
    "ours", "base" or "theirs" inside one, "marker" for a marker line of a conflict. diff3 and merge styles both
    read (a conflict without a base section); a marker out of place is text."""
    section: str | None = None
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        marker = _marker(line)
        if marker is not None and (section, marker) in _STEPS:
            section = _STEPS[(section, marker)]
            yield number, line, "marker"
        else:
            yield number, line, section


def split_sides(text: str) -> tuple[str, str]:
    """(the text outside its conflicts, the text with each conflict's upgraded side): the other lines blank, so
    that line numbers stay those of the text."""
    sections = list(conflict_sections(text))
    outside = "".join(line if section is None else "\n" for _, line, section in sections)
    upgraded = "".join(line if section in (None, "ours") else "\n" for _, line, section in sections)
    return outside, upgraded


# (section, marker index) -> the section after the marker line: 0 <<<<<<<, 1 |||||||, 2 =======, 3 >>>>>>>
_STEPS: dict[tuple[str | None, int], str | None] = {
    (None, 0): "ours", ("ours", 1): "base", ("ours", 2): "theirs", ("base", 2): "theirs", ("theirs", 3): None}


def conflict_layers(text: str) -> Iterator[tuple[int, str, tuple[str, ...] | None]]:
    """Each line of text (1-based number, the line) with the sections of the conflicts it sits in, outermost first:
    () outside any conflict, ("ours",), ("ours", "theirs") for the FlagTree side of a conflict nested in the
    upgraded side of another (a later pick that conflicted on lines an earlier one left marked); None for a marker
    line. A block opens outside a conflict or in an upgraded side (the only side a pick's head holds); a marker
    out of place is text. Unclosed blocks at the end leave their lines as read."""
    stack: list[str] = []
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        marker = _marker(line)
        top = stack[-1] if stack else None
        if marker == 0 and top == "ours":
            stack.append("ours")  # a block nested in an upgraded side
        elif marker is not None and (top, marker) in _STEPS:  # conflict_sections's steps, one block deep
            after = _STEPS[(top, marker)]
            if after is None:
                stack.pop()
            elif top is None:
                stack.append(after)
            else:
                stack[-1] = after
        else:
            yield number, line, tuple(stack)
            continue
        yield number, line, None


def conflict_hunks(text: str) -> tuple[ConflictHunk, ...]:
    """Split diff3-style conflict markers into hunks (our own marker format, not a general parser)."""
    hunks, start, inside = [], 0, False
    parts: dict[str, list[str]] = {}
    for number, line, section in conflict_sections(text):
        if section == "marker" and not inside:
            inside, start, parts = True, number, {"ours": [], "base": [], "theirs": []}
        elif section == "marker" and _marker(line) == 3:
            hunks.append(ConflictHunk(start, "".join(parts["ours"]), "".join(parts["base"]), "".join(parts["theirs"])))
            inside = False
        elif section in parts and inside:
            parts[section].append(line)
    return tuple(hunks)
