"""Symbol drift: FlagTree-added code that uses trunk symbols upstream removed or re-declared.

A textual merge can be clean and still break: the code FlagTree adds names a field upstream
renamed, calls a Python function whose parameters changed, includes a header that moved.
The analysis starts from the identifiers on the lines FlagTree added (diff old tag -> FlagTree
branch; C++ identifiers through tree-sitter, so comments and strings do not count) and asks,
for those names only, what upstream did between the tags:

- removed: an upstream-changed file declared the name at the old tag (a Python def, class,
  parameter, field or attribute; a C++ function, field, type or enumerator, found by
  tree-sitter queries; a TableGen record or `$parameter`, whose generated accessor `getX` counts
  too) and no upstream-changed file declares it at the new tag. A forward declaration (`class X;`)
  declares nothing: X is defined elsewhere, often in MLIR, so dropping one removes no class;
- signature: a Python function of that name changed its parameters (ast);
- header: an #include FlagTree added names a file upstream deleted or renamed.

Python code reaches C++ only through bindings, which are not modelled here: a name on a Python
line matches only what upstream removed from a Python module (and Python signatures), never a C++
or TableGen declaration that happens to share it (`json.loads` is not the C++ field `loads`).
Names on C++ and TableGen lines match declarations of every language, as they always have.
A backend's own C++ (third_party/<b>/) resolves against trunk's headers, unless it carries its own
copy of the declaring header, or of trunk's headers as a whole (third_party/<b>/include/triton/:
its build reads that copy first, so upstream's removals reach it only when it takes them).
A file under a directory the build leaves out (its parent's CMakeLists.txt adds it only in a commented-out
add_subdirectory) claims nothing; a `typedef` declares its name; a file's own unqualified definition of a
function declares it for the lines after it, so neither it nor those lines use upstream's.
"""
from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from functools import lru_cache
from posixpath import basename, commonprefix, dirname
from typing import Callable, Iterable, Iterator, Sequence

import libcst as cst
from tree_sitter import Node

from sync.support.cache import memoized, memoized_by
from sync.support.parselimit import oversized
from sync.facts.names import significant_name
from sync.facts.pyresolve import foreign, python_uses
from sync.model import Finding
from sync.git import GitTree, Repository, changes_with_renames, conflict_sections, holds_conflict, renames
from sync.git import added_lines as tree_added_lines
from sync.facts.trees import read_text
from sync.facts.cpp import NAME_QUERY, captures, node_text
from sync.facts.cppcalls import CPP_NAMESPACE, dialect_namespaces, include_dir, include_target
from sync.facts.cmakebuilt import unbuilt
from sync.facts.cppscope import declaration_scopes, in_function_body, own_header_copy, resolves, use_contexts
from sync.facts.pyfacts import first_line, params_of
from sync.facts.pysource import Param
from sync.facts.pyfacts_cst import cst_params
from sync.facts.parsing import Unparseable, parsed_ast, parsed_python, skipped
from sync.facts.pyblobs import Extractor, parses, python_fact
from sync.facts.pychunks import over_chunks
from sync.facts.layout import is_third_party, own_trunk_backends, third_party_owner
from sync.facts.delta import fork_added_lines, fork_lines_where
from sync.facts.roles import td_overlays

PY = (".py",)
CPP = (".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx", ".inc")
TD = (".td",)
CODE = PY + CPP + TD
TRUNK_PREFIXES = ("python/triton/", "python/src/", "include/", "lib/", "bin/")
# Too generic to stand for one trunk symbol: they appear and vanish all over a release.
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')
_PY_DEF_LINE = re.compile(r"^(\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Use:
    name: str
    line: int


@dataclass(frozen=True)
class Drift:
    name: str  # the identifier as FlagTree writes it
    change: str  # removed | signature | header
    path: str  # the upstream file where it changed (old tag)
    detail: str = ""
    python: bool = True  # Python lines can mean it: a Python module declared it (see the module docstring)
    native: bool = True  # C++ and TableGen lines can mean it: the first removal found, whatever its language
    scopes: tuple[str, ...] = ()  # where the removed C++/TableGen declarations lived (cppscope); () unknown
    replacement: str = ""  # the declaration the same upstream change added in its place, when exactly one fits


def _indexed(upstream_path: str) -> bool:
    """Whether upstream's declarations in a file of its tree are indexed: trunk's code, and the TableGen of
    upstream's own backends (third_party/amd/...: a FlagTree backend registers the passes their Passes.td
    declares). Not their C++: they vendor toolkit headers (HIP's) whose std names would stand for removals, and
    their deleted headers are read as any header (removed_headers). Not their Python: a name is read by its token."""
    if upstream_path.startswith(TRUNK_PREFIXES):
        return upstream_path.endswith(CODE)
    return is_third_party(upstream_path) and upstream_path.endswith(TD) and "/test/" not in upstream_path


def added_lines(repo: Repository, old: GitTree, fork: GitTree) -> dict[str, set[int]]:
    """FlagTree's added lines per trunk code file (new-side line numbers), from one tree diff."""
    return fork_lines_where(old, fork, lambda path: path.startswith(TRUNK_PREFIXES) and path.endswith(CODE))


def uses_on_lines(path: str, text: str, lines: set[int]) -> tuple[list[Use], list[Use]]:
    """(identifiers, #include paths) on the given lines; comments and strings never count."""
    identifiers: dict[str, int] = {}
    source = text.splitlines()
    includes = [Use(match[1], line) for line in sorted(lines) if 0 < line <= len(source)
                for match in [_INCLUDE.match(source[line - 1])] if match]
    if path.endswith(CPP):
        for name, line in _cpp_identifier_lines(text):
            if line in lines:
                identifiers.setdefault(name, line)
    elif path.endswith(PY):
        identifiers.update(_python_trunk_names(text, lines))
    else:
        for line in sorted(lines):
            if 0 < line <= len(source):
                for name in _TOKEN.findall(source[line - 1].split("//", 1)[0]):
                    identifiers.setdefault(name, line)
    return [Use(name, line) for name, line in identifiers.items() if significant_name(name)], includes


def _cpp_identifier_lines(text: str) -> list[tuple[str, int]]:
    """(identifier, line) of every significant identifier of a C++ text in document order, each pair once
    (fact cache: the split symbol analysis reads a file in each of its parts)."""
    return memoized("cpp-identifier-lines", 1, text, _identifier_lines,
                    encode=lambda pairs: [list(pair) for pair in pairs],
                    decode=lambda stored: [(str(name), int(line)) for name, line in stored])


def _identifier_lines(text: str) -> list[tuple[str, int]]:
    pairs = ((node_text(node), node.start_point[0] + 1) for node in captures(NAME_QUERY, text).get("id", []))
    return list(dict.fromkeys(pair for pair in pairs if significant_name(pair[0])))


def _python_trunk_names(text: str, lines: set[int]) -> dict[str, int]:
    """Names on the lines that can refer to trunk: imported, attributes (x.NAME), calls, keywords.

    FlagTree's own local variables are none of these, which keeps coincidences out.
    """
    found: dict[str, int] = {}
    for name, line in _candidates_on(text, lines):
        if line in lines:
            found.setdefault(name, line)
    return found


FRAGMENT_THRESHOLD = 256 * 1024  # characters: a larger text is tokenized only around the lines asked about


def _candidates_on(text: str, lines: set[int]) -> Iterator[tuple[str, int]]:
    """_trunk_name_candidates of text, in order, at least on the given lines. A large text is tokenized only
    in the runs of module-level statements that hold those lines, each with the statement after it (whose
    first token is the next one the heuristic looks at); its statements come from the shared parse."""
    statements = python_fact("statements", text) if len(text) > FRAGMENT_THRESHOLD and "\r" not in text else None
    if not statements:  # small, \r line ends (ast and the tokenizer count lines apart), or unparsable
        yield from _cached_candidates(text)
        return
    source = text.split("\n")
    for start, end, stop in _fragments(statements, lines):
        fragment = "\n".join(source[start - 1:stop]) + "\n"
        for name, line in _cached_candidates(fragment):
            if line <= end - start + 1:  # the statement after the run only gave the next token
                yield name, line + start - 1


def _cached_candidates(text: str) -> list[tuple[str, int]]:
    return memoized("python-trunk-names", 1, text, _trunk_name_candidates,
                    encode=lambda pairs: [list(pair) for pair in pairs],
                    decode=lambda stored: [(str(name), int(line)) for name, line in stored])


def _fragments(statements: list[tuple[int, int]], lines: set[int]) -> list[tuple[int, int, int]]:
    """(first line, last line, last line with the next statement) of each run of module-level statements
    that holds one of lines; statements sharing a line (`a; b`) are never split."""
    groups: list[list[int]] = []
    for start, end in statements:
        if groups and start <= groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], end)
        else:
            groups.append([start, end])
    ordered = sorted(lines)
    wanted = [bisect_right(ordered, end) > bisect_left(ordered, start) for start, end in groups]
    runs: list[tuple[int, int, int]] = []
    for index, (start, end) in enumerate(groups):
        if not wanted[index]:
            continue
        stop = groups[index + 1][1] if index + 1 < len(groups) else end
        if index and wanted[index - 1]:  # the statement before is in the last run: extend it
            runs[-1] = (runs[-1][0], end, stop)
        else:
            runs.append((start, end, stop))
    return runs


