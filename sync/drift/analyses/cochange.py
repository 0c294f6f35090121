"""Co-change: FlagTree-added lines inside a function whose upstream body changed between the tags.

The file merged without a textual conflict (a conflict is reported as one, and ranks above this), so
git had nothing to say; but FlagTree's lines were written against the old body of the function. The
finding names the function, carries the upstream diff of that function and lists FlagTree's lines.
C++ functions come from tree-sitter (cpp.functions), Python ones from ast (line ranges in the fork)
and pyfacts.function_table (the old and new bodies).

Data flow by identifiers decides how sure it is: `co-change` (warning) when FlagTree's lines use a name
that upstream's change brought into the function or took out of it (a local renamed, a field no longer
read, a new variable of the same name), or when upstream removed the function; a name counts only as the same
declaration (a C++ name both sides always qualify, and never alike, is another one; a Python name bound at module
level at both ends is no data flow of the function); `co-change-review` (info)
when FlagTree's lines share no such name with the change (upstream edited other statements of the same
function, or rewrote calls without changing what they name)."""
from __future__ import annotations

import ast
from bisect import bisect_left, bisect_right
import io
import keyword
import re
import textwrap
import tokenize
from collections.abc import Collection
from dataclasses import dataclass

from sync.support.cache import memoized
from sync.git import merge_blobs
from sync.model import Finding
from sync.facts.trees import read_text
from sync.drift.context import DriftContext
from sync.facts.cpp import functions as cpp_functions
from sync.facts.cpp import names_by_line as cpp_names_by_line
from sync.facts.delta import CPP, PY, backend_of, fork_added_lines, text_diff
from sync.facts.pyfacts import first_line, function_table
from sync.facts.pyblobs import Extractor, python_fact


@dataclass(frozen=True)
class Span:
    name: str
    start: int
    end: int


def _def_items(nodes: list[ast.AST]) -> list[tuple]:
    """Every def and class among some nodes of the shared walk: (is a def, name, where its keyword is (line,
    column), where it ends (line, column), its first line with decorators)."""
    return [(not isinstance(node, ast.ClassDef), node.name, node.lineno, node.col_offset,
             node.end_lineno or node.lineno, node.end_col_offset or 0, first_line(node))
            for node in nodes if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def _spans_of(items: list[tuple] | None) -> list[tuple[str, int, int]] | None:
    """(qualname, first line, last line) of every def, in source order; the scope of each is the defs and
    classes whose text holds it (they nest: a def only ever sits in a block)."""
    if items is None:
        return None
    spans: list[tuple[str, int, int]] = []
    scope: list[tuple[int, int, str]] = []  # (end line, end column, name) of the defs and classes open here
    for is_def, name, line, column, end_line, end_column, first in sorted(items, key=lambda item: item[2:4]):
        while scope and scope[-1][:2] <= (line, column):
            scope.pop()
        qualname = ".".join([*(open_name for _, _, open_name in scope), name])
        if is_def:
            spans.append((qualname, first, end_line))
        scope.append((end_line, end_column, name))
    return spans


DEF_SPANS = Extractor("def-spans", 1, _def_items, _spans_of,
                      encode=lambda spans: None if spans is None else [list(span) for span in spans],
                      decode=lambda stored: None if stored is None else
                      [(str(name), int(start), int(end)) for name, start, end in stored],
                      reads=frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef}))


def _python_spans(text: str) -> list[Span] | None:
    """Every def with its qualname and line range: a fact of the shared parse of the fork's Python."""
    found = python_fact("def-spans", text)
    return None if found is None else [Span(name, start, end) for name, start, end in found]


def _spans(path: str, text: str) -> list[Span] | None:
    """Function spans of a fork file (fact cache: by blob id; Python's come from the shared parse)."""
    if path.endswith(PY):
        return _python_spans(text)
    return memoized("cochange-spans", 2, text, _cpp_spans, extra="cpp",
                    encode=lambda spans: [[s.name, s.start, s.end] for s in spans],
                    decode=lambda stored: [Span(str(name), int(start), int(end)) for name, start, end in stored])


def _language(path: str) -> str:
    return "py" if path.endswith(PY) else "cpp"


def _cpp_spans(text: str) -> list[Span]:
    return [Span(f.name, f.start, f.end) for f in cpp_functions(text)]


def _bodies(path: str, text: str) -> dict[str, str] | None:
    """Function name -> whole definition as written, for the old and new tags (fact cache: by blob id)."""
    return memoized("cochange-bodies", 2, text, lambda source: _parse_bodies(path, source),
                    encode=lambda found: found, extra=_language(path),
                    decode=lambda stored: None if stored is None else {str(k): str(v) for k, v in stored.items()})


