"""Read the tool's TOML files against a declared schema, and write them only inside the work tree.

Every reader goes through `load_toml`: a file that does not parse, lacks a key, or holds a value of
the wrong type is a `TomlFileError` (exit 2) saying `file:line: what is wrong`, never a crash further
on. tomllib gives no positions for valid TOML, so the line of an entry or key is found in the text.
Only the standard library is imported here: sync/builder/hookset.py reads patches/hooks.toml with this module
inside pip's isolated build environment.
"""
from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sync.support.atomic import write_text_atomic
from sync.support.terminal import printable_lines
from sync.errors import SyncError

OID = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Text:
    """A string value; pattern (a full match) narrows it further."""

    required: bool = True
    nonempty: bool = True
    pattern: re.Pattern[str] | None = None
    meaning: str = ""  # what pattern means, for the message, e.g. "40 hex digits"


@dataclass(frozen=True)
class Table:
    """A table with string fields and arrays of tables; keys it does not declare are refused."""

    fields: dict[str, Text] = field(default_factory=dict)
    arrays: dict[str, Table] = field(default_factory=dict)


class TomlFileError(SyncError):
    """A TOML file the tool reads is not what its schema says; where and line say which entry."""

    def __init__(self, where: str, line: int, problem: str) -> None:
        super().__init__(f"{where}:{line}: {problem}")
        self.where, self.line, self.problem = where, line, problem


@dataclass(frozen=True)
class TomlDocument:
    where: str
    text: str
    data: dict[str, Any]

    def line_of(self, array: str | None = None, index: int | None = None, key: str | None = None) -> int:
        return locate(self.text, array, index, key)

    def error(self, problem: str, array: str | None = None, index: int | None = None,
              key: str | None = None) -> TomlFileError:
        return TomlFileError(self.where, self.line_of(array, index, key), problem)


def load_toml(text: str, where: str, schema: Table) -> TomlDocument:
    """Parse text and check it against schema; `where` names the file in messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(where, text, exc) from exc
    except RecursionError:  # tomllib recurses per nested array or inline table
        raise TomlFileError(where, 1, "arrays or tables nested too deeply to read") from None
    document = TomlDocument(where, text, data)
    _check_table(document, data, schema, None, None, "")
    return document


def _syntax_error(where: str, text: str, exc: tomllib.TOMLDecodeError) -> TomlFileError:
    """tomllib puts the position in the message: `(at line 3, column 5)` or `(at end of document)`."""
    message = str(exc)
    position = re.search(r"\s*\(at line (\d+), column \d+\)$", message)
    if position is not None:
        return TomlFileError(where, int(position.group(1)), message[:position.start()])
    position = re.search(r"\s*\(at end of document\)$", message)
    if position is not None:
        return TomlFileError(where, max(1, len(text.splitlines())), message[:position.start()])
    return TomlFileError(where, 1, message)


def _check_table(document: TomlDocument, data: dict[str, Any], schema: Table, array: str | None,
                 index: int | None, label: str) -> None:
    for key in data:
        if key not in schema.fields and key not in schema.arrays:
            known = ", ".join([*schema.fields, *schema.arrays])
            raise document.error(f"{label}unknown key {key!r} (known: {known})", array, index, key)
    for key, rule in schema.fields.items():
        if key not in data:
            if rule.required:
                raise document.error(f"{label}lacks {key}", array, index)
            continue
        problem = _text_problem(data[key], rule)
        if problem:
            raise document.error(f"{label}{key} {problem}", array, index, key)
    for key, entry_schema in schema.arrays.items():
        if key not in data:
            continue
        entries = data[key]
        strays = [entry for entry in entries if not isinstance(entry, dict)] if isinstance(entries, list) else []
        if not isinstance(entries, list) or strays:
            got = f"an array holding {_kind(strays[0])}" if strays else _kind(entries)
            raise document.error(f"{key} must be an array of tables ([[{key}]] entries), not {got}", key=key)
        for number, entry in enumerate(entries):
            _check_table(document, entry, entry_schema, key, number, f"[[{key}]] entry {number + 1}: ")


def _text_problem(value: object, rule: Text) -> str:
    if not isinstance(value, str):
        return f"must be a string, not {_kind(value)}"
    if rule.nonempty and not value:
        return "must not be empty"
    if rule.pattern is not None and not rule.pattern.fullmatch(value):
        return f"must be {rule.meaning or rule.pattern.pattern}, not {value!r}"
    return ""


def _kind(value: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array",
             dict: "a table"}
    return names.get(type(value), f"a {type(value).__name__}")


# --- finding lines in valid TOML -------------------------------------------------------------------

def _structural_lines(text: str) -> list[tuple[int, str]]:
    """(number, line) for each line that starts outside a multi-line string, so a reason whose text
    holds `[[suppress]]` is not mistaken for a header."""
    found = []
    inside: str | None = None  # the delimiter of the open multi-line string
    for number, line in enumerate(text.splitlines(), start=1):
        if inside is None:
            found.append((number, line))
        position = 0
        while position < len(line):
            if inside is not None:
                end = _closing(line, position, inside)
                if end < 0:
                    break
                inside, position = None, end
                continue
            char = line[position]
            if char == "#":
                break
            if line.startswith('"""', position) or line.startswith("'''", position):
                inside, position = line[position:position + 3], position + 3
            elif char in "\"'":
                end = _closing(line, position + 1, char)
                position = end if end >= 0 else len(line)
            else:
                position += 1
    return found


