"""Calls that fit no overload any more (issue 33): FlagTree calls a trunk class's method, through a receiver
whose declared type is that class, with arguments that fit the method at the old tag and fit none of its
overloads at the new one. Two ways not to fit: the number of arguments (a parameter added without a default, as
TargetInfoBase::barrier gained its address space), or a literal (`false`, `1`, `"x"`, `nullptr`) where the new
overload asks for an enum that the old one did not (`barrier(loc, rewriter, false)` against `AddrSpace`): C++
converts no literal to an enum implicitly. An enum is one the new tree declares (`enum [class] Name` in a
header, or an ODS enum attribute, whose first template argument names the C++ enum it generates).
The class must still exist (a removed class is symbol-removed's); the receiver's type must be spelled in the
file (an `auto` or unknown receiver is no claim). Kind call-no-overload, error: will not build.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Iterator

from tree_sitter import Node

from sync.git import changes_with_renames
from sync.facts.cmakebuilt import unbuilt
from sync.facts.delta import fork_lines_where
from sync.model import Finding
from sync.facts.trees import read_text
from sync.drift.context import DriftContext
from sync.facts.cpp import node_text, nodes_of_types, parse_tree
from sync.facts.cppscope import declared_types, own_header_copy
from sync.facts.declindex import DeclarationIndex, cpp_declarations
from sync.facts.delta import backend_of
from sync.facts.upstreamlog import with_upstream_commits
from sync.facts.layout import backend_root, is_third_party

HEADERS = (".h", ".hpp", ".hh")
CPP = (".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx")
_TRUNK = ("include/", "lib/", "python/src/", "bin/")
_NOT_BUILT = ("/test/", "/tests/", "/unittest/", "/unittests/")


_LITERALS = frozenset({"true", "false", "number_literal", "string_literal", "char_literal", "nullptr"})


@dataclass(frozen=True)
class Arity:
    required: int
    total: int  # -1: variadic
    types: tuple[str, ...] = field(default=(), compare=False)  # each parameter's type, last name only (`AddrSpace`)

    def fits(self, count: int) -> bool:
        return self.required <= count and (self.total < 0 or count <= self.total)

    def takes(self, count: int, literals: frozenset[int], enums: frozenset[str]) -> bool:
        """Whether a call with count arguments, literals at those positions, fits: no literal on an enum."""
        return self.fits(count) and not any(position < len(self.types) and self.types[position] in enums
                                            for position in literals)

    def text(self) -> str:
        return str(self.required) if self.required == self.total else f"{self.required}..{self.total}"


def methods(text: str) -> dict[tuple[str, str], list[Arity]]:
    """(class, method) -> the arities of its declarations in a header, for methods declared in a class body
    (not defined there), from the file's declaration index (sync/facts/declindex.py)."""
    found: dict[tuple[str, str], list[Arity]] = {}
    for decl in cpp_declarations(text):
        if decl.kind != "method" or decl.owner is None or decl.params is None \
                or decl.flags & {"definition", "qualified", "special"}:
            continue
        total = -1 if "pack" in decl.flags else len(decl.params)
        found.setdefault((decl.owner, decl.name), []).append(
            Arity(decl.required, total, tuple(param.type for param in decl.params)))
    return found


@dataclass(frozen=True)
class Narrowed:
    klass: str
    method: str
    header: str  # at the old tag
    old: tuple[Arity, ...]
    new: tuple[Arity, ...]
    enums: frozenset[str] = frozenset()  # parameter types of the new overloads that are enums where the old were not

    def breaks(self, count: int, literals: frozenset[int]) -> bool:
        """Whether a call fit the old declaration and fits no new overload."""
        return any(a.fits(count) for a in self.old) and not any(a.takes(count, literals, self.enums) for a in self.new)


def narrowed_methods(context: DriftContext) -> dict[str, list[Narrowed]]:
    """Method name -> the trunk class methods whose overloads accept argument counts at the old tag that none
    accepts at the new one."""
    out: dict[str, list[Narrowed]] = {}
    # each method whose class survives: whether some argument count stopped fitting, the parameter types it gained
    retyped: list[tuple[Narrowed, bool, set[str]]] = []
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if change.status != "modified" or not change.old_path.endswith(HEADERS) \
                or not change.old_path.startswith(_TRUNK) or change.new_path is None:
            continue
        before = read_text(context.upstream_old, change.old_path) or ""
        after = read_text(context.upstream_new, change.new_path) or ""
        old_methods, new_methods = methods(before), methods(after)
        new_classes = {klass for klass, _ in new_methods}
        for key, arities in old_methods.items():
            klass, method = key
            after_arities = new_methods.get(key)
            if klass not in new_classes or not after_arities:
                continue  # the class or method is gone: symbol-removed says so
            counts = {count for arity in arities for count in range(arity.required, (arity.total if arity.total >= 0
                                                                                     else arity.required + 8) + 1)}
            narrowed = Narrowed(klass, method, change.old_path, tuple(arities), tuple(after_arities))
            fewer_counts = any(not any(a.fits(count) for a in after_arities) for count in counts)
            old_types = {kind for arity in arities for kind in arity.types}
            new_types = {kind for arity in after_arities for kind in arity.types} - old_types
            if fewer_counts or new_types:
                retyped.append((narrowed, fewer_counts, new_types))
    enums = _enums(context, set().union(*(types for _, _, types in retyped))) if retyped else frozenset()
    for narrowed, fewer_counts, types in retyped:
        if fewer_counts or types & enums:
            out.setdefault(narrowed.method, []).append(replace(narrowed, enums=frozenset(types & enums)))
    return out