def _trunk_name_candidates(text: str) -> list[tuple[str, int]]:
    """(name, line) of every token _python_trunk_names would take on any line, in order (fact cache).
    The tokens stream past with one of lookahead (a list of a large file's tokens holds many times its
    size); a text that does not tokenize to its end gives nothing."""
    found: list[tuple[str, int]] = []
    tokens = (t for t in tokenize.generate_tokens(io.StringIO(text).readline)
              if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT))
    depth = 0
    in_import = False
    previous: tokenize.TokenInfo | None = None
    try:
        token = next(tokens, None)
        while token is not None:
            following = next(tokens, None)
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth = max(depth - 1, 0)
            new_line = previous is None or previous.end[0] != token.start[0]
            if token.type == tokenize.NAME and token.string in ("import", "from") and new_line:
                in_import = True
            elif previous is not None and new_line and depth == 0:
                in_import = False
            if token.type == tokenize.NAME and not keyword.iskeyword(token.string):
                before = previous.string if previous is not None else ""
                after = following.string if following is not None else ""
                if in_import or before == "." or after == "(" or (after == "=" and depth > 0):
                    found.append((token.string, token.start[0]))
            previous, token = token, following
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []  # unparsable files are reported by other analyses
    return found


_DECLARATION_QUERY = """
(function_declarator declarator: (_) @name)
(field_declaration declarator: (field_identifier) @name)
(class_specifier name: (_) @name)
(struct_specifier name: (_) @name)
(enum_specifier name: (_) @name)
(enumerator name: (identifier) @name)
(alias_declaration name: (type_identifier) @name)
(type_definition declarator: (type_identifier) @name)
"""


# An ODS interface method is a C++ member of every type/op/attr that implements the interface.
_TD_INTERFACE_METHOD = re.compile(r'InterfaceMethod\s*<\s*(?:/\*[^*]*\*/\s*)?(?:"(?:[^"\\]|\\.)*"|\[\{.*?\}\])\s*,'
                                  r'\s*(?:/\*[^*]*\*/\s*)?"[^"]*"\s*,\s*(?:/\*[^*]*\*/\s*)?"(\w+)"', re.DOTALL)
_TD_DECLARATION = re.compile(r"^\s*(?:def|class|defm|multiclass)\s+([A-Za-z_]\w*)|\$([A-Za-z_]\w*)", re.MULTILINE)


def declared_names(path: str, text: str | None) -> set[str]:
    """Names a file declares, by language; the last component of qualified C++ names."""
    if not text:
        return set()
    language = "cpp" if path.endswith(CPP) else "td" if path.endswith(TD) else "py"
    # cpp 2: nothing inside a function body, 4: no forward declaration, 5: typedefs; td 2: the C++ class of a
    # record, 3: interface methods, 4: the functions a pass record generates
    version = 5 if language == "cpp" else 4
    return set(memoized(f"declared-{language}", version, text, lambda source: sorted(_declared_names(path, source)),
                        encode=lambda names: list(names), decode=lambda names: list(names)))


def _forward_declaration(name: Node) -> bool:
    """`class ModuleOp;`: a class or struct named without its body, defined elsewhere (often in MLIR, outside the
    tree). Upstream deleting a header that forward-declared it removes no class (issue 33, the 3.3 -> 3.4 move:
    ModuleOp, OperationPass and RankedTensorType were taken for removed)."""
    holder = name.parent
    return holder is not None and holder.type in ("class_specifier", "struct_specifier") \
        and holder.child_by_field_name("name") == name and holder.child_by_field_name("body") is None


def _declared_names(path: str, text: str) -> set[str]:
    if path.endswith(CPP):
        return {node_text(node).split("::")[-1]
                for node in captures(_DECLARATION_QUERY, text).get("name", [])
                if not in_function_body(node) and not _forward_declaration(node)}
    if path.endswith(TD):
        return {alias for match in _TD_DECLARATION.finditer(text) for token in match.groups() if token
                for alias in _accessor_aliases(token)} | set(_TD_INTERFACE_METHOD.findall(text)) | \
            set(pass_functions(text))
    return set(python_shape(text).names)


_TD_PASS = re.compile(r"^\s*def\s+(\w+)\s*:\s*(?:Interface)?Pass\s*<[^{;]*\{", re.MULTILINE)
_TD_CONSTRUCTOR = re.compile(r'\blet\s+constructor\s*=\s*"(?:[\w:]*::)?(\w+)\s*\(')


def pass_functions(text: str) -> list[str]:
    """The C++ functions the pass records of a .td generate (GEN_PASS_DECL and GEN_PASS_REGISTRATION): create<Pass>,
    register<Pass> and register<Pass>Pass, and the function its `let constructor` names."""
    found = []
    for match in _TD_PASS.finditer(text):
        name = match[1]
        found += [f"create{name}", f"register{name}", f"register{name}Pass"]
        end = text.find("\n}", match.end())
        constructor = _TD_CONSTRUCTOR.search(text[match.end():end if end >= 0 else len(text)])
        if constructor:
            found.append(constructor[1])
    return found


