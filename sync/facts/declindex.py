"""The declarations each file of a tree makes, from one parse per blob (issue 33), and a per-tree view over them.

Per blob (`declarations_of(path, text)`): C++ headers and sources (tree-sitter), TableGen ODS records (what
the .td generates), Python modules (`ast`). A `Decl` is one declared name: its kind, the scope it is declared
in (namespaces and classes, `::`-joined for C++; classes `.`-joined for Python), its line, and what its kind
carries (parameters, enum members, an alias's target, flags such as virtual, pure, static, scoped).

Kinds:
- C++: `function`, `method` (declared in a class body: `owner` is the class), `class`, `struct`, `union`,
  `enum` (members: its enumerators; flag `scoped` for `enum class`), `enumerator` (owner: its enum), `field`,
  `alias` (`using X = T;`, `typedef T X;` with flag `typedef`), `namespace-alias`, `macro` (`#define`; target: its
  parameters and body, blanks folded; flag `function` for a function-like macro), and `pybind` (a Python name a
  pybind11 source registers: the string literal first argument of `.def*(...)` or of an upper-case macro; target:
  the callee, `def`, `def_static`, ...; owner: the Python name of the `py::class_` its chain of calls registers on;
  params: a bound lambda's parameters, flag `keywords` when `py::arg` names them).
  Flags: `definition` (a function with a body, a class or enum with one), `local` (inside a function body),
  `qualified` (spelled `A::f`: an out-of-line definition), `virtual`, `pure`, `static`, `variadic`, `const`,
  `default`, `delete`, `friend`, `pack` (a parameter pack), `special` (operator, destructor, explicit template
  arguments), `internal` (a function in an anonymous namespace: no other compile unit can name it).
- ODS (.td): `op`, `attr`, `type` (name: the C++ class the record generates; target: the record; members: the
  accessors of its arguments, results and parameters), `builder` (owner: the class; params: the builder's
  parameters, has_default for trailing defaults), `enum-attr` / `enum-case` (name: the C++ enum or case a
  `...EnumAttr...<"Name"` record generates; target: the record).
- Python: `def`, `class`, `assign` (module and class level, augmented assignments too; params for a def),
  `import` (`from x import y [as z]`, flag `from`, target `x.y` with x's leading dots; and `import x`: name is
  the bound name, target what it re-exports); a class's target is its bases and a def's its decorators, as
  spelled; statements under if / try / with / for / while count where they stand (not those under
  `if TYPE_CHECKING:`, which never runs); every one flagged `python` (its scope is `.`-joined).
- CMake (CMakeLists.txt, *.cmake): `cmake-target` for each `add_*library(NAME ...)` (target: the command;
  members: its source words as written, relative to the file's directory) and `cmake-depends` for each word of
  its DEPENDS, LINK_LIBS, PUBLIC, PRIVATE and INTERFACE sections (owner: the target; line: the target's). Commands
  and their arguments from facts/cmake.py (tree-sitter-cmake).

Facts are cached by blob id in the fact cache (kinds `decl-cpp`, `decl-td`, `decl-py`, `decl-cmake`, each versioned) and in
memory for the run, so a second run parses nothing. `DeclarationIndex.of(tree)` aggregates them lazily: a query
reads only the files under the prefixes it names, and, when the name must be spelled in its declaring file,
only those whose text spells it.

To add a declaration kind: extract it in `_cpp_declarations`, `_td_declarations` or `_py_declarations`, bump
that language's entry in `VERSIONS`, list it above, and add a fixture to tests/test_declindex.py.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Iterable, Iterator, Sequence

from tree_sitter import Node, QueryCursor

from sync.support.cache import content_id, memoized
from sync.facts.cmake import commands as cmake_commands
from sync.facts.cpp import node_text, parse_tree, query
# the vocabulary (facts/filekinds.py), also imported from here
from sync.facts.filekinds import (CMAKE_SOURCES, CMAKE_SUFFIXES, CPP_SUFFIXES, HEADER_SUFFIXES,  # noqa: F401
                                  PY_SUFFIXES, TD_SUFFIXES, language_of)
from sync.facts.parsing import Unparseable, guarded, cpython_tree
from sync.facts.pyblobs import Extractor, known_fact
from sync.facts.tdsigs import records
from sync.git.readlog import TreeMemo
from sync.facts.trees import FileTree, read_text

VERSIONS = {"cpp": 4, "td": 3, "py": 5, "cmake": 2}
PARSES: Counter[str] = Counter()  # parses done by this process, per language (tests: a cached run parses nothing)
_MEMO_LIMIT = 20_000  # blobs; content-addressed, so only memory is at stake


@dataclass(frozen=True)
class Param:
    name: str  # as declared ('' when unnamed)
    type: str = ""  # C++: the type's last name (`AddrSpace` for `triton::AddrSpace`), template arguments dropped
    has_default: bool = False
    kind: str = ""  # Python: positional | vararg | keyword | varkw (positional-only and keyword-only as such)


@dataclass(frozen=True)
class Decl:
    kind: str
    name: str  # the last component, as declared
    scope: str  # where: `mlir::triton::TargetInfoBase` (C++), `Builder` (a Python class), '' at the top
    line: int
    owner: str | None = None  # the class whose body declares it (C++, Python), an enumerator's enum, a builder's op
    params: tuple[Param, ...] | None = None  # functions, methods, builders
    flags: frozenset[str] = frozenset()
    members: tuple[str, ...] = ()  # an enum's enumerators; an ODS record's accessors
    target: str = ""  # an alias's type, an import's `module.name`, an ODS record's def name; Python: a class's
    # bases, a def's decorators (what each calls, as spelled: `core.builtin, abstractmethod`)

    @property
    def qualified(self) -> str:
        separator = "." if "python" in self.flags else "::"
        return f"{self.scope}{separator}{self.name}" if self.scope else self.name

    @property
    def required(self) -> int:
        return sum(not param.has_default for param in self.params or ())

    def encode(self) -> list[Any]:
        params = None if self.params is None else [[p.name, p.type, p.has_default, p.kind] for p in self.params]
        return [self.kind, self.name, self.scope, self.line, self.owner, params,
                sorted(self.flags) if len(self.flags) > 1 else list(self.flags),
                list(self.members), self.target]

    @classmethod
    def decode(cls, stored: list[Any]) -> "Decl":
        kind, name, scope, line, owner, params, flags, members, target = stored
        return cls(str(kind), str(name), str(scope), int(line), None if owner is None else str(owner),
                   None if params is None else tuple(Param(str(n), str(t), bool(d), str(k)) for n, t, d, k in params),
                   frozenset(map(str, flags)), tuple(map(str, members)), str(target))


_memo: dict[tuple[str, str], tuple[Decl, ...]] = {}


def declarations_of(path: str, text: str) -> tuple[Decl, ...]:
    """Every declaration the text makes, read as the language of path's suffix (none for another file)."""
    language = language_of(path)
    if language is None or not text:
        return ()
    key = (language, content_id(text))
    found = _memo.get(key)
    if found is None and language == "py":
        shared, facts = known_fact(DECLARATIONS.name, text)  # the fork's files: from the parse made up front
        if shared:
            found = facts or ()
    if found is None:
        found = memoized(f"decl-{language}", VERSIONS[language], text, _EXTRACT[language],
                         encode=lambda decls: [decl.encode() for decl in decls],
                         decode=lambda stored: tuple(Decl.decode(item) for item in stored))
        if len(_memo) >= _MEMO_LIMIT:
            _memo.clear()
        _memo[key] = found
    return found


