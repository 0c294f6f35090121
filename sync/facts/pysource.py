"""The value types of a Python module's facts, the text they cut from its source by line and column, and
which modules hold FlagTree's hooks: shared by the `ast` reading (pyfacts) and the libcst one (pyfacts_cst)."""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from sync.facts.layout import LEGACY_HOOK_MODULES, SPEC_HOOK_MODULE


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "positional_only", "positional", "var_positional", "keyword_only", "var_keyword"
    has_default: bool


@dataclass(frozen=True)
class DefSpan:
    """Where a def sits in its module (1-based lines)."""
    first: int  # the first decorator's line, else the def's
    line: int  # the `def` line
    indent: int  # the def's column: what every later line of it loses
    body_line: int  # the first body statement's line (== line for `def f(): return 1`)
    end: int  # the last line of the definition, block footer included

    def to_json(self) -> list[int]:
        return [self.first, self.line, self.indent, self.body_line, self.end]

    @classmethod
    def from_json(cls, stored: list) -> "DefSpan":
        first, line, indent, body_line, end = (int(value) for value in stored)
        return cls(first, line, indent, body_line, end)


@dataclass(frozen=True)
class FunctionFacts:
    qualname: str
    line: int
    params: tuple[Param, ...]
    _text: str = field(default="", repr=False, compare=False)  # the module's text
    _span: DefSpan | None = field(default=None, repr=False, compare=False)

    # Few functions are ever compared: their text is cut only when asked.
    @cached_property
    def signature(self) -> str:
        """The parameter list as written."""
        return _header(self._text, self._span)[0] if self._span is not None else ""

    @cached_property
    def body(self) -> str:
        """The body as written (stripped: for comparing definitions)."""
        return _header(self._text, self._span)[1] if self._span is not None else ""

    @cached_property
    def source(self) -> str:
        """The whole definition as written, decorators included, without the blank lines above it."""
        if self._span is None:
            return "\n"
        span = self._span
        return _dedented(source_lines(self._text), span.first, 0, span.end, span.indent).strip("\n") + "\n"


@dataclass(frozen=True)
class HookSite:
    kind: str  # spec_path | spec | spec_func
    name: str | None  # the function name passed to spec/spec_func (None for spec_path)
    path: str
    line: int
    scope: str  # enclosing qualname, "<module>" at top level
    args: tuple[str, ...]  # the other arguments, as written
    statement_index: int  # index of the enclosing module-level statement
    decorator: bool = False


@dataclass(frozen=True)
class ImportedName:
    module: str  # dotted, without the leading dots
    level: int  # number of leading dots
    name: str
    local: str
    line: int


@dataclass
class ModuleFacts:
    path: str
    error: str | None = None
    hooks: list[HookSite] = field(default_factory=list)
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    import_statement_indices: list[int] = field(default_factory=list)
    relative_imports: list[tuple[int, str]] = field(default_factory=list)  # (line, code)
    imported_names: list[ImportedName] = field(default_factory=list)  # from X import a as b
    backend_selections: list[tuple[int, str]] = field(default_factory=list)

    @property
    def last_import_index(self) -> int:
        return max(self.import_statement_indices, default=-1)


# ---- the source text, by line and column -------------------------------------------------------

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@lru_cache(maxsize=8)
def source_lines(text: str) -> list[str]:
    """The lines with their ends, numbered the way ast numbers them (form feeds do not end a line)."""
    return _LINE.findall(text)


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _strip_indent(line: str, indent: int) -> str:
    return line[indent:] if _indent_of(line) >= indent else line


def _dedented(lines: list[str], first: int, first_col: int, last: int, indent: int) -> str:
    """Lines first..last (1-based), the first from first_col (else without its indentation), each later
    one without `indent` columns of indentation unless it continues a string or a backslash."""
    chosen = lines[first - 1:last]
    if not chosen:
        return ""
    head = chosen[0][first_col:] if first_col else chosen[0][_indent_of(chosen[0][:indent]):]
    if indent == 0:
        return head + "".join(chosen[1:])
    verbatim = _verbatim(chosen) if any('"""' in line or "'''" in line or line.rstrip("\r\n").endswith("\\")
                                        for line in chosen) else frozenset()
    return head + "".join(line if number in verbatim else _strip_indent(line, indent)
                          for number, line in enumerate(chosen[1:], 1))


def _verbatim(lines: list[str]) -> frozenset[int]:
    """Indexes of the lines that start inside a string token or after a backslash continuation."""
    starts: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO("".join(lines)).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                starts.update(range(token.start[0], token.end[0]))  # 0-based indexes of the inner lines
    except (tokenize.TokenError, SyntaxError):
        pass
    for index in range(1, len(lines)):
        previous = lines[index - 1].rstrip("\r\n")
        if previous.endswith("\\") and not previous.lstrip().startswith("#") and index not in starts:
            starts.add(index)
    return frozenset(starts)


