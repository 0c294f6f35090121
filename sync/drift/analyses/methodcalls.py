"""Calls that fit no overload any more (issue 33): FlagTree calls a trunk class's method, through a receiver
whose declared type is that class, with arguments that fit the method at the old tag and fit none of its
overloads at the new one. Two ways not to fit: the number of arguments (a parameter added without a default, as
TargetInfoBase::barrier gained its address space), or a literal (`false`, `1`, `"x"`, `nullptr`) where the new
overload asks for an enum that the old one did not (`barrier(loc, rewriter, false)` against `AddrSpace`): C++
converts no literal to an enum implicitly. An enum is one the new tree declares (`enum [class] Name` in a
header, or an ODS enum attribute, whose first template argument names the C++ enum it generates).
The class must still exist (a removed class is symbol-removed's); the receiver's type must be spelled in the
file (an `auto` or unknown receiver is no claim). Kind call-no-overload, error: will not build.

Free functions the same way (the 3.4.x -> 3.7 move: `nvidia_gpu::getTMABlockShape(enc, shape, true)` after every
overload gained a `TMAMode` parameter). The new overloads are every trunk header's of the namespace and name, and
those FlagTree's own files add. A call resolves to the namespace when it names it (`ns::f`, through the file's
namespace aliases: a qualified name is looked up there alone), or, unqualified, when the call stands in that
namespace or under a `using namespace` of it, no other trunk namespace declares a function of that name (an
argument's namespace could add its overloads) and the file declares none of its own.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator

from tree_sitter import Node

from sync.git import changes_with_renames
from sync.facts.cmakebuilt import unbuilt
from sync.facts.delta import fork_added_lines, fork_lines_where
from sync.model import Finding
from sync.facts.trees import FileTree, read_text
from sync.drift.context import DriftContext
from sync.facts.cpp import namespaces_around, node_text, nodes_of_types, parse_tree
from sync.facts.cppscope import declared_types, namespace_aliases, own_header_copy
from sync.facts.declindex import Decl, DeclarationIndex, cpp_declarations
from sync.facts.delta import backend_of
from sync.facts.upstreamlog import with_upstream_commits
from sync.facts.filekinds import CPP_HEADERS, CPP_SUFFIXES, TD_SUFFIXES, is_built
from sync.facts.layout import backend_root, is_third_party

HEADERS, CPP = CPP_HEADERS, CPP_SUFFIXES
_TRUNK = ("include/", "lib/", "python/src/", "bin/")


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
        found.setdefault((decl.owner, decl.name), []).append(_arity(decl, unbounded={"pack"}))
    return found


def _arity(decl: Decl, unbounded: set[str]) -> Arity:
    """A declaration's arity; any of the unbounded flags takes any number of arguments past its parameters."""
    params = decl.params or ()
    return Arity(decl.required, -1 if decl.flags & unbounded else len(params), tuple(param.type for param in params))


_NOT_A_FREE_DECLARATION = frozenset({"qualified", "special", "local", "in-definition", "friend"})


def functions(text: str) -> dict[tuple[str, str], list[Arity]]:
    """(namespace, function) -> the arities of the free functions a header declares or defines inline (an
    out-of-line definition `ns::f(...)` is no new overload: its declaration is elsewhere)."""
    found: dict[tuple[str, str], list[Arity]] = {}
    for decl in cpp_declarations(text):
        if decl.kind != "function" or decl.params is None or decl.flags & _NOT_A_FREE_DECLARATION:
            continue
        found.setdefault((decl.scope, decl.name), []).append(_arity(decl, unbounded={"pack", "variadic"}))
    return found