def cpp_declarations(text: str) -> tuple[Decl, ...]:
    return declarations_of("x.h", text)


def forget() -> None:
    """Drop what this process remembers (tests: the next request reads the fact cache or parses)."""
    _memo.clear()
    DeclarationIndex._trees.clear()


# --- C++ -------------------------------------------------------------------------------------------------------

_CPP_QUERY = """
(function_declarator) @function
(field_declaration) @field
(class_specifier) @class
(struct_specifier) @struct
(union_specifier) @union
(enum_specifier) @enum
(alias_declaration) @alias
(type_definition) @typedef
(namespace_alias_definition) @nsalias
(preproc_def) @macro
(preproc_function_def) @macro
"""
# Candidates of pybind11 registrations (exactly checked in Python): `x.def*("name", ...)`, `MACRO("name", ...)`.
_PYBIND_QUERY = """
((call_expression function: (field_expression field: (field_identifier) @name)) @call (#match? @name "^def"))
((call_expression function: (_) @name) @call (#match? @name "^(def|[^a-z]*$)"))
"""
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_CLASSES = ("class_specifier", "struct_specifier")
_WRAPPERS = ("pointer_declarator", "reference_declarator", "parenthesized_declarator", "attributed_declarator")
_TEMPLATE_ARGS = re.compile(r"<.*>", re.DOTALL)