def _enums(context: DriftContext, names: set[str]) -> frozenset[str]:
    """Which of the type names the new tree's trunk declares as an enum (C++ headers, ODS enum attributes)."""
    return DeclarationIndex.of(context.upstream_new).enums(names, under=("include/", "lib/"), suffixes=HEADERS + (".td",))


def _calls(root: Node, names: set[str]) -> Iterator[tuple[str, Node, int, frozenset[int], int]]:
    """(method, receiver node, argument count, positions of literal arguments, line) of every `x.m(...)` /
    `x->m(...)` call of the names."""
    for node in nodes_of_types(root, ("call_expression",)):
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None or arguments is None or function.type != "field_expression":
            continue
        field = function.child_by_field_name("field")
        receiver = function.child_by_field_name("argument")
        if field is None or receiver is None or node_text(field) not in names:
            continue
        given = [child for child in arguments.named_children if child.type != "comment"]
        literals = frozenset(position for position, child in enumerate(given) if child.type in _LITERALS)
        yield node_text(field), receiver, len(given), literals, node.start_point[0] + 1


def call_no_overload_findings(context: DriftContext) -> list[Finding]:
    narrowed = narrowed_methods(context)
    if not narrowed:
        return []
    lines_by_path = fork_lines_where(context.upstream_old, context.fork, lambda path: path.endswith(CPP) and (
        path.startswith(_TRUNK) or is_third_party(path)) and not any(p in "/" + path for p in _NOT_BUILT)
        and not unbuilt(context.fork, path))
    spelled = re.compile(r"(?:\.|->)\s*(" + "|".join(re.escape(name) for name in narrowed) + r")\s*\(")
    groups: dict[tuple[str | None, str, str], list[str]] = {}
    detail: dict[tuple[str | None, str, str], tuple[Narrowed, int, frozenset[int]]] = {}
    for path, lines in sorted(lines_by_path.items()):
        text = read_text(context.fork, path) or ""
        if not spelled.search(text):
            continue  # cheap: a member call of a narrowed method is spelled `.m(` or `->m(`
        root = parse_tree(text).root_node
        types = None
        for method, receiver, count, literals, line in _calls(root, set(narrowed)):
            if line not in lines or receiver.type != "identifier":
                continue
            if types is None:
                types = declared_types(root)
            receiver_types = types.get(node_text(receiver), set()) - {"auto"}
            for change in narrowed[method]:
                own_dir = backend_root(path)
                if own_dir is not None and own_header_copy(context.fork, own_dir, change.header):
                    continue  # the backend compiles against its own copy of the header, first on its include path
                if change.klass in receiver_types and change.breaks(count, literals):
                    key = (backend_of(context.owners.owners, path), change.header, f"{change.klass}::{method}")
                    groups.setdefault(key, []).append(f"{path}:{line}")
                    detail.setdefault(key, (change, count, literals))
    findings = []
    for (backend, header, qualified), sites in groups.items():
        change, count, literals = detail[(backend, header, qualified)]
        path, _, first_line = sites[0].rpartition(":")
        shown = ", ".join(sites[:5]) + (f" and {len(sites) - 5} more" if len(sites) > 5 else "")
        why = (f"with {count} argument(s), which fit its declaration at the old tag "
               f"({', '.join(a.text() for a in change.old)} parameters) and none at the new one "
               f"({', '.join(a.text() for a in change.new)}; {header})"
               if not any(a.fits(count) for a in change.new) else
               f"with a literal where the new declaration asks for {' or '.join(sorted(change.enums))}, an enum no "
               f"literal converts to ({header})")
        findings.append(Finding(
            "call-no-overload", path,
            f"{qualified}: FlagTree calls it {why} (will not build as is); {len(sites)} site(s): {shown}",
            "pass what the new signature asks for at every site", int(first_line), backend, related_path=header,
            details={"declaration": change.method, "sites": sites, "class": change.klass,
                     "symbols": [f"{qualified}:signature:{header}"]}))
    if findings and context.range is not None:
        findings = with_upstream_commits(context.repo, context.range.old.oid, context.range.onto.oid, findings)
    return findings
