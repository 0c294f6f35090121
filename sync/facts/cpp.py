"""C++ facts: FLAGTREE_SPEC_* macros and guarded regions (preprocessor lines), functions (tree-sitter)."""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter_cpp
from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

from sync.support.cache import memoized
from sync.support.parselimit import oversized
from sync.support.textmemo import TextMemo
from sync.support.workers import jobs
from sync.facts.trees import FileTree, read_text
from sync.facts.layout import backend_dir, backend_spec_dir

MACRO_PREFIX = "FLAGTREE_SPEC_"
_DEFINE = re.compile(r"^\s*#\s*define\s+(FLAGTREE_SPEC_\w+)")
_OPEN = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b(.*)")
_CLOSE = re.compile(r"^\s*#\s*endif\b")
_SPEC_MACRO = re.compile(r"\bFLAGTREE_SPEC_\w+")
_INCLUDE_LINE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


@dataclass(frozen=True)
class GuardRegion:
    macro: str
    directive: str  # ifdef | ifndef | if
    start: int  # line of the #if... (1-based)
    end: int  # line of the matching #endif


@dataclass(frozen=True)
class CppFunction:
    name: str  # as declared, e.g. MembarAnalysis::isFenceNeeded
    start: int
    end: int
    text: str
    params: str = ""  # the parameter types, names and defaults dropped, e.g. "Operation *, BlockInfo *"
    path: str = ""  # the file it was read from, where a caller gathers several (a backend's spec library)

    @property
    def short_name(self) -> str:
        """Class::method or function: what a replacement in another namespace block still spells."""
        return "::".join(self.name.split("::")[-2:])

    @property
    def normalized(self) -> str:
        return " ".join(self.text.split())

    @property
    def returns(self) -> str:
        """The return type as written before the name, qualifiers, specifiers and spaces dropped (`std::optional<
        StringRef>` -> `optional<StringRef>`); "" where none is written (a constructor) or it is `auto`."""
        local = self.name.split("::")[-1]
        at = re.search(rf"(?:\b[A-Za-z_]\w*\s*::\s*)*(?:~\s*)?\b{re.escape(local)}\s*\(", self.text)
        if at is None:
            return ""
        head = re.sub(r"//[^\n]*|/\*.*?\*/", " ", self.text[:at.start()], flags=re.DOTALL)
        head = _TEMPLATE_HEAD.sub(" ", head)
        head = re.sub(r"\[\[[^\]]*\]\]|\b(?:static|inline|constexpr|consteval|virtual|extern|explicit|friend|"
                      r"LLVM_ATTRIBUTE_\w+|MLIR_\w+)\b", " ", head)
        head = re.sub(r"\b[A-Za-z_]\w*\s*::\s*|::", "", head)
        kept = "".join(head.split())
        return "" if kept == "auto" else kept


_TEMPLATE_HEAD = re.compile(r"\btemplate\s*<(?:[^<>]|<[^<>]*>)*>")


def header_path(backend: str) -> str:
    return f"{backend_spec_dir(backend)}/include/flagtree_spec.h"


@dataclass(frozen=True)
class MacroDefinition:
    name: str
    path: str  # the backend header that defines it (flagtree_spec.h or a header it includes)
    line: int


def _include_candidates(backend: str, including: str, name: str) -> list[str]:
    """Where `#include "name"` in a backend header can land inside the backend's own tree."""
    spec = backend_spec_dir(backend)
    here = posixpath.dirname(including)
    return [posixpath.normpath(posixpath.join(root, name)) for root in (here, f"{spec}/include", f"{spec}/lib",
                                                                        f"{backend_dir(backend)}/include")]


