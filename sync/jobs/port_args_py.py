"""Rule `moved-arguments` for Python: a module-level function whose parameters upstream reordered, or dropped where
they had a default, in one commit whose own changed calls show the move; FlagTree's calls rewritten through libcst.

Upstream's calls are read with ast (positional arguments compared as unparsed source, keywords equal on both sides);
the declaration must be one module-level def at the parent and at the commit, each kept parameter with the same
name and annotation, each dropped one with a default. At a site, a positional argument moves with its parameter,
a keyword argument stays a keyword (dropped with its parameter); the call must pass every old parameter, and the
moved positional arguments must stay ahead of the keywords.
"""
from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, replace

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from sync.facts.filekinds import PY_SUFFIXES
from sync.facts.parsing import Unparseable, parsed_ast, parsed_python
from sync.facts.trees import read_text
from sync.git import Repository
from sync.jobs.port_args import Mapping, Refused, UpstreamCall, upstream_call_pairs
from sync.jobs.port_edit import Edit, conflicted_lines

__all__ = ["move_python_arguments", "python_mapping"]


@dataclass(frozen=True)
class _Param:
    name: str
    annotation: str
    defaulted: bool


def python_mapping(repo: Repository, commit_id: str, name: str, declared_in: str) -> Mapping | Refused:
    """The mapping upstream's commit applied to its own Python calls of name, checked against the def."""
    move = upstream_call_pairs(repo, commit_id, name, PY_SUFFIXES, _calls)
    if isinstance(move, Refused):
        return move
    sources, count = move.mapping.sources, move.mapping.old_count  # still without the def's parameter names
    old = _defs(read_text(move.parent, declared_in) or "", name)
    new = _defs(read_text(move.after, declared_in) or "", name)
    if len(old) != 1 or len(new) != 1:
        return Refused(f"{name} is defined {len(old)} time(s) at module level in {declared_in} at the commit's "
                       f"parent and {len(new)} at the commit: ambiguous")
    (old_params,), (new_params,) = old, new
    if len(old_params) != count or len(new_params) != len(sources):
        return Refused("upstream's calls pass another number of arguments than the def has parameters")
    for index, source in enumerate(sources):
        if new_params[index].name != old_params[source].name:
            return Refused(f"parameter {old_params[source].name} became {new_params[index].name}: not a move")
        if new_params[index].annotation != old_params[source].annotation:
            return Refused(f"parameter {old_params[source].name} changed type: not a move")
    mapping = replace(move.mapping, params=tuple(param.name for param in old_params))
    undefaulted = [old_params[index].name for index in mapping.dropped if not old_params[index].defaulted]
    if undefaulted:
        return Refused(f"parameter(s) {', '.join(undefaulted)} dropped had no default")
    return mapping


def move_python_arguments(text: str, mapping: Mapping, lines: set[int]) -> Edit:
    """Each call of mapping.name starting on the given lines rewritten as upstream moved its own."""
    edit = Edit(text)
    parsed = parsed_python(text)
    if isinstance(parsed, Unparseable):
        edit.refused = {line: "the module does not parse" for line in lines}
        return edit
    blocked = conflicted_lines(text)
    mover = _Mover(mapping, lines - blocked)
    result = MetadataWrapper(parsed).visit(mover)
    edit.refused = {**{line: "inside a conflict block" for line in lines & blocked}, **mover.refused}
    edit.changed = sorted(mover.changed - set(mover.refused))
    for line in lines - blocked - mover.changed - set(mover.refused):
        edit.refused[line] = f"no call of {mapping.name} starts on the line"
    if edit.changed and not mover.refused:
        edit.text = result.code
    elif edit.changed:  # a line with one call moved and one refused: the whole file is left as it was
        edit.refused.update({line: "another call of the file could not be moved" for line in edit.changed})
        edit.changed = []
    return edit


class _Mover(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, mapping: Mapping, lines: set[int]) -> None:
        super().__init__()
        self.mapping, self.lines = mapping, lines
        self.changed: set[int] = set()
        self.refused: dict[int, str] = {}

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        function = updated.func
        called = function.value if isinstance(function, cst.Name) else \
            function.attr.value if isinstance(function, cst.Attribute) else None
        line = self.get_metadata(PositionProvider, original).start.line
        if called != self.mapping.name or line not in self.lines:
            return updated
        moved = _moved(updated.args, self.mapping)
        if isinstance(moved, str):
            self.refused[line] = moved
            return updated
        self.changed.add(line)
        return updated.with_changes(args=moved)


def _moved(args: Sequence[cst.Arg], mapping: Mapping) -> list[cst.Arg] | str:
    """The call's arguments as upstream's move puts them, or why they cannot be moved one to one."""
    given = list(args)
    if any(arg.star for arg in given):
        return "a starred argument: not one to one"
    positional = [arg for arg in given if arg.keyword is None]
    keywords = {arg.keyword.value: arg for arg in given if arg.keyword is not None}
    if len(positional) + len(keywords) != mapping.old_count or \
            set(keywords) != set(mapping.params[len(positional):]):
        return f"the call does not pass all {mapping.old_count} arguments: not one to one"
    taken: list[cst.Arg] = []
    for source in mapping.sources:
        if source >= len(positional):
            break
        taken.append(positional[source])
    if {index for index in range(len(positional)) if index not in mapping.dropped} != \
            {source for source in mapping.sources[:len(taken)]}:
        return "a moved positional argument would follow a keyword one"
    kept = taken + [arg for name, arg in keywords.items() if mapping.params.index(name) not in mapping.dropped]
    return [arg.with_changes(comma=given[index].comma if index < len(kept) - 1 else given[-1].comma)
            for index, arg in enumerate(kept)]


def _calls(text: str, name: str) -> list[UpstreamCall]:
    tree = parsed_ast(text) if text else None
    if tree is None or isinstance(tree, Unparseable):
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        called = function.id if isinstance(function, ast.Name) else \
            function.attr if isinstance(function, ast.Attribute) else None
        if called == name and not any(isinstance(arg, ast.Starred) for arg in node.args):
            found.append(UpstreamCall(tuple(ast.unparse(arg) for arg in node.args),
                                      frozenset(f"{keyword.arg}={ast.unparse(keyword.value)}"
                                                for keyword in node.keywords)))
    return found


def _defs(text: str, name: str) -> list[list[_Param]]:
    tree = parsed_ast(text) if text else None
    if tree is None or isinstance(tree, Unparseable):
        return []
    found: list[list[_Param]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            arguments = node.args
            if arguments.vararg or arguments.kwarg or arguments.kwonlyargs:
                found.append([])  # not a plain list of parameters: it never agrees
                continue
            params = [*arguments.posonlyargs, *arguments.args]
            first_default = len(params) - len(arguments.defaults)
            found.append([_Param(param.arg, ast.unparse(param.annotation) if param.annotation else "",
                                 index >= first_default) for index, param in enumerate(params)])
    return found
