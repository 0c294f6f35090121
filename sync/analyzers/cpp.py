"""C++ facts: FLAGTREE_SPEC_* macros and guarded regions (preprocessor lines), functions (tree-sitter)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter_cpp
from tree_sitter import Language, Node, Parser

from ..trees import FileTree, read_text

MACRO_PREFIX = "FLAGTREE_SPEC_"
_DEFINE = re.compile(r"^\s*#\s*define\s+(FLAGTREE_SPEC_\w+)")
_OPEN = re.compile(r"^\s*#\s*(if|ifdef|ifndef)\b(.*)")
_CLOSE = re.compile(r"^\s*#\s*endif\b")
_SPEC_MACRO = re.compile(r"\bFLAGTREE_SPEC_\w+")


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

    @property
    def normalized(self) -> str:
        return " ".join(self.text.split())


def header_path(backend: str) -> str:
    return f"third_party/{backend}/backend/spec/include/flagtree_spec.h"


def backend_macros(tree: FileTree, backend: str) -> dict[str, int]:
    """FLAGTREE_SPEC_* macros the backend's flagtree_spec.h defines, with their lines."""
    text = read_text(tree, header_path(backend)) or ""
    found: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = _DEFINE.match(line)
        if match:
            found.setdefault(match[1], number)
    return found


def guard_regions(text: str) -> list[GuardRegion]:
    """#if/#ifdef/#ifndef blocks whose condition names a FLAGTREE_SPEC_* macro, matched to their #endif."""
    regions, stack = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        opened = _OPEN.match(line)
        if opened:
            stack.append((number, opened[1], _SPEC_MACRO.findall(opened[2])))
        elif _CLOSE.match(line) and stack:
            start, directive, macros = stack.pop()
            regions.extend(GuardRegion(macro, directive, start, number) for macro in macros)
    return regions


def mentions_spec_macro(text: str) -> bool:
    return MACRO_PREFIX in text


@lru_cache(maxsize=1)
def parser() -> Parser:
    return Parser(Language(tree_sitter_cpp.language()))


def _declarator_name(node: Node) -> str | None:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None:
        if declarator.type in ("qualified_identifier", "identifier", "field_identifier", "destructor_name",
                               "operator_name"):
            return declarator.text.decode("utf-8", errors="replace")
        declarator = declarator.child_by_field_name("declarator")
    return None


def functions(text: str) -> list[CppFunction]:
    """Function definitions, found by tree-sitter (it tolerates code it cannot fully parse)."""
    source = text.encode("utf-8")
    found: list[CppFunction] = []
    pending = [parser().parse(source).root_node]
    while pending:
        node = pending.pop()
        if node.type == "function_definition":
            name = _declarator_name(node)
            if name:
                found.append(CppFunction(name, node.start_point[0] + 1, node.end_point[0] + 1,
                                         node.text.decode("utf-8", errors="replace")))
            continue
        pending.extend(node.children)
    return sorted(found, key=lambda function: function.start)


def functions_in(region: GuardRegion, defined: list[CppFunction]) -> list[CppFunction]:
    """Functions inside the region, or the one function that contains it."""
    inside = [f for f in defined if f.start > region.start and f.end < region.end]
    if inside:
        return inside
    return [f for f in defined if f.start < region.start and f.end > region.end]