@dataclass(frozen=True)
class Narrowed:
    klass: str  # a method's class; a free function's namespace (member False)
    method: str
    header: str  # at the old tag
    old: tuple[Arity, ...]
    new: tuple[Arity, ...]
    enums: frozenset[str] = frozenset()  # parameter types of the new overloads that are enums where the old were not
    member: bool = True

    @property
    def qualified(self) -> str:
        return f"{self.klass}::{self.method}" if self.klass else self.method

    def breaks(self, count: int, literals: frozenset[int]) -> bool:
        """Whether a call fit the old declaration and fits no new overload."""
        return any(a.fits(count) for a in self.old) and not any(a.takes(count, literals, self.enums) for a in self.new)


def narrowed_methods(context: DriftContext) -> dict[str, list[Narrowed]]:
    """Method or function name -> the trunk class methods and free functions whose overloads accept argument
    counts at the old tag that none accepts at the new one (or take an enum where a literal fitted)."""
    out: dict[str, list[Narrowed]] = {}
    # each method whose class survives: whether some argument count stopped fitting, the parameter types it gained
    retyped: list[tuple[Narrowed, bool, set[str]]] = []

    def compared(narrowed: Narrowed) -> tuple[bool, set[str]]:
        """(whether some argument count stopped fitting, the parameter types the new overloads gained)."""
        arities, after_arities = narrowed.old, narrowed.new
        counts = {count for arity in arities for count in range(arity.required, (arity.total if arity.total >= 0
                                                                                 else arity.required + 8) + 1)}
        fewer_counts = any(not any(a.fits(count) for a in after_arities) for count in counts)
        old_types = {kind for arity in arities for kind in arity.types}
        return fewer_counts, {kind for arity in after_arities for kind in arity.types} - old_types

    def compare(narrowed: Narrowed) -> None:
        fewer_counts, new_types = compared(narrowed)
        if fewer_counts or new_types:
            retyped.append((narrowed, fewer_counts, new_types))

    flagtree_files: dict[str, str] | None = None  # FlagTree's changed trunk C++ (path -> text): read when first asked

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
            compare(Narrowed(klass, method, change.old_path, tuple(arities), tuple(after_arities)))
        new_functions = functions(after) if "(" in after else {}
        for key, arities in functions(before).items():
            if key not in new_functions:
                continue  # gone from the header: removed or moved, symbol-removed's
            here = Narrowed(key[0], key[1], change.old_path, tuple(arities), tuple(new_functions[key]), member=False)
            if any(compared(here)):  # more overloads take more calls: none elsewhere can narrow what this does not
                if flagtree_files is None:
                    flagtree_files = _flagtree_trunk_cpp(context)
                compare(replace(here, new=here.new + _overloads_elsewhere(context, key, change.new_path,
                                                                          flagtree_files)))
    enums = _enums(context, set().union(*(types for _, _, types in retyped))) if retyped else frozenset()
    for narrowed, fewer_counts, types in retyped:
        if fewer_counts or types & enums:
            out.setdefault(narrowed.method, []).append(replace(narrowed, enums=frozenset(types & enums)))
    return out


def _flagtree_trunk_cpp(context: DriftContext) -> dict[str, str]:
    """The trunk C++ files FlagTree changed, with their text: only those can add an overload (a backend's own
    declarations: see _declares)."""
    return {path: read_text(context.fork, path) or "" for path in fork_added_lines(context.upstream_old, context.fork)
            if path.startswith(_TRUNK) and path.endswith(CPP)}


def _overloads_elsewhere(context: DriftContext, key: tuple[str, str], header: str,
                         flagtree_files: dict[str, str]) -> tuple[Arity, ...]:
    """The overloads of a namespace's function that other trunk headers declare at the new tag, and those
    FlagTree's trunk files declare that the old tag's same file did not: a call may fit any of them."""
    name = key[1]
    index = DeclarationIndex.of(context.upstream_new)
    found = [arity for path, _ in index.files(_TRUNK, HEADERS, spelling=(name,)) if path != header
             for arity in functions(index.text(path)).get(key, [])]
    for path, text in flagtree_files.items():
        if name in text:
            before = {(a.required, a.total, a.types) for a in
                      functions(read_text(context.upstream_old, path) or "").get(key, [])}
            found += [a for a in functions(text).get(key, []) if (a.required, a.total, a.types) not in before]
    return tuple(found)