@dataclass(frozen=True)
class PythonShape:
    names: frozenset[str]  # module- and class-level names, function names and parameters
    functions: dict[str, tuple[Param, ...]]  # qualname -> parameters


@lru_cache(maxsize=256)
def python_shape(text: str) -> PythonShape:
    """Names and function parameters from module and class bodies (through the fact cache)."""
    return memoized("python-shape", 1, text, python_shape_ast, _encode_shape, _decode_shape)


def _encode_shape(shape: PythonShape) -> dict:
    return {"names": sorted(shape.names),
            "functions": [[qualname, [[p.name, p.kind, p.has_default] for p in params]]
                          for qualname, params in shape.functions.items()]}


def _decode_shape(stored: dict) -> PythonShape:
    functions = {qualname: tuple(Param(str(name), str(kind), bool(default)) for name, kind, default in params)
                 for qualname, params in stored["functions"]}
    return PythonShape(frozenset(map(str, stored["names"])), functions)


def python_shape_ast(text: str) -> PythonShape:
    """Names and function parameters from module and class bodies.

    Python's ast reads these facts about ten times faster than libcst (bench/parsers.py); libcst
    still answers where ast cannot parse the text, so both give the same shape
    (tests/test_speed_parsers.py compares them).
    """
    # guarded: deep nesting is a result, not a crash; a large text is read chunk by chunk (pychunks)
    found = over_chunks(text, parsed_ast, lambda trees: _shape_of(text, trees))
    return python_shape_libcst(text) if isinstance(found, Unparseable) else found


def _shape_of(text: str, trees: Iterator[ast.Module]) -> PythonShape:
    lines = re.split(r"\r\n|\r|\n", text)  # ast's line breaks (splitlines knows more)
    names: set[str] = set()
    functions: dict[str, tuple[Param, ...]] = {}

    def scan(body: list[ast.stmt], prefix: str) -> None:
        for statement in body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(statement.name)
                params = params_of(statement.args)
                functions.setdefault(prefix + statement.name, params)
                names.update(param.name for param in params)
            elif isinstance(statement, ast.ClassDef):
                names.add(statement.name)
                if not _one_line_body(statement, lines):  # libcst: a suite after the colon holds no statements
                    scan(statement.body, f"{prefix}{statement.name}.")
            elif isinstance(statement, ast.Assign):
                names.update(target.id for target in statement.targets if isinstance(target, ast.Name))
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                names.add(statement.target.id)

    for tree in trees:  # the chunks' statements in order are the module's
        scan(tree.body, "")
        del tree
    return PythonShape(frozenset(names), functions)


def _one_line_body(node: ast.ClassDef, lines: list[str]) -> bool:
    """`class A: x = 1`: the first statement does not start its line (an indented block's does)."""
    first = node.body[0]
    line = lines[first.lineno - 1] if first.lineno <= len(lines) else ""
    return line[:first.col_offset].strip() != ""


def python_shape_libcst(text: str) -> PythonShape:
    """The same shape through libcst: the reference, and the answer where ast cannot parse."""
    module = parsed_python(text)
    if isinstance(module, Unparseable):
        return PythonShape(frozenset(), {})
    names: set[str] = set()
    functions: dict[str, tuple[Param, ...]] = {}

    def scan(body: Sequence[cst.BaseStatement], prefix: str) -> None:
        for statement in body:
            if isinstance(statement, cst.FunctionDef):
                names.add(statement.name.value)
                params = cst_params(statement.params)
                functions.setdefault(prefix + statement.name.value, params)
                names.update(param.name for param in params)
            elif isinstance(statement, cst.ClassDef):
                names.add(statement.name.value)
                if isinstance(statement.body, cst.IndentedBlock):  # not a one-line `class C: ...`
                    scan(statement.body.body, f"{prefix}{statement.name.value}.")
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                        [small.target] if isinstance(small, cst.AnnAssign) else []
                    names.update(target.value for target in targets if isinstance(target, cst.Name))

    scan(module.body, "")
    return PythonShape(frozenset(names), functions)


def _signature(params: tuple[Param, ...]) -> str:
    return ", ".join(param.name + ("=..." if param.has_default else "") for param in params)


def _looks_declared(text: str, name: str) -> bool:
    """Cheap text test before libcst: could this Python file declare name (def, class, assignment)?"""
    return name in _declared_spellings(text)


# A def or class name, a name assigned or annotated at a line's start, a self attribute assigned, a parameter
# (after `(` or `,`; the lookahead leaves the `,` to the next parameter). One scan of a file for every name.
_DECLARED = re.compile(r"(?:\bdef|\bclass)\s+(\w+)|^\s*(\w+)\s*[:=]|self\.(\w+)\s*=|[(,]\s*(\w+)(?=\s*[,)=:])",
                       re.MULTILINE)


@lru_cache(maxsize=4)
def _declared_spellings(text: str) -> frozenset[str]:
    return frozenset(name for match in _DECLARED.findall(text) for name in match if name)


def _fewer_occurrences(before: str, after: str, names: set[str], tablegen: bool) -> set[str]:
    """Names (as FlagTree uses them) that occur fewer times after than before."""
    old_counts, new_counts = Counter(_TOKEN.findall(before)), Counter(_TOKEN.findall(after))
    fewer = {name for name, count in old_counts.items() if count > new_counts[name]}
    if tablegen:
        # a record's name stands for what it generates: accessors, its C++ class, a pass's functions
        fewer = {alias for name in fewer for alias in _accessor_aliases(name) | _pass_aliases(name)}
    return fewer & names


def _pass_aliases(name: str) -> set[str]:
    return {f"create{name}", f"register{name}", f"register{name}Pass"}


def _accessor_aliases(name: str) -> set[str]:
    """A TableGen parameter `allocShape` is used from C++ as getAllocShape(); a record `TTG_LocalBarrierOp`
    generates the C++ class LocalBarrierOp (the dialect prefix before the first `_` is dropped)."""
    capital = name[:1].upper() + name[1:]
    aliases = {name, f"get{capital}", f"set{capital}"}
    prefix, _, rest = name.partition("_")
    if rest and prefix.isupper() and rest[:1].isupper():
        aliases.add(rest)
    return aliases