def _parse_bodies(path: str, text: str) -> dict[str, str] | None:
    if path.endswith(PY):
        table = function_table(text)
        return None if table is None else {name: facts.source for name, facts in table.items()}
    found: dict[str, str] = {}
    for function in cpp_functions(text):
        found.setdefault(function.name, function.text)  # overloads: the first one stands for the name
    return found


def _python_names_by_line(text: str, lines: Collection[int] | None = None,
                          offset: int = 0) -> dict[int, set[str]] | None:
    """Python identifiers (keywords, strings and comments left out) per 1-based line (only those of lines,
    when given: a whole large file's would hold many times its size); None if untokenizable. offset: what
    to add to the text's line numbers (a piece of a file is numbered as the file)."""
    found: dict[int, set[str]] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(textwrap.dedent(text)).readline):
            line = token.start[0] + offset
            if token.type == tokenize.NAME and not keyword.iskeyword(token.string) and (lines is None or line in lines):
                found.setdefault(line, set()).add(token.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    return found


def _names(path: str, text: str, lines: Collection[int] | None = None) -> dict[int, set[str]] | None:
    if path.endswith(PY):
        return _python_names_by_line(text, lines)
    found = cpp_names_by_line(text)
    return found if found is None or lines is None else {line: found[line] for line in lines if line in found}


def _names_in_spans(path: str, text: str, spans: list[Span], lines: set[int]) -> dict[int, set[str]]:
    """_names of the given lines of a fork file, reading only the outermost functions that hold them (a large
    module is not tokenized whole for a few lines); the whole text where that cannot stand for it."""
    if not path.endswith(PY) or "\r" in text:  # ast counts lines as the tokenizer does only without \r
        return _names(path, text, lines) or {}
    ordered = sorted(lines)
    holding = sorted((span for span in spans
                      if bisect_right(ordered, span.end) > bisect_left(ordered, span.start)),
                     key=lambda span: (span.start, -span.end))
    source = text.split("\n")
    found: dict[int, set[str]] = {}
    reached = 0
    for span in holding:
        if span.end <= reached:
            continue  # inside a function already read
        reached = span.end
        names = _python_names_in_span(source, span, lines)
        if names is None:
            return _names(path, text, lines) or {}
        found.update(names)
    return found


def _python_names_in_span(source: list[str], span: Span, lines: set[int]) -> dict[int, set[str]] | None:
    """The identifiers of a def's lines, tokenized alone: the def starts a logical line, so its tokens are
    the whole text's. `if 1:` before it takes any indentation (and dedent leaves the text as it is); None
    where its text does not tokenize alone (e.g. a trailing backslash), to fall back to the whole text."""
    body = "\n".join(source[span.start - 1:span.end]) + "\n"
    return _python_names_by_line("if 1:\n" + body, lines, offset=span.start - 2)


def _all_names(path: str, text: str) -> set[str] | None:
    by_line = _names(path, text)
    return None if by_line is None else set().union(*by_line.values())


def touched_names(path: str, before: str, after: str) -> set[str] | None:
    """Names in exactly one of the two bodies: what upstream's change brought in or took out (None: unknown)."""
    old, new = _all_names(path, before), _all_names(path, after)
    return None if old is None or new is None else old ^ new


_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*")


def _module_names(text: str) -> set[str]:
    """The names a Python module binds at its top level (imports, defs, classes, assignments)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".", 1)[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def _module_level_uses(flagtree_text: str, name: str, fork_text: str, new_text: str) -> bool:
    """Whether every use of a name on FlagTree's lines is a module-level name of the file at both ends, or an
    attribute reached from one (`driver.active` with `driver` imported): upstream moving such a use into or out
    of the function leaves what FlagTree's line names as it was (3.3 -> 3.4: the autotuner's __init__ stopped
    calling `driver.active.get_benchmarker()`, and FlagTree's `driver.active.get_device_interface()` there still
    resolves). A local or an attribute of `self` is the function's data flow: it still counts."""
    uses = [parts for chain in _DOTTED.findall(flagtree_text)
            if name in (parts := [part.strip() for part in chain.split(".")])]
    if not uses:
        return False
    bound = _module_names(fork_text) & _module_names(new_text)
    return all(parts[0] in bound for parts in uses)


def _scopes(text: str, name: str) -> set[str]:
    """How a C++ text spells each use of a name: `ns:<namespace>` after `namespace::`, `member` after `.` or `->`,
    `plain` without either."""
    found = set()
    for match in re.finditer(rf"(?:(\w+)\s*::\s*|(\.|->)\s*)?\b{re.escape(name)}\b", text):
        found.add(f"ns:{match[1]}" if match[1] else "member" if match[2] else "plain")
    return found