def _enums(context: DriftContext, names: set[str]) -> frozenset[str]:
    """Which of the type names the new tree's trunk declares as an enum (C++ headers, ODS enum attributes)."""
    return DeclarationIndex.of(context.upstream_new).enums(names, under=("include/", "lib/"),
                                                           suffixes=HEADERS + TD_SUFFIXES)


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


def _function_calls(root: Node, names: set[str]) -> Iterator[tuple[str, str | None, Node, int, frozenset[int], int]]:
    """(function, qualifier as written or None, call node, argument count, positions of literal arguments, line) of
    every call `f(...)`, `ns::f(...)`, `f<T>(...)` of the names."""
    for node in nodes_of_types(root, ("call_expression",)):
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None or arguments is None:
            continue
        scopes: list[str] = []  # `a::b::f` nests: (a, (b, f))
        while function is not None and function.type == "qualified_identifier":
            scope = function.child_by_field_name("scope")
            scopes.append(node_text(scope) if scope is not None else "")  # none: `::f`, the global namespace
            function = function.child_by_field_name("name")
        if function is None:
            continue
        qualifier = "::".join(scopes) if scopes else None
        if function.type == "template_function":
            function = function.child_by_field_name("name") or function
        if function.type != "identifier" or node_text(function) not in names:
            continue
        given = [child for child in arguments.named_children if child.type != "comment"]
        literals = frozenset(position for position, child in enumerate(given) if child.type in _LITERALS)
        yield node_text(function), qualifier, node, len(given), literals, node.start_point[0] + 1


_USING_NAMESPACE = re.compile(r"\busing\s+namespace\s+([\w:]+)\s*;")


def _names_namespace(qualifier: str, namespace: str, aliases: dict[str, str]) -> bool:
    """Whether `qualifier::f` names a function of namespace (the qualifier's first part through the aliases)."""
    written = re.sub(r"<.*>|\s+", "", qualifier).strip(":")
    first, _, rest = written.partition("::")
    resolved = aliases.get(first, first) + ("::" + rest if rest else "")
    return namespace == resolved or namespace.endswith("::" + resolved)


def _enclosing_namespaces(node: Node) -> list[str]:
    """Every namespace an unqualified name at node is looked up in (innermost first): each enclosing one."""
    parts = namespaces_around(node.parent)
    return ["::".join(parts[:length]) for length in range(len(parts), -1, -1)]


@dataclass
class _FileScope:
    """What resolves an unqualified call in one file: its namespace aliases, using-directives and own names."""
    aliases: dict[str, str]
    using: list[str]
    declared: set[str]  # the names of what the file declares itself

    @classmethod
    def of(cls, text: str) -> "_FileScope":
        return cls(namespace_aliases(text), _USING_NAMESPACE.findall(text),
                   {decl.name for decl in cpp_declarations(text)})


def _reaches(qualifier: str | None, node: Node, name: str, namespace: str, scope: _FileScope,
             declaring: Callable[[str], set[str]]) -> bool:
    """Whether a call of a namespace's function, qualified or not, resolves to that namespace. declaring(name):
    the trunk namespaces that declare a function of the name at the new tag."""
    if qualifier is not None:
        return _names_namespace(qualifier, namespace, scope.aliases)
    if namespace not in _enclosing_namespaces(node) and not any(
            _names_namespace(used, namespace, scope.aliases) for used in scope.using):
        return False
    return declaring(name) == {namespace} and name not in scope.declared


def _declares(tree: FileTree, directory: str, name: str) -> bool:
    """Whether a file under directory (a backend's own tree) declares a function or method of the name."""
    return any(decl.name == name and decl.kind in ("function", "method")
               for _, decls in DeclarationIndex.of(tree).files((directory,), CPP, spelling=(name,)) for decl in decls)


