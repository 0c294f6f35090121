"""Rule `moved-arguments`: a C++ function whose parameters upstream reordered, or dropped where they had a default,
in one commit; FlagTree's calls rewritten by moving or dropping the exact argument nodes.

The mapping is read from upstream, never guessed: the commit's own calls of the function that it changed (a call
of the parent's file gone from the commit's, one of the commit's new) are paired where each argument of the new call
is, token for token, exactly one argument of the old call. Every pair must give the same mapping. The declaration
must agree: one declaration of the name at the parent and one at the commit (an overload is ambiguous), the kept
parameters of the same types in the mapped order, and each dropped parameter with a default at the parent.

A site is rewritten only where its call passes every parameter of the old declaration (each argument maps one to
one); a call that leans on a default, a site in a conflict block or a macro body, or a parse error is left.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from sync.facts.cpp import node_text, nodes_of_types, parse_tree
from sync.facts.filekinds import CPP_CODE, PY_SUFFIXES
from sync.facts.trees import read_text
from sync.git import GitTree, Repository, changes_with_renames
from sync.jobs.port_edit import Edit, conflicted_lines, macro_lines

__all__ = ["ARGS_KIND", "ARGS_RULE", "Mapping", "Refused", "UpstreamCall", "UpstreamMove", "argument_mapping",
           "callee_name", "move_arguments", "sources_of", "upstream_call_pairs"]

ARGS_KIND = "call-no-overload"
ARGS_RULE = "moved-arguments"
_TOKEN = re.compile(r"/\*.*?\*/|//[^\n]*|\s+", re.S)


@dataclass(frozen=True)
class Mapping:
    """new argument i <- old argument sources[i]; old_count arguments before."""
    name: str
    sources: tuple[int, ...]
    old_count: int
    example: str = ""  # one of upstream's own calls, before -> after
    params: tuple[str, ...] = ()  # the old parameters' names (Python: a keyword argument follows its parameter)

    @property
    def dropped(self) -> tuple[int, ...]:
        return tuple(index for index in range(self.old_count) if index not in self.sources)


@dataclass
class Refused:
    reason: str


def callee_name(callee: str) -> str | None:
    """The function's own name in a finding's callee (`TargetInfoBase::barrier`, `ns::f`); None for a builder of an
    ODS op, attribute or type (its parameters are generated: not this rule's)."""
    if "(" in callee or "<" in callee:
        return None
    name = callee.rpartition("::")[2].rpartition(".")[2].rpartition("->")[2]
    return name if re.fullmatch(r"[A-Za-z_]\w*", name) else None


@dataclass(frozen=True)
class UpstreamCall:
    """One call as upstream's text spells it: its positional arguments, token for token, and its keywords
    (`name=value`; none in C++), which must be the same on both sides of a pair."""
    args: tuple[str, ...]
    keywords: frozenset[str] = frozenset()


@dataclass(frozen=True)
class UpstreamMove:
    """The one mapping upstream's commit applied to its own calls, with the trees on either side of it."""
    parent: GitTree
    after: GitTree
    mapping: Mapping


def upstream_call_pairs(repo: Repository, commit_id: str, name: str, suffixes: tuple[str, ...],
                        calls_of: Callable[[str, str], list[UpstreamCall]]) -> UpstreamMove | Refused:
    """The mapping upstream's commit applied to its own calls of name in the files ending in suffixes: each call
    the commit added paired with each it removed in the same file; every pair that moves arguments must agree."""
    commit = repo[commit_id]
    if len(commit.parent_ids) != 1:  # type: ignore[attr-defined]
        return Refused("a merge commit: no single parent to read the change from")
    parent = GitTree.of_commit(repo, commit.parent_ids[0], "parent")  # type: ignore[attr-defined]
    after = GitTree.of_commit(repo, commit_id, "commit")
    found: set[tuple[int, ...]] = set()
    counts: set[int] = set()
    example = ""
    for change in changes_with_renames(parent, after):
        path = change.old_path
        if change.new_path != path or not path.endswith(suffixes):
            continue
        old_calls = calls_of(read_text(parent, path) or "", name)
        new_calls = calls_of(read_text(after, path) or "", name)
        gone = [call for call in old_calls if call not in new_calls]
        came = [call for call in new_calls if call not in old_calls]
        for new in came:
            for old in gone:
                sources = sources_of(old.args, new.args) if old.keywords == new.keywords else None
                if sources is not None and sources != tuple(range(len(old.args))):
                    found.add(sources)
                    counts.add(len(old.args))
                    example = example or f"{path}: {name}({', '.join(old.args)}) -> {name}({', '.join(new.args)})"
    if not found:
        return Refused("upstream's commit changed no call of its own that shows where each argument went")
    if len(found) > 1 or len(counts) > 1:
        return Refused("upstream's own calls moved the arguments in different ways: ambiguous")
    return UpstreamMove(parent, after, Mapping(name, found.pop(), counts.pop(), example))


def argument_mapping(repo: Repository, commit_id: str, name: str, declared_in: str) -> Mapping | Refused:
    """The mapping upstream's commit applied to its own calls of name, checked against the declaration."""
    move = upstream_call_pairs(repo, commit_id, name, CPP_CODE, _calls_of)
    if isinstance(move, Refused):
        return move
    return _agrees_with_declaration(read_text(move.parent, declared_in) or "",
                                    read_text(move.after, declared_in) or "", declared_in, move.mapping)


def _agrees_with_declaration(before: str, after: str, path: str, mapping: Mapping) -> Mapping | Refused:
    old = _declarations(before, mapping.name)
    new = _declarations(after, mapping.name)
    if len(old) != 1 or len(new) != 1:
        return Refused(f"{mapping.name} is declared {len(old)} time(s) in {path} at the commit's parent and "
                       f"{len(new)} at the commit: an overloaded or missing declaration is ambiguous")
    (old_params,), (new_params,) = old, new
    if len(old_params) != mapping.old_count or len(new_params) != len(mapping.sources):
        return Refused("upstream's calls pass another number of arguments than the declaration has parameters")
    for index, source in enumerate(mapping.sources):
        if new_params[index][0] != old_params[source][0]:
            return Refused(f"parameter {source + 1} changed type ({old_params[source][0]} -> "
                           f"{new_params[index][0]}): not a move")
    undefaulted = [index + 1 for index in mapping.dropped if not old_params[index][1]]
    if undefaulted:
        return Refused(f"parameter(s) {', '.join(map(str, undefaulted))} dropped had no default")
    return mapping


def move_arguments(text: str, mapping: Mapping, lines: set[int]) -> Edit:
    """Each call of mapping.name on the given lines rewritten: its argument slots moved or dropped as upstream's."""
    edit = Edit(text)
    blocked = conflicted_lines(text)
    root = parse_tree(text).root_node
    macros = macro_lines(root)
    by_line: dict[int, list[Node]] = {}
    for call in _call_nodes(root, mapping.name):
        by_line.setdefault(call.start_point[0] + 1, []).append(call)
    rewrites: list[tuple[Node, str]] = []
    for line in sorted(lines):
        calls = by_line.get(line, [])
        reason = ("inside a conflict block" if line in blocked
                  else "inside a macro's body" if any(start <= line <= end for start, end in macros)
                  else f"no call of {mapping.name} starts on the line" if not calls
                  else "the parse of the line has an error" if any(call.has_error for call in calls) else "")
        arguments = [node for call in calls if (node := call.child_by_field_name("arguments")) is not None]
        if not reason and any(len(_slots(node)) != mapping.old_count for node in arguments):
            reason = f"the call does not pass all {mapping.old_count} arguments: not one to one"
        if reason:
            edit.refused[line] = reason
            continue
        rewrites += [(node, _moved(node, mapping)) for node in arguments]
        edit.changed.append(line)
    data = text.encode("utf-8")
    for node, new in sorted(rewrites, key=lambda item: item[0].start_byte, reverse=True):
        data = data[:node.start_byte] + new.encode("utf-8") + data[node.end_byte:]
    edit.text = data.decode("utf-8")
    return edit


# --- reading calls and declarations -------------------------------------------------------------------------------

def _call_nodes(root: Node, name: str) -> list[Node]:
    found = []
    for call in nodes_of_types(root, ("call_expression",)):
        function = call.child_by_field_name("function")
        if function is None:
            continue
        if function.type in ("qualified_identifier", "field_expression"):
            function = function.child_by_field_name("name") or function.child_by_field_name("field")
        if function is not None and node_text(function) == name:
            found.append(call)
    return found


def _calls_of(text: str, name: str) -> list[UpstreamCall]:
    """Each call's arguments, token for token (whitespace and comments aside)."""
    calls = []
    for call in _call_nodes(parse_tree(text).root_node, name) if text else []:
        arguments = call.child_by_field_name("arguments")
        if arguments is not None and not call.has_error:
            calls.append(UpstreamCall(tuple(_TOKEN.sub("", slot) for slot in _slots(arguments))))
    return calls


def sources_of(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[int, ...] | None:
    """Where each new argument was among the old ones, when each is exactly one of them and the old are distinct."""
    if len(new) > len(old) or len(set(old)) != len(old) or len(set(new)) != len(new) or not new:
        return None
    try:
        return tuple(old.index(argument) for argument in new)
    except ValueError:
        return None


def _slots(arguments: Node) -> list[str]:
    """The text between the parentheses, split at the argument list's own commas (comments kept with their slot)."""
    text = node_text(arguments)
    cuts = [child.start_byte - arguments.start_byte for child in arguments.children if child.type == ","]
    inner_end = len(text.encode("utf-8")) - 1
    data = text.encode("utf-8")
    bounds = [1, *[cut + 1 for cut in cuts]]
    ends = [*cuts, inner_end]
    slots = [data[start:end].decode("utf-8") for start, end in zip(bounds, ends)]
    return [] if len(slots) == 1 and not slots[0].strip() else slots


def _moved(arguments: Node, mapping: Mapping) -> str:
    """The argument list with slot i holding old slot sources[i]'s text, in slot i's own spacing (and the last
    slot's spacing before the closing parenthesis kept)."""
    slots = _slots(arguments)
    kept = [slots[index][: len(slots[index]) - len(slots[index].lstrip())] + slots[source].strip()
            for index, source in enumerate(mapping.sources)]
    return "(" + ",".join(kept) + slots[-1][len(slots[-1].rstrip()):] + ")"


def _declarations(text: str, name: str) -> list[list[tuple[str, bool]]]:
    """Each declaration of name: (type text, has a default) of each parameter."""
    found = []
    for declarator in nodes_of_types(parse_tree(text).root_node, ("function_declarator",)) if text else []:
        own = declarator.child_by_field_name("declarator")
        if own is None or node_text(own).rpartition("::")[2] != name:
            continue
        params = declarator.child_by_field_name("parameters")
        found.append([(_param_type(param), param.type == "optional_parameter_declaration")
                      for param in (params.named_children if params is not None else [])
                      if param.type in ("parameter_declaration", "optional_parameter_declaration")])
    return found


def _param_type(param: Node) -> str:
    """A parameter's type, its own name and default left out, tokens joined by one space."""
    declarator = param.child_by_field_name("declarator")
    text = node_text(param)
    if declarator is not None:
        start = declarator.start_byte - param.start_byte
        name = node_text(declarator)
        text = text[:start] + re.sub(r"[A-Za-z_]\w*\s*$", "", name) if start >= 0 else text
    return " ".join(re.findall(r"\w+|[^\w\s]", text.split("=")[0]))


# --- the findings, by upstream change ----------------------------------------------------------------------------

@dataclass
class MovedArguments:
    """One upstream change's moved arguments: the mappings read, the sites rewritten, what was left and why."""
    label: str
    commit_id: str
    pr: str | None = None
    mappings: dict[str, Mapping] = field(default_factory=dict)  # callee name -> mapping
    sites_of: dict[str, list[str]] = field(default_factory=dict)  # callee name -> the findings' sites
    sites: list[str] = field(default_factory=list)  # path:line rewritten
    left: list[tuple[str, str]] = field(default_factory=list)
    findings: int = 0
    patch: str = ""
    committed: str | None = None
    gate: object | None = None  # a GateRun

    @property
    def ported(self) -> bool:
        return bool(self.sites) and (self.gate is None or bool(getattr(self.gate, "passed", False)))

    def message(self) -> str:
        names = sorted(self.mappings)
        tail = f" (#{self.pr})" if self.pr else f" ({self.commit_id[:9]})"
        subject = f"port: move the arguments of {names[0]}{f' and {len(names) - 1} more' if len(names) > 1 else ''}"
        body = [f"Rule: {ARGS_RULE}: upstream change {self.label} reordered or dropped (each with a default)",
                "parameters; its own changed calls show where each argument went, and the declaration",
                "agrees (one declaration, the kept parameters of the same types). Each site passing",
                "every argument had its argument nodes moved or dropped.", ""]
        for name in names:
            mapping = self.mappings[name]
            moved = ", ".join(f"{index + 1}<-{source + 1}" for index, source in enumerate(mapping.sources))
            dropped = ", ".join(str(index + 1) for index in mapping.dropped) or "none"
            body += [f"{name}: new argument <- old ({moved}); dropped: {dropped}",
                     f"  upstream: {mapping.example}"]
            body += [f"  {site}" for site in self.sites if site in self.sites_of.get(name, [])]
        if self.left:
            body += ["left for a person:", *(f"  {what}: {why}" for what, why in self.left)]
        if len(subject + tail) > 72:
            subject = f"port: move the arguments of {len(names)} function(s)"
        return subject + tail + "\n\n" + "\n".join(body) + "\n"


def is_cpp_site(site: str) -> bool:
    return site.rpartition(":")[0].endswith(CPP_CODE)


def is_python_site(site: str) -> bool:
    return site.rpartition(":")[0].endswith(PY_SUFFIXES)