def _other_declarations(flagtree: set[str], upstream: set[str]) -> bool:
    """Whether FlagTree's uses of a name and upstream's changed ones name other declarations by their scope alone
    (`tle::registerPasses()` and `plugin.registerPasses()`): both always qualified, never alike. A plain use
    could be either: not told apart."""
    return bool(flagtree) and bool(upstream) and "plain" not in flagtree | upstream and not flagtree & upstream


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def _innermost(spans: list[Span], line: int) -> Span | None:
    inside = [span for span in spans if span.start <= line <= span.end]
    return min(inside, key=lambda span: span.end - span.start) if inside else None


def cochange_findings(context: DriftContext) -> list[Finding]:
    old, new, fork = context.upstream_old, context.upstream_new, context.fork
    findings: list[Finding] = []
    for path, lines in sorted(fork_added_lines(old, fork).items()):
        if not path.endswith(PY + CPP) or not old.exists(path):
            continue  # a file FlagTree created has no upstream body to change under it
        new_path = context.new_path(path)
        if new_path is None or old.blob_id(path) == new.blob_id(new_path):
            continue  # deleted upstream is a conflict; unchanged upstream cannot co-change
        if path.endswith(PY) and not _in_functions(_spans(path, read_text(fork, path) or ""), lines):
            continue  # no FlagTree line in a function (its spans are a fact of the parse done up front)
        if not _merges_cleanly(context, path, new_path):
            continue
        findings.extend(_file_findings(context, path, new_path, lines))
    return findings


def _in_functions(spans: list[Span] | None, lines: Collection[int]) -> bool:
    return spans is not None and any(_innermost(spans, line) is not None for line in lines)


def _merges_cleanly(context: DriftContext, path: str, new_path: str) -> bool:
    outcome = merge_blobs(context.repo, new_path, context.upstream_old.blob_id(path), context.fork.blob_id(path),
                          context.upstream_new.blob_id(new_path), hunks=False)
    return outcome.clean


def _file_findings(context: DriftContext, path: str, new_path: str, lines: frozenset[int]) -> list[Finding]:
    fork_text = read_text(context.fork, path) or ""
    old_text = read_text(context.upstream_old, path) or ""
    new_text = read_text(context.upstream_new, new_path) or ""
    spans = _spans(path, fork_text)
    if spans is None:
        return []  # unparsable: other analyses say so
    by_function: dict[str, list[int]] = {}
    for line in sorted(lines):
        span = _innermost(spans, line)
        if span is not None:
            by_function.setdefault(span.name, []).append(line)
    if not by_function:
        return []  # no FlagTree line inside a function: no upstream body to read (a large module costs seconds)
    old_bodies, new_bodies = _bodies(path, old_text), _bodies(new_path, new_text)
    if old_bodies is None or new_bodies is None:
        return []  # unparsable: other analyses say so
    source = fork_text.splitlines()
    wanted = {line for added in by_function.values() for line in added}
    fork_names = _names_in_spans(path, fork_text, spans, wanted)
    findings = []
    for name, added in by_function.items():
        before = old_bodies.get(name)
        if before is None:
            continue  # FlagTree's own function: upstream never had a body to change
        after = new_bodies.get(name)
        if after is not None and _same(before, after):
            continue
        change = "removed upstream" if after is None else "changed upstream"
        touched = touched_names(path, before, after) if after is not None else None
        used = set().union(*(fork_names.get(line, set()) for line in added))
        shared = sorted(used & touched) if touched is not None else []
        if shared and path.endswith(PY):
            flagtree_text = "\n".join(source[line - 1] for line in added if line <= len(source))
            shared = [name for name in shared if not _module_level_uses(flagtree_text, name, fork_text, new_text)]
        if shared and not path.endswith(PY):
            flagtree_text = "\n".join(source[line - 1] for line in added if line <= len(source))
            shared = [name for name in shared if not _other_declarations(
                _scopes(flagtree_text, name), _scopes(after if after is not None and name in after else before, name))]
        sure = after is None or touched is None or bool(shared)
        if after is None:
            why = "the function is gone at the new tag"
        elif touched is None:
            why = "its names could not be read, so the change is not ranked"
        elif shared:
            why = f"FlagTree's lines use {', '.join(shared[:6])}, which upstream's change brought into or took out of it"
        else:
            why = "FlagTree's lines use no name upstream's change brought in or took out (review)"
        shown = "\n".join(f"{line}: {source[line - 1].strip()}" for line in added[:8] if line <= len(source))
        findings.append(Finding(
            "co-change" if sure else "co-change-review", path,
            f"{len(added)} FlagTree line(s) in {name}, whose body {change} between the tags; the file merged "
            f"cleanly, so nothing checked them against the new body; {why}",
            line=added[0], backend=backend_of(context.owners.owners, path), related_path=new_path,
            diff=text_diff(before, after or "", path, new_path),
            details={"function": name, "flagtree_lines": added, "flagtree_code": shown, "upstream": change,
                     "shared_names": shared, "upstream_touched_names": sorted(touched or [])[:20]}))
    return findings
