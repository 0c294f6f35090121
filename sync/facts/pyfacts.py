"""Read-only facts of a Python module from one `ast` parse: hook call sites, imports, definitions,
backend selection, module-level statements, and the text of each definition as written.

Python's ast gives these facts several times faster than libcst and keeps no concrete syntax tree
(bench/parsers.py measures both); libcst stays where code is rewritten (sync/builder/hookset.py). Text this
interpreter's parser refuses with a plain syntax error goes to libcst (pyfacts_cst), which knows
newer grammar, so such a file still has facts; nesting CPython refuses stays unparseable.

Text is cut from the source by line and column the way libcst prints a node on its own (the reference,
tests/test_pyfacts_ast.py): a definition runs from its first decorator to its last statement plus the
comment lines indented under its block that follow it (libcst's block footer); every line after the
first loses the definition's own indentation, except lines inside a multi-line string or after a
backslash, which libcst keeps as written.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

from sync.support.cache import memoized
from sync.facts.astwalk import walk_nodes
from sync.facts.layout import HOOK_NAMES, SPEC_HOOK_MODULE
from sync.facts.parsing import Unparseable, cpython_ast, guarded, parsed_ast
from sync.facts.pychunks import over_chunks
from sync.facts.pysource import (COMPOUND, DefSpan, FunctionFacts, HookSite, ImportedName, ModuleFacts, Param,
                                 footer, is_hook_module, segment, source_lines, statement_end,
                                 suite_line)


# ---- definitions ----------------------------------------------------------------------------------

def params_of(args: ast.arguments) -> tuple[Param, ...]:
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    params = [Param(arg.arg, "positional_only" if index < len(args.posonlyargs) else "positional",
                    index >= first_default) for index, arg in enumerate(positional)]
    if args.vararg is not None:
        params.append(Param(args.vararg.arg, "var_positional", False))
    params += [Param(arg.arg, "keyword_only", default is not None)
               for arg, default in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg is not None:
        params.append(Param(args.kwarg.arg, "var_keyword", False))
    return tuple(params)


def first_line(statement: ast.stmt) -> int:
    """The line a statement starts on, its decorators included (a def's or a class's text starts there)."""
    return min([statement.lineno, *(decorator.lineno for decorator in getattr(statement, "decorator_list", ()))])


def _def_facts(lines: list[str], text: str, qualname: str, node: ast.FunctionDef | ast.AsyncFunctionDef,
               line: int) -> FunctionFacts:
    first = first_line(node)
    end = footer(lines, node.end_lineno or node.lineno, node.body, suite_line(lines, node.body[0]))
    span = DefSpan(first, node.lineno, node.col_offset, node.body[0].lineno, end)
    return FunctionFacts(qualname, line, params_of(node.args), text, span)


@lru_cache(maxsize=1024)
def function_table(text: str) -> dict[str, FunctionFacts] | None:
    """Every def by qualname (classes and functions nest; defs under if/try/with/for count), without
    line numbers: for comparing definitions between trees. None when the text does not parse."""
    found = guarded(lambda: _function_table(text))
    if isinstance(found, _NeedsLibcst):
        from sync.facts.pyfacts_cst import function_table_cst
        return function_table_cst(text)
    return None if isinstance(found, Unparseable) else found


class _NeedsLibcst:
    """A plain syntax error for this interpreter: libcst may know the grammar."""


def _parse(text: str) -> ast.Module | _NeedsLibcst:
    """CPython's tree; nesting it refuses raises UnparseableError (inside guarded)."""
    module = cpython_ast(text)
    return _NeedsLibcst() if module is None else module


def _function_table(text: str) -> dict[str, FunctionFacts] | _NeedsLibcst:
    return over_chunks(text, _parse, lambda trees: _table_of(text, trees))


def _table_of(text: str, trees: Iterator[ast.Module]) -> dict[str, FunctionFacts]:
    lines = source_lines(text)
    table: dict[str, FunctionFacts] = {}

    def walk(statements: list[ast.stmt], scope: tuple[str, ...], suite: bool = False) -> None:
        for statement in statements:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = ".".join((*scope, statement.name))
                if qualname not in table:
                    table[qualname] = _def_facts(lines, text, qualname, statement, 0)
                walk(_block(lines, statement), (*scope, statement.name))
            elif isinstance(statement, ast.ClassDef):
                walk(_block(lines, statement), (*scope, statement.name))
            elif isinstance(statement, COMPOUND):
                for block in _blocks(statement):
                    walk(_indented(lines, block), scope)

    for tree in trees:  # the chunks' statements in order are the module's (pychunks)
        walk(tree.body, ())
        del tree
    return table


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """A compound statement's blocks in the order libcst's statement walk takes them: the body, the else
    (an elif is an If there), the finally, then the except handlers (match cases it does not enter)."""
    found = [getattr(node, "body", []), getattr(node, "orelse", []), getattr(node, "finalbody", [])]
    found += [handler.body for handler in getattr(node, "handlers", ())]
    return [block for block in found if block]