@dataclass
class _Where:
    owner: str | None  # the nearest enclosing class or struct (its last name as spelled), unless a body comes first
    scope: list[str]  # namespaces and classes, outermost first
    local: bool  # inside a function body
    in_definition: bool  # a function definition lies between the node and its owner (or the top)
    in_parameters: bool  # inside a parameter list before the owner


def _where(node: Node) -> _Where:
    owner: str | None = None
    scope: list[str] = []
    local = in_definition = in_parameters = owned = False
    parent = node.parent
    while parent is not None:
        kind = parent.type
        if kind in _CLASSES:
            name = parent.child_by_field_name("name")
            spelled = node_text(name).split("::")[-1] if name is not None else ""
            if not owned and not local:  # as spelled: `HIP_vector_base<T, 2>`, a specialization, is its own class
                owner, owned = (spelled or None), True
            last = _TEMPLATE_ARGS.sub("", spelled)
            if last:
                scope.insert(0, last)
        elif kind == "namespace_definition":
            name = parent.child_by_field_name("name")
            if name is not None:
                scope[:0] = node_text(name).split("::")
        elif kind == "compound_statement":
            local = True
        elif kind == "function_definition" and not owned:
            in_definition = True
        elif kind == "parameter_list" and not owned:
            in_parameters = True
        parent = parent.parent
    return _Where(owner, scope, local, in_definition, in_parameters)


def _base(type_text: str) -> str:
    return type_text.split("::")[-1].split("<")[0].strip()


def _params(parameters: Node) -> tuple[tuple[Param, ...], bool]:
    """(the parameters, whether a parameter pack is among them) of a parameter_list, as methodcalls has always
    counted them (a C-style `...` is no named child: it is the flag `variadic`, not counted here)."""
    listed = [child for child in parameters.named_children if child.type != "comment"]
    variadic = any(child.type == "variadic_parameter_declaration" or node_text(child) == "..." for child in listed)
    real = [child for child in listed if child.type in ("parameter_declaration", "optional_parameter_declaration")]
    if len(real) == 1 and node_text(real[0]).strip() == "void":
        real = []
    out = []
    for child in real:
        kind = child.child_by_field_name("type")
        declarator = child.child_by_field_name("declarator")
        while declarator is not None and declarator.type not in ("identifier", "field_identifier"):
            inner = declarator.child_by_field_name("declarator")
            if inner is None:
                inner = next((c for c in declarator.named_children if c.type in ("identifier", "field_identifier")
                              or c.type.endswith("declarator")), None)
            declarator = inner
        out.append(Param(node_text(declarator) if declarator is not None else "",
                         _base(node_text(kind)) if kind is not None else "",
                         child.type == "optional_parameter_declaration"))
    return tuple(out), variadic


def _holder(declarator: Node) -> Node | None:
    """The declaration a function declarator belongs to (through pointer/reference wrappers)."""
    parent = declarator.parent
    while parent is not None and parent.type in _WRAPPERS + ("init_declarator",):
        parent = parent.parent
    return parent


def _specifier_flags(holder: Node | None) -> set[str]:
    flags: set[str] = set()
    if holder is None:
        return flags
    children = holder.children
    for index, child in enumerate(children):
        if child.type == "virtual":
            flags |= {"virtual"}
        elif child.type == "storage_class_specifier" and node_text(child) == "static":
            flags |= {"static"}
        elif child.type == "=" and index + 1 < len(children):
            value = node_text(children[index + 1])
            flags.add({"0": "pure", "default": "default", "delete": "delete"}.get(value, "initialized"))
        elif child.type in ("default_method_clause", "delete_method_clause", "pure_virtual_clause"):
            flags.add({"default_method_clause": "default", "delete_method_clause": "delete"}.get(child.type, "pure"))
    if holder.parent is not None and holder.parent.type == "friend_declaration":
        flags |= {"friend"}
    return flags


