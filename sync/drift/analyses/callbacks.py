"""A callable parameter upstream retyped, still passed FlagTree's old callable (issue 45, class 4: types, not
only counts). The 3.6.x -> 3.7 move: ModuleAxisInfoAnalysis's constructor took an `axisinfo::CallbackType`
(`std::function<void(AxisInfoVisitorList &)>`) and now takes an `AxisInfoAnalysis::LoadCallback`
(`decltype(&AxisInfoAnalysis::loadDefaultAnalysis)`, a function of a `DataFlowSolver &`); tle's
ModuleAxisInfoAnalysis still hands its base constructor `AxisInfoExt::addVisitors`, a function of an
AxisInfoVisitorList: it no longer converts, the build stops.

A parameter type is read as a callable when it spells `std::function<R(A...)>`, `function_ref<R(A...)>`,
`unique_function<R(A...)>`, `decltype(&X::f)` (f's parameters), or names an alias of one of these declared in the
same header (followed a few steps).

Upstream side: a function, method or constructor of a C++ header upstream changed, declared once at each tag,
whose parameter at one position is a callable at both tags taking other parameter types.

FlagTree side, on FlagTree's lines of a file that includes that header as its build finds it (a backend's own copy
under its include trees is not upstream's header; a backend that builds its own copy of trunk is not asked): a
call, or a base or member initializer, spelled with the declaration's name (qualified only by a tail of its scope),
that passes at that position a lambda or a function FlagTree declares (in the file or a header it includes) whose
parameter types are the old callable's and not the new one's. Types compare by their last name component, without
const, & or *: a value the new callable takes in the same spelling still fits, and no conversion is guessed.
Kind call-no-overload, an error: no constructor or function of the new tag takes the argument.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from sync.drift.context import DriftContext
from sync.facts.cpp import node_text, parse_tree
from sync.facts.cppcalls import include_paths, include_target, reached_include
from sync.facts.declindex import HEADER_SUFFIXES, Decl, declarations_of
from sync.facts.delta import CPP, backend_of, fork_added_lines
from sync.facts.layout import third_party_owner
from sync.facts.trees import read_text
from sync.facts.upstreamlog import with_upstream_commits
from sync.git import GitTree, changes_with_renames
from sync.model import Finding

_WRAPPER = re.compile(r"\A(?:const\s+)?(?:[\w:]*::)?(?:function|function_ref|unique_function)\s*<(?P<signature>.*)>"
                      r"\s*[&*]?\s*\Z", re.S)
_DECLTYPE = re.compile(r"\Adecltype\s*\(\s*&\s*(?P<name>[\w:]+)\s*\)\Z")
_ALIAS_STEPS = 3
_CALL_SHAPES = ("call_expression", "field_initializer")


@dataclass(frozen=True)
class RetypedCallable:
    """A callable parameter of one declaration, which upstream changed to take other parameters."""

    qualified: str  # the declaration: `mlir::triton::ModuleAxisInfoAnalysis::ModuleAxisInfoAnalysis`
    name: str
    scope: str
    constructor: bool
    position: int
    parameter: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    header: str  # at the new tag


def plain_type(text: str) -> str:
    """A type by its last name component, without const, volatile, references and pointers."""
    text = re.sub(r"\b(?:const|volatile|struct|class|typename)\b|[&*]", " ", text)
    text = re.sub(r"<.*>", "", text).strip()
    return text.split("::")[-1].strip() if text else ""


def _split_top(text: str) -> list[str]:
    """Split at commas outside <>, () and {}."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "<({[" and 1 or 0
        depth -= char in ">)}]" and 1 or 0
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current] if current.strip() else parts


def callable_parameters(type_text: str, decls: tuple[Decl, ...], steps: int = _ALIAS_STEPS) -> tuple[str, ...] | None:
    """The parameter types of the callable a parameter type spells, or None when it spells no callable."""
    text = type_text.strip()
    wrapped = _WRAPPER.match(text)
    if wrapped:
        signature = wrapped["signature"].strip()
        opening = signature.find("(")
        if opening < 0 or not signature.endswith(")"):
            return None
        inner = signature[opening + 1:-1].strip()
        return tuple(plain_type(part) for part in _split_top(inner) if part.strip() not in ("", "void"))
    taken = _DECLTYPE.match(text)
    if taken:
        *qualifier, name = taken["name"].split("::")
        found = [decl for decl in decls if decl.kind in ("function", "method") and decl.name == name
                 and decl.params is not None and decl.scope.endswith("::".join(qualifier))]
        return tuple(plain_type(param.type) for param in found[0].params or ()) if len(found) == 1 else None
    name = plain_type(text)
    aliases = [decl for decl in decls if decl.kind == "alias" and decl.name == name]
    if len(aliases) == 1 and steps > 0:
        return callable_parameters(aliases[0].target, decls, steps - 1)
    return None


def retyped_callables(context: DriftContext) -> list[RetypedCallable]:
    """Callable parameters of the headers upstream changed whose parameter types changed."""
    found: list[RetypedCallable] = []
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if change.status not in ("modified", "renamed") or change.new_path is None \
                or not change.new_path.endswith(HEADER_SUFFIXES):
            continue
        before_text = read_text(context.upstream_old, change.old_path) or ""
        after_text = read_text(context.upstream_new, change.new_path) or ""
        if not any(word in before_text for word in ("function", "decltype")):
            continue  # cheap: no callable parameter to retype
        before, after = declarations_of(change.old_path, before_text), declarations_of(change.new_path, after_text)
        old_by, new_by = _callables_by_name(before), _callables_by_name(after)
        for key in old_by.keys() & new_by.keys():
            old, new = old_by[key], new_by[key]
            if old is None or new is None or len(old.params or ()) != len(new.params or ()):
                continue
            for position, (was, now) in enumerate(zip(old.params or (), new.params or ())):
                old_call, new_call = callable_parameters(was.type, before), callable_parameters(now.type, after)
                if old_call is not None and new_call is not None and old_call != new_call:
                    found.append(RetypedCallable(new.qualified, new.name, new.scope, new.name == new.owner, position,
                                                 now.name, old_call, new_call, change.new_path))
    return found


def _callables_by_name(decls: tuple[Decl, ...]) -> dict[tuple[str, str], Decl | None]:
    """(scope, name) -> its one function or method declaration (None where overloaded: no position is one)."""
    found: dict[tuple[str, str], Decl | None] = {}
    for decl in decls:
        if decl.kind in ("function", "method") and decl.params is not None and "qualified" not in decl.flags:
            key = (decl.scope, decl.name)
            found[key] = None if key in found else decl
    return found


def _spells(written: str, change: RetypedCallable) -> bool:
    """Whether a callee as written names the declaration: its name, qualified at most by a tail of its scope
    (a constructor is spelled by its class, the scope's last part)."""
    parts = [part.strip() for part in re.sub(r"<[^<>]*>", "", written).split("::")]
    if parts[-1] != change.name:
        return False
    scope = change.scope.split("::")
    if change.constructor:
        scope = scope[:-1]
    qualifier = [part for part in parts[:-1] if part]
    return not qualifier or scope[-len(qualifier):] == qualifier


def _callee_and_arguments(node: Node) -> tuple[str, list[Node]] | None:
    arguments = node.child_by_field_name("arguments") if node.type == "call_expression" \
        else next((child for child in node.named_children if child.type == "argument_list"), None)
    function = node.child_by_field_name("function") if node.type == "call_expression" \
        else next((child for child in node.named_children if child.type != "argument_list"), None)
    if arguments is None or function is None or function.type not in (
            "identifier", "qualified_identifier", "field_identifier", "template_function"):
        return None  # a member call through a value: its receiver's type is not read here
    return node_text(function), [child for child in arguments.named_children if child.type != "comment"]


def _walk(root: Node) -> list[Node]:
    found, pending = [], [root]
    while pending:
        node = pending.pop()
        if node.type in _CALL_SHAPES:
            found.append(node)
        pending.extend(node.children)
    return found


def _declared_nearby(fork: GitTree, path: str, text: str) -> tuple[Decl, ...]:
    """FlagTree's declarations in the file and in the headers it includes (two levels)."""
    decls = list(declarations_of(path, text))
    seen, pending = {path}, [(path, text, 2)]
    while pending:
        current, current_text, depth = pending.pop()
        for include in include_paths(current_text):
            reached = include_target(fork, current, include)
            if reached is None or reached in seen:
                continue
            seen.add(reached)
            reached_text = read_text(fork, reached) or ""
            decls += declarations_of(reached, reached_text)
            if depth > 1:
                pending.append((reached, reached_text, depth - 1))
    return tuple(decls)


def _argument_parameters(argument: Node, nearby: tuple[Decl, ...]) -> tuple[str, ...] | None:
    """The parameter types of a lambda, or of the one function FlagTree declares that the argument names."""
    if argument.type == "lambda_expression":
        declarator = argument.child_by_field_name("declarator")
        parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
        if parameters is None:
            return ()
        return tuple(plain_type(node_text(param.child_by_field_name("type") or param))
                     for param in parameters.named_children if param.type == "parameter_declaration")
    if argument.type == "pointer_expression" and argument.named_children:
        argument = argument.named_children[-1]
    if argument.type not in ("identifier", "qualified_identifier"):
        return None
    *qualifier, name = node_text(argument).split("::")
    found = [decl for decl in nearby if decl.kind in ("function", "method") and decl.name == name
             and decl.params is not None and decl.scope.endswith("::".join(qualifier))]
    signatures = {tuple(plain_type(param.type) for param in decl.params or ()) for decl in found}
    return next(iter(signatures)) if len(signatures) == 1 else None


def callback_findings(context: DriftContext) -> list[Finding]:
    changes = retyped_callables(context)
    if not changes:
        return []
    names = {change.name for change in changes}
    own_trunk = context.own_trunk_backends  # they compile against their own copies, never upstream's headers
    findings: list[Finding] = []
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if not path.endswith(CPP) or third_party_owner(path) in own_trunk:
            continue
        text = read_text(context.fork, path) or ""
        if not any(name in text for name in names):
            continue
        # the headers it includes as FlagTree's build finds them: a backend's own copy of a trunk header is
        # not the header upstream changed
        reached = {reached_include(context.fork, path, include) for include in include_paths(text)}
        nearby: tuple[Decl, ...] | None = None
        for node in _walk(parse_tree(text).root_node):
            line = node.start_point[0] + 1
            shaped = _callee_and_arguments(node) if line in lines else None
            if shaped is None:
                continue
            written, arguments = shaped
            for change in changes:
                if change.position >= len(arguments) or not _spells(written, change) \
                        or not (path == change.header or change.header in reached):
                    continue
                nearby = nearby if nearby is not None else _declared_nearby(context.fork, path, text)
                passed = _argument_parameters(arguments[change.position], nearby)
                if passed is None or passed != change.before or passed == change.after:
                    continue
                argument = node_text(arguments[change.position])
                findings.append(Finding(
                    "call-no-overload", path,
                    f"FlagTree passes {argument} (a callable of ({', '.join(passed)})) as {change.parameter} of "
                    f"{change.qualified}; upstream changed that parameter to a callable of "
                    f"({', '.join(change.after)}) ({change.header}): the argument no longer converts (will not "
                    f"build as is)",
                    f"pass a callable of ({', '.join(change.after)}), as upstream's own callers do now",
                    line, backend_of(context.owners.owners, path), related_path=change.header,
                    details={"declaration": change.name, "callee": change.qualified, "parameter": change.parameter,
                             "sites": [f"{path}:{line}"]}))
    findings.sort(key=lambda finding: (finding.path, finding.line or 0))
    if findings and context.range is not None:
        findings = with_upstream_commits(context.repo, context.range.old.oid, context.range.onto.oid, findings)
    return findings
