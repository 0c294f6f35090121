"""The CMake side of an upstream rename (issue 50): a target FlagTree's CMake names that upstream renamed
(`TritonGPUCTAAttrIncGen` -> `TritonGPUCGAAttrIncGen` in #8850).

Rule `renamed-target`: the target is defined by no CMake file at the new tag; at the old tag exactly one CMake
file defines it; the one upstream commit that removed that definition defined, in the same file (so the same
directory) and through the same add_* command, exactly one target that was not there before, which the new tag
still defines. The targets are read the way the declaration index reads a CMake file (sync/facts/declindex.py:
the command's first word), extended to every add_* command (add_public_tablegen_target among them).

The edit is on exact arguments: a CMake file read by facts/cmake.py (tree-sitter-cmake: comments, bracket and quoted
arguments and parentheses apart), and only an unquoted argument spelled as the old target on a site line is renamed. A
site inside a conflict block, or whose target is named in quotes, is refused.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sync.facts.cmake import commands
from sync.facts.delta import is_cmake
from sync.git import GitTree, Repository, range_commits
from sync.jobs.port_edit import Edit, conflicted_lines

TARGET_RULE = "renamed-target"
TARGET_KIND = "cmake-target"
_COMMAND = re.compile(r"add_\w*(?:library|executable|target)")  # what defines a target (names are lower case)


@dataclass(frozen=True)
class TargetRename:
    old: str
    new: str | None  # None: not certain (why)
    commit: str | None
    subject: str
    path: str  # the CMake file that defined it at the old tag
    why: str = ""


def targets(text: str) -> list[tuple[str, str]]:
    """(command, target) of each `add_*(NAME ...)` of a CMake text, in order: the command's first argument."""
    return [(command.name, command.args[0].text) for command in commands(text)
            if _COMMAND.fullmatch(command.name) and command.args
            and (command.args[0].quoted or command.args[0].text not in ("(", ")"))]


@lru_cache(maxsize=4)
def _commits(repo: Repository, old: str, new: str) -> tuple[Any, ...]:
    return tuple(commit for commit in range_commits(repo, repo[old], repo[new])  # type: ignore[arg-type]
                 if len(commit.parents) == 1)


def _text(repo: Repository, tree: Any, path: str) -> str | None:
    try:
        blob: Any = repo[tree[path].id]
    except KeyError:
        return None
    return blob.data.decode("utf-8", errors="replace")


def _defined(tree: GitTree, name: str) -> list[tuple[str, str]]:
    """(path, command) of each definition of the target in the tree's CMake files."""
    found = []
    for path in tree.paths():
        if not is_cmake(path):
            continue
        data = tree.read(path) or b""
        if name.encode() not in data:
            continue
        found += [(path, command) for command, target in targets(data.decode("utf-8", errors="replace"))
                  if target == name]
    return found


def certain_target_rename(repo: Repository, old: str, new: str, name: str) -> TargetRename | None:
    """The rename of a target FlagTree's CMake names, or why it is not certain; None when the old tag defines
    no such target (a path, a variable, another entry)."""
    old_tree = GitTree.of_commit(repo, repo[old].id, "old")
    new_tree = GitTree.of_commit(repo, repo[new].id, "new")
    before = _defined(old_tree, name)
    if not before:
        return None
    if len(before) > 1:
        return TargetRename(name, None, None, "", before[0][0], "more than one CMake file defines it at the old tag")
    if _defined(new_tree, name):
        return TargetRename(name, None, None, "", before[0][0], "the new tag still defines it")
    path, command = before[0]
    for commit in _commits(repo, old, new):
        was, now = _text(repo, commit.parents[0].tree, path), _text(repo, commit.tree, path)
        if was is None or was == now or (command, name) not in targets(was):
            continue
        if now is not None and (command, name) in targets(now):
            continue
        subject = commit.message.splitlines()[0] if commit.message else ""
        added = {target for cmd, target in targets(now or "") if cmd == command} - {
            target for cmd, target in targets(was) if cmd == command}
        if len(added) != 1:
            return TargetRename(name, None, str(commit.id), subject, path, f"the commit that removed it defined "
                                f"{len(added)} new {command} target(s) in {path}, not one")
        replacement = added.pop()
        if not _defined(new_tree, replacement):
            return TargetRename(name, None, str(commit.id), subject, path,
                                f"{replacement}, which took its place, is not defined at the new tag")
        return TargetRename(name, replacement, str(commit.id), subject, path)
    return TargetRename(name, None, None, "", path, f"no upstream commit removed it from {path} in one step")


def rename_cmake(text: str, old: str, new: str, lines: set[int]) -> Edit:
    """old -> new on the unquoted CMake arguments spelled old on the given lines."""
    edit = Edit(text)
    blocked = conflicted_lines(text)
    spans: dict[int, list[tuple[int, int]]] = {}
    quoted: set[int] = set()
    spelled = re.compile(rf"(?<![\w-]){re.escape(old)}(?![\w-])")
    for command in commands(text):
        for argument in command.args:
            if argument.quoted and spelled.search(argument.text):
                quoted.add(argument.line)
            elif not argument.quoted and argument.text == old:
                spans.setdefault(argument.line, []).append((argument.start, argument.end))
    replaced: list[tuple[int, int]] = []
    for line in sorted(lines):
        reason = ("inside a conflict block" if line in blocked
                  else "the target is named in quotes on the line" if line in quoted
                  else "no unquoted argument of that name on the line" if line not in spans else "")
        if reason:
            edit.refused[line] = reason
            continue
        replaced += spans[line]
        edit.changed.append(line)
    data = text.encode("utf-8", errors="replace")  # the spans are of these bytes
    for start, end in sorted(replaced, reverse=True):
        data = data[:start] + new.encode() + data[end:]
    edit.text = data.decode("utf-8", errors="replace")
    return edit
