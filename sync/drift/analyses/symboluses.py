"""What FlagTree's added lines use, for the symbol analysis (symbols.py): the identifiers and #includes on the
lines it adds to trunk's code files (ForkUses, fork_uses), the names each file binds itself (own_names), and the
names still used on the upgraded branch (still_used_on)."""
from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Iterator

from sync.drift.analyses.symbolbackends import backend_uses
from sync.drift.analyses.symbolterms import CODE, CPP, PY, TRUNK_PREFIXES, Use, _TOKEN
from sync.facts.cpp import NAME_QUERY, captures, node_text, nodes_of_types, parse_tree
from sync.facts.includes import spelled_includes_of
from sync.facts.delta import fork_lines_where
from sync.facts.names import significant_name
from sync.facts.parsing import Unparseable, parsed_ast, skipped
from sync.facts.pyblobs import Extractor, python_fact
from sync.facts.astwalk import walk_nodes
from sync.facts.pyfacts import field_expression, first_line, read_literal, string_literals
from sync.facts.trees import read_text
from sync.git.readlog import unlogged
from sync.git import GitTree, Repository, added_lines as tree_added_lines, renames
from sync.support.cache import memoized


def added_lines(repo: Repository, old: GitTree, fork: GitTree) -> dict[str, set[int]]:
    """FlagTree's added lines per trunk code file (new-side line numbers), from one tree diff."""
    return fork_lines_where(old, fork, lambda path: path.startswith(TRUNK_PREFIXES) and path.endswith(CODE))


def uses_on_lines(path: str, text: str, lines: set[int]) -> tuple[list[Use], list[Use]]:
    """(identifiers, #include paths) on the given lines; comments and strings never count."""
    identifiers: dict[str, int] = {}
    source = text.splitlines()
    includes = [Use(name, line) for line, name in spelled_includes_of(path, text) if line in lines]
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
    return memoized("python-trunk-names", 2, text, _trunk_name_candidates,
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
            if token.type == tokenize.STRING:
                found += _fstring_names(token)
            if token.type == tokenize.NAME and not keyword.iskeyword(token.string):
                before = previous.string if previous is not None else ""
                after = following.string if following is not None else ""
                if in_import or before == "." or after == "(" or (after == "=" and depth > 0):
                    found.append((token.string, token.start[0]))
            previous, token = token, following
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []  # unparsable files are reported by other analyses
    return found


def _fstring_names(token: tokenize.TokenInfo) -> list[tuple[str, int]]:
    """The names an f-string's replacement fields use as _trunk_name_candidates takes them (x.NAME, NAME(...),
    NAME=...): Python 3.11's tokenizer reads the whole f-string as one token, whose names it never sees."""
    found: list[tuple[str, int]] = []
    for line, field in read_literal(token.start[0], token.string).fields:
        expression = field_expression(field)
        for node in walk_nodes(expression) if expression is not None else ():
            name = node.attr if isinstance(node, ast.Attribute) else \
                node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else \
                node.arg if isinstance(node, ast.keyword) else None
            if name:
                found.append((name, line + getattr(node, "lineno", 1) - 1))
    return sorted(found, key=lambda pair: pair[1])


_LOCAL_QUERY = """
(init_declarator declarator: (identifier) @name)
(declaration declarator: (identifier) @name)
(parameter_declaration declarator: (identifier) @name)
(parameter_declaration declarator: (_ (identifier) @name))
(optional_parameter_declaration declarator: (identifier) @name)
(for_range_loop declarator: (identifier) @name)
(lambda_capture_specifier (identifier) @name)
"""


@dataclass(frozen=True)
class EmbeddedC:
    """The C source a Python module's strings hold (a literal with a function definition: a launcher the module
    compiles at run time), read by the C++ reader at the module's own lines."""
    uses: dict[int, set[str]]  # line -> the identifiers there (not comments, not C strings)
    declared: set[str]  # the names its declarations bind: parameters, variables


def embedded_c(text: str) -> EmbeddedC:
    """The C source of every string literal of a Python text that holds a C function definition; an f-string's
    replacement fields are blanks. Names resolve within the module's C: its strings are one program's text.
    Through the fact cache, by the text."""
    if not _C_BLOCK.search(text):  # no line opens a C block: no C source to read (and no parse of the module)
        return EmbeddedC({}, set())
    stored = memoized("embedded-c", 1, text, _embedded_c,
                      encode=lambda found: [[[line, sorted(names)] for line, names in sorted(found.uses.items())],
                                            sorted(found.declared)],
                      decode=lambda stored: EmbeddedC({int(line): {str(name) for name in names}
                                                       for line, names in stored[0]},
                                                      {str(name) for name in stored[1]}))
    return stored


# A line that opens a C function's or statement's block (`) {`, an f-string's `) {{`, or a brace alone): Python
# ends no line so.
_C_BLOCK = re.compile(r"(?:\)\s*|^\s*)\{+[ \t]*$", re.MULTILINE)


def _embedded_c(text: str) -> EmbeddedC:
    uses: dict[int, set[str]] = {}
    declared: set[str] = set()
    for literal in string_literals(text):
        if "{" not in literal.body or ";" not in literal.body:
            continue
        source = "\n" * (literal.line - 1) + literal.body
        if not nodes_of_types(parse_tree(source).root_node, ("function_definition",)):
            continue
        for node in captures(NAME_QUERY, source).get("id", []):
            uses.setdefault(node.start_point[0] + 1, set()).add(node_text(node))
        declared |= {node_text(node) for node in captures(_LOCAL_QUERY, source).get("name", [])}
    return EmbeddedC(uses, declared)


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
    for path in on_branch:
        target.exists(path)  # a diff without rename detection: its answer for a path rests on that path alone
    with unlogged():
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