def _indented(lines: list[str], block: list[ast.stmt]) -> list[ast.stmt]:
    """libcst's walk sees only indented blocks (`if x: def f(): ...` is not valid anyway; a one-line
    `class C: x = 1` holds no statements for it); an elif shares no line with its parent."""
    if len(block) == 1 and isinstance(block[0], ast.If):
        return block
    return [] if suite_line(lines, block[0]) else block


def _block(lines: list[str], node: ast.stmt) -> list[ast.stmt]:
    return _indented(lines, node.body)  # type: ignore[attr-defined]


# ---- module facts ---------------------------------------------------------------------------------

def names_backend(expr: ast.expr) -> bool:
    """FLAGTREE_BACKEND or x.FLAGTREE_BACKEND."""
    if isinstance(expr, ast.Attribute):
        return expr.attr == "FLAGTREE_BACKEND"
    return isinstance(expr, ast.Name) and expr.id == "FLAGTREE_BACKEND"


def statement_groups(lines: list[str], body: list[ast.stmt]) -> list[list[ast.stmt]]:
    """Module-level statements as libcst counts them: simple statements sharing a line (`a; b`) are one."""
    groups: list[list[ast.stmt]] = []
    for statement in body:
        previous = groups[-1][-1] if groups else None
        if previous is not None and not isinstance(statement, COMPOUND) and not isinstance(previous, COMPOUND) \
                and statement.lineno == previous.end_lineno:
            groups[-1].append(statement)
        else:
            groups.append([statement])
    return groups