class UpstreamIndex:
    """What upstream did to a given set of names between the two tags; reads only what it must."""

    def __init__(self, repo: Repository, old: GitTree, new: GitTree) -> None:
        self.repo, self.old, self.new = repo, old, new
        self.changed = []  # (old path, new path or None)
        self.added: list[str] = []  # files upstream added: a declaration moved there is not gone
        self.removed_files: dict[str, str] = {}
        self.removed_headers: dict[str, str] = {}  # any header upstream deleted or moved, its own third_party/ too
        for change in changes_with_renames(old, new):  # the renames drift's context found, not a second pass
            old_path = change.old_path
            if change.status in ("deleted", "renamed") and _header(old_path):
                self.removed_headers[old_path] = _gone_note(change.new_path)
            if not _indexed(old_path):
                continue
            if change.status == "added":
                if change.new_path is not None and _indexed(change.new_path):
                    self.added.append(change.new_path)
                continue
            gone = change.status in ("deleted", "renamed")
            new_path = change.new_path
            self.changed.append((old_path, new_path))
            if gone:
                self.removed_files[old_path] = _gone_note(new_path)

    def drifts(self, names: set[str]) -> dict[str, list[Drift]]:
        return self.combine(self.changes_part(names, 0, 1))

    def changes_part(self, names: set[str], part: int, parts: int) -> list[ChangeNames]:
        """What every changed file of part `part` of `parts` (every parts-th one) did to names: the shares of
        the split analysis, which combine() makes whole in any grouping."""
        found = []
        for number, (old_path, new_path) in enumerate(self.changed):
            if number % parts == part:
                found.append(self._change_names(number, old_path, new_path, names))
        for offset, path in enumerate(self.added):
            number = len(self.changed) + offset
            if number % parts == part:
                after = read_text(self.new, path) or ""
                present = names & set(_TOKEN.findall(after)) if path.endswith(CPP + PY) else \
                    {alias for token in set(_TOKEN.findall(after)) for alias in _accessor_aliases(token)} & names
                declared = sorted(declared_names(path, after) & present) if present else []
                if declared:  # moved here from a file that no longer declares it: not removed
                    found.append(ChangeNames(number, path, path.endswith(PY), [], declared, []))
        return found

    def _change_names(self, number: int, old_path: str, new_path: str | None, names: set[str]) -> ChangeNames:
        before = read_text(self.old, old_path) or ""
        after = (read_text(self.new, new_path) or "") if new_path else ""
        removed: list[str] = []
        declared_after: list[str] = []
        # A declaration that goes away takes at least one occurrence of its name with it: parse
        # only files where a name FlagTree uses (for TableGen, a stem of one) occurs less often.
        fewer = _fewer_occurrences(before, after, names, old_path.endswith(TD))
        if old_path.endswith(PY):  # parse only where a declaration seems to have gone
            fewer = {name for name in fewer if _looks_declared(before, name) and not _looks_declared(after, name)}
        scopes: dict[str, list[str]] = {}
        replacements: dict[str, str] = {}
        if fewer:
            old_names, new_names = declared_names(old_path, before), declared_names(new_path or old_path, after)
            declared_after = sorted(new_names & names)
            removed = sorted((old_names - new_names) & fewer)
            if removed and not old_path.endswith(PY):
                namespaces = dialect_namespaces(self.old).get(include_dir(old_path), frozenset()) \
                    if old_path.endswith(TD) else frozenset()
                scopes = {name: sorted(found) for name, found in
                          _scopes(old_path, before, set(removed), namespaces).items()}
                replacements = _replacements(removed, new_names - old_names)
        signatures = self._python_signatures(old_path, new_path, before, after, names)
        return ChangeNames(number, old_path, (new_path or old_path).endswith(PY), removed, declared_after, signatures,
                           scopes, replacements)

    @staticmethod
    def combine(shares: Iterable[ChangeNames]) -> dict[str, list[Drift]]:
        """The drifts of names from every changed file's share, taken in the order of the changes."""
        changes = sorted(shares, key=lambda change: change.number)
        found: dict[str, list[Drift]] = defaultdict(list)
        removed: dict[str, str] = {}  # name as used -> upstream file that no longer declares it
        scopes: dict[str, set[str]] = defaultdict(set)
        replacements: dict[str, str] = {}
        declared_after: set[str] = set()
        # The same for Python lines: only Python modules count, to remove a name and to declare it again.
        removed_python: dict[str, str] = {}
        declared_after_python: set[str] = set()
        for change in changes:
            declared_after.update(change.declared_after)
            if change.python_after:
                declared_after_python.update(change.declared_after)
            for name, where in change.scopes.items():
                scopes[name].update(where)
            for name, replacement in change.replacements.items():
                replacements.setdefault(name, replacement)
            for name in change.removed:
                removed.setdefault(name, change.old_path)
                if change.old_path.endswith(PY):
                    removed_python.setdefault(name, change.old_path)
        for name in dict.fromkeys([*removed, *removed_python]):  # in the order found
            native = removed.get(name) if name not in declared_after else None  # declared again: moved
            python = removed_python.get(name) if name not in declared_after_python else None
            shape = {"scopes": tuple(sorted(scopes.get(name, ()))), "replacement": replacements.get(name, "")}
            if native is not None and native == python:
                found[name].append(Drift(name, "removed", native, **shape))  # type: ignore[arg-type]
            else:
                if native is not None:
                    found[name].append(Drift(name, "removed", native, python=False, **shape))  # type: ignore[arg-type]
                if python is not None:
                    found[name].append(Drift(name, "removed", python, native=False))
        for change in changes:
            for name, drift in change.signatures:
                found[name].append(drift)
        return found

    @staticmethod
    def _python_signatures(old_path: str, new_path: str | None, before: str, after_text: str,
                           names: set[str]) -> list[tuple[str, Drift]]:
        if not old_path.endswith(PY) or new_path is None:
            return []
        # Parse only where the first line of a def FlagTree calls is not found unchanged at the new tag.
        kept = set(after_text.splitlines())
        if not any(match[1] in names and match[0] not in kept for match in _PY_DEF_LINE.findall(before)):
            return []
        old_shape = python_shape(before)
        new_shape = python_shape(after_text)
        out = []
        for qualname, params in old_shape.functions.items():
            name = qualname.rsplit(".", 1)[-1]
            after = new_shape.functions.get(qualname)
            if name in names and after is not None and after != params:
                out.append((name, Drift(name, "signature", old_path,
                                        f"{qualname}({_signature(params)}) -> ({_signature(after)})")))
        return out


@dataclass(frozen=True)
class ChangeNames:
    """What one upstream-changed file did to the names asked about (a share of UpstreamIndex.drifts)."""
    number: int  # its place among the index's changes
    old_path: str
    python_after: bool  # its new version is a Python module
    removed: list[str]  # names it declared at the old tag and not at the new one, and occur less often
    declared_after: list[str]  # names it declares at the new tag
    signatures: list[tuple[str, Drift]]  # Python functions of those names whose parameters changed
    scopes: dict[str, list[str]] = field(default_factory=dict)  # removed C++/TableGen name -> its scopes (cppscope)
    replacements: dict[str, str] = field(default_factory=dict)  # removed name -> what the change declared instead


_TD_DEF = re.compile(r"^(?:def|class)\s+(\w+)\b[^{;]*\{", re.MULTILINE)


def _scopes(path: str, text: str, names: set[str], namespaces: frozenset[str] = frozenset()) -> dict[str, set[str]]:
    """Where a C++ or TableGen file declares these names (cppscope): TableGen records are types the dialect
    generates, in the C++ namespaces its dialect's `cppNamespace` names (namespaces; none known: any qualifier
    can name them), their `$parameters`' accessors members of the record's class."""
    if path.endswith(CPP):
        return declaration_scopes(text, names)
    found: dict[str, set[str]] = defaultdict(set)
    for function in set(pass_functions(text)) & names:
        found[function].add("type:")  # generated in whatever namespace the dialect's Passes.h opens: any qualifier
    for match in _TD_DEF.finditer(text):
        for alias in _accessor_aliases(match[1]) & names:
            found[alias].update({f"type:{namespace}" for namespace in namespaces} or {"type:"})
        end = text.find("\n}", match.end())
        body = text[match.end():end if end >= 0 else len(text)]
        classes = sorted(_accessor_aliases(match[1]) - {match[1]} - {a for a in _accessor_aliases(match[1])
                                                                    if a.startswith(("get", "set"))}) or [match[1]]
        for param in set(re.findall(r"\$([A-Za-z_]\w*)", body)):
            for alias in _accessor_aliases(param) & names:
                found[alias].update(f"member:{klass}" for klass in classes)
    return dict(found)