def _cpp_function(node: Node) -> Decl | None:
    name_node = node.child_by_field_name("declarator")
    parameters = node.child_by_field_name("parameters")
    if name_node is None or parameters is None or name_node.type in _WRAPPERS:
        return None  # a function pointer variable or parameter, not a function
    holder = _holder(node)
    own_body = holder is not None and holder.type == "function_definition"
    where = _where(holder if own_body and holder is not None else node)  # its own body is no enclosing one
    if where.in_parameters:
        return None  # a parameter of function type
    spelled = node_text(name_node)
    flags = _specifier_flags(holder)
    if own_body:
        flags |= {"definition"}
    if where.in_definition:
        flags |= {"in-definition"}
    if where.local:
        flags |= {"local"}
    if _in_anonymous_namespace(node):
        flags |= {"internal"}  # no other compile unit can name it
    if any(child.type == "type_qualifier" and node_text(child) == "const" for child in node.children):
        flags |= {"const"}
    params, pack = _params(parameters)
    if pack:
        flags |= {"pack"}  # a parameter pack (`Args... args`), as methodcalls counts variadic
    if pack or any(child.type == "..." for child in parameters.children):
        flags |= {"variadic"}
    scope = list(where.scope)
    name = spelled
    if name_node.type == "qualified_identifier":
        flags |= {"qualified"}
        qualifier, _, name = _TEMPLATE_ARGS.sub("", spelled).rpartition("::")
        scope += [part for part in qualifier.split("::") if part]
    elif not _IDENTIFIER.fullmatch(spelled):
        flags |= {"special"}  # operator==, ~Foo, a template function's explicit arguments
    owner = where.owner
    kind = "method" if owner is not None and not where.in_definition else "function"
    return Decl(kind, name, "::".join(scope), node.start_point[0] + 1, owner if kind == "method" else None, params,
                frozenset(flags))


def _in_anonymous_namespace(node: Node) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == "namespace_definition" and parent.child_by_field_name("name") is None:
            return True
        parent = parent.parent
    return False


def _field_names(node: Node) -> Iterator[Node]:
    for declarator in node.children_by_field_name("declarator"):
        current: Node | None = declarator
        while current is not None and current.type in _WRAPPERS + ("array_declarator", "init_declarator"):
            inner = current.child_by_field_name("declarator")
            if inner is None:
                inner = next((c for c in current.named_children if c.type == "field_identifier"
                              or c.type in _WRAPPERS), None)
            current = inner
        if current is not None and current.type == "field_identifier":
            yield current


def _local(where: _Where) -> set[str]:
    return {"local"} if where.local else set()


def _cpp_fields(node: Node) -> Iterator[tuple[Node, Decl]]:
    where = _where(node)
    flags = frozenset((_specifier_flags(node) - {"pure", "default", "delete"}) | _local(where))
    for name in _field_names(node):
        yield name, Decl("field", node_text(name), "::".join(where.scope), name.start_point[0] + 1, where.owner,
                         flags=flags)


def _cpp_namespace_alias(node: Node) -> Iterator[tuple[Node, Decl]]:
    name = node.child_by_field_name("name") or next((c for c in node.named_children
                                                     if c.type == "namespace_identifier"), None)
    target = node.named_children[-1] if node.named_children else None
    if name is None or target is None or target == name:
        return
    where = _where(node)
    yield node, Decl("namespace-alias", node_text(name), "::".join(where.scope), node.start_point[0] + 1, where.owner,
                     flags=frozenset(_local(where)), target=node_text(target).strip(":"))


def _cpp_typedefs(node: Node) -> Iterator[tuple[Node, Decl]]:
    where = _where(node)
    kind = node.child_by_field_name("type")
    for declarator in node.children_by_field_name("declarator"):
        current: Node | None = declarator
        while current is not None and current.type != "type_identifier":
            current = current.child_by_field_name("declarator")
        if current is not None:
            yield current, Decl("alias", node_text(current), "::".join(where.scope), current.start_point[0] + 1,
                                where.owner, flags=frozenset({"typedef"} | _local(where)),
                                target=node_text(kind) if kind is not None else "")


def _cpp_macro(node: Node) -> Iterator[tuple[Node, Decl]]:
    """`#define NAME body` (and `NAME(args) body`): target is the body with its blanks folded, what a
    redefinition is compared by; a function-like macro carries flag `function`."""
    name = node.child_by_field_name("name")
    if name is None:
        return
    value = node.child_by_field_name("value")
    parameters = node.child_by_field_name("parameters")
    body = " ".join(node_text(value).split()) if value is not None else ""
    flags = {"function"} if node.type == "preproc_function_def" else set()
    yield node, Decl("macro", node_text(name), "", node.start_point[0] + 1,
                     params=None, flags=frozenset(flags),
                     target=(node_text(parameters) + " " if parameters is not None else "") + body)


