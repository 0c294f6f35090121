"""Keys FlagTree puts into a mapping that goes to a trunk dataclass's constructor (`C(**args)`) where upstream
removed that field (issue 33, the 3.5.x -> 3.7 move: nvidia's parse_options gained FlagTree's
`args["cluster_dims"] = ...` before `return CUDAOptions(**args)`, and d0b16ab3b removed the field): every call
raises TypeError, an unexpected keyword argument. Kind call-no-overload (Python), an error.

Upstream side: a class decorated `@dataclass` (or `@dataclasses.dataclass(...)`) with no `__init__` of its own, in a
Python file upstream changed (trunk's, or an upstream backend's under third_party/), whose annotated fields at the
old tag include one the new tag's class lacks (and that has no base class now, whose fields it would inherit).
FlagTree side, in one function of a file with FlagTree's lines: a call `C(**d)` where C names that class (defined
in the same module, or imported from it), and a FlagTree line `d["k"] = ...` with k a removed field, after the
last rebinding of d and before the call. No claim where FlagTree's
own lines declare the field in its version of the class: the upgrade keeps them.
"""
from __future__ import annotations

import ast
import re

from sync.drift.context import DriftContext
from sync.facts.astwalk import walk_nodes
from sync.facts.delta import PY, backend_of, fork_added_lines
from sync.facts.parsing import ast_or_none
from sync.facts.pymodules import module_files
from sync.facts.trees import read_text
from sync.facts.upstreamlog import with_upstream_commits
from sync.git import changes_with_renames
from sync.model import Finding


def dataclass_fields(tree: ast.Module) -> dict[str, dict[str, int]]:
    """Class name -> its fields (name -> line) for each module-level dataclass without an __init__ of its own."""
    found: dict[str, dict[str, int]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or not any(_is_dataclass(decorator) for decorator in node.decorator_list):
            continue
        body = node.body
        if any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "__init__" for item in body):
            continue  # its own constructor decides what it takes
        found[node.name] = {item.target.id: item.lineno for item in body if isinstance(item, ast.AnnAssign)
                            and isinstance(item.target, ast.Name) and "ClassVar" not in ast.unparse(item.annotation)}
    return found


def _is_dataclass(decorator: ast.expr) -> bool:
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(called, ast.Name) and called.id == "dataclass") or \
        (isinstance(called, ast.Attribute) and called.attr == "dataclass")


def removed_fields(context: DriftContext, names: set[str]) -> dict[tuple[str, str], dict[str, str]]:
    """(module path at the new tag, class) -> removed field -> the module path at the old tag, for the classes
    of those names."""
    found: dict[tuple[str, str], dict[str, str]] = {}
    spelled = re.compile(r"^class\s+(" + "|".join(map(re.escape, sorted(names))) + r")\b", re.MULTILINE)
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if change.status not in ("modified", "renamed") or change.new_path is None or not change.new_path.endswith(PY):
            continue
        before = read_text(context.upstream_old, change.old_path) or ""
        if "dataclass" not in before or not spelled.search(before):
            continue  # cheap: the file defines none of the classes called with ** (module-level classes only)
        old, new = ast_or_none(before), ast_or_none(read_text(context.upstream_new, change.new_path) or "")
        if old is None or new is None:
            continue
        now = dataclass_fields(new)
        based = {node.name for node in new.body if isinstance(node, ast.ClassDef) and node.bases}
        for name, fields in dataclass_fields(old).items():
            if name in now and name not in based:  # a base's field of that name would take the key
                gone = {field: change.old_path for field in fields if field not in now[name]}
                if gone:
                    found[(change.new_path, name)] = gone
    return found


_UNPACKING = re.compile(r"\(\s*\*\*\s*[A-Za-z_]")  # `(**d`: the pattern starts at its `(`, found at C speed
_CALLEE = re.compile(r"([A-Za-z_]\w*)\s*$")


def _unpacked_callees(text: str) -> set[str]:
    """The names before each `(**name` of a text: a superset of the classes its `C(**d)` calls name."""
    return {callee[1] for match in _UNPACKING.finditer(text)
            if (callee := _CALLEE.search(text, max(match.start() - 80, 0), match.start()))}


def dataclass_field_findings(context: DriftContext) -> list[Finding]:
    files = {path: (text, lines) for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items())
             if path.endswith(PY) and "**" in (text := read_text(context.fork, path) or "")}
    called = set().union(*(_unpacked_callees(text) for text, _ in files.values()))
    removed = removed_fields(context, called) if called else {}
    if not removed:
        return []
    classes = {name for _, name in removed}
    findings: list[Finding] = []
    for path, (text, lines) in files.items():
        if not any(name in text for name in classes):
            continue  # cheap: the call spells the class
        tree = ast_or_none(text)
        if tree is None:
            continue
        kept = {name: {field for field, line in fields.items() if line in lines}
                for name, fields in dataclass_fields(tree).items()}  # FlagTree's own field lines stay
        imported = _imported_classes(tree, classes)
        functions = (node for node in walk_nodes(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
        for function in functions:
            for klass, mapping, call_line in _unpacking_calls(function, classes):
                module = next((where for where in imported.get(klass, (path,)) if (where, klass) in removed), path)
                gone = removed.get((module, klass), {})
                for key, line in _writes_before(function, mapping, call_line):
                    if line in lines and key in gone and key not in kept.get(klass, set()):
                        findings.append(Finding(
                            "call-no-overload", path,
                            f"FlagTree puts '{key}' into {mapping}, which line {call_line} passes to "
                            f"{klass}(**{mapping}); upstream removed the field {key} from the dataclass {klass} "
                            f"({module}): each call raises TypeError (will not run as is)",
                            "stop passing the key, or port what it set to where upstream moved it", line,
                            backend_of(context.owners.owners, path), related_path=gone[key],
                            details={"declaration": key, "class": klass, "callee": f"{klass}(**{mapping})",
                                     "sites": [f"{path}:{line}"]}))
    if findings and context.range is not None:
        findings = with_upstream_commits(context.repo, context.range.old.oid, context.range.onto.oid, findings)
    return findings


def _imported_classes(tree: ast.Module, classes: set[str]) -> dict[str, tuple[str, ...]]:
    """Local name -> the files trunk keeps the module in that a `from module import Class` of the classes names."""
    found: dict[str, tuple[str, ...]] = {}
    for node in walk_nodes(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name in classes:
                    found[alias.asname or alias.name] = module_files(node.module)
    return found


def _unpacking_calls(function: ast.AST, classes: set[str]) -> list[tuple[str, str, int]]:
    """(class, mapping, line) of each call `Class(**mapping)` of the classes in the function."""
    found = []
    for node in walk_nodes(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in classes:
            for keyword in node.keywords:
                if keyword.arg is None and isinstance(keyword.value, ast.Name):
                    found.append((node.func.id, keyword.value.id, node.lineno))
    return found


def _writes_before(function: ast.AST, mapping: str, call_line: int) -> list[tuple[str, int]]:
    """(key, line) of each `mapping["key"] = ...` before the call and after the mapping's last rebinding."""
    rebound, writes = 0, []
    for node in walk_nodes(function):
        if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or node.lineno >= call_line:
            continue
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            if isinstance(target, ast.Name) and target.id == mapping:
                rebound = max(rebound, node.lineno)
            elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                    and target.value.id == mapping and isinstance(target.slice, ast.Constant) \
                    and isinstance(target.slice.value, str):
                writes.append((target.slice.value, node.lineno))
    return sorted((key, line) for key, line in writes if line > rebound)