def _replacements(removed: list[str], added: set[str]) -> dict[str, str]:
    """A removed name -> the one name the same change declared that differs from it only in a short run of
    characters (CTAEncodingAttr -> CGAEncodingAttr): a rename, named so the maintainer need not search."""
    out: dict[str, str] = {}
    for name in removed:
        fits = [new for new in added if len(new) >= 5 and _short_edit(name, new)]
        if len(fits) == 1:
            out[name] = fits[0]
    return out


def _short_edit(old: str, new: str) -> bool:
    prefix = len(commonprefix([old, new]))
    suffix = len(commonprefix([old[prefix:][::-1], new[prefix:][::-1]]))
    changed = max(len(old), len(new)) - prefix - suffix
    return 0 < changed <= 3 and prefix + suffix >= max(len(old), len(new)) - 3 and prefix + suffix >= 4


_LOCAL_QUERY = """
(init_declarator declarator: (identifier) @name)
(declaration declarator: (identifier) @name)
(parameter_declaration declarator: (identifier) @name)
(parameter_declaration declarator: (_ (identifier) @name))
(optional_parameter_declaration declarator: (identifier) @name)
(for_range_loop declarator: (identifier) @name)
(lambda_capture_specifier (identifier) @name)
"""


def own_names(path: str, text: str) -> set[str]:
    """Names the file binds itself: C++ variables and parameters, Python assignments, parameters,
    attributes set (self.x = ...), defs and classes. A use of one of these refers to that binding,
    not to a declaration upstream removed in some other file (the coincidence issue 12 names).
    Through the fact cache, keyed by blob id (Python: a fact of the shared parse, pyblobs)."""
    if path.endswith(CPP):
        return set(memoized("own-names", 1, text, lambda source: sorted(_cpp_own_names(source)), extra="cpp",
                            encode=lambda names: names, decode=lambda stored: [str(name) for name in stored]))
    if not path.endswith(PY):
        return set()
    found = python_fact("own-names", text)  # from the shared parse and walk of the fork's Python blobs
    if found is None:
        reason = parsed_ast(text)
        skipped(path, reason if isinstance(reason, Unparseable) else "the text does not parse")
        return set()
    return set(found)


def _cpp_own_names(text: str) -> set[str]:
    return {node_text(node) for node in captures(_LOCAL_QUERY, text).get("name", [])}


def _own_names_of(nodes: list[ast.AST]) -> list[str]:
    """Names some nodes of the shared walk bind (see own_names)."""
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return list(names)


def _python_own_names(names: list[str] | None) -> list[str] | None:
    """Names a Python module binds, sorted; None when it does not parse."""
    return None if names is None else sorted(set(names))


OWN_NAMES = Extractor("own-names", 1, _own_names_of, _python_own_names, encode=lambda names: names,
                      decode=lambda stored: None if stored is None else [str(name) for name in stored],
                      reads=frozenset({ast.Name, ast.Attribute, ast.arg, ast.FunctionDef, ast.AsyncFunctionDef,
                                       ast.ClassDef}))


def _statement_spans(nodes: list[ast.AST]) -> list[list[int]]:
    """[first line (decorators included), last line] of module-level statements (depth 1 of the walk)."""
    return [[first_line(node), node.end_lineno or node.lineno] for node in nodes if isinstance(node, ast.stmt)]


STATEMENTS = Extractor("statements", 1, _statement_spans,
                       lambda spans: None if spans is None else [tuple(span) for span in spans],
                       encode=lambda spans: None if spans is None else [list(span) for span in spans],
                       decode=lambda stored: None if stored is None else [(int(a), int(b)) for a, b in stored],
                       reads=frozenset(kind for kind in vars(ast).values()
                                       if isinstance(kind, type) and issubclass(kind, ast.stmt)
                                       and kind is not ast.stmt),
                       depth=1)


def still_used_on(target: GitTree, new: GitTree, paths: set[str], old: GitTree | None = None) -> dict[str, set[str]]:
    """Per file of the FlagTree branch, the names FlagTree's lines still use on the upgraded branch (lines it adds
    over the new tag): a use a person removed there is fixed, whatever the FlagTree branch still says. A file
    upstream renamed (old -> new) is read under its new name, where the replay put FlagTree's lines."""
    moved = renames(old, new) if old is not None else {}
    on_branch = {path if target.exists(path) else moved.get(path, path): path for path in paths}
    lines_by_path = tree_added_lines(new, target, lambda path: path in on_branch)
    used: dict[str, set[str]] = {}
    for path, lines in lines_by_path.items():
        uses, includes = uses_on_lines(path, read_text(target, path) or "", lines)
        used[on_branch[path]] = {use.name for use in uses} | {include.name for include in includes}
    return used


@dataclass
class ForkUses:
    """What FlagTree's added lines use, per trunk code file, and the names its files bind themselves."""
    uses_by_file: dict[str, tuple[list[Use], list[Use]]]  # path -> (identifiers, #include paths)
    own_by_file: dict[str, set[str]]
    flagtree_python: set[str]  # names FlagTree's own Python modules bind (files new in the fork)
    backend_uses: dict[str, list[str]] = field(default_factory=dict)  # third_party/<b>/ C++: words on added lines

    @property
    def names(self) -> set[str]:
        return {use.name for uses, _ in self.uses_by_file.values() for use in uses} | \
            {name for names in self.backend_uses.values() for name in names}


def fork_uses(repo: Repository, old: GitTree, fork: GitTree, start: float = 0.0) -> ForkUses:
    """start: where in the list of files to begin (0 to 1). The parts of a split analysis begin at their own
    share and find the rest in the fact cache, made there meanwhile by the part that began at it."""
    lines_by_path = added_lines(repo, old, fork)
    paths = list(lines_by_path)
    first = int(len(paths) * start)
    uses = ForkUses({}, {}, set())
    for path in paths[first:] + paths[:first]:
        text = read_text(fork, path) or ""
        uses.uses_by_file[path] = uses_on_lines(path, text, lines_by_path[path])
        uses.own_by_file[path] = own_names(path, text)
    for path in paths:  # in the diff's order, whatever the start
        if path.endswith(PY) and not old.exists(path):
            uses.flagtree_python |= uses.own_by_file[path]
    uses.uses_by_file = {path: uses.uses_by_file[path] for path in paths}
    uses.backend_uses = backend_uses(old, fork)
    return uses


_NOT_BUILT_WITH_BACKEND = ("/test/", "/tests/", "/unittest/", "/unittests/")