def _cpp_named(capture: str, node: Node) -> Iterator[tuple[Node, Decl]]:
    """A class, struct, union, enum (and its enumerators) or `using` alias."""
    name_node = node.child_by_field_name("name")
    if name_node is None or not node_text(name_node):
        return
    where = _where(node)
    flags = _local(where)
    name = _TEMPLATE_ARGS.sub("", node_text(name_node))
    scope = list(where.scope)
    if "::" in name:
        qualifier, _, name = name.rpartition("::")
        scope += qualifier.split("::")
    line = node.start_point[0] + 1
    if capture == "alias":
        kind = node.child_by_field_name("type")
        yield node, Decl("alias", name, "::".join(scope), line, where.owner, flags=frozenset(flags),
                         target=node_text(kind) if kind is not None else "")
    elif capture == "enum":
        body = node.child_by_field_name("body")
        enumerators = [(e, e.child_by_field_name("name")) for e in (body.named_children if body is not None else [])
                       if e.type == "enumerator"]
        named = [(e, member) for e, member in enumerators if member is not None]
        if any(child.type in ("class", "struct") for child in node.children):
            flags |= {"scoped"}
        yield node, Decl("enum", name, "::".join(scope), line, where.owner,
                         flags=frozenset(flags | ({"definition"} if body is not None else set())),
                         members=tuple(node_text(member) for _, member in named))
        inner = "::".join(scope + [name])
        for enumerator, member in named:
            yield enumerator, Decl("enumerator", node_text(member), inner, enumerator.start_point[0] + 1, name,
                                   flags=frozenset(flags))
    else:  # class, struct, union
        if node.child_by_field_name("body") is not None:
            flags |= {"definition"}
        elif node.parent is not None and node.parent.child_by_field_name("declarator") is not None:
            return  # `struct Foo *p`: a use of the type, not a declaration
        yield node, Decl(capture, name, "::".join(scope), line, where.owner, flags=frozenset(flags))


def _cpp_declarations(text: str) -> tuple[Decl, ...]:
    PARSES["cpp"] += 1
    root = parse_tree(text).root_node
    found: list[tuple[Node, Decl]] = []
    calls: list[Node] = []
    for capture, nodes in QueryCursor(query(_CPP_QUERY + _PYBIND_QUERY)).captures(root).items():  # one native walk
        for node in nodes:
            if capture == "call":
                calls.append(node)
            elif capture == "name":
                continue
            elif capture == "function":
                function = _cpp_function(node)
                if function is not None:
                    found.append((node, function))
            elif capture == "field":
                found += _cpp_fields(node)
            elif capture == "nsalias":
                found += _cpp_namespace_alias(node)
            elif capture == "typedef":
                found += _cpp_typedefs(node)
            elif capture == "macro":
                found += _cpp_macro(node)
            else:
                found += _cpp_named(capture, node)
    if '"' in text:
        found += _pybind(calls)
    # document order, outer first (py-tree-sitter lists a capture's nodes in no fixed order): the same every parse
    found.sort(key=lambda item: (item[0].start_byte, -item[0].end_byte, item[1].kind, item[1].name, item[1].line))
    return tuple(decl for _, decl in found)


def _pybind(calls: list[Node]) -> Iterator[tuple[Node, Decl]]:
    """pybind11 registrations, as bindings.registered has always read them (the query only narrows the calls),
    with the class each registers on and the lambda it binds."""
    seen: set[int] = set()
    classes: dict[int, str | None] = {}  # a chain's calls by id -> the py::class_ it starts with
    for node in calls:
        if node.id in seen:
            continue  # both patterns match `x.def(...)`; a chain's calls share their start, not their id
        seen.add(node.id)
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None or arguments is None or not arguments.named_children:
            continue
        callee = node_text(function.child_by_field_name("field") or function) \
            if function.type == "field_expression" else node_text(function)
        if not (callee.startswith("def") or (function.type == "identifier" and callee.isupper())):
            continue
        first = arguments.named_children[0]
        if first.type == "string_literal":
            value = node_text(first).strip('"')
            if _IDENTIFIER.fullmatch(value):
                bound = arguments.named_children[1:]
                lambda_ = bound[0].child_by_field_name("declarator") if bound and \
                    bound[0].type == "lambda_expression" else None
                parameters = lambda_.child_by_field_name("parameters") if lambda_ is not None else None
                params = _params(parameters)[0] if parameters is not None else None
                named = any(_NAMED_ARGUMENT.search(node_text(argument)) for argument in bound[1:])
                yield node, Decl("pybind", value, "", first.start_point[0] + 1, _class_of(node, classes),
                                 params=params, flags=frozenset({"keywords"} if named else ()), target=callee)


_NAMED_ARGUMENT = re.compile(r'\barg\s*\(|"_a\b')  # py::arg("x"), "x"_a: Python may pass it by name, or leave it out


