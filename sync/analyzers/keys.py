"""Key strings: FlagTree code reads a dictionary key, attribute or option name whose upstream producer
changed between the tags (heuristic, low confidence).

Readers are FlagTree's added Python lines: `x["k"]`, `x.get("k")`, `getattr(o, "k")`, `hasattr(o, "k")`
and attribute reads `x.k` (metadata and options objects are often dicts seen through attributes).
Producers are upstream Python code that writes the key as a string: `d["k"] = ...`, `{"k": ...}`,
`setattr(o, "k", ...)`. When the producing statements of a key FlagTree reads differ between the tags in
an upstream file, that file is reported, also when FlagTree never changed it, with the diff hunks that
mention the key."""
from __future__ import annotations

import ast
from collections import defaultdict

from unidiff import PatchSet

from ..git import changes_with_renames
from ..model import Finding
from ..trees import read_text
from .context import DriftContext
from .delta import PY, backend_of, fork_added_lines, text_diff
from .symbols import _significant
from .parsing import Unparseable, parsed_ast

_READ_CALLS = {"get", "pop", "setdefault"}
_NOT_PRODUCERS = ("/test/", "/tests/", "/tutorials/", "/unittest/")  # tests and examples feed no runtime data


def _produces_runtime_data(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return not any(part in "/" + path for part in _NOT_PRODUCERS) and not name.startswith("test_")


def read_keys(text: str, lines: frozenset[int]) -> dict[str, int]:
    """Key -> first line it is read on, over the given lines."""
    module = parsed_ast(text)  # guarded: deep nesting is a result, not a crash
    if isinstance(module, Unparseable):
        return {}
    found: dict[str, int] = {}
    for node in ast.walk(module):
        line = getattr(node, "lineno", 0)
        if line not in lines:
            continue
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _string(node.slice):
            key = _string(node.slice)
        elif isinstance(node, ast.Call) and node.args and _string(node.args[0]) and (
                isinstance(node.func, ast.Attribute) and node.func.attr in _READ_CALLS):
            key = _string(node.args[0])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and len(node.args) >= 2 and _string(node.args[1]):
            key = _string(node.args[1])
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            key = node.attr
        if key and key.isidentifier() and _significant(key):
            found.setdefault(key, line)
    return found


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def produced(text: str, keys: set[str]) -> dict[str, list[str]]:
    """Key -> the producing statements/entries as written (sorted), for the keys asked about."""
    module = parsed_ast(text)  # guarded: deep nesting is a result, not a crash
    if isinstance(module, Unparseable):
        return {}
    out: dict[str, list[str]] = defaultdict(list)
    for node in ast.walk(module):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                key = _string(target.slice) if isinstance(target, ast.Subscript) else None
                if key is not None and key in keys:
                    out[key].append(ast.unparse(node))
        elif isinstance(node, ast.Dict):
            for key_node, value in zip(node.keys, node.values):
                key = _string(key_node) if key_node is not None else None
                if key is not None and key in keys:
                    out[key].append(f"{key!r}: {ast.unparse(value)}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and len(node.args) == 3:
            key = _string(node.args[1])
            if key is not None and key in keys:
                out[key].append(ast.unparse(node))
    return {key: sorted(values) for key, values in out.items()}


def _hunks_with(diff: str, key: str) -> str:
    """Only the hunks of a diff that mention the key (the evidence, not the whole file)."""
    if not diff:
        return ""
    patch = PatchSet(diff)
    kept = [str(hunk) for file in patch for hunk in file if key in str(hunk)]
    head = "".join(diff.splitlines(keepends=True)[:2])
    return head + "".join(kept) if kept else ""


def key_string_findings(context: DriftContext) -> list[Finding]:
    readers: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if path.endswith(PY):
            for key, line in read_keys(read_text(context.fork, path) or "", lines).items():
                readers[key].append((path, line))
    if not readers:
        return []
    keys = set(readers)
    findings = []
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if not change.old_path.endswith(PY) or change.status == "added" or not _produces_runtime_data(change.old_path):
            continue
        before = read_text(context.upstream_old, change.old_path) or ""
        after = read_text(context.upstream_new, change.new_path) or "" if change.new_path else ""
        if not any(f"'{key}'" in before or f'"{key}"' in before for key in keys):
            continue  # cheap: no key FlagTree reads is written as a string here
        old_producers, new_producers = produced(before, keys), produced(after, keys)
        for key in sorted(set(old_producers) | set(new_producers)):
            if old_producers.get(key) == new_producers.get(key) or key not in old_producers:
                continue  # unchanged, or a producer upstream only added (nothing FlagTree relied on)
            path = change.new_path or change.old_path
            reader, line = readers[key][0]
            stopped = key not in new_producers
            what = "no longer produces it here" if stopped else "changed how it produces it"
            findings.append(Finding(
                "key-string", path,
                f"FlagTree reads {key!r} ({reader}:{line}{' and %d more' % (len(readers[key]) - 1) if len(readers[key]) > 1 else ''}); "
                f"upstream {what}: {'; '.join(old_producers[key])[:160]} -> "
                f"{'; '.join(new_producers.get(key, [])) [:160] or 'nothing'}",
                backend=backend_of(context.owners.owners, reader), related_path=reader,
                diff=_hunks_with(text_diff(before, after, change.old_path, path), key),
                details={"key": key, "readers": [f"{p}:{n}" for p, n in readers[key][:10]],
                         "upstream": "stopped" if stopped else "changed",
                         "confidence": "medium" if stopped else "low"}))
    return findings