def backend_uses(old: GitTree, fork: GitTree) -> dict[str, list[str]]:
    """The words on FlagTree's added C++ lines under third_party/<b>/ (backends compile against trunk's
    headers too), in the order they first occur. Words, not a parse: a cheap superset; symbol_join parses
    only the files where one of them names a header declaration upstream removed, and resolves each use
    there (cppscope). Through the fact cache by the two trees: the parts of the split analysis and its join
    read it once."""
    return memoized_by("backend-words", 2, [str(old.tree.id), str(fork.tree.id)], lambda: _backend_uses(old, fork),
                       encode=lambda found: found,
                       decode=lambda stored: {str(path): [str(name) for name in names] for path, names in stored.items()})


def _backend_lines(old: GitTree, fork: GitTree) -> dict[str, set[int]]:
    return fork_lines_where(old, fork, lambda path: is_third_party(path) and path.endswith(CPP)
                            and not any(part in "/" + path for part in _NOT_BUILT_WITH_BACKEND))


def _backend_uses(old: GitTree, fork: GitTree) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path, lines in sorted(_backend_lines(old, fork).items()):
        text = read_text(fork, path) or ""
        if oversized(text):  # parsed as empty everywhere (parselimit): its words would cost memory by the file
            continue
        # One scan of the added lines joined, comments cut (a backend adds half a million lines: a scan per
        # line cost a first run a second); the line of a word is looked up only where it hits (_first_use).
        added = _COMMENT.sub("", "\n".join(_added_source(text, lines)))
        out[path] = [name for name in dict.fromkeys(_TOKEN.findall(added)) if significant_name(name)]
    return out


_COMMENT = re.compile(r"//[^\n]*")


def _added_source(text: str, lines: set[int]) -> list[str]:
    source = text.splitlines()
    return [source[line - 1] for line in sorted(lines) if 0 < line <= len(source)]


_INCLUDES = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.MULTILINE)


def _gone_note(new_path: str | None) -> str:
    return "deleted" if new_path is None else f"renamed to {new_path}"


def _backend_header_hits(old: GitTree, fork: GitTree, gone: dict[str, str], own_trunk: set[str]
                         ) -> dict[str, list[tuple[Use, Drift]]]:
    """#includes on FlagTree's added lines of backend C++ that reach an upstream header upstream deleted or moved
    (anywhere in upstream's tree: its own third_party/proton too). An include reaches the first file that exists
    of: the including file's directory, the backend's own include trees, the repository root, trunk's include/;
    one the backend provides itself is its own. Issue 33, the 3.4.x -> 3.6.0 move: sunrise's ir.cc and
    tsingmicro's RegisterTritonDialects.h include proton's Dialect.h from the directory 3.6 renamed."""
    if not gone:
        return {}
    gone_names = {basename(path) for path in gone}
    found: dict[str, list[tuple[Use, Drift]]] = {}
    for path, lines in sorted(_backend_lines(old, fork).items()):
        if third_party_owner(path) in own_trunk:
            continue
        text = read_text(fork, path) or ""
        owned = "/".join(path.split("/")[:2]) + "/"
        for match in _INCLUDES.finditer(text):
            if basename(match[1]) not in gone_names:
                continue  # cheap: an include reaches a gone header only where it spells its file name
            line = text.count("\n", 0, match.start()) + 1
            if line not in lines:
                continue
            reached = include_target(fork, path, match[1], _include_roots(fork, owned))
            if reached is not None and not reached.startswith(owned) and reached in gone:
                found.setdefault(path, []).append((Use(match[1], line), Drift(match[1], "header", reached,
                                                                                gone[reached])))
    return found


@lru_cache(maxsize=64)
def _include_roots(tree: GitTree, owned: str) -> tuple[str, ...]:
    """The backend's own include trees: every directory named include above one of its headers."""
    return tuple(sorted({found.split("/include/")[0] + "/include" for found in _backend_headers(tree, owned)
                         if "/include/" in found}))


def _first_use(old: GitTree, fork: GitTree, path: str, name: str) -> Use:
    """The first added line of path where the word name occurs outside a // comment (one backend_uses found)."""
    found = _first_added_line(old, fork, path, lambda code: name in code and name in _TOKEN.findall(code))
    if found is None:
        raise AssertionError(f"{name} is not a word of {path}'s added lines")
    return Use(name, found)


def _first_added_line(old: GitTree, fork: GitTree, path: str, wanted: Callable[[str], bool]) -> int | None:
    """The first FlagTree-added line of path whose code before any // comment wanted() keeps."""
    source = (read_text(fork, path) or "").splitlines()
    return next((line for line in sorted(fork_added_lines(old, fork).get(path, frozenset()))
                 if 0 < line <= len(source) and wanted(source[line - 1].split("//", 1)[0])), None)


@lru_cache(maxsize=64)
def _backend_headers(fork: GitTree, backend_dir: str) -> tuple[str, ...]:
    return tuple(path for path in fork.paths() if path.startswith(backend_dir) and _header(path))


def _qualified_as_upstreams(old: GitTree, fork: GitTree, backend_dir: str, path: str, name: str,
                            drift: Drift) -> Use | None:
    """The first added line where a backend file that also has its own declaration of name spells upstream's by
    its dialect's namespace (`triton::MakeTensorPtrOp` beside triton-shared's `tts::MakeTensorPtrOp`, tsingmicro
    on the 3.5.x -> 3.7 move), a namespace the backend's own TableGen that declares name does not use."""
    if not drift.path.endswith(TD):
        return None
    upstream = {namespace.split("::")[-1] for namespace in dialect_namespaces(old).get(include_dir(drift.path), ())}
    own = {namespace.split("::")[-1] for namespace in _backend_namespaces(fork, backend_dir, name)}
    if not upstream - own:
        return None
    spelled = re.compile(rf"\b(?:{'|'.join(map(re.escape, sorted(upstream - own)))})\s*::\s*{re.escape(name)}\b")
    line = _first_added_line(old, fork, path, lambda code: spelled.search(code) is not None)
    return Use(name, line) if line is not None else None


@lru_cache(maxsize=64)
def _backend_namespaces(fork: GitTree, backend_dir: str, name: str) -> frozenset[str]:
    """The namespaces (cppNamespace) of the backend's own TableGen directories that declare name."""
    declaring = {dirname(path) for path in fork.paths() if path.startswith(backend_dir) and path.endswith(TD)
                 and name in (text := read_text(fork, path) or "") and name in declared_names(path, text)}
    return frozenset(namespace.lstrip(":") for path in fork.paths() if path.endswith(TD) and dirname(path) in declaring
                     for namespace in CPP_NAMESPACE.findall(read_text(fork, path) or ""))


def _backend_declares(fork: GitTree, backend_dir: str, names: set[str]) -> set[str]:
    """Which of the names the backend's own headers or TableGen declare: the nearest declaration, which its
    uses mean (a backend's own helper of an upstream name is not upstream's removed one)."""
    found: set[str] = set()
    for path in _backend_headers(fork, backend_dir):
        text = read_text(fork, path) or ""
        present = {name for name in names - found if name in text}
        if present:
            found |= declared_names(path, text) & present
    return found


def _header(path: str) -> bool:
    """A declaration other files can reach: a header, or TableGen (its generated .inc is included)."""
    return path.endswith((".h", ".hpp", ".hh", ".inc") + TD)


