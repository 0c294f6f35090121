"""C++ declarations TableGen generates that no file of the tree spells (issue 45): for each
`mlir_tablegen(X.h.inc -gen-pass-decls -name Group)` of a CMake file, `register<Group>Passes()` and
`register<Pass>()` of each pass its LLVM_TARGET_DEFINITIONS .td defines, declared in the namespaces where a header
includes X.h.inc right after `#define GEN_PASS_REGISTRATION`. Read from the CMake file (facts/cmake.py), the .td
and the header (tree-sitter gives the namespaces); cached per tree.
"""
from __future__ import annotations

import re
from posixpath import dirname, join, normpath

from sync.facts.cmake import Command, commands
from sync.facts.cpp import namespaces_around, parse_tree
from sync.facts.declindex import CPP_SUFFIXES, Decl
from sync.facts.trees import FileTree, read_text
from sync.git.readlog import TreeMemo

_PASS_DEF = re.compile(r"^\s*def\s+(\w+)\s*:\s*(?:Interface)?Pass\s*<", re.MULTILINE)
# The include right after the define, past other defines (`GEN_PASS_DECL_X`), comments and blank lines.
_REGISTRATION = re.compile(r"#\s*define\s+GEN_PASS_REGISTRATION\b[^\n]*\n(?:[ \t]*(?:#\s*define[^\n]*|//[^\n]*)?\n)*"
                           r"\s*#\s*include\s+[\"<]([^\">]+)[\">]")
_memo: TreeMemo[tuple[Decl, ...]] = TreeMemo()


def pass_registrations(tree: FileTree) -> tuple[Decl, ...]:
    """The `register...` functions TableGen generates for the tree's passes, with the namespaces they land in
    (kind `function`, flag `generated`, line: the header's include of the generated file; path in `target`)."""
    return _memo.get(tree, None, lambda: tuple(_registrations(tree)))


def _registrations(tree: FileTree) -> list[Decl]:
    groups: dict[str, list[str]] = {}  # generated file's repository path -> the names it declares
    for path in tree.paths():
        if not path.endswith("CMakeLists.txt"):
            continue
        text = read_text(tree, path) or ""
        if "gen-pass-decls" not in text:
            continue
        here = dirname(path)
        read = commands(text)
        definitions = [command.args[1].text for command in read if command.name == "set" and len(command.args) == 2
                       and command.args[0].text == "LLVM_TARGET_DEFINITIONS" and command.args[1].text.endswith(".td")]
        td = read_text(tree, normpath(join(here, definitions[-1]))) if definitions else None
        passes = [f"register{name}" for name in _PASS_DEF.findall(td or "")]
        for command in read:
            group = _pass_group(command)
            if group is not None:
                groups[normpath(join(here, command.args[0].text))] = [f"register{group}Passes", *passes]
    if not groups:
        return []
    out: list[Decl] = []
    for path in tree.paths():
        if not path.endswith(CPP_SUFFIXES):
            continue
        text = read_text(tree, path) or ""
        if "GEN_PASS_REGISTRATION" not in text:
            continue
        for match in _REGISTRATION.finditer(text):
            included = match[1]
            names = next((names for inc, names in groups.items() if inc.endswith("/" + included) or inc == included),
                         None)
            if names is None:
                continue
            line = text.count("\n", 0, match.end()) + 1
            scope = _namespaces_at(text, line)
            out += [Decl("function", name, scope, line, params=(), flags=frozenset({"generated"}), target=path)
                     for name in names]
    return out


def _pass_group(command: Command) -> str | None:
    """Group of `mlir_tablegen(X.inc -gen-pass-decls -name Group)` (`-name=Group`, `--name Group` too)."""
    args = [argument.text for argument in command.args]
    if command.name != "mlir_tablegen" or len(args) < 3 or not args[0].endswith(".inc") \
            or args[1] != "-gen-pass-decls":
        return None
    for index, word in enumerate(args[2:], start=2):
        if word in ("-name", "--name") and index + 1 < len(args):
            return args[index + 1]
        if word.startswith(("-name=", "--name=")):
            return word.split("=", 1)[1]
    return None


def _namespaces_at(text: str, line: int) -> str:
    """The namespaces enclosing a line of a C++ text, `::`-joined."""
    node = parse_tree(text).root_node.descendant_for_point_range((line - 1, 0), (line - 1, 0))
    return "::".join(namespaces_around(node))