@lru_cache(maxsize=4096)
def _header(text: str, span: DefSpan) -> tuple[str, str]:
    """(signature, body) of a def: its header tokenized from `def` to the colon that ends it."""
    lines = source_lines(text)
    header = lines[span.line - 1:span.body_line]
    readline = iter([header[0][span.indent:], *header[1:]]).__next__
    depth, opened, closed, colon = 0, None, None, None
    try:
        for token in tokenize.generate_tokens(readline):
            if token.type != tokenize.OP:
                continue
            if token.string in "([{":
                if depth == 0 and opened is None:
                    opened = token.end
                depth += 1
            elif token.string in ")]}":
                depth -= 1
                if depth == 0 and closed is None:
                    closed = token.start
            elif token.string == ":" and depth == 0 and closed is not None:
                colon = token.end
                break
    except (tokenize.TokenError, SyntaxError, StopIteration):
        pass
    if opened is None or closed is None or colon is None:
        return "", ""

    def absolute(position: tuple[int, int]) -> tuple[int, int]:
        row, col = position
        return span.line + row - 1, col + (span.indent if row == 1 else 0)
    (open_line, open_col), (close_line, close_col) = absolute(opened), absolute(closed)
    inside = _dedented(lines, open_line, open_col, close_line, span.indent)
    cut = len(lines[close_line - 1]) - close_col  # what follows `)` on its line
    signature = (inside[:len(inside) - cut] if cut else inside).strip()
    while signature.startswith("#"):  # a comment right after `(` is the def's in libcst, not the parameters'
        signature = signature.partition("\n")[2].strip()
    colon_line, colon_col = absolute(colon)
    return signature, _dedented(lines, colon_line, colon_col, span.end, span.indent).strip()


def footer(lines: list[str], end: int, body: list[ast.stmt], header_line: int) -> int:
    """The last line of a block's footer: the blank and comment lines after it indented at least as far
    as its statements (libcst's IndentedBlock.footer); end itself for a one-line suite."""
    first = body[0]
    if first.lineno == header_line:
        return end
    indent, last, index = first.col_offset, end, end
    while index < len(lines):
        stripped = lines[index].strip()
        if stripped.startswith("#") and _indent_of(lines[index]) >= indent:
            last = index + 1
        elif stripped:
            break
        index += 1
    return last


def _last_block(node: ast.stmt) -> list[ast.stmt] | None:
    """The statements of a compound statement's last block (whose footer ends the statement)."""
    blocks: list[list[ast.stmt]] = [getattr(node, name) for name in ("body", "orelse", "finalbody")
                                    if getattr(node, name, None)]
    blocks += [handler.body for handler in getattr(node, "handlers", ())]
    blocks += [case.body for case in getattr(node, "cases", ())]
    return max(blocks, key=lambda block: block[-1].end_lineno or 0) if blocks else None


COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
             ast.With, ast.AsyncWith, ast.Try, ast.Match) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def statement_end(lines: list[str], node: ast.stmt) -> int:
    """The last line of a statement with the footers of the blocks it ends with."""
    end = node.end_lineno or node.lineno
    if not isinstance(node, COMPOUND):
        return end
    block = _last_block(node)
    if block is None:
        return end
    return footer(lines, end, block, suite_line(lines, block[0]))


def suite_line(lines: list[str], first: ast.stmt) -> int:
    """first's line when it sits on its header's line (`if x: y`), else 0 (an indented block)."""
    line = lines[first.lineno - 1] if first.lineno <= len(lines) else ""
    prefix = line.encode("utf-8", errors="surrogatepass")[:first.col_offset].decode("utf-8", errors="replace")
    return first.lineno if prefix.strip() else 0


def segment(lines: list[str], node: ast.AST) -> str:
    """The node's text as written (ast columns count UTF-8 bytes)."""
    first, last = node.lineno, node.end_lineno or node.lineno  # type: ignore[attr-defined]
    start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    if first == last:
        line = lines[first - 1]
        if line.isascii():
            return line[start:end]
        return line.encode("utf-8", errors="surrogatepass")[start:end].decode("utf-8", errors="replace")
    head = lines[first - 1].encode("utf-8", errors="surrogatepass")[start:].decode("utf-8", errors="replace")
    tail = lines[last - 1].encode("utf-8", errors="surrogatepass")[:end].decode("utf-8", errors="replace")
    return head + "".join(lines[first:last - 1]) + tail


# Many trunk files import the driver itself; only those that import spec/spec_func from it can hold hooks.
_LEGACY_HOOK_IMPORT = re.compile(
    r"from\s+(?:%s)\s+import\s+[^\n]*\bspec" % "|".join(re.escape(m) for m in LEGACY_HOOK_MODULES))


def is_hook_module(dotted: str) -> bool:
    return dotted.split(".")[-1] == SPEC_HOOK_MODULE or dotted in LEGACY_HOOK_MODULES


def mentions_hooks(text: str) -> bool:
    """Cheap pre-filter so that only files that could hold hooks are parsed."""
    return SPEC_HOOK_MODULE in text or _LEGACY_HOOK_IMPORT.search(text) is not None
