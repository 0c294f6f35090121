"""Co-change: FlagTree-added lines inside a function whose upstream body changed between the tags.

The file merged without a textual conflict (a conflict is reported as one, and ranks above this), so
git had nothing to say; but FlagTree's lines were written against the old body of the function. The
finding names the function, carries the upstream diff of that function and lists FlagTree's lines.
C++ functions come from tree-sitter (cpp.functions), Python ones from ast (line ranges in the fork)
and pyfacts.function_table (the old and new bodies)."""
from __future__ import annotations

import ast
from dataclasses import dataclass

from ..git import GitTree, merge_blobs
from ..model import Finding
from ..trees import read_text
from .context import DriftContext
from .cpp import functions as cpp_functions
from .delta import CPP, PY, backend_of, fork_added_lines, text_diff
from .pyfacts import function_table
from .parsing import Unparseable, guarded, parsed_ast


@dataclass(frozen=True)
class Span:
    name: str
    start: int
    end: int
    text: str  # as written; compared whitespace-normalized


def _python_spans(text: str) -> list[Span] | None:
    """Every def with its qualname and line range (ast: facts only)."""
    module = parsed_ast(text)  # guarded: deep nesting is a result, not a crash
    if isinstance(module, Unparseable):
        return None
    lines = text.splitlines(keepends=True)
    spans: list[Span] = []

    def walk(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = (*scope, child.name)
                if not isinstance(child, ast.ClassDef):
                    start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    end = child.end_lineno or child.lineno
                    spans.append(Span(".".join(qualname), start, end, "".join(lines[start - 1:end])))
                walk(child, qualname)
            else:
                walk(child, scope)

    walked = guarded(lambda: walk(module, ()))  # recursive: a deep expression must not end the run
    return None if isinstance(walked, Unparseable) else spans


def _spans(path: str, text: str) -> list[Span] | None:
    if path.endswith(PY):
        return _python_spans(text)
    return [Span(f.name, f.start, f.end, f.text) for f in cpp_functions(text)]


def _bodies(path: str, text: str) -> dict[str, str] | None:
    """Function name -> whole definition as written, for the old and new tags."""
    if path.endswith(PY):
        table = function_table(text)
        return None if table is None else {name: facts.source for name, facts in table.items()}
    found: dict[str, str] = {}
    for function in cpp_functions(text):
        found.setdefault(function.name, function.text)  # overloads: the first one stands for the name
    return found


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
        if not _merges_cleanly(context, path, new_path):
            continue
        findings.extend(_file_findings(context, path, new_path, lines))
    return findings


def _merges_cleanly(context: DriftContext, path: str, new_path: str) -> bool:
    outcome = merge_blobs(context.repo, new_path, context.upstream_old.blob_id(path), context.fork.blob_id(path),
                          context.upstream_new.blob_id(new_path))
    return outcome.clean


def _file_findings(context: DriftContext, path: str, new_path: str, lines: frozenset[int]) -> list[Finding]:
    fork_text = read_text(context.fork, path) or ""
    old_text = read_text(context.upstream_old, path) or ""
    new_text = read_text(context.upstream_new, new_path) or ""
    spans = _spans(path, fork_text)
    old_bodies, new_bodies = _bodies(path, old_text), _bodies(new_path, new_text)
    if spans is None or old_bodies is None or new_bodies is None:
        return []  # unparsable: other analyses say so
    by_function: dict[str, list[int]] = {}
    for line in sorted(lines):
        span = _innermost(spans, line)
        if span is not None:
            by_function.setdefault(span.name, []).append(line)
    source = fork_text.splitlines()
    findings = []
    for name, added in by_function.items():
        before = old_bodies.get(name)
        if before is None:
            continue  # FlagTree's own function: upstream never had a body to change
        after = new_bodies.get(name)
        if after is not None and _same(before, after):
            continue
        change = "removed upstream" if after is None else "changed upstream"
        shown = "\n".join(f"{line}: {source[line - 1].strip()}" for line in added[:8] if line <= len(source))
        findings.append(Finding(
            "co-change", path,
            f"{len(added)} FlagTree line(s) in {name}, whose body {change} between the tags; the file merged "
            f"cleanly, so nothing checked them against the new body",
            line=added[0], backend=backend_of(context.owners.owners, path), related_path=new_path,
            diff=text_diff(before, after or "", path, new_path),
            details={"function": name, "flagtree_lines": added, "flagtree_code": shown, "upstream": change}))
    return findings