def _class_of(call: Node, classes: dict[int, str | None]) -> str | None:
    """The Python name of the `py::class_<T>(m, "name", ...)` whose chain of `.def(...)` calls holds call."""
    chain: list[Node] = []
    node: Node | None = call
    found: str | None = None
    while node is not None and node.type == "call_expression":
        if node.id in classes:
            found = classes[node.id]
            break
        chain.append(node)
        function = node.child_by_field_name("function")
        if function is not None and function.type == "field_expression":
            node = function.child_by_field_name("argument")
            continue
        arguments = node.child_by_field_name("arguments")
        names = [child for child in arguments.named_children if child.type == "string_literal"] \
            if arguments is not None else []
        if function is not None and "class_" in node_text(function).split("<", 1)[0] and names:
            found = node_text(names[0]).strip('"')
        break
    for member in chain:
        classes[member.id] = found
    return found


# --- ODS (.td) -------------------------------------------------------------------------------------------------

_ODS_ENUM = re.compile(r"\bdef\s+(\w+)\s*:\s*(\w*EnumAttr\w*)\s*<\s*\"(\w+)\"")
_DOLLAR = re.compile(r"\$([A-Za-z_]\w*)")
_ACCESSOR_DAGS = re.compile(r"\blet\s+(?:arguments|results|parameters)\s*=\s*\(")


def _accessor(name: str) -> str:
    return "get" + "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def _td_declarations(text: str) -> tuple[Decl, ...]:
    PARSES["td"] += 1
    found: list[tuple[int, Decl]] = []
    for match in _ODS_ENUM.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        kind = "enum-case" if "Case" in match[2] else "enum-attr"
        found.append((match.start(), Decl(kind, match[3], "", line, target=match[1])))
    for record in records("", text):
        start = text.find(record.source)
        line = text.count("\n", 0, start) + 1
        accessors: list[str] = []
        for dag in _ACCESSOR_DAGS.finditer(record.source):
            depth, end = 0, dag.end() - 1
            for end in range(dag.end() - 1, len(record.source)):
                depth += {"(": 1, ")": -1}.get(record.source[end], 0)
                if depth == 0:
                    break
            accessors += [_accessor(name) for name in _DOLLAR.findall(record.source[dag.end():end])]
        def_name = re.match(r"def\s+(\w+)", record.source)
        found.append((start, Decl(record.kind, record.cpp_name, "", line, members=tuple(dict.fromkeys(accessors)),
                                  target=def_name[1] if def_name else "")))
        for overload in record.overloads:
            defaults = len(overload.params) - overload.required
            params = tuple(Param(name, kind, index >= len(overload.params) - defaults)
                           for index, (kind, name) in enumerate(overload.params))
            found.append((start, Decl("builder", "build", record.cpp_name, line, record.cpp_name, params,
                                      frozenset({f"leading:{overload.leading}"}))))
    return tuple(decl for _, decl in sorted(found, key=lambda item: item[0]))


# --- CMake -----------------------------------------------------------------------------------------------------

_CMAKE_KEYWORDS = {"DEPENDS", "LINK_LIBS", "LINK_COMPONENTS", "PUBLIC", "PRIVATE", "INTERFACE", "STATIC", "SHARED",
                   "OBJECT", "EXCLUDE_FROM_LIBMLIR", "ADDITIONAL_HEADER_DIRS", "DISABLE_INSTALL",
                   "PARTIAL_SOURCES_INTENDED"}
_CMAKE_FLAGS = {"STATIC", "SHARED", "OBJECT", "MODULE", "EXCLUDE_FROM_ALL", "EXCLUDE_FROM_LIBMLIR", "DISABLE_INSTALL",
                "PARTIAL_SOURCES_INTENDED"}
_CMAKE_DEPENDING = ("DEPENDS", "LINK_LIBS", "PUBLIC", "PRIVATE", "INTERFACE")


def _cmake_declarations(text: str) -> tuple[Decl, ...]:
    PARSES["cmake"] += 1
    found: list[Decl] = []
    for command in cmake_commands(text):
        if not (command.name.startswith("add_") and command.name.endswith("library")) or not command.args:
            continue
        name, line = command.args[0].text, command.line
        sources, depends, section = [], [], "sources"
        for argument in command.args[1:]:
            word = argument.text
            if word.upper() in _CMAKE_FLAGS:
                continue  # a library's kind, not a section: `add_library(X STATIC a.cc)` lists a.cc as a source
            if word.upper() in _CMAKE_KEYWORDS:
                section = word.upper()
            elif section == "sources" and word.endswith(CMAKE_SOURCES) and "$" not in word:
                sources.append(word)
            elif section in _CMAKE_DEPENDING:
                depends.append(word)
        found.append(Decl("cmake-target", name, "", line, members=tuple(sources), target=command.name))
        found.extend(Decl("cmake-depends", word, "", line, owner=name) for word in dict.fromkeys(depends))
    return tuple(found)