def backend_macros(tree: FileTree, backend: str) -> dict[str, MacroDefinition]:
    """FLAGTREE_SPEC_* macros the backend defines: in spec/include/flagtree_spec.h and in every header of the
    backend's own tree that it includes, transitively (real backends define them there, not in the file itself)."""
    found: dict[str, MacroDefinition] = {}
    pending, seen = [header_path(backend)], set()
    owned = f"{backend_dir(backend)}/"
    while pending:
        path = pending.pop(0)
        if path in seen:
            continue
        seen.add(path)
        text = read_text(tree, path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            match = _DEFINE.match(line)
            if match:
                found.setdefault(match[1], MacroDefinition(match[1], path, number))
                continue
            included = _INCLUDE_LINE.match(line)
            if included:
                pending += [candidate for candidate in _include_candidates(backend, path, included[1])
                            if candidate.startswith(owned) and candidate not in seen and tree.exists(candidate)][:1]
    return found


@lru_cache(maxsize=64)
def guard_regions(text: str) -> tuple[GuardRegion, ...]:
    """#if/#ifdef/#ifndef blocks whose condition names a FLAGTREE_SPEC_* macro, matched to their #endif. Kept for
    the next question about the same text: the guard analysis asks once per guarded function."""
    regions: list[GuardRegion] = []
    stack: list[tuple[int, str, list[str]]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        opened = _OPEN.match(line)
        if opened:
            stack.append((number, opened[1], _SPEC_MACRO.findall(opened[2])))
        elif _CLOSE.match(line) and stack:
            start, directive, macros = stack.pop()
            regions.extend(GuardRegion(macro, directive, start, number) for macro in macros)
    return tuple(regions)


def comment_spans(text: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where the C/C++ text's comments stand: ((line, column), (line, column)) from their start to their end,
    lines from 1, columns in UTF-8 bytes as tree-sitter counts them."""
    return [((node.start_point[0] + 1, node.start_point[1]), (node.end_point[0] + 1, node.end_point[1]))
            for node in captures("(comment) @comment", text).get("comment", [])]


def mentions_spec_macro(text: str) -> bool:
    return MACRO_PREFIX in text


@lru_cache(maxsize=1)
def parser() -> Parser:
    return Parser(Language(tree_sitter_cpp.language()))


@lru_cache(maxsize=32)
def query(source: str) -> Query:
    """A compiled tree-sitter query of the C++ grammar (queries walk the tree natively, not in Python)."""
    language = parser().language
    assert language is not None  # parser() is built with the C++ grammar
    return Query(language, source)


def nodes_of_types(root: Node, types: tuple[str, ...]) -> list[Node]:
    """Every node of the given (named) types under root and root itself, in the order a pre-order walk meets
    them: a query finds them natively, three to five times faster than visiting every node from Python."""
    found = QueryCursor(query(" ".join(f"({kind}) @node" for kind in types))).captures(root).get("node", [])
    return sorted(found, key=lambda node: (node.start_byte, -node.end_byte))  # an enclosing node first


def captures(query_source: str, text: str) -> dict[str, list[Node]]:
    """The nodes each capture of the query names in the C++ text's (shared) tree, in document order.

    py-tree-sitter (0.26) lists a capture's nodes in an order that changes from one parse of the same text
    to the next; readers take "the first use of a name", so the order is fixed here."""
    found = QueryCursor(query(query_source)).captures(parse_tree(text).root_node)
    return {name: sorted(nodes, key=lambda node: (node.start_byte, node.end_byte)) for name, nodes in found.items()}


# Characters of C++ whose trees the processes of a job keep together, split between them (at least 1 M each):
# 1 M each on 2 cores. A tree costs some 25 bytes of resident memory a character: on the 3.7 move's first run on
# 2 cores, 8 M each held about 200 MB in each process for about 1 s of parses saved (bench/cold_upgrade.py
# --phases); 2 M each saved nothing measurable against 1 M and held some 25 MB more in each process (pairs of
# cold runs: 37.2/36.8 s of CPU and 509/499 MB at 2 M, 37.0/36.4 s and 483/481 MB at 1 M). The readers that share
# a tree mostly read it one after another, which a small memo still serves.
CPP_MEMO_TOTAL = 2 * 1024 * 1024
_TREES: TextMemo[Tree] = TextMemo(0)  # its budget is set on first use, when the job's process count is known


def memo_budget(processes: int) -> int:
    return max(CPP_MEMO_TOTAL // max(processes, 1), 1024 * 1024)


def parse_tree(text: str) -> Tree:
    """tree-sitter's tree of a C++ text: one parse when several analyses read the same file (symbol drift,
    call signatures, feature gates, the declaration index), while the memo's budget holds it."""
    if not _TREES.budget:
        _TREES.budget = memo_budget(jobs())
    return _TREES.get(text, _parse)


def forget_trees() -> None:
    """Drop the memo's trees and its budget (a test's next parse_tree parses again, under the job's budget)."""
    _TREES.clear()
    _TREES.budget = 0


def _parse(text: str) -> Tree:
    return parser().parse(b"" if oversized(text) else text.encode("utf-8", errors="replace"))


def _declarator_name(node: Node) -> str | None:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None:
        if declarator.type in ("qualified_identifier", "identifier", "field_identifier", "destructor_name",
                               "operator_name"):
            return node_text(declarator)
        declarator = declarator.child_by_field_name("declarator")
    return None


def _function_declarator(node: Node) -> Node | None:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def namespaces_around(node: "Node | None") -> list[str]:
    """The names of the namespaces enclosing a node, outermost first (`namespace a::b` counts as two)."""
    parts: list[str] = []
    while node is not None:
        if node.type == "namespace_definition":
            name = node.child_by_field_name("name")
            if name is not None:
                parts[:0] = node_text(name).split("::")
        node = node.parent
    return parts


def node_text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


def _param_types(function_declarator: Node | None) -> str:
    """Parameter types as written, without parameter names or default values."""
    parameters = function_declarator.child_by_field_name("parameters") if function_declarator else None
    if parameters is None:
        return ""
    types = []
    for param in parameters.named_children:
        if param.type == "comment":
            continue
        text, base = node_text(param), param.start_byte
        cut = [(node.start_byte - base, node.end_byte - base) for node in (param.child_by_field_name("default_value"),)
               if node is not None]
        declarator = param.child_by_field_name("declarator")
        if declarator is not None:  # keep *, &, [] of the declarator, drop the name
            names = [n for n in _walk(declarator) if n.type in ("identifier", "field_identifier")]
            if names:
                cut.append((names[-1].start_byte - base, names[-1].end_byte - base))
        for start, end in sorted(cut, reverse=True):
            text = text[:start] + text[end:]
        text = text.split("=")[0] if cut and param.child_by_field_name("default_value") is not None else text
        types.append(" ".join(text.replace("*", " * ").replace("&", " & ").split()))
    return ", ".join(types)


def _walk(node: Node) -> list[Node]:
    out, pending = [], [node]
    while pending:
        current = pending.pop()
        out.append(current)
        pending.extend(reversed(current.children))
    return out


def functions(text: str) -> list[CppFunction]:
    """Function definitions, found by tree-sitter (it tolerates code it cannot fully parse); through the
    fact cache, keyed by blob id (co-change and op verifiers read the same files again each run)."""
    return memoized("cpp-functions", 1, text, _functions,
                    encode=lambda found: [[f.name, f.start, f.end, f.text, f.params] for f in found],
                    decode=lambda stored: [CppFunction(str(name), int(start), int(end), str(code), str(params))
                                           for name, start, end, code, params in stored])


def _functions(text: str) -> list[CppFunction]:
    found: list[CppFunction] = []
    pending = [parse_tree(text).root_node]
    while pending:
        node = pending.pop()
        if node.type == "function_definition":
            name = _declarator_name(node)
            if name:
                found.append(CppFunction(name, node.start_point[0] + 1, node.end_point[0] + 1, node_text(node),
                                         _param_types(_function_declarator(node))))
            continue
        pending.extend(node.children)
    return sorted(found, key=lambda function: function.start)


# A declaration that asks for no definition: pure virtual, defaulted or deleted.
_NO_DEFINITION = re.compile(r"=\s*(?:0|default|delete)\s*;?\s*$")


def declarations(text: str) -> list[CppFunction]:
    """Function declarations without a body that need a definition somewhere (prototypes, in-class method
    declarations; not pure virtual, defaulted or deleted ones). An in-class one is named Class::method, as its
    out-of-class definition spells it."""
    found: list[CppFunction] = []
    pending = [parse_tree(text).root_node]
    while pending:
        node = pending.pop()
        if node.type in ("declaration", "field_declaration"):
            declarator = _function_declarator(node)
            inner = declarator.child_by_field_name("declarator") if declarator is not None else None
            if inner is not None and not _NO_DEFINITION.search(node_text(node)):
                name = node_text(inner)
                owner = _enclosing_class(node)
                found.append(CppFunction(f"{owner}::{name}" if owner and "::" not in name else name,
                                         node.start_point[0] + 1, node.end_point[0] + 1, node_text(node),
                                         _param_types(declarator)))
            continue
        if node.type == "function_definition":
            continue
        pending.extend(node.children)
    return sorted(found, key=lambda function: function.start)


def _enclosing_class(node: Node) -> str | None:
    """The name of the class or struct whose body holds node, if any."""
    parent = node.parent
    while parent is not None:
        if parent.type in ("class_specifier", "struct_specifier"):
            name = parent.child_by_field_name("name")
            return node_text(name) if name is not None else None
        if parent.type in ("function_definition", "namespace_definition", "translation_unit"):
            return None
        parent = parent.parent
    return None


@lru_cache(maxsize=32)
def scope_spans(text: str) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """(first, last) lines of the text's anonymous namespaces and of its class and struct bodies: where a function
    is file-local, where one is a member. Kept for the next question about the same text (a walk of the whole
    tree; the guard analysis asks once per guarded function: 5 s of the 3.4.x -> 3.6.0 move's 11)."""
    anonymous: list[tuple[int, int]] = []
    bodies: list[tuple[int, int]] = []
    if "namespace" not in text and "class" not in text and "struct" not in text:
        return (), ()
    pending = [parse_tree(text).root_node]
    while pending:
        node = pending.pop()
        if node.type == "namespace_definition" and node.child_by_field_name("name") is None:
            anonymous.append((node.start_point[0] + 1, node.end_point[0] + 1))
        elif node.type in ("class_specifier", "struct_specifier"):
            body = node.child_by_field_name("body")
            if body is not None:
                bodies.append((body.start_point[0] + 1, body.end_point[0] + 1))
        pending.extend(node.named_children)
    return tuple(anonymous), tuple(bodies)


def functions_in(region: GuardRegion, defined: list[CppFunction]) -> list[CppFunction]:
    """Functions inside the region, or the one function that contains it."""
    inside = [f for f in defined if f.start > region.start and f.end < region.end]
    if inside:
        return inside
    return [f for f in defined if f.start < region.start and f.end > region.end]


def stray_macros(tree: FileTree, backend: str, reachable: dict[str, MacroDefinition]) -> list[MacroDefinition]:
    """FLAGTREE_SPEC_* macros defined in the backend's spec headers that flagtree_spec.h never includes:
    the build never sees them, so trunk's default stays on."""
    prefix = f"{backend_spec_dir(backend)}/include/"
    found = []
    for path in tree.paths():
        if not path.startswith(prefix) or path == header_path(backend):
            continue
        for number, line in enumerate((read_text(tree, path) or "").splitlines(), start=1):
            match = _DEFINE.match(line)
            if match and match[1] not in reachable:
                found.append(MacroDefinition(match[1], path, number))
    return found


# Identifiers: variables, fields, types, namespaces (not keywords, comments or strings), capture "id".
NAME_QUERY = "(identifier) @id (field_identifier) @id (type_identifier) @id (namespace_identifier) @id"


_CACHED_NAMES_BYTES = 10_000  # smaller texts (function bodies) cost less to parse than a cache entry


def names_by_line(text: str) -> dict[int, set[str]]:
    """Identifiers (variables, fields, types, namespaces; not keywords, comments or strings) per 1-based line;
    whole files through the fact cache."""
    if len(text) < _CACHED_NAMES_BYTES:
        return _names_by_line(text)
    return memoized("cpp-names-by-line", 1, text, _names_by_line,
                    encode=lambda found: [[line, sorted(names)] for line, names in sorted(found.items())],
                    decode=lambda stored: {int(line): set(map(str, names)) for line, names in stored})


def _names_by_line(text: str) -> dict[int, set[str]]:
    found: dict[int, set[str]] = {}
    for node in captures(NAME_QUERY, text).get("id", []):
        found.setdefault(node.start_point[0] + 1, set()).add(node_text(node))
    return found


def include_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line, name) of every `#include "name"` / `#include <name>` line."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        name = included_name(line)
        if name is not None:
            found.append((number, name))
    return found


def included_name(line: str) -> str | None:
    """The name a line `#include "name"` or `#include <name>` includes; None on any other line."""
    match = _INCLUDE_LINE.match(line)
    return match[1] if match else None
