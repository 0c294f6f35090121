"""What a file declares, for the symbol analysis (symbols.py): C++ and TableGen declarations through tree-sitter
queries and patterns, the names and function parameters of a Python module (PythonShape), and the cheap text tests
that decide which files are worth that parse."""
from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Sequence

import libcst as cst
from tree_sitter import Node

from sync.drift.analyses.symbolterms import CPP, TD, _TOKEN
from sync.facts.cpp import captures, node_text
from sync.facts.cppscope import in_function_body
from sync.facts.parsing import Unparseable, parsed_ast, parsed_python
from sync.facts.pychunks import over_chunks
from sync.facts.pyfacts import params_of
from sync.facts.pyfacts_cst import cst_params
from sync.facts.pysource import Param
from sync.support.cache import memoized


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
