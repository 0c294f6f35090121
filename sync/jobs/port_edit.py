"""The edits of `port`: one identifier renamed at given lines of one file, on exact nodes, never by text replace.

C++ through tree-sitter (the shared parse of sync/facts/cpp.py): the identifier nodes spelled as the old name on
a site line, each of which must be a use that resolves to the renamed declaration's scopes (sync/facts/cppscope.py,
the reading symbol drift made the site from). Python through a libcst transformer over the module's own parse
(sync/facts/parsing.py): every `Name` node of the old name in the module, its import included, once the module's
imports tie every use to the declaring module (sync/facts/pyresolve.py).

A site is refused, and left for a person, when it sits inside a conflict block (markers included), inside a
macro's body (the preprocessor's text, which no parse reads as code), under a parse error, in a file that binds
the name itself, or when a use may mean another declaration: the edit is made only where it is certain.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from tree_sitter import Node

from sync.facts.cpp import node_text, nodes_of_types, parse_tree
from sync.facts.cppscope import resolves, use_contexts
from sync.facts.parsing import Unparseable, parsed_ast, parsed_python
from sync.facts.pyresolve import foreign, python_uses
from sync.git import conflict_sections
from sync.drift.analyses.symbols import own_names
from sync.drift.analyses.accessors import member_calls

_IDENTIFIERS = ("identifier", "field_identifier", "type_identifier", "namespace_identifier")
_MACROS = ("preproc_def", "preproc_function_def")


@dataclass
class Edit:
    """What renaming did to one file: its new text, the lines changed, the lines refused and why."""
    text: str
    changed: list[int] = field(default_factory=list)
    refused: dict[int, str] = field(default_factory=dict)


def conflicted_lines(text: str) -> set[int]:
    """The lines of every conflict block, markers included: never edited."""
    return {number for number, _, section in conflict_sections(text) if section is not None}


def rename_cpp(text: str, old: str, new: str, lines: set[int], scopes: set[str]) -> Edit:
    """old -> new on the identifier nodes of the given lines that are uses resolving to scopes."""
    edit = Edit(text)
    if old in own_names("port.cpp", text):  # a variable or parameter of the file's own spells it: not upstream's
        return _refuse_all(edit, lines, "the file binds the name itself")
    blocked = conflicted_lines(text)
    data = text.encode("utf-8")
    root = parse_tree(text).root_node
    macro_spans = macro_lines(root)
    contexts = use_contexts(text, {old})
    by_line: dict[int, list[Node]] = {}
    for node in nodes_of_types(root, _IDENTIFIERS):
        if node_text(node) == old:
            by_line.setdefault(node.start_point[0] + 1, []).append(node)
    replaced: list[Node] = []
    for line in sorted(lines):
        reason = _cpp_refusal(line, blocked, macro_spans, by_line.get(line, []), contexts.get((old, line), []),
                              scopes)
        if reason:
            edit.refused[line] = reason
            continue
        replaced += by_line[line]
        edit.changed.append(line)
    for line in _macro_uses(root, old):  # the preprocessor's text: no parse says what it means, a person must
        edit.refused.setdefault(line, "inside a macro's body")
    for node in sorted(replaced, key=lambda node: node.start_byte, reverse=True):
        data = data[:node.start_byte] + new.encode("utf-8") + data[node.end_byte:]
    edit.text = data.decode("utf-8")
    return edit


def rename_members_cpp(text: str, old: str, new: str, lines: set[int]) -> Edit:
    """old -> new on the member name of each call `x.old(...)`, `x->old(...)`, `x.old<T>(...)` on the given lines
    (the name left upstream's whole tree, so whatever the receiver, the call means the renamed member)."""
    edit = Edit(text)
    blocked = conflicted_lines(text)
    root = parse_tree(text).root_node
    macro_spans = macro_lines(root)
    calls: dict[int, list[Node]] = {}
    for _, line, node in member_calls(text, lines, {old}):
        calls.setdefault(line, []).append(node)
    replaced: list[Node] = []
    for line in sorted(lines):
        nodes = calls.get(line, [])
        reason = ("inside a conflict block" if line in blocked
                  else "inside a macro's body" if any(start <= line <= end for start, end in macro_spans)
                  else "no member call of that name on the line" if not nodes
                  else "the parse of the line has an error" if any(_under_error(node) for node in nodes) else "")
        if reason:
            edit.refused[line] = reason
            continue
        replaced += nodes
        edit.changed.append(line)
    for line in _macro_uses(root, old):
        edit.refused.setdefault(line, "inside a macro's body")
    data = text.encode("utf-8")
    for node in sorted(replaced, key=lambda node: node.start_byte, reverse=True):
        data = data[:node.start_byte] + new.encode("utf-8") + data[node.end_byte:]
    edit.text = data.decode("utf-8")
    return edit


def macro_lines(root: Node) -> list[tuple[int, int]]:
    """(first, last) line of each macro definition. tree-sitter ends a #define's node at column 0 of the line after
    it (the newline is the directive's): that line is not the macro's."""
    return [(node.start_point[0] + 1, node.end_point[0] + (1 if node.end_point[1] else 0))
            for node in nodes_of_types(root, _MACROS)]


def _macro_uses(root: Node, old: str) -> list[int]:
    """Lines of macro bodies that spell old as a word."""
    word = re.compile(rf"\b{re.escape(old)}\b")
    found = []
    for node in nodes_of_types(root, _MACROS):
        for offset, line in enumerate(node_text(node).splitlines()):
            if word.search(line):
                found.append(node.start_point[0] + 1 + offset)
    return found


def _cpp_refusal(line: int, blocked: set[int], macro_spans: list[tuple[int, int]], nodes: list[Node],
                 contexts: list, scopes: set[str]) -> str:
    if line in blocked:
        return "inside a conflict block"
    if any(start <= line <= end for start, end in macro_spans):
        return "inside a macro's body"
    if not nodes:
        return "no identifier of that name on the line"
    if any(_under_error(node) for node in nodes):
        return "the parse of the line has an error"
    if len(contexts) != len(nodes) or not all(resolves(context, scopes) for context in contexts):
        return "a use on the line may mean another declaration"
    return ""


def _under_error(node: Node) -> bool:
    parent: Node | None = node
    while parent is not None:
        if parent.type == "ERROR" or parent.is_missing:
            return True
        parent = parent.parent
    return False


def rename_python(text: str, old: str, new: str, lines: set[int], module: str) -> Edit:
    """old -> new on every Name node of the module spelled old (imported, bare, or the attribute of a name an
    import binds): a Python name is bound once for the whole module, so its import and every use change together.
    Every use must be tied by the module's imports to `module`, the declaring module (`from m import old`,
    `m.old` after `import m` or `from p import m`), the import absolute; else the whole file is refused, as it is
    when the module binds the name itself or a site line sits in a conflict block."""
    edit = Edit(text)
    parsed = parsed_python(text)
    uses = python_uses(text, old)
    tree = parsed_ast(text)
    if isinstance(parsed, Unparseable) or isinstance(tree, Unparseable) or uses is None:
        return _refuse_all(edit, lines, "the module does not parse")
    blocked = conflicted_lines(text)
    if lines & blocked:
        return _refuse_all(edit, lines, "inside a conflict block")
    if _binds(tree, old):
        return _refuse_all(edit, lines, "the module binds the name itself")
    if any(use.module not in (module, f"{module}.{old}") for use in uses) or not _imports_from(tree, old, module):
        return _refuse_all(edit, lines, f"a use the module's imports do not tie to {module}")
    renamer = _PythonRename(old, new)
    edit.text = MetadataWrapper(parsed).visit(renamer).code
    if renamer.changed & blocked:
        return _refuse_all(Edit(text), lines, "a use in the module sits in a conflict block")
    edit.changed = sorted(renamer.changed)
    for line in lines - renamer.changed:
        edit.refused[line] = "no name node of that spelling on the line"
    return edit


def _imports_from(tree: ast.Module, name: str, module: str) -> bool:
    """Every import that names `name` imports it from `module` itself, absolutely."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == name for alias in node.names):
            if node.level or node.module != module:
                return False
        elif isinstance(node, ast.Import) and any(alias.name.split(".")[-1] == name for alias in node.names):
            return False
    return True


def _refuse_all(edit: Edit, lines: set[int], why: str) -> Edit:
    edit.refused = {line: why for line in lines}
    return edit


def _binds(tree: ast.Module, name: str) -> bool:
    """Whether the module binds name itself: an assignment, a def, a class, a parameter, `as name`, self.name = ."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if (node.id if isinstance(node, ast.Name) else node.attr) == name:
                return True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        elif isinstance(node, ast.arg) and node.arg == name:
            return True
        elif isinstance(node, ast.alias) and node.asname == name:
            return True
    return False


class _PythonRename(cst.CSTTransformer):
    """Renames the Name nodes spelled old; never a parameter's or a keyword argument's."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new
        self.changed: set[int] = set()
        self._defining: set[int] = set()  # ids of the Name nodes that name a def or a class: FlagTree's own

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._defining.add(id(node.name))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._defining.add(id(node.name))

    def visit_Param(self, node: cst.Param) -> None:
        self._defining.add(id(node.name))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._defining.add(id(node.keyword))  # f(old=...) names a parameter, not the declaration

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if original.value != self.old or id(original) in self._defining:
            return updated
        self.changed.add(self.get_metadata(PositionProvider, original).start.line)
        return updated.with_changes(value=self.new)