def call_no_overload_findings(context: DriftContext) -> list[Finding]:
    narrowed = narrowed_methods(context)
    if not narrowed:
        return []
    members = {name: [c for c in changes if c.member] for name, changes in narrowed.items()}
    free = {name: [c for c in changes if not c.member] for name, changes in narrowed.items()}
    members, free = {n: c for n, c in members.items() if c}, {n: c for n, c in free.items() if c}
    lines_by_path = fork_lines_where(context.upstream_old, context.fork, lambda path: path.endswith(CPP) and (
        path.startswith(_TRUNK) or is_third_party(path)) and is_built(path)
        and not unbuilt(context.fork, path))
    spelled = re.compile(r"(?:\.|->)\s*(" + "|".join(re.escape(name) for name in members) + r")\s*\(") \
        if members else None
    called = re.compile(r"\b(" + "|".join(re.escape(name) for name in free) + r")\s*[(<]") if free else None
    groups: dict[tuple[str | None, str, str], list[str]] = {}
    detail: dict[tuple[str | None, str, str], tuple[Narrowed, int, frozenset[int]]] = {}
    namespaces: dict[str, set[str]] = {}  # function name -> the trunk namespaces declaring one at the new tag

    def declaring(name: str) -> set[str]:
        if name not in namespaces:
            namespaces[name] = {decl.scope for _, decl in DeclarationIndex.of(context.upstream_new).find(
                name, kinds=("function",), under=_TRUNK, suffixes=HEADERS)}
        return namespaces[name]

    def site(path: str, line: int, change: Narrowed, count: int, literals: frozenset[int]) -> None:
        own_dir = backend_root(path)
        if own_dir is not None and own_header_copy(context.fork, own_dir, change.header):
            return  # the backend compiles against its own copy of the header, first on its include path
        if not change.breaks(count, literals):
            return
        if not change.member and own_dir is not None and _declares(context.fork, own_dir, change.method):
            return  # the backend declares a function of that name itself: one of its overloads may take the call
        key = (backend_of(context.owners.owners, path), change.header, change.qualified)
        groups.setdefault(key, []).append(f"{path}:{line}")
        detail.setdefault(key, (change, count, literals))

    for path, lines in sorted(lines_by_path.items()):
        text = read_text(context.fork, path) or ""
        # cheap: a call spells its name (`.m(`, `->m(`, `f(`): substring tests first, a pattern where one holds
        by_member = spelled is not None and any(name in text for name in members) and spelled.search(text) is not None
        by_name = called is not None and any(name in text for name in free) and called.search(text) is not None
        if not by_member and not by_name:
            continue
        root = parse_tree(text).root_node
        types = None
        for method, receiver, count, literals, line in _calls(root, set(members)) if by_member else ():
            if line not in lines or receiver.type != "identifier":
                continue
            if types is None:
                types = declared_types(root)
            receiver_types = types.get(node_text(receiver), set()) - {"auto"}
            for change in members[method]:
                if change.klass in receiver_types:
                    site(path, line, change, count, literals)
        scope = _FileScope.of(text) if by_name else None
        for function, qualifier, node, count, literals, line in _function_calls(root, set(free)) if by_name else ():
            if line not in lines:
                continue
            for change in free[function]:
                if scope is not None and _reaches(qualifier, node, function, change.klass, scope, declaring):
                    site(path, line, change, count, literals)
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
        owner = {"class": change.klass} if change.member else {"namespace": change.klass}
        findings.append(Finding(
            "call-no-overload", path,
            f"{qualified}: FlagTree calls it {why} (will not build as is); {len(sites)} site(s): {shown}",
            "pass what the new signature asks for at every site", int(first_line), backend, related_path=header,
            details={"declaration": change.method, "sites": sites, **owner,
                     "symbols": [f"{qualified}:signature:{header}"]}))
    if findings and context.range is not None:
        findings = with_upstream_commits(context.repo, context.range.old.oid, context.range.onto.oid, findings)
    return findings