# --- Python ----------------------------------------------------------------------------------------------------

def _py_params(arguments: ast.arguments) -> tuple[Param, ...]:
    positional = arguments.posonlyargs + arguments.args
    defaults = [False] * (len(positional) - len(arguments.defaults)) + [True] * len(arguments.defaults)
    out = [Param(arg.arg, "", default, "positional-only" if index < len(arguments.posonlyargs) else "positional")
           for index, (arg, default) in enumerate(zip(positional, defaults))]
    if arguments.vararg is not None:
        out.append(Param(arguments.vararg.arg, "", False, "vararg"))
    out += [Param(arg.arg, "", default is not None, "keyword-only")
            for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults)]
    if arguments.kwarg is not None:
        out.append(Param(arguments.kwarg.arg, "", False, "varkw"))
    return tuple(out)


def _decorator_name(decorator: ast.expr) -> str | None:
    """`abstractmethod` of @abstractmethod, @abc.abstractmethod and @abstractmethod(...)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else None


def python_def(node: ast.FunctionDef | ast.AsyncFunctionDef, scope: str = "", owner: str | None = None) -> Decl:
    """A def's declaration: its parameters, flags (async, abstract) and decorators (what each calls, as spelled)."""
    flags = frozenset(({"async"} if isinstance(node, ast.AsyncFunctionDef) else set())
                      | ({"abstract"} if any(_decorator_name(d) == "abstractmethod" for d in node.decorator_list)
                         else set()))
    decorators = ", ".join(ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list)
    return Decl("def", node.name, scope, node.lineno, owner, _py_params(node.args), flags, target=decorators)


def _py_scan(body: list[ast.stmt], scope: list[str], out: list[Decl]) -> None:
    owner = scope[-1] if scope else None
    where = ".".join(scope)
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(python_def(node, where, owner))
        elif isinstance(node, ast.ClassDef):
            out.append(Decl("class", node.name, where, node.lineno, owner,
                            target=", ".join(ast.unparse(base) for base in node.bases)))
            _py_scan(node.body, scope + [node.name], out)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        out.append(Decl("assign", name.id, where, node.lineno, owner))
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                bound = alias.asname or alias.name
                out.append(Decl("import", bound, where, node.lineno, owner,
                                flags=frozenset({"from", "as"} if alias.asname else {"from"}),
                                target=f"{module}.{alias.name}" if node.module else f"{module}{alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out.append(Decl("import", alias.asname or alias.name.split(".")[0], where, node.lineno, owner,
                                flags=frozenset({"as"} if alias.asname else ()), target=alias.name))
        elif isinstance(node, (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)) \
                or type(node).__name__ == "TryStar":  # their bodies run where the statement is
            # `if TYPE_CHECKING:` never runs: what it imports is bound for a type checker, not when the module loads
            for block in ("orelse",) if _type_checking(node) else ("body", "orelse", "finalbody"):
                _py_scan(getattr(node, block, []) or [], scope, out)
            for handler in getattr(node, "handlers", []) or []:
                _py_scan(handler.body, scope, out)


def _type_checking(node: ast.AST) -> bool:
    """`if TYPE_CHECKING:` or `if typing.TYPE_CHECKING:` (any module's attribute of that name)."""
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _py_declarations(text: str) -> tuple[Decl, ...]:
    PARSES["py"] += 1
    found = guarded(lambda: _statement_declarations(cpython_tree(text).body))
    return () if isinstance(found, Unparseable) else tuple(found)


def _statement_declarations(statements: Sequence[ast.AST]) -> list[Decl]:
    out: list[Decl] = []
    _py_scan([node for node in statements if isinstance(node, ast.stmt)], [], out)
    return [replace(decl, flags=decl.flags | {"python"}) for decl in out]


# The same declarations from the walk of the fork's Python that the analyses share (pyblobs), made once per blob
# alongside the other facts of that walk, in the parse begun before the replay: declarations_of reads them there
# for a text whose facts the run has, and parses for itself otherwise (upstream's files).
DECLARATIONS = Extractor("declarations", VERSIONS["py"], _statement_declarations,
                         lambda decls: None if decls is None else tuple(decls),
                         encode=lambda decls: None if decls is None else [decl.encode() for decl in decls],
                         decode=lambda stored: None if stored is None else tuple(Decl.decode(item) for item in stored),
                         reads=frozenset(kind for kind in vars(ast).values()
                                         if isinstance(kind, type) and issubclass(kind, ast.stmt) and kind is not ast.stmt),
                         depth=1)


