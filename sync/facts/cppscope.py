"""C++ names in their scopes, for symbol drift (issue 33): where a removed declaration lived, and what a use
of the same spelling can mean, both read with tree-sitter.

A declaration's scope is one of `member:<Class>` (a field or method of a class or struct), `enumerator:<Enum>`,
`scope:<Name>` (an out-of-line definition `Name::f`, class or namespace alike) or `free:<ns::path>`. TableGen
records count as `type:<record>` and their accessors as `member:<record>`: what the .td generates.

A use is `plain` (`f(x)`), `qualified` (`ns::f`, the qualifier resolved through the file's namespace aliases)
or `member` (`x.f`, `x->f`, with the receiver's declared type where the file declares the receiver).
`resolves` says whether a use can mean a declaration: a member use only a member of the receiver's class
(an unknown receiver type resolves nothing: no claim of a break without the declaration it breaks), a
qualified use only a declaration whose scope ends in the qualifier, a plain use anything.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from sync.facts.cpp import node_text, nodes_of_types, parse_tree
from sync.facts.includedirs import backend_copy
from sync.facts.layout import THIRD_PARTY
from sync.facts.trees import FileTree

_NAMESPACE_ALIAS = re.compile(r"\bnamespace\s+([A-Za-z_]\w*)\s*=\s*([:\w]+)\s*;")
_TEMPLATE_ARGS = re.compile(r"<.*>", re.DOTALL)
_DECLARATOR_WRAPPERS = ("reference_declarator", "pointer_declarator", "init_declarator", "array_declarator")


@dataclass(frozen=True)
class UseContext:
    form: str  # plain | qualified | member | defines (the name of a free function a definition declares)
    scope: str | None = None  # qualified: the qualifier as resolved; member: the receiver's type (None: unknown)


def in_function_body(node: Node) -> bool:
    """Whether a C++ declaration is local to a function (or lambda) body, which no other file can name:
    a local struct's fields, or `SmallVector<Value> operands(a, b);`, which tree-sitter reads as the
    declaration of a function `operands` (the most vexing parse)."""
    parent = node.parent
    while parent is not None:
        if parent.type == "compound_statement":
            return True
        parent = parent.parent
    return False


def _enclosing(node: Node) -> tuple[str | None, list[str]]:
    """(the nearest enclosing class or struct name, the enclosing namespaces outermost first)."""
    klass: str | None = None
    namespaces: list[str] = []
    parent = node.parent
    while parent is not None:
        if parent.type in ("class_specifier", "struct_specifier") and klass is None:
            name = parent.child_by_field_name("name")
            klass = node_text(name).split("::")[-1] if name is not None else None
        elif parent.type == "namespace_definition":
            name = parent.child_by_field_name("name")
            if name is not None:
                namespaces[:0] = node_text(name).split("::")
        parent = parent.parent
    return klass, namespaces


_DECLARING = ("enumerator", "function_declarator", "field_declaration", "class_specifier", "struct_specifier",
              "enum_specifier", "alias_declaration")


def declaration_scopes(text: str, names: set[str]) -> dict[str, set[str]]:
    """For the given names: the scopes a C++ text declares them in (outside function bodies)."""
    found: dict[str, set[str]] = {}
    if not any(name in text for name in names):
        return found
    for node in nodes_of_types(parse_tree(text).root_node, _DECLARING):
        scope: str | None = None
        if node.type == "enumerator":
            name_node = node.child_by_field_name("name")
            enum = node.parent.parent if node.parent is not None else None
            enum_name = enum.child_by_field_name("name") if enum is not None else None
            scope = f"enumerator:{node_text(enum_name) if enum_name is not None else ''}"
        elif node.type in ("function_declarator", "field_declaration", "class_specifier", "struct_specifier",
                           "enum_specifier", "alias_declaration"):
            name_node = node.child_by_field_name("declarator" if node.type in ("function_declarator",
                                                                                "field_declaration") else "name")
            if name_node is None or in_function_body(node):
                continue
            spelled = node_text(name_node)
            if "::" in spelled and node.type == "function_declarator":
                scope = f"scope:{spelled.split('::')[-2].split('<')[0]}"
            else:
                klass, namespaces = _enclosing(node)
                scope = f"member:{klass}" if klass is not None else f"free:{'::'.join(namespaces)}"
        else:
            continue
        if name_node is None:
            continue
        name = node_text(name_node).split("::")[-1]
        if name in names:
            found.setdefault(name, set()).add(scope)
    return found


def file_using_namespaces(text: str) -> set[str]:
    """The namespaces a C++ text's file-scope `using namespace X;` directives name (without a leading `::`):
    their names are visible unqualified in the whole file after them."""
    if "using" not in text or "namespace" not in text:
        return set()
    return {node_text(named[-1]).lstrip(":") for node in parse_tree(text).root_node.children
            if node.type == "using_declaration" and any(child.type == "namespace" for child in node.children)
            and (named := node.named_children)}


def unqualified_global_uses(text: str, name: str) -> list[int]:
    """Lines where a C++ text names `name` unqualified (no `x::` before it, not a member after `.` or `->`) outside
    every named namespace: there unqualified lookup reaches the file-scope using-directives before any namespace
    that declares the name (inside `namespace a::b {`, a::b's own declaration is found first)."""
    lines: list[int] = []
    for node in nodes_of_types(parse_tree(text).root_node, ("type_identifier", "identifier", "namespace_identifier")):
        if node_text(node) != name:
            continue
        parent = node.parent
        if parent is not None and ((parent.type == "qualified_identifier" and parent.child_by_field_name("name") == node)
                                   or parent.type == "field_expression"):
            continue
        enclosing = parent
        while enclosing is not None and not (enclosing.type == "namespace_definition"
                                             and enclosing.child_by_field_name("name") is not None):
            enclosing = enclosing.parent
        if enclosing is None:
            lines.append(node.start_point[0] + 1)
    return sorted(set(lines))


def namespace_aliases(text: str) -> dict[str, str]:
    """`namespace ttg = mlir::triton::gpu;` -> {"ttg": "mlir::triton::gpu"}."""
    return {alias: target.strip(":") for alias, target in _NAMESPACE_ALIAS.findall(text)}


def _base_type(type_text: str) -> str | None:
    text = _TEMPLATE_ARGS.sub("", type_text).replace("const", " ").replace("&", " ").replace("*", " ").strip()
    last = text.split("::")[-1].strip() if text else ""
    return None if not last or last == "auto" else last


# Calls whose result has the type their template argument names: LLVM's casts and MLIR's op builders.
_CASTS = frozenset({"cast", "dyn_cast", "cast_or_null", "dyn_cast_or_null", "cast_if_present", "dyn_cast_if_present"})
_MADE_BY_TEMPLATE = frozenset({"create", "createOrFold", "replaceOpWithNewOp", "getOps"})
_MADE_BY_CLASS = frozenset({"create", "get"})  # `T::create(...)` is a T, `T::get(...)` an attribute or type T


def _template_argument(node: Node) -> str | None:
    arguments = node.child_by_field_name("arguments")
    first = arguments.named_children[0] if arguments is not None and arguments.named_children else None
    return _base_type(node_text(first)) if first is not None else None


def _value_type(value: Node | None) -> str | None:
    """The type an `auto` variable gets from its initializer, where the initializer spells it: `dyn_cast<T>(x)`,
    `b.create<T>(...)`, `T::create(...)`, `T::get(...)`, `x.getOps<T>()` (a range of T)."""
    if value is None or value.type != "call_expression":
        return None
    function = value.child_by_field_name("function")
    while function is not None and function.type == "qualified_identifier" \
            and (name := function.child_by_field_name("name")) is not None and name.type != "identifier":
        function = name  # `llvm::dyn_cast<T>`: the template function under the namespaces
    if function is None:
        return None
    if function.type == "template_function":
        name = function.child_by_field_name("name")
        return _template_argument(function) if name is not None and node_text(name) in _CASTS else None
    if function.type == "field_expression":
        method = function.child_by_field_name("field")
        if method is not None and method.type == "template_method":
            name = method.child_by_field_name("name")
            return _template_argument(method) if name is not None and node_text(name) in _MADE_BY_TEMPLATE else None
        return None
    if function.type == "qualified_identifier":
        scope, name = function.child_by_field_name("scope"), function.child_by_field_name("name")
        if scope is not None and name is not None and node_text(name) in _MADE_BY_CLASS:
            return _base_type(node_text(scope))
    return None


def declared_types(root: Node) -> dict[str, set[str]]:
    """Variable, parameter and field name -> the base names of the types the file declares it with (an `auto`
    variable: the type its initializer spells, _value_type)."""
    types: dict[str, set[str]] = {}
    for loop in nodes_of_types(root, ("for_range_loop",)):
        variable = loop.child_by_field_name("declarator")
        made = _value_type(loop.child_by_field_name("right"))
        if made is not None and variable is not None and variable.type == "identifier":
            types.setdefault(node_text(variable), set()).add(made)
    for node in nodes_of_types(root, ("declaration", "parameter_declaration", "optional_parameter_declaration",
                                      "field_declaration")):
        type_node = node.child_by_field_name("type")
        if type_node is None:
            continue
        base = _base_type(node_text(type_node))
        for written in node.children_by_field_name("declarator"):
            if base is None:  # `auto x = dyn_cast<T>(y)` (init_declarator) or `if (auto x = ...)` (value field)
                value = written.child_by_field_name("value") if written.type == "init_declarator" \
                    else node.child_by_field_name("value")
                made = _value_type(value)
                if made is not None:
                    target = written.child_by_field_name("declarator") if written.type == "init_declarator" else written
                    if target is not None and target.type == "identifier":
                        types.setdefault(node_text(target), set()).add(made)
                        continue
            declarator: Node | None = written
            while declarator is not None and declarator.type in _DECLARATOR_WRAPPERS:
                inner = declarator.child_by_field_name("declarator")
                if inner is None:
                    inner = next((c for c in declarator.named_children if c.type in ("identifier", "field_identifier")
                                  or c.type in _DECLARATOR_WRAPPERS), None)
                declarator = inner
            if declarator is not None and declarator.type in ("identifier", "field_identifier"):
                types.setdefault(node_text(declarator), set()).add(base or "auto")
    return types


def use_contexts(text: str, names: set[str]) -> dict[tuple[str, int], list[UseContext]]:
    """(name, line) -> how each use of the name on that line is written."""
    found: dict[tuple[str, int], list[UseContext]] = {}
    if not any(name in text for name in names):
        return found
    root = parse_tree(text).root_node
    aliases = namespace_aliases(text)
    types: dict[str, set[str]] | None = None
    for node in nodes_of_types(root, ("identifier", "field_identifier", "type_identifier", "namespace_identifier")):
        name = node_text(node)
        if name not in names:
            continue
        parent: Node | None = node.parent
        field: Node | None = node
        if parent is not None and parent.type == "template_method" and parent.child_by_field_name("name") == node:
            parent, field = parent.parent, parent  # `x.name<T>(...)`: the template method is the member accessed
        context = UseContext("plain")
        if parent is not None and parent.type == "function_declarator" and parent.child_by_field_name("declarator") == node:
            context = UseContext("defines")  # `void f(...)`, unqualified: a function of the file's own, no use
        elif parent is not None and parent.type == "field_expression" and parent.child_by_field_name("field") == field:
            receiver = parent.child_by_field_name("argument")
            receiver_type: str | None = None
            if receiver is not None and receiver.type == "identifier":
                if types is None:
                    types = declared_types(root)
                known = types.get(node_text(receiver), set()) - {"auto"}
                receiver_type = "|".join(sorted(known)) if known else None
            context = UseContext("member", receiver_type)
        else:
            qualifier = _qualifier(node)
            if qualifier:
                first, _, rest = qualifier.partition("::")
                resolved = aliases.get(first, first) + ("::" + rest if rest else "")
                context = UseContext("qualified", _TEMPLATE_ARGS.sub("", resolved))
        found.setdefault((name, node.start_point[0] + 1), []).append(context)
    return found


def _qualifier(node: Node) -> str:
    """The scopes written before a name (`a::b` for `a::b::name`, `ttg` for `ttg::Op::create`'s Op)."""
    parts: list[str] = []
    parent = node.parent
    current = node
    if parent is not None and parent.type == "qualified_identifier":
        if parent.child_by_field_name("name") == node:
            scope = parent.child_by_field_name("scope")
            parts.append(node_text(scope) if scope is not None else "")
        current = parent  # as the scope of parent, the name's own qualifier is what stands before parent
    while current.parent is not None and current.parent.type == "qualified_identifier" \
            and current.parent.child_by_field_name("name") == current:
        scope = current.parent.child_by_field_name("scope")
        parts.insert(0, node_text(scope) if scope is not None else "")
        current = current.parent
    return "::".join(part for part in parts if part)


def resolves(context: UseContext, scopes: set[str]) -> bool:
    """Whether a use written this way can mean a declaration in one of these scopes."""
    if context.form == "defines":
        return False  # it declares a function itself (an unqualified definition compiles without any other)
    if context.form == "plain" or not scopes:
        return True
    if context.form == "member":
        if context.scope is None:
            return False  # the receiver's type is unknown here: nothing to stand behind
        receivers = set(context.scope.split("|"))
        return any(kind == "member" and owner in receivers
                   for kind, _, owner in (scope.partition(":") for scope in scopes))
    last = (context.scope or "").split("::")[-1]
    for scope in scopes:
        kind, _, owner = scope.partition(":")
        if kind in ("member", "enumerator", "scope", "type") and owner.split("::")[-1] == last:
            return True
        if kind == "free" and last and last in owner.split("::"):
            return True
        if kind == "type" and not owner:
            return True
    return False


def own_header_copy(fork: FileTree, backend_dir: str, declaring: str) -> bool:
    """The backend carries its own copy of the upstream header that declared the name, on its include path
    first (includedirs.backend_copy: its build's own include directories): its uses resolve to that copy, not
    to trunk."""
    parts = backend_dir.strip("/").split("/")  # third_party/<b>/
    return len(parts) == 2 and parts[0] == THIRD_PARTY and backend_copy(fork, parts[1], declaring) is not None
