"""The libcst reading of a module's facts: the fallback for text this interpreter's `ast` refuses with a
plain syntax error (libcst knows newer grammar), and the reference the ast reading is measured and
tested against (bench/parsers.py, tests/test_pyfacts_ast.py). Gives the same types as pyfacts."""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

import libcst as cst
from libcst.metadata import ByteSpanPositionProvider, MetadataWrapper

from sync.facts.parsing import Unparseable, guarded, python_module
from sync.facts.pysource import FunctionFacts, HookSite, ImportedName, ModuleFacts, Param, is_hook_module
from sync.facts.layout import HOOK_NAMES, SPEC_HOOK_MODULE


@dataclass(frozen=True)
class CstFunctionFacts(FunctionFacts):
    """A def's text printed by libcst from its node."""
    _module: cst.Module | None = field(default=None, repr=False, compare=False)
    _node: cst.FunctionDef | None = field(default=None, repr=False, compare=False)

    def _located(self) -> tuple[cst.Module, cst.FunctionDef]:
        if self._module is not None and self._node is not None:
            return self._module, self._node
        module, nodes = _function_nodes(self._text)
        return module, nodes[self.qualname]

    def _code(self, part: Callable[[cst.FunctionDef], cst.CSTNode]) -> str:
        """Code generation recurses as deep as the tree: guarded, like the parse."""
        def generate() -> str:
            module, node = self._located()
            return module.code_for_node(part(node))
        code = guarded(generate)
        return f"<{code.reason}>" if isinstance(code, Unparseable) else code

    @cached_property
    def signature(self) -> str:
        return self._code(lambda node: node.params).strip()

    @cached_property
    def body(self) -> str:
        return self._code(lambda node: node.body).strip()

    @cached_property
    def source(self) -> str:
        return self._code(lambda node: node.with_changes(leading_lines=())).strip("\n") + "\n"


class _FunctionFinder(cst.CSTVisitor):
    """Every def by qualname, named the way _Collector names them (classes and functions nest)."""

    def __init__(self) -> None:
        self.scope: list[str] = []
        self.nodes: dict[str, cst.FunctionDef] = {}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.nodes.setdefault(".".join([*self.scope, node.name.value]), node)
        self.scope.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scope.pop()


@lru_cache(maxsize=64)
def _function_nodes(text: str) -> tuple[cst.Module, dict[str, cst.FunctionDef]]:
    module = python_module(text)  # only called inside guarded (FunctionFacts._code)
    finder = _FunctionFinder()
    module.visit(finder)
    return module, finder.nodes


