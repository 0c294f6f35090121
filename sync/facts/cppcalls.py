"""C++ calls of generated builders and what a C++ file includes: the facts call-signature and op-verifier
drift read. A builder call (`X::get(...)`, `create<Op>(...)`, `Op::create(...)`) is read by tree-sitter;
includes follow one header level, the backend's own include tree first, as its build does."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from posixpath import dirname, join, normpath
from typing import Callable, Iterable, Iterator

from tree_sitter import Node

from sync.facts.cpp import captures
from sync.facts.delta import CPP, TD
from sync.facts.filekinds import CPP_HEADERS, INC_SUFFIXES, TD_SUFFIXES
from sync.facts.layout import backend_dir, is_third_party, third_party_owner
from sync.facts.trees import read_text
from sync.git import GitTree
from sync.support.cache import memoized

# Both are directives that begin a line (only blanks before them). The patterns leave the line's start to
# at_line_start: `^\s*` under re.MULTILINE tries every line of a file, five times the cost of the scan.
_INCLUDE = re.compile(r'#\s*include\s*[<"]([^>"]+)[>"]')
_ALIAS = re.compile(r"namespace\s+(\w+)\s*=\s*([\w:]+)\s*;")
_TEMPLATE_CALL = re.compile(r"\b(create|replaceOpWithNewOp|createOrFold)\s*<\s*([\w:]+)\s*>\s*$")
_LEADING = {"create": 1, "createOrFold": 1, "replaceOpWithNewOp": 1}  # the Location or the replaced op


@dataclass(frozen=True)
class CppCall:
    callee: str  # generated class name, e.g. MemDescType
    written: str  # the call's function as written
    line: int
    count: int  # arguments the builder sees (Location / OpBuilder taken off)
    arguments: tuple[str, ...] = ()  # those arguments' text, in order
    dropped: tuple[str, ...] = ()  # the leading arguments taken off (a Location, an OpBuilder), as written

    def with_location_supplied(self) -> "CppCall":
        """The call as a builder that supplies the Location itself sees it (TritonOpBuilder's create<Op>(...)):
        no leading argument is the Location."""
        return CppCall(self.callee, self.written, self.line, len(self.dropped) + len(self.arguments),
                       self.dropped + self.arguments)


ALL_CALLS = "(call_expression) @call"
# A builder call's function ends in get, getChecked or create, or in a template's `>`: the query keeps only
# those, natively, so that _parse_calls never reads the other calls (nine in ten of a backend's calls).
BUILDER_SHAPED = ('((call_expression function: (_) @function) @call '
                  r'(#match? @function "(get|getChecked|create|>)\s*$"))')


def call_nodes(text: str, query_source: str = ALL_CALLS) -> Iterator[tuple[Node, Node, Node]]:
    """Every C++ call expression with its callee and argument list, in any nesting: found by a tree-sitter
    query (a native walk), listed outermost and rightmost first (the order of a depth-first walk that
    takes the last child first). query_source: a query whose @call captures fewer of them."""
    calls = captures(query_source, text).get("call", [])
    for node in sorted(calls, key=lambda call: (-call.end_byte, call.start_byte)):
        function, arguments = node.child_by_field_name("function"), node.child_by_field_name("arguments")
        if function is not None and arguments is not None:
            yield node, function, arguments


def builder_calls(text: str) -> list[CppCall]:
    """Builder calls of a C++ text, through the fact cache (keyed by blob id)."""
    return memoized("cpp-builder-calls", 3, text, _parse_calls,
                    encode=lambda calls: [[c.callee, c.written, c.line, c.count, list(c.arguments), list(c.dropped)]
                                          for c in calls],
                    decode=lambda stored: [CppCall(str(a), str(b), int(c), int(d), tuple(map(str, e)), tuple(map(str, f)))
                                           for a, b, c, d, e, f in stored])


def _parse_calls(text: str, query_source: str = BUILDER_SHAPED) -> list[CppCall]:
    """query_source: which calls to read (every call gives the same builder calls, slower)."""
    found: list[CppCall] = []
    for node, function, arguments in call_nodes(text, query_source):
        written = (function.text or b"").decode("utf-8", errors="replace")
        parts = [part.strip() for part in re.split(r"::|\.|->", written)]
        template = _TEMPLATE_CALL.search(written)
        if template:
            callee, leading = template[2].split("::")[-1], _LEADING[template[1]]
        elif len(parts) >= 2 and parts[-1] in ("get", "getChecked") and "::" in written:
            callee, leading = parts[-2], 0
        elif len(parts) >= 2 and parts[-1] == "create" and "::" in written:
            callee, leading = parts[-2], 2  # Op::create(builder, loc, ...)
        else:
            continue
        texts = [(child.text or b"").decode("utf-8", errors="replace") for child in arguments.named_children
                 if child.type != "comment"]
        count = len(texts) - leading
        kept = max(count, 0)
        found.append(CppCall(callee, written, node.start_point[0] + 1, count, tuple(texts[len(texts) - kept:]) if kept else (),
                             tuple(texts[:len(texts) - kept])))
    return found


_QUALIFIED_BUILDER = re.compile(r"\b(\w+)\s*(?:::|\.|->)\s*(?:get|getChecked|create)\b")
_TEMPLATE_BUILDER = re.compile(rf"\b(?:{'|'.join(_LEADING)})\s*<\s*([\w:]+)\s*>")


def builder_spellings(text: str) -> frozenset[str]:
    """Every name a builder call of the text could resolve to, as _parse_calls reads a call's function: X of
    `X::get`, `X::getChecked`, `X::create` (or `.`, `->` between them; any spaces) and of `create<ns::X>` (and
    the other template builders). A file that spells no changed name this way holds no call to parse for
    it: one scan of the text, kept in the fact cache."""
    return frozenset(memoized("cpp-builder-spellings", 1, text, _builder_spellings,
                              encode=lambda names: sorted(names), decode=lambda stored: [str(name) for name in stored]))


def _builder_spellings(text: str) -> set[str]:
    return {match[1] for match in _QUALIFIED_BUILDER.finditer(text)} | \
        {match[1].split("::")[-1] for match in _TEMPLATE_BUILDER.finditer(text)}


def include_target(tree: GitTree, path: str, include: str, roots: Iterable[str] = ()) -> str | None:
    """The file an `#include "include"` of path reaches in the tree: the first that exists of the including
    file's directory, the include roots given (a backend's own include trees), the repository's root and
    trunk's include/, the order a compiler searches a quoted include and FlagTree's build puts its -I paths."""
    for root in [dirname(path), *roots, "", "include"]:
        candidate = normpath(join(root, include)) if root else normpath(include)
        if tree.exists(candidate):
            return candidate
    return None


def at_line_start(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """pattern's matches in text that only blanks precede on their line."""
    for match in pattern.finditer(text):
        if not text[text.rfind("\n", 0, match.start()) + 1:match.start()].strip():
            yield match


