"""The one declarative way the tool reads its TOML: a schema of typed fields, checked as the file is read.

Every reader goes through `load_toml` (a whole file) or `load_table` (one table of a file the tool shares, such as
[tool.flagtree-sync] in pyproject.toml): a file that does not parse, lacks a key, holds a key the schema does
not declare, or a value of the wrong type is a `TomlFileError` (exit 2) saying `file:line: what is wrong`
(which key, what was expected), never an entry dropped in silence or a crash further on. tomllib gives no
positions for valid TOML, so the line of an entry or key is found in the text. Only the standard library and
sync.errors are imported here: sync/builder/hookset.py reads patches/hooks.toml through it inside pip's
isolated build environment, and every floor (facts: the seed policy and pyproject.toml; records: the tool's
files) reads through it.
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from sync.errors import SyncError


@dataclass(frozen=True)
class Text:
    """A string value; pattern (a full match) narrows it further."""

    required: bool = True
    nonempty: bool = True
    pattern: re.Pattern[str] | None = None
    meaning: str = ""  # what pattern means, for the message, e.g. "40 hex digits"


@dataclass(frozen=True)
class Strings:
    """An array of strings, each as item says."""

    required: bool = True
    item: Text = Text()


@dataclass(frozen=True)
class Choice:
    """A string that is one of values."""

    values: tuple[str, ...]
    required: bool = True


@dataclass(frozen=True)
class Flag:
    """A boolean."""

    required: bool = True


@dataclass(frozen=True)
class Integer:
    """An integer (not a boolean)."""

    required: bool = True


@dataclass(frozen=True)
class Number:
    """An integer or a float (not a boolean); above_zero: finite and above 0."""

    required: bool = True
    above_zero: bool = False


@dataclass(frozen=True)
class Raw:
    """Any value: one whose shape depends on another (a format version), checked where it is read."""

    required: bool = True


@dataclass(frozen=True)
class OrNull:
    """value, or null (JSON only: TOML has no null)."""

    value: "Value"
    required: bool = True


@dataclass(frozen=True)
class Mapping:
    """A table whose keys the file chooses (non-empty), each holding a value as values says."""

    values: "Value"
    required: bool = True


@dataclass(frozen=True)
class ArrayOf:
    """An array of tables, each as entry says."""

    entry: "Table"
    required: bool = True


@dataclass(frozen=True)
class Table:
    """A table with declared fields (a nested table is a field too) and, in TOML, arrays of tables ([[key]]
    entries); keys it does not declare are refused."""

    fields: dict[str, "Value"] = field(default_factory=dict)
    arrays: dict[str, "Table"] = field(default_factory=dict)
    required: bool = True


Value = Text | Strings | Choice | Flag | Integer | Number | Raw | OrNull | Mapping | ArrayOf | Table
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")  # a key TOML writes without quotes


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
    section: tuple[str, ...] = ()  # the table checked, when not the whole file: ("tool", "flagtree-sync")

    def line_of(self, array: str | None = None, index: int | None = None, key: str | None = None) -> int:
        if self.section:
            return locate_in_section(self.text, self.section, key)
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


def load_table(text: str, where: str, section: tuple[str, ...], schema: Table) -> dict[str, Any]:
    """The table at section (e.g. ("tool", "flagtree-sync")) of a file the tool shares with others, checked
    against schema; {} where the file has no such table. Only that table's keys are the tool's to judge."""
    try:
        data: Any = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _syntax_error(where, text, exc) from exc
    except RecursionError:
        raise TomlFileError(where, 1, "arrays or tables nested too deeply to read") from None
    name = ".".join(section)
    document = TomlDocument(where, text, data, section)
    for depth, part in enumerate(section):
        if not isinstance(data, dict):
            above = ".".join(section[:depth])
            raise TomlFileError(where, locate_in_section(text, section[:depth]),
                                f"[{above}] must be a table, not {_kind(data)}")
        if part not in data:
            return {}
        data = data[part]
    if not isinstance(data, dict):
        raise TomlFileError(where, locate_in_section(text, section), f"[{name}] must be a table, not {_kind(data)}")
    _check_table(document, data, schema, None, None, f"[{name}] ")
    return data


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
        named, problem = value_problem(data[key], rule)
        if problem:
            raise document.error(f"{label}{key}{named} {problem}", array, index, key)
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


def value_problem(value: object, rule: Value) -> tuple[str, str]:
    """('', '') when value is as rule says, else (the part of it that is not, e.g. '.tle', '[2]' or
    '.gate.timeout', and what is wrong with it). Any parsed data: TOML's, or JSON's (the upgrade state)."""
    if isinstance(rule, Text):
        return "", _text_problem(value, rule)
    if isinstance(rule, Raw):
        return "", ""
    if isinstance(rule, OrNull):
        return ("", "") if value is None else value_problem(value, rule.value)
    if isinstance(rule, (Choice, Flag, Integer, Number)):
        return "", _scalar_problem(value, rule)
    if isinstance(rule, Strings):
        if not isinstance(value, list):
            return "", f"must be an array of strings, not {_kind(value)}"
        for number, item in enumerate(value):
            problem = _text_problem(item, rule.item)
            if problem:
                return f"[{number}]", problem
        return "", ""
    if isinstance(rule, ArrayOf):
        if not isinstance(value, list):
            return "", f"must be an array of tables, not {_kind(value)}"
        for number, item in enumerate(value):
            named, problem = value_problem(item, rule.entry)
            if problem:
                return f"[{number}]{named}", problem
        return "", ""
    if not isinstance(value, dict):
        return "", f"must be a table, not {_kind(value)}"
    if isinstance(rule, Table):
        return _table_problem(value, rule)
    for key, item in value.items():
        if not key:
            return "", "holds an empty key"
        named, problem = value_problem(item, rule.values)
        if problem:
            shown = key if _BARE_KEY.fullmatch(key) else '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
            return f".{shown}{named}", problem
    return "", ""


def _table_problem(value: dict[str, Any], rule: Table) -> tuple[str, str]:
    unknown = sorted(key for key in value if key not in rule.fields and key not in rule.arrays)
    if unknown:
        known = ", ".join([*rule.fields, *rule.arrays])
        return "", f"has unknown key(s) {', '.join(map(repr, unknown))} (known: {known})"
    missing = [key for key, field_rule in rule.fields.items() if field_rule.required and key not in value]
    if missing:
        return "", f"lacks {', '.join(missing)}"
    for key, field_rule in rule.fields.items():
        if key in value:
            named, problem = value_problem(value[key], field_rule)
            if problem:
                return f".{key}{named}", problem
    for key, entry in rule.arrays.items():
        if key in value:
            named, problem = value_problem(value[key], ArrayOf(entry))
            if problem:
                return f".{key}{named}", problem
    return "", ""


def _scalar_problem(value: object, rule: Choice | Flag | Integer | Number) -> str:
    if isinstance(rule, Flag):
        return "" if isinstance(value, bool) else f"must be a boolean, not {_kind(value)}"
    if isinstance(rule, Integer):
        whole = isinstance(value, int) and not isinstance(value, bool)
        return "" if whole else f"must be an integer, not {_kind(value)}"
    if isinstance(rule, Number):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be a number, not {_kind(value)}"
        return "" if not rule.above_zero or math.isfinite(value) and value > 0 else \
            f"must be a number above 0, not {value!r}"
    if not isinstance(value, str):
        return f"must be a string, not {_kind(value)}"
    return "" if value in rule.values else f"must be one of {', '.join(rule.values)}, not {value!r}"


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
             dict: "a table", type(None): "null"}
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


def _header_pattern(section: tuple[str, ...]) -> re.Pattern[str]:
    """A `[a.b]` header (any part quoted or bare) of section or of a table below it."""
    parts = r"\s*\.\s*".join(rf"""(?:{re.escape(part)}|"{re.escape(part)}"|'{re.escape(part)}')""" for part in section)
    return re.compile(rf"\s*\[\s*{parts}\s*(?:\.\s*(?P<below>[^\]]+?))?\s*\]")


def locate_in_section(text: str, section: tuple[str, ...], key: str | None = None) -> int:
    """Line of key in the table at section: its `key =` line under the section's header, else the header of a table
    below it named key (`[tool.flagtree-sync.owners]`), else the section's header, else line 1."""
    if not section:
        return locate(text, None, None, key)
    lines = _structural_lines(text)
    pattern = _header_pattern(section)
    headers = [(position, match) for position, (_, line) in enumerate(lines) if (match := pattern.match(line))]
    own = next((position for position, match in headers if match["below"] is None), None)
    if key is not None and own is not None:
        found = _first_match(_until_header(lines, own + 1), key)
        if found is not None:
            return found
    if key is not None:
        below = next((position for position, match in headers
                      if match["below"] is not None and match["below"].strip("\"' ") == key), None)
        if below is not None:
            return lines[below][0]
    first = own if own is not None else (headers[0][0] if headers else None)
    return lines[first][0] if first is not None else 1