def symbol_part(repo: Repository, old: GitTree, new: GitTree, fork: GitTree, part: int,
                parts: int) -> list[ChangeNames]:
    """Part `part` of `parts` of the analysis: what its share of the upstream-changed files did to the names
    FlagTree's lines use (symbol_join makes the findings of all of them)."""
    names = fork_uses(repo, old, fork, start=part / parts).names
    return UpstreamIndex(repo, old, new).changes_part(names, part, parts)


def symbol_findings(repo: Repository, old: GitTree, new: GitTree, fork: GitTree,
                    owners_of: Callable[[str], list[str]], target: GitTree | None = None) -> list[Finding]:
    """target: the upgraded branch, when one was given; a use it no longer has is not reported."""
    uses = fork_uses(repo, old, fork)
    share = UpstreamIndex(repo, old, new).changes_part(uses.names, 0, 1)
    return symbol_join(repo, old, new, fork, owners_of, [share], target, uses)


def _without_own_tablegen(fork: GitTree, hits_by_file: dict[str, list[tuple[Use, Drift]]]) \
        -> dict[str, list[tuple[Use, Drift]]]:
    """Less what a backend's file uses from a .td the backend builds its own version of (a TableGen overlay):
    its build generates the names from its own records, whatever trunk's new version drops (issue 33, the
    3.5.x -> 3.7 move: ascend's own TritonOps.td keeps LoadOp's boundaryCheck, so getBoundaryCheck stands)."""
    overlays = td_overlays(fork) if any(drift.path.endswith(TD) for hits in hits_by_file.values()
                                        for _, drift in hits) else frozenset()
    if not overlays:
        return hits_by_file
    kept = {path: [(use, drift) for use, drift in hits if (third_party_owner(path), drift.path) not in overlays]
            for path, hits in hits_by_file.items()}
    return {path: hits for path, hits in kept.items() if hits}


def symbol_join(repo: Repository, old: GitTree, new: GitTree, fork: GitTree, owners_of: Callable[[str], list[str]],
                shares: Sequence[list[ChangeNames]], target: GitTree | None = None,
                uses: ForkUses | None = None) -> list[Finding]:
    """The findings from the shares of every part (symbol_part), in any order; uses: fork_uses when known."""
    uses = uses or fork_uses(repo, old, fork)
    uses_by_file, own_by_file, flagtree_python = uses.uses_by_file, uses.own_by_file, uses.flagtree_python
    index = UpstreamIndex(repo, old, new)
    drifts = index.combine(change for share in shares for change in share)
    hits_by_file: dict[str, list[tuple[Use, Drift]]] = {}
    for path, (identifiers, includes) in sorted(uses_by_file.items()):
        python = path.endswith(PY)  # Python lines reach only Python declarations (module docstring)
        own = own_by_file[path] | (flagtree_python if python else set())
        hits = [(use, drift) for use in identifiers if use.name not in own
                for drift in drifts.get(use.name, [])
                if drift.path != path and (drift.python if python else drift.native)
                and (not path.endswith(CPP) or drift.change != "removed" or _header(drift.path))]
        if target is not None:
            # the FlagTree branch's file still declares what upstream removed from it: the upgraded file says
            hits += _same_file_removals(path, target, identifiers, drifts)
        for include in includes:
            for removed, note in index.removed_files.items():
                if removed.endswith("/" + include.name) or removed == include.name:
                    hits.append((include, Drift(include.name, "header", removed, note)))
        if hits:
            hits_by_file[path] = hits
    # A backend that carries its own copy of trunk's headers (third_party/<b>/include/triton/) compiles against that
    # copy: upstream's removals reach it only when it takes them (the copy kinds say what changed there).
    own_trunk = own_trunk_backends(fork) if uses.backend_uses else set()
    for path, include_hits in _backend_header_hits(old, fork, index.removed_headers, own_trunk).items():
        hits_by_file.setdefault(path, []).extend(include_hits)
    for path, words in uses.backend_uses.items():
        if third_party_owner(path) in own_trunk:
            continue
        backend_dir = "/".join(path.split("/")[:2]) + "/"
        hits = [(_first_use(old, fork, path, name), drift) for name in words for drift in drifts.get(name, [])
                if drift.native and drift.change == "removed" and drift.scopes and _header(drift.path)
                and not own_header_copy(fork, backend_dir, drift.path)]
        if hits:
            text = read_text(fork, path) or ""
            mine = own_names(path, text)
            theirs = _backend_declares(fork, backend_dir, {use.name for use, _ in hits}) - mine
            hits = [(use, drift) for use, drift in hits if use.name not in mine and use.name not in theirs] + [
                (qualified, replace(drift, scopes=()))  # its line is where it is spelled as upstream's
                for use, drift in hits if use.name in theirs
                and (qualified := _qualified_as_upstreams(old, fork, backend_dir, path, use.name, drift)) is not None]
        if hits:
            hits_by_file.setdefault(path, []).extend(hits)  # beside its includes of deleted headers
    # a C++ file the build leaves out (a commented-out add_subdirectory above it) breaks nothing
    hits_by_file = _resolved(old, fork, {path: hits for path, hits in hits_by_file.items()
                                         if not (path.endswith(CPP) and unbuilt(fork, path))})
    hits_by_file = _without_own_tablegen(fork, _resolved_python(old, fork, hits_by_file))
    if target is not None and hits_by_file:
        used = still_used_on(target, new, set(hits_by_file), old)
        hits_by_file = {path: [hit for hit in hits if hit[0].name in used.get(path, set())]
                        for path, hits in hits_by_file.items()}
    findings = []
    # One finding per upstream change and backend: every FlagTree site of a removed declaration (or deleted
    # header) under it, so the maintainer reads the change once and fixes all sites.
    groups: dict[tuple[str | None, str, str], list[tuple[str, Use, Drift]]] = {}
    for path, hits in hits_by_file.items():
        owners = owners_of(path)
        backend = next((owner for owner in owners if owner not in ("shared-trunk", "flagtree-core")), None)
        for use, drift in hits:
            if drift.change in ("removed", "header"):
                groups.setdefault((backend, drift.path, drift.name), []).append((path, use, drift))
        changed = [hit for hit in hits if hit[1].change not in ("removed", "header")]
        if changed:
            findings.append(_symbol_finding("symbol-drift", path, changed, owners, backend))
    for (backend, declaring, name), sites in groups.items():
        findings.append(_removed_finding(backend, sites, owners_of))
    return findings


def _same_file_removals(path: str, target: GitTree, uses: list[Use],
                        drifts: dict[str, list[Drift]]) -> list[tuple[Use, Drift]]:
    """FlagTree's uses of a declaration upstream removed from the same file, where the upgraded file merged
    cleanly and declares the name nowhere: git took upstream's removal and kept FlagTree's lines, so nothing
    conflicts and the use is left without its declaration (a conflicted file is the replay's to report)."""
    python = path.endswith(PY)
    same = [(use, drift) for use in uses for drift in drifts.get(use.name, [])
            if drift.path == path and drift.change == "removed" and (drift.python if python else drift.native)]
    if not same:
        return []
    text = read_text(target, path)
    if text is None:
        return []
    outside: str | None = None  # a conflicted file: the lines outside its conflicts, where a use is FlagTree's alone
    if holds_conflict(text.encode("utf-8", errors="replace")):
        sections = list(conflict_sections(text))
        outside = "".join(line if section is None else "\n" for _, line, section in sections)
        text = "".join(line if section in (None, "ours") else "\n" for _, line, section in sections)  # upstream's side
    if python and not parses(text):
        return []  # what it binds is unknown
    declared = own_names(path, text) | declared_names(path, text)
    return [(use, drift) for use, drift in same if use.name not in declared
            and (outside is None or re.search(rf"\b{re.escape(use.name)}\b", outside))]