def include_paths(text: str) -> set[str]:
    """The paths of a C++ text's `#include` directives."""
    return {match[1] for match in at_line_start(_INCLUDE, text)} if "include" in text else set()


@lru_cache(maxsize=4096)
def includes_of(tree: GitTree, path: str, depth: int = 2) -> frozenset[str]:
    """Include paths of a file, and of the headers it includes that the tree has (one more level); a
    backend's file reads a header from the backend's own include tree before trunk's, as its build does.
    Kept per tree and path: every fork file asks of the headers it shares with the others."""
    direct = include_paths(read_text(tree, path) or "")
    seen = set(direct)
    if depth > 1:
        own = _own_include_root(path)
        for include in direct:
            reached = include_target(tree, path, include, [own] if own else [])
            if reached is not None:
                seen |= includes_of(tree, reached, depth - 1)
    return frozenset(seen)


def trunk_dialect_dirs(tree: GitTree, path: str) -> set[str]:
    """The include directories (e.g. triton/Dialect/TritonGPU/IR) whose trunk headers a file sees.

    A backend that keeps its own copy of a directory under third_party/<b>/include/ builds its files
    against that copy (FlagTree's CMake puts the backend's include tree on the path in place of trunk's),
    so upstream's changes to the trunk records of that directory do not reach them."""
    included = {dirname(include) for include in includes_of(tree, path)}
    own = _own_include_root(path)
    return included - _directories_under(tree, own) if own else included