def _closing(line: str, start: int, delimiter: str) -> int:
    """Index just past delimiter in line from start, honouring backslash escapes in basic strings."""
    position = start
    while position < len(line):
        if delimiter[0] == '"' and line[position] == "\\":
            position += 2
            continue
        if line.startswith(delimiter, position):
            end = position + len(delimiter)
            while len(delimiter) == 3 and line.startswith(delimiter[0], end) and end < position + 5:
                end += 1  # a multi-line string may end with up to two more quotes
            return end
        position += 1
    return -1


_HEADER = re.compile(r"\s*\[")


def _key_pattern(key: str) -> re.Pattern[str]:
    return re.compile(rf"""\s*(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')\s*[=.]""")


def locate(text: str, array: str | None = None, index: int | None = None, key: str | None = None) -> int:
    """Line of key in the index-th [[array]] entry (or at top level without array); falls back to the
    entry's header, then to the array's `key =` line, then to line 1."""
    lines = _structural_lines(text)
    if array is None:
        section = [line for line in _until_header(lines, 0)]
        return _first_match(section, key) or 1
    header = re.compile(rf"""\s*\[\[\s*(?:{re.escape(array)}|"{re.escape(array)}"|'{re.escape(array)}')\s*\]\]""")
    starts = [position for position, (_, line) in enumerate(lines) if header.match(line)]
    if index is None or index >= len(starts):
        # an inline array (`suppress = [...]`) or a non-array value: point at its key
        return _first_match(lines, array) or (lines[starts[0]][0] if starts else 1)
    start = starts[index]
    return _first_match(_until_header(lines, start + 1), key) or lines[start][0]


def _until_header(lines: list[tuple[int, str]], start: int) -> list[tuple[int, str]]:
    section = []
    for number, line in lines[start:]:
        if _HEADER.match(line):
            break
        section.append((number, line))
    return section


def _first_match(lines: list[tuple[int, str]], key: str | None) -> int | None:
    if key is None:
        return None
    pattern = _key_pattern(key)
    return next((number for number, line in lines if pattern.match(line)), None)


# --- writing ---------------------------------------------------------------------------------------

def work_tree_path(work_tree: Path, rel: str) -> Path:
    """work_tree/rel, refused (SyncError) when it or a directory on the way is a symlink or it leaves
    the tree: a committed symlink in place of a file the tool writes must never steer the write elsewhere."""
    root = work_tree.resolve()
    target = root / rel
    current = root
    for part in Path(rel).parts:
        if part == "..":
            raise SyncError(f"{rel} leaves the work tree {root}")
        current = current / part
        if current.is_symlink():
            raise SyncError(f"{current} is a symlink: refusing to write {rel} through it")
    if not target.resolve().is_relative_to(root):
        raise SyncError(f"{rel} leaves the work tree {root}")
    return target


def write_in_work_tree(work_tree: Path, rel: str, text: str) -> Path:
    """Write rel under work_tree atomically (temporary file + rename), through no symlink. Control characters
    tomlkit leaves raw (C1, bidi) are written as TOML's `\\uXXXX` escapes: the same string values, and a file
    `cat` cannot drive a terminal with (issue 47.12)."""
    target = work_tree_path(work_tree, rel)
    text = printable_lines(text)
    mode = target.stat().st_mode & 0o777 if target.exists() else _default_mode()
    try:
        write_text_atomic(target, text)
        target.chmod(mode)  # mkstemp creates 0600; keep the file's mode, or the user's umask for a new one
    except OSError as exc:
        raise SyncError(f"cannot write {target}: {exc.strerror or exc}") from exc
    return target


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