class _Collector:
    """One pre-order walk in source order, the order libcst's visitor sees the nodes in."""

    def __init__(self, facts: ModuleFacts, lines: list[str], text: str, positions: bool) -> None:
        self.facts, self.lines, self.text, self.positions = facts, lines, text, positions
        self.scope: list[str] = []
        self.statement_index = -1
        self.hook_aliases: dict[str, str] = {}  # local name -> hook name
        self.spec_module_aliases: set[str] = set()  # names bound to the flagtree_spec module

    def _line(self, node: ast.AST) -> int:
        return node.lineno if self.positions else 0  # type: ignore[attr-defined]

    def _code(self, node: ast.AST) -> str:
        return segment(self.lines, node).strip()

    def run(self, module: ast.Module) -> None:
        """Visit a module's statements, or the next chunk's (pychunks): a chunk starts with a def, a class or
        a decorator, never a statement that shares its line with the one before (statement_groups)."""
        first = self.statement_index + 1
        groups = statement_groups(self.lines, module.body)
        for index, group in enumerate(groups, first):
            if any(isinstance(statement, (ast.Import, ast.ImportFrom)) for statement in group):
                self.facts.import_statement_indices.append(index)
        for index, group in enumerate(groups, first):
            self.statement_index = index
            for statement in group:
                self.visit(statement)

    def visit(self, node: ast.AST) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, _MARK):
                self.scope.pop()
                continue
            children = self._enter(current)
            stack.extend(reversed(children))

    def _enter(self, node: ast.AST) -> list:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = ".".join([*self.scope, node.name])
            if qualname not in self.facts.functions:
                self.facts.functions[qualname] = _def_facts(self.lines, self.text, qualname, node, self._line(node))
            for decorator in node.decorator_list:
                if self._hook_of(decorator) == "spec_func":
                    self.facts.hooks.append(HookSite(
                        "spec_func", node.name, self.facts.path, self._line(decorator),
                        self._scope_name(), (), self.statement_index, decorator=True))
            self.scope.append(node.name)  # libcst's visitor enters the def before its decorators
            returns = [node.returns] if node.returns is not None else []
            return [*node.decorator_list, node.args, *returns, *node.body, _MARK()]
        if isinstance(node, ast.ClassDef):
            self.scope.append(node.name)
            return [*node.decorator_list, *node.bases, *node.keywords, *node.body, _MARK()]
        if isinstance(node, ast.ImportFrom):
            self._import_from(node)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if is_hook_module(alias.name):
                    self.spec_module_aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.Call):
            self._call(node)
            return [node.func, *_in_source_order([*node.args, *node.keywords])]
        elif isinstance(node, ast.Compare):
            if any(names_backend(expr) for expr in (node.left, *node.comparators)):
                self.facts.backend_selections.append((self._line(node), self._code(node)))
        elif isinstance(node, ast.IfExp):
            return [node.body, node.test, node.orelse]
        elif isinstance(node, ast.Dict):
            return [item for pair in zip(node.keys, node.values) for item in pair if item is not None]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return [node.elt, *node.generators]
        elif isinstance(node, ast.DictComp):
            return [node.key, node.value, *node.generators]
        return list(ast.iter_child_nodes(node))

    def _import_from(self, node: ast.ImportFrom) -> None:
        module, level, line = node.module or "", node.level, self._line(node)
        if level:
            self.facts.relative_imports.append((line, self._import_code(node)))
        if len(node.names) == 1 and node.names[0].name == "*":
            self.facts.imported_names.append(ImportedName(module, level, "*", "*", line))
            return
        if is_hook_module(module):
            for alias in node.names:
                if alias.name in HOOK_NAMES:
                    self.hook_aliases[alias.asname or alias.name] = alias.name
        for alias in node.names:
            local = alias.asname or alias.name
            self.facts.imported_names.append(ImportedName(module, level, alias.name, local, line))
            if alias.name == SPEC_HOOK_MODULE:
                self.spec_module_aliases.add(local)

    def _import_code(self, node: ast.ImportFrom) -> str:
        """libcst's ImportFrom owns the semicolon after it (`from . import a; b = 1`)."""
        code = segment(self.lines, node)
        rest = self.lines[(node.end_lineno or node.lineno) - 1].encode("utf-8", errors="surrogatepass")[
            node.end_col_offset:].decode("utf-8", errors="replace")
        after = rest.lstrip(" \t")
        if after.startswith(";"):
            code += rest[:len(rest) - len(after) + 1]
        return code.strip()

    def _hook_of(self, func: ast.expr) -> str | None:
        if isinstance(func, ast.Name):
            return self.hook_aliases.get(func.id)
        if isinstance(func, ast.Attribute) and func.attr in HOOK_NAMES:
            if self._code(func.value) in self.spec_module_aliases:
                return func.attr
        return None

    def _scope_name(self) -> str:
        return ".".join(self.scope) or "<module>"

    def _call(self, node: ast.Call) -> None:
        hook = self._hook_of(node.func)
        if hook is None:
            return
        args: list[ast.AST] = _in_source_order([*node.args, *node.keywords])
        name = None
        first = args[0] if args else None
        if hook != "spec_path" and isinstance(first, ast.Constant) and isinstance(first.value, (str, bytes)) \
                and self._plain_string(first):
            value = first.value
            name = value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value
            args = args[1:]
        self.facts.hooks.append(HookSite(
            hook, name, self.facts.path, self._line(node), self._scope_name(),
            tuple(self._argument(arg) for arg in args), self.statement_index))

    def _plain_string(self, node: ast.Constant) -> bool:
        """libcst's SimpleString: one literal, not implicitly concatenated ('a' 'b')."""
        return _string_tokens(segment(self.lines, node)) == 1

    def _argument(self, arg: ast.AST) -> str:
        """An argument as written, without the comma that follows it."""
        if isinstance(arg, ast.keyword):
            value = self._code(arg.value)
            return f"{arg.arg}={value}" if arg.arg is not None else f"**{value}"
        return self._code(arg)


class _MARK:
    """Where a def's or class's scope ends in the walk."""


def _in_source_order(nodes: list) -> list:
    return sorted(nodes, key=lambda node: (node.lineno, node.col_offset))