@lru_cache(maxsize=64)
def backend_include_roots(tree: GitTree, owned: str) -> tuple[str, ...]:
    """A backend's own include trees (owned: `third_party/<b>/`): every directory named include above one of its
    headers or TableGen files; its build searches them before trunk's include/."""
    return tuple(sorted({path.split("/include/")[0] + "/include" for path in tree.paths()
                         if path.startswith(owned) and "/include/" in path and path.endswith(HEADERS_AND_TD)}))


HEADERS_AND_TD = CPP_HEADERS + INC_SUFFIXES + TD_SUFFIXES  # what others include (TableGen through its .inc)


def reached_include(tree: GitTree, path: str, include: str) -> str | None:
    """The file an #include of path reaches as FlagTree's build searches: the including file's directory, the
    backend's own include trees, the repository root, trunk's include/."""
    owner = third_party_owner(path)
    roots = backend_include_roots(tree, f"{backend_dir(owner)}/") if owner is not None else ()
    return include_target(tree, path, include, roots)


def _own_include_root(path: str) -> str | None:
    """third_party/<b>/include for a file of backend b; None for trunk files."""
    backend = third_party_owner(path)
    return f"{backend_dir(backend)}/include" if backend is not None else None


@lru_cache(maxsize=32)
def _directories_under(tree: GitTree, root: str) -> frozenset[str]:
    """Every directory (relative to root) that holds a file of the tree under root."""
    prefix = root + "/"
    return frozenset(dirname(path[len(prefix):]) for path in tree.paths() if path.startswith(prefix))


def include_dir(td_path: str) -> str:
    return dirname(td_path[len("include/"):] if td_path.startswith("include/") else td_path)


# ---- which namespace a qualified builder call names ------------------------------------------------

CPP_NAMESPACE = re.compile(r'\blet\s+cppNamespace\s*=\s*"([\w:]+)"')
_QUALIFIER_END = re.compile(r"(?:::\s*)?(?:\w+\s*::\s*)*$")  # `a::b::` (or `::a::`) just before a name


def dir_namespaces(tree: GitTree) -> dict[str, frozenset[str]]:
    """Include directory of trunk .td files -> the C++ namespaces they give their dialect, attributes and types."""
    found: dict[str, set[str]] = {}
    for path in tree.paths():
        if path.endswith(TD) and not is_third_party(path):
            names = {name.lstrip(":") for name in CPP_NAMESPACE.findall(read_text(tree, path) or "")}
            if names:
                found.setdefault(include_dir(path), set()).update(names)
    return {directory: frozenset(names) for directory, names in found.items()}


@lru_cache(maxsize=4)
def dialect_namespaces(tree: GitTree) -> dict[str, frozenset[str]]:
    """dir_namespaces, once per tree (call signatures ask it for every fork file)."""
    return dir_namespaces(tree)