def _removed_finding(backend: str | None, sites: list[tuple[str, Use, Drift]],
                     owners_of: Callable[[str], list[str]]) -> Finding:
    sites.sort(key=lambda site: (site[0], site[1].line))
    path, use, drift = sites[0]
    where = [f"{p}:{u.line}" for p, u, _ in sites]
    files = len({p for p, _, _ in sites})
    what = "header deleted or renamed" if drift.change == "header" else f"removed from {drift.path}"
    instead = f"; upstream declares {drift.replacement} in its place" if drift.replacement else ""
    shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
    return Finding("symbol-removed", path,
                   f"{use.name}: {what}{instead} (will not {'import' if path.endswith(PY) else 'build'} as is); "
                   f"FlagTree uses it at {len(where)} site(s) "
                   f"in {files} file(s): {shown}",
                   "port these uses to the new tag's declarations", use.line, backend, related_path=drift.path,
                   details={"symbols": [f"{use.name}:{drift.change}:{drift.path}"], "sites": where,
                            "replacements": {use.name: drift.replacement} if drift.replacement else {},
                            "declaration": use.name, "owners": owners_of(path)})


def _symbol_finding(kind: str, path: str, hits: list[tuple[Use, Drift]], owners: list[str],
                    backend: str | None) -> Finding:
    hits.sort(key=lambda hit: hit[0].line)
    described = [f"{use.name} ({drift.change} in {basename(drift.path)}"
                 f"{': ' + drift.detail if drift.detail else ''}"
                 f"{'; now ' + drift.replacement if drift.replacement else ''})" for use, drift in hits[:6]]
    more = f" and {len(hits) - 6} more" if len(hits) > 6 else ""
    if kind == "symbol-removed":
        message = "FlagTree code here uses trunk declarations upstream removed (will not build as is): "
        action = "port these uses to the new tag's declarations"
    else:
        message = "FlagTree code here uses trunk symbols upstream changed: "
        action = "check these uses against the new tag: the clean merge proves nothing about them"
    return Finding(kind, path, message + ", ".join(described) + more, action, hits[0][0].line, backend,
                   related_path=hits[0][1].path,
                   details={"symbols": [f"{use.name}:{drift.change}:{drift.path}" for use, drift in hits],
                            "replacements": {use.name: drift.replacement for use, drift in hits if drift.replacement},
                            "owners": owners})


def _resolved_python(old: GitTree, fork: GitTree, hits_by_file: dict[str, list[tuple[Use, Drift]]]
                     ) -> dict[str, list[tuple[Use, Drift]]]:
    """Keep a Python use of a removed declaration only where its imports let it mean one of trunk's
    (pyresolve): `struct.unpack` after `import struct` is no use of a trunk method `unpack`. Its line becomes
    the first FlagTree line where it may."""
    def resolve_file(path: str, hits: list[tuple[Use, Drift]], lines: set[int]) -> list[tuple[Use, Drift]]:
        text = read_text(fork, path) or ""
        kept: list[tuple[Use, Drift]] = []
        for use, drift in hits:
            found = python_uses(text, use.name) if drift.change == "removed" else None
            if found is None:
                kept.append((use, drift))
                continue
            where = sorted(found_use.line for found_use in found if found_use.line in lines and not foreign(found_use))
            if where:
                kept.append((Use(use.name, where[0]), drift))
            elif not any(found_use.line in lines for found_use in found):
                kept.append((use, drift))  # a keyword or an import: not a form pyresolve reads
        return kept
    return _per_file(old, fork, hits_by_file, lambda path, hits: path.endswith(PY) and any(
        drift.change == "removed" for _, drift in hits), resolve_file)


def _per_file(old: GitTree, fork: GitTree, hits_by_file: dict[str, list[tuple[Use, Drift]]],
              wanted: Callable[[str, list[tuple[Use, Drift]]], bool],
              resolve_file: Callable[[str, list[tuple[Use, Drift]], set[int]], list[tuple[Use, Drift]]]
              ) -> dict[str, list[tuple[Use, Drift]]]:
    """hits_by_file with each wanted file's hits as resolve_file(path, hits, FlagTree's lines there) keeps them (a
    file left with none drops out); the others as they are."""
    paths = {path for path, hits in hits_by_file.items() if wanted(path, hits)}
    if not paths:
        return hits_by_file
    lines_by_path = fork_lines_where(old, fork, lambda path: path in paths)
    out: dict[str, list[tuple[Use, Drift]]] = {}
    for path, hits in hits_by_file.items():
        kept = resolve_file(path, hits, lines_by_path.get(path, set())) if path in paths else hits
        if kept:
            out[path] = kept
    return out


def _resolved(old: GitTree, fork: GitTree, hits_by_file: dict[str, list[tuple[Use, Drift]]]
              ) -> dict[str, list[tuple[Use, Drift]]]:
    """Keep a C++ use of a removed declaration only where its spelling can mean that declaration (cppscope):
    `vals.push_back` is a member of the receiver's type, not a free function; `MemoryEffects::Write` is
    not an enumerator of another enum. A use nothing resolves is no finding. Its line becomes the first
    FlagTree line where it resolves, and each other line where it does is a site of its own."""
    def resolve_file(path: str, hits: list[tuple[Use, Drift]], lines: set[int]) -> list[tuple[Use, Drift]]:
        names = {use.name for use, drift in hits if drift.change == "removed" and drift.scopes}
        contexts = use_contexts(read_text(fork, path) or "", names)
        # A file's own unqualified definition of a function declares it for every line after it; where upstream
        # removed the name from this very file, only FlagTree's own definition does (upstream's went with it).
        removed_here = {use.name for use, drift in hits if drift.path == path and drift.change == "removed"}
        defined = {name: min((line for (found_name, line), found in contexts.items() if found_name == name
                              and (name not in removed_here or line in lines)
                              and any(context.form == "defines" for context in found)), default=None)
                   for name in names}
        kept: list[tuple[Use, Drift]] = []
        for use, drift in hits:
            if drift.change != "removed" or not drift.scopes:
                kept.append((use, drift))
                continue
            own = defined.get(use.name)
            where = sorted(line for (name, line), found in contexts.items() if name == use.name and line in lines
                           and (own is None or line < own)
                           and any(resolves(context, set(drift.scopes)) for context in found))
            kept += [(Use(use.name, line), drift) for line in where]  # every site, not the first alone
        return kept
    return _per_file(old, fork, hits_by_file, lambda path, hits: path.endswith(CPP) and any(
        drift.change == "removed" and drift.scopes for _, drift in hits), resolve_file)