_EXTRACT = {"cpp": _cpp_declarations, "td": _td_declarations, "py": _py_declarations, "cmake": _cmake_declarations}


# --- a tree's view ---------------------------------------------------------------------------------------------

class DeclarationIndex:
    """The declarations of one tree's files, read lazily, file by file, from the per-blob facts."""

    _trees: "TreeMemo[DeclarationIndex]" = TreeMemo()

    def __init__(self, tree: FileTree) -> None:
        self.tree = tree

    @classmethod
    def of(cls, tree: FileTree) -> "DeclarationIndex":
        return cls._trees.get(tree, None, lambda: cls(tree))

    def text(self, path: str) -> str:
        return read_text(self.tree, path) or ""

    def file(self, path: str) -> tuple[Decl, ...]:
        """The declarations of one file of the tree (none for a file it lacks or of another language)."""
        return declarations_of(path, self.text(path))

    def paths(self, under: Iterable[str] = (), suffixes: Iterable[str] | None = None) -> list[str]:
        prefixes = tuple(under)
        ends = tuple(suffixes) if suffixes is not None else CPP_SUFFIXES + TD_SUFFIXES + PY_SUFFIXES
        return [path for path in self.tree.paths()
                if path.endswith(ends) and (not prefixes or path.startswith(prefixes))]

    def files(self, under: Iterable[str] = (), suffixes: Iterable[str] | None = None,
              spelling: Iterable[str] = ()) -> Iterator[tuple[str, tuple[Decl, ...]]]:
        """(path, declarations) of the files under the prefixes; with spelling, only files whose text spells one
        of those strings (a C++ or Python file that declares a name spells it: no parse of the others; a .td
        record generates names it need not spell, such as accessors and `...Attr` classes)."""
        needles = tuple(spelling)
        for path in self.paths(under, suffixes):
            if needles and not path.endswith(TD_SUFFIXES):
                text = self.text(path)
                if not any(needle in text for needle in needles):
                    continue
            yield path, self.file(path)

    def find(self, name: str, kinds: Iterable[str] | None = None, under: Iterable[str] = (),
             suffixes: Iterable[str] | None = None) -> list[tuple[str, Decl]]:
        """Every declaration of the name (its last component) in the files under the prefixes."""
        wanted = frozenset(kinds) if kinds is not None else None
        last = name.replace(".", "::").split("::")[-1]
        return [(path, decl) for path, decls in self.files(under, suffixes, spelling=(last,))
                for decl in decls if decl.name == last and (wanted is None or decl.kind in wanted)]

    def enums(self, names: Iterable[str], under: Iterable[str] = (),
              suffixes: Iterable[str] | None = None) -> frozenset[str]:
        """Which of the names the files declare as an enum: a C++ `enum [class]` or an ODS enum attribute."""
        pending = set(names)
        found: set[str] = set()
        for path in self.paths(under, suffixes):
            text = self.text(path)
            if ("EnumAttr" if path.endswith(TD_SUFFIXES) else "enum") not in text:
                continue  # no enum declared here: `enum` spells every C++ one, `...EnumAttr...<` every ODS one
            spelled = {name for name in pending - found if name in text}
            if spelled:
                found |= {decl.name for decl in self.file(path)
                          if decl.kind in ("enum", "enum-attr", "enum-case") and decl.name in spelled}
        return frozenset(found)

    def overloads(self, qualified: str, under: Iterable[str] = (),
                  suffixes: Iterable[str] | None = None) -> list[tuple[str, Decl]]:
        """The function and method declarations `A::f` names (by a trailing run of its scopes), e.g.
        `TargetInfoBase::barrier` or `mlir::triton::gpu::foo`."""
        return [(path, decl) for path, decl in self.find(qualified, ("function", "method", "builder", "def"), under,
                                                         suffixes) if _names(decl, qualified)]

    def declares(self, qualified: str, under: Iterable[str] = (), suffixes: Iterable[str] | None = None) -> bool:
        """Whether a file declares the (qualified) name, of any kind."""
        return any(_names(decl, qualified) for _, decl in self.find(qualified, None, under, suffixes))


def _names(decl: Decl, qualified: str) -> bool:
    spelled = qualified.replace(".", "::").split("::")
    mine = decl.qualified.replace(".", "::").split("::")
    return mine[-len(spelled):] == spelled