def _aliases_in(text: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for match in at_line_start(_ALIAS, text) if "=" in text else ():
        found.setdefault(match[1], set()).add(match[2].lstrip(":"))
    return found


@lru_cache(maxsize=4)
def _tree_aliases(tree: GitTree) -> dict[str, set[str]]:
    """Every `namespace a = b;` of the tree's C++ files (aliases usually come from a header the file includes
    through others; read only when a call's qualifier is not itself a namespace's ending)."""
    found: dict[str, set[str]] = {}
    for path in tree.paths():
        if path.endswith(CPP):
            text = read_text(tree, path) or ""
            if "namespace" in text:
                for alias, targets in _aliases_in(text).items():
                    found.setdefault(alias, set()).update(targets)
    return found


def qualifier(call: CppCall) -> str:
    """The namespace a builder call spells before the op class (`ttg` of `create<ttg::LocalAllocOp>`, of
    `ttg::LocalAllocOp::create`), without a leading `::`; empty when the class is unqualified."""
    for match in re.finditer(rf"\b{re.escape(call.callee)}\b", call.written):
        before = _QUALIFIER_END.search(call.written[:match.start()])
        return re.sub(r"\s+", "", before[0] if before else "").strip(":")
    return ""


def _ends(namespace: str, spelled: str) -> bool:
    """Whether the C++ namespace ends with the spelled one, a whole component at a time."""
    return namespace == spelled or namespace.endswith("::" + spelled)


def names_op(spelled: str, namespaces: frozenset[str], aliases: Callable[[], dict[str, set[str]]]) -> bool:
    """Whether a call qualified by spelled can name an op of a dialect in these namespaces. Unqualified, or a
    dialect whose namespace is unknown: scope alone decides. A qualifier is looked up from the calling scope,
    so it names a namespace that ends with it; its first component may be a namespace alias."""
    if not spelled or not namespaces:
        return True
    if any(_ends(namespace, spelled) for namespace in namespaces):
        return True
    head, _, rest = spelled.partition("::")
    expanded = {target + ("::" + rest if rest else "") for target in aliases().get(head, set())}
    return any(_ends(namespace, name) for namespace in namespaces for name in expanded)


def file_aliases(tree: GitTree, text: str) -> Callable[[], dict[str, set[str]]]:
    """The namespace aliases a file may use, asked for only when needed: its own, else those of the tree."""
    def aliases() -> dict[str, set[str]]:
        return {**_tree_aliases(tree), **_aliases_in(text)}
    return aliases


# A builder class whose member template create<Op>(args...) (or createOrFold) passes a Location of its own ahead of
# the arguments, as TritonOpBuilder does (`create(Args &&...args) { ...create<OpTy>(loc, std::forward<Args>(args)...)`,
# or `OpTy::create(*builder, loc, ...)`): a call through it passes no Location.
_SUPPLIES_LOCATION = re.compile(
    r"\b(?:create|createOrFold)\s*\(\s*Args\s*&&\s*\.\.\.\s*(\w+)\s*\)\s*\{[^{}]*?\bloc\s*,\s*"
    r"std::forward\s*<\s*Args\s*>\s*\(\s*\1\s*\)\s*\.\.\.")
_CLASS_HEAD = re.compile(r"\b(?:class|struct)\s+(\w+)[^;{()]*\{")


def location_builders(text: str) -> frozenset[str]:
    """The classes of a C++ text whose create<Op>(...) supplies the Location itself (through the fact cache)."""
    if "forward" not in text or "loc" not in text:
        return frozenset()  # cheap: such a create forwards its arguments after a loc
    return frozenset(memoized("cpp-location-builders", 1, text, _location_builders, encode=sorted,
                              decode=lambda stored: [str(name) for name in stored]))


def _location_builders(text: str) -> set[str]:
    found = set()
    for match in _SUPPLIES_LOCATION.finditer(text):
        heads = list(_CLASS_HEAD.finditer(text, 0, match.start()))
        if heads:
            found.add(heads[-1][1])
    return found


def included_location_builders(tree: GitTree, path: str, text: str) -> frozenset[str]:
    """location_builders of the file and of the headers it includes directly (its own directory first, then
    the backend's include tree and trunk's include/, as includes_of resolves them)."""
    found = set(location_builders(text))
    own = _own_include_root(path)
    for include in include_paths(text):
        reached = include_target(tree, path, include, [own] if own else [])
        if reached is not None:
            found |= location_builders(read_text(tree, reached) or "")
    return frozenset(found)


def receiver_types(call: CppCall, text: str) -> set[str]:
    """The types the file declares the call's receiver with (`T &self`, `T *b`, `T b`), for `r.create<...>` and
    `r->create<...>`; empty for another spelling."""
    receiver = re.match(r"\s*([A-Za-z_]\w*)\s*(?:\.|->)", call.written)
    if receiver is None:
        return set()
    name = re.escape(receiver[1])
    return {match[1] for match in re.finditer(rf"\b([A-Za-z_]\w*)\s*[&*]*\s*\b{name}\s*[,)=;]", text)}