def comment_spans(text: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where the Python text's comments stand: ((line, column), (line, column)), lines from 1; none where the
    text does not tokenize."""
    try:
        return [(token.start, token.end) for token in tokenize.generate_tokens(io.StringIO(text).readline)
                if token.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return []


def _string_tokens(code: str) -> int:
    """How many string tokens a literal's text holds (2 or more: implicit concatenation)."""
    try:
        return sum(token.type == tokenize.STRING for token in tokenize.generate_tokens(io.StringIO(code).readline))
    except (tokenize.TokenError, SyntaxError):
        return 0


@lru_cache(maxsize=1024)
def parse_module_facts(path: str, text: str, positions: bool = True) -> ModuleFacts:
    """Cached on (path, text): a file unchanged between trees (old tag, fork, target) is parsed once,
    and through the fact cache across runs.

    The result is shared between callers: treat it as read-only. Without positions every line number
    is 0: for files whose facts are compared, never shown.
    """
    return memoized("module-facts", 2, text, lambda source: _parse_module_facts(path, source, positions),
                    _encode_facts, lambda stored: _decode_facts(stored, text), extra=f"{path}\0{positions}")


def _encode_facts(facts: ModuleFacts) -> dict:
    return {"path": facts.path, "error": facts.error,
            "hooks": [[h.kind, h.name, h.path, h.line, h.scope, list(h.args), h.statement_index, h.decorator]
                      for h in facts.hooks],
            "functions": [[f.qualname, f.line, [[p.name, p.kind, p.has_default] for p in f.params],
                           f._span.to_json() if f._span is not None else None]
                          for f in facts.functions.values()],
            "import_statement_indices": facts.import_statement_indices,
            "relative_imports": [list(item) for item in facts.relative_imports],
            "imported_names": [[i.module, i.level, i.name, i.local, i.line] for i in facts.imported_names],
            "backend_selections": [list(item) for item in facts.backend_selections]}


def _decode_facts(stored: dict, text: str) -> ModuleFacts:
    functions = {str(qualname): stored_function_facts(text, str(qualname), int(line), params, span)
                 for qualname, line, params, span in stored["functions"]}
    return ModuleFacts(
        str(stored["path"]), stored["error"],
        [HookSite(kind, name, path, int(line), scope, tuple(args), int(index), bool(decorator))
         for kind, name, path, line, scope, args, index, decorator in stored["hooks"]],
        functions,
        [int(index) for index in stored["import_statement_indices"]],
        [(int(line), str(code)) for line, code in stored["relative_imports"]],
        [ImportedName(module, int(level), name, local, int(line))
         for module, level, name, local, line in stored["imported_names"]],
        [(int(line), str(code)) for line, code in stored["backend_selections"]])


def stored_function_facts(text: str, qualname: str, line: int, params: list, span: list | None) -> FunctionFacts:
    """A def's facts read back from the fact cache: parameters as stored, the text cut by the stored span.
    Without a span the facts came from the libcst fallback, which gives the text again."""
    if span is not None:
        return FunctionFacts(qualname, line, tuple(Param(str(n), str(k), bool(d)) for n, k, d in params), text,
                             DefSpan.from_json(span))
    found = (function_table(text) or {}).get(qualname)
    if found is not None:
        return replace(found, line=line)
    return FunctionFacts(qualname, line, tuple(Param(str(n), str(k), bool(d)) for n, k, d in params))


def _parse_module_facts(path: str, text: str, positions: bool) -> ModuleFacts:
    def collect(trees: Iterator[ast.Module]) -> ModuleFacts:
        facts = ModuleFacts(path)
        collector = _Collector(facts, source_lines(text), text, positions)
        for tree in trees:  # hook aliases and the statement index carry over from chunk to chunk
            collector.run(tree)
            del tree
        return facts
    facts = guarded(lambda: over_chunks(text, _parse, collect))
    if isinstance(facts, _NeedsLibcst):
        from sync.facts.pyfacts_cst import module_facts_cst
        return module_facts_cst(path, text, positions)
    return ModuleFacts(path, error=facts.reason) if isinstance(facts, Unparseable) else facts


def normalized_statements(text: str) -> set[str] | None:
    """Module-level statements as written (with the comment lines above each), stripped; None when the
    text does not parse (fact cache)."""
    return memoized("statements", 2, text, _normalized_statements,
                    encode=lambda found: None if found is None else sorted(found),
                    decode=lambda stored: None if stored is None else set(map(str, stored)))


def _normalized_statements(text: str) -> set[str] | None:
    def statements(trees: Iterator[ast.Module]) -> set[str]:
        lines = source_lines(text)
        found: set[str] = set()
        start: int | None = None  # libcst's Module.header: every comment and blank line above the first statement
        for tree in trees:
            for group in statement_groups(lines, tree.body):
                if start is None:
                    start = first_line(group[0]) - 1
                end = statement_end(lines, group[-1])
                found.add("".join(lines[start:end]).strip())
                start = end
            del tree
        return found
    found = guarded(lambda: over_chunks(text, _parse, statements))
    if isinstance(found, _NeedsLibcst):
        from sync.facts.pyfacts_cst import statements_cst
        return statements_cst(text)
    return None if isinstance(found, Unparseable) else found


@dataclass(frozen=True)
class StringLiteral:
    """One string literal of a module as its text reads. body: what lies between its quotes, every line where it
    is in the file once the first line is `line` (an f-string's `{{`/`}}` as one brace, each replacement field a
    blank keeping its newlines, `\\"` as `"`); fields: an f-string's replacement fields, (line, expression)."""
    line: int
    body: str
    fields: tuple[tuple[int, str], ...] = ()


def string_literals(text: str) -> list[StringLiteral]:
    """Every string literal of a Python text (str, not bytes), in the order a walk of its tree meets them; a text
    that does not parse gives none. Python 3.11's tokenizer reads an f-string as one token: its replacement fields
    are read here. From the C parser's tree and the literal's own text: tokenizing a module costs ten times more."""
    tree = parsed_ast(text)
    if isinstance(tree, Unparseable):
        return []
    lines = text.split("\n")
    inside: set[int] = set()  # the parts of an f-string, read with it
    found: list[StringLiteral] = []
    for node in walk_nodes(tree):
        if id(node) in inside:
            continue
        if isinstance(node, ast.JoinedStr):
            inside.update(id(part) for part in walk_nodes(node))
        elif not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        found += _literals_at(node.lineno, _source_of(lines, node))
    return found


def _source_of(lines: list[str], node: ast.expr) -> str:
    """The node's text as written (ast's columns count UTF-8 bytes)."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    end = node.end_col_offset if node.end_col_offset is not None else len(lines[last].encode())
    if first == last:
        return lines[first].encode()[node.col_offset:end].decode(errors="replace")
    return "\n".join([lines[first].encode()[node.col_offset:].decode(errors="replace"), *lines[first + 1:last],
                      lines[last].encode()[:end].decode(errors="replace")])


def _literals_at(line: int, source: str) -> list[StringLiteral]:
    """The literal(s) of one string expression: several where it concatenates several (`"a" "b"`)."""
    prefix = len(source) - len(source.lstrip("rRbBuUfF"))
    quote = source[prefix:prefix + 3] if source[prefix:prefix + 3] in ('"""', "'''") else source[prefix:prefix + 1]
    body = source[prefix + len(quote):len(source) - len(quote)]
    if quote and source.endswith(quote) and quote not in body.replace("\\\\", "").replace("\\" + quote[0], ""):
        return [read_literal(line, source)]
    try:
        return [read_literal(line + token.start[0] - 1, token.string)
                for token in tokenize.generate_tokens(io.StringIO("(" + source + ")").readline)
                if token.type == tokenize.STRING]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []


def read_literal(line: int, token: str) -> StringLiteral:
    prefix = len(token) - len(token.lstrip("rRbBuUfF"))
    quote = token[prefix:prefix + 3] if token[prefix:prefix + 3] in ('"""', "'''") else token[prefix]
    body = token[prefix + len(quote):len(token) - len(quote)]
    if "r" not in token[:prefix].lower():
        body = body.replace('\\"', '"').replace("\\'", "'")
    if "f" not in token[:prefix].lower():
        return StringLiteral(line, body)
    out: list[str] = []
    fields: list[tuple[int, str]] = []
    index, newlines = 0, 0
    while (brace := _BRACE.search(body, index)) is not None:
        text = body[index:brace.start()]
        out.append(text)
        newlines += text.count("\n")
        if brace[0] in ("{{", "}}"):
            out.append(brace[0][0])
            index = brace.end()
            continue
        end = _field_end(body, brace.start())
        field = body[brace.start() + 1:end - 1]
        fields.append((line + newlines, field))
        out.append(" " + "\n" * field.count("\n"))
        newlines += field.count("\n")
        index = end
    out.append(body[index:])
    return StringLiteral(line, "".join(out), tuple(fields))


_BRACE = re.compile(r"\{\{|\}\}|\{")


def _field_end(body: str, start: int) -> int:
    """Just past the `}` that closes the replacement field opening at start (brackets and quotes inside kept)."""
    depth, index = 0, start
    while index < len(body):
        char = body[index]
        if char in "'\"":
            close = body.find(char, index + 1)
            index = len(body) if close < 0 else close + 1
            continue
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return len(body)


def field_expression(field: str) -> ast.expr | None:
    """The expression of an f-string replacement field, without its `=`, conversion and format spec; None when
    it does not parse."""
    for cut in [len(field)] + [index for index, char in enumerate(field) if char in ":!="]:
        source = field[:cut].strip()
        if not source:
            continue
        try:
            return ast.parse(source, mode="eval").body
        except SyntaxError:
            continue
    return None