def _names_backend(expr: cst.BaseExpression) -> bool:
    """FLAGTREE_BACKEND or x.FLAGTREE_BACKEND, checked on the node: no code generation per comparison."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "FLAGTREE_BACKEND"
    return isinstance(expr, cst.Name) and expr.value == "FLAGTREE_BACKEND"


def cst_params(node: cst.Parameters) -> tuple[Param, ...]:
    params = [Param(p.name.value, "positional_only", p.default is not None) for p in node.posonly_params]
    params += [Param(p.name.value, "positional", p.default is not None) for p in node.params]
    if isinstance(node.star_arg, cst.Param):
        params.append(Param(node.star_arg.name.value, "var_positional", False))
    params += [Param(p.name.value, "keyword_only", p.default is not None) for p in node.kwonly_params]
    if node.star_kwarg is not None:
        params.append(Param(node.star_kwarg.name.value, "var_keyword", False))
    return tuple(params)


class _Collector(cst.CSTVisitor):
    # Byte spans are cheaper to compute than line/column positions; lines come from newline offsets.
    METADATA_DEPENDENCIES = (ByteSpanPositionProvider,)

    def __init__(self, module: cst.Module, facts: ModuleFacts, positions: bool, data: bytes = b"",
                 text: str = "") -> None:
        self.module = module
        self.text = text
        self.positions = positions
        self.line_starts = [0, *(match.end() for match in re.finditer(b"\n", data))]
        self.facts = facts
        self.scope: list[str] = []
        self.statement_index = -1
        self.hook_aliases: dict[str, str] = {}  # local name -> hook name
        self.spec_module_aliases: set[str] = set()  # names bound to the flagtree_spec module
        # libcst visits depth first: entering a top-level statement sets the index for its subtree.
        self.top_level = {id(statement): index for index, statement in enumerate(module.body)}

    def _line(self, node: cst.CSTNode) -> int:
        if not self.positions:
            return 0
        return bisect_right(self.line_starts, self.get_metadata(ByteSpanPositionProvider, node).start)

    def _code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    # module-level statement bookkeeping
    def visit_Module(self, node: cst.Module) -> None:
        for index, statement in enumerate(node.body):
            if isinstance(statement, cst.SimpleStatementLine) and any(
                isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
            ):
                self.facts.import_statement_indices.append(index)

    def on_visit(self, node: cst.CSTNode) -> bool:
        index = self.top_level.get(id(node))
        if index is not None:
            self.statement_index = index
        return super().on_visit(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        module = self._code(node.module) if node.module else ""
        if node.relative:
            self.facts.relative_imports.append((self._line(node), self._code(node)))
        if isinstance(node.names, cst.ImportStar):
            self.facts.imported_names.append(ImportedName(module, len(node.relative), "*", "*", self._line(node)))
        if is_hook_module(module) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                imported = self._code(alias.name)
                local = self._code(alias.asname.name) if alias.asname else imported
                if imported in HOOK_NAMES:
                    self.hook_aliases[local] = imported
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                imported = self._code(alias.name)
                local = self._code(alias.asname.name) if alias.asname else imported
                self.facts.imported_names.append(
                    ImportedName(module, len(node.relative), imported, local, self._line(node)))
                if imported == SPEC_HOOK_MODULE:
                    self.spec_module_aliases.add(local)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            dotted = self._code(alias.name)
            if is_hook_module(dotted):
                self.spec_module_aliases.add(self._code(alias.asname.name) if alias.asname else dotted)

    def _hook_of(self, func: cst.BaseExpression) -> str | None:
        if isinstance(func, cst.Name):
            return self.hook_aliases.get(func.value)
        if isinstance(func, cst.Attribute) and func.attr.value in HOOK_NAMES:
            if self._code(func.value) in self.spec_module_aliases:
                return func.attr.value
        return None

    def _scope_name(self) -> str:
        return ".".join(self.scope) or "<module>"

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        qualname = ".".join([*self.scope, node.name.value])
        self.facts.functions.setdefault(qualname, CstFunctionFacts(
            qualname, self._line(node), cst_params(node.params), self.text, None, self.module, node))
        for decorator in node.decorators:
            if self._hook_of(decorator.decorator) == "spec_func":
                self.facts.hooks.append(HookSite(
                    "spec_func", node.name.value, self.facts.path, self._line(decorator),
                    self._scope_name(), (), self.statement_index, decorator=True))
        self.scope.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scope.pop()

    def visit_Call(self, node: cst.Call) -> None:
        hook = self._hook_of(node.func)
        if hook is None:
            return
        args = list(node.args)
        name = None
        if hook != "spec_path" and args and isinstance(args[0].value, cst.SimpleString):
            value = args[0].value.evaluated_value
            name = value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value
            args = args[1:]
        self.facts.hooks.append(HookSite(
            hook, name, self.facts.path, self._line(node), self._scope_name(),
            tuple(self._argument(arg) for arg in args), self.statement_index))

    def _argument(self, arg: cst.Arg) -> str:
        """An argument as written, without the comma that follows it."""
        value = self._code(arg.value)
        if arg.keyword is not None:
            return f"{arg.keyword.value}={value}"
        return f"{arg.star}{value}"

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(target.comparator for target in node.comparisons)]
        if any(_names_backend(expr) for expr in operands):
            self.facts.backend_selections.append((self._line(node), self._code(node)))


def module_facts_cst(path: str, text: str, positions: bool = True) -> ModuleFacts:
    def collect() -> ModuleFacts:
        return _collect_module_facts(path, text, positions)
    facts = guarded(collect)
    return ModuleFacts(path, error=facts.reason) if isinstance(facts, Unparseable) else facts


def _collect_module_facts(path: str, text: str, positions: bool) -> ModuleFacts:
    facts = ModuleFacts(path)
    module = python_module(text)
    if positions:
        data = text.encode(module.encoding, errors="replace")  # = module.bytes: libcst round-trips the source
        MetadataWrapper(module, unsafe_skip_copy=True).visit(_Collector(module, facts, positions, data, text))
    else:
        module.visit(_Collector(module, facts, positions, text=text))
    return facts


def statements_cst(text: str) -> set[str] | None:
    return _normalized_statements(text)


def _normalized_statements(text: str) -> set[str] | None:
    def statements() -> set[str]:
        module = python_module(text)
        return {module.code_for_node(statement).strip() for statement in module.body}
    found = guarded(statements)
    return None if isinstance(found, Unparseable) else found


def function_table_cst(text: str) -> dict[str, FunctionFacts] | None:
    found = guarded(lambda: _function_table(text))
    return None if isinstance(found, Unparseable) else found


def _function_table(text: str) -> dict[str, FunctionFacts]:
    module = python_module(text)
    table: dict[str, FunctionFacts] = {}

    def walk(statements, scope: tuple[str, ...]) -> None:
        for statement in statements:
            if isinstance(statement, cst.FunctionDef):
                qualname = ".".join((*scope, statement.name.value))
                table.setdefault(qualname, CstFunctionFacts(qualname, 0, cst_params(statement.params), text, None, module, statement))
                walk(_inner(statement), (*scope, statement.name.value))
            elif isinstance(statement, cst.ClassDef):
                walk(_inner(statement), (*scope, statement.name.value))
            elif isinstance(statement, cst.BaseCompoundStatement):
                walk(_inner(statement), scope)
                for clause in ("orelse", "finalbody"):
                    other = getattr(statement, clause, None)
                    if isinstance(other, cst.If):  # an elif: itself a compound statement
                        walk([other], scope)
                    elif other is not None:
                        walk(_inner(other), scope)
                for handler in getattr(statement, "handlers", ()):
                    walk(_inner(handler), scope)

    walk(module.body, ())
    return table


def _inner(node: cst.CSTNode) -> list:
    body = getattr(node, "body", None)
    return list(body.body) if isinstance(body, cst.IndentedBlock) else []
