"""What trunk's Python now expects back from code a backend provides, where upstream changed its own side of that
contract and FlagTree's side keeps the old form (issue 45, class 2 in Python: upstream calls, FlagTree defines).
Each question is answered from upstream's own diff, never from a spelling alone:

- Result shape: trunk unpacks the result of `x.NAME(...)` into M names at the old tag and into N != M at the new
  one (every such unpacking of `.NAME(` in a trunk file upstream changed agrees, at each tag). A FlagTree function
  or method NAME, defined on FlagTree's lines, whose every return is a tuple of exactly M values now fails that
  unpacking (ValueError). The 3.3.x -> 3.4.0 move: the compiler unpacks `driver.active.utils.load_binary(...)` into
  five names, tsingmicro's driver returns four.
- Renamed field: upstream renamed a field of its own classes (one name out, one in, at the same place of the class
  body with the same annotation and default), trunk reads the new name as an attribute at the new tag and no
  longer reads the old one, and a FlagTree class that corresponds to such a class (it declares at least half of
  the upstream class's fields) declares the old name on FlagTree's lines and not the new one. The 3.3.x -> 3.4.0
  move: `deprecated_fp8_dtypes` became `deprecated_fp8_dot_operand_dtypes` in the interpreter's, nvidia's and
  amd's options; the frontend reads `options.deprecated_fp8_dot_operand_dtypes`; tsingmicro's options keep the old.

No claim in a backend module that nothing imports (abstracts.never_imported), nor where the backend installs its
own copy of every trunk module that reads or unpacks (context.own_copy).
Kinds result-shape-changed and field-renamed, both errors.
"""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass
from difflib import SequenceMatcher

from sync.drift.analyses.abstracts import never_imported
from sync.drift.context import DriftContext
from sync.facts.astwalk import walk_nodes
from sync.facts.delta import PY, backend_of, fork_added_lines
from sync.facts.layout import is_test_path, is_third_party
from sync.facts.parsing import ast_or_none
from sync.facts.pymodules import TRUNK_PACKAGE
from sync.facts.trees import read_text
from sync.facts.upstreamlog import with_upstream_commits
from sync.git import blob_hunks, changes_with_renames
from sync.model import Finding

_ANNOTATED = re.compile(r"^[ \t]+[A-Za-z_]\w*[ \t]*:[ \t]*[A-Za-z_]", re.MULTILINE)  # a class field, cheaply
_SHARE = 0.5  # the part of an upstream class's fields a FlagTree class declares to stand for it


@dataclass(frozen=True)
class _Field:
    name: str
    annotation: str
    default: str
    line: int


@dataclass(frozen=True)
class _Rename:
    """A field upstream renamed in one of its classes."""

    old: str
    new: str
    klass: str
    path: str  # the class's file at the new tag
    old_path: str
    fields: frozenset[str]  # the class's fields at the old tag


@dataclass(frozen=True)
class _Shape:
    """Trunk unpacks `.NAME(...)` into `before` names at the old tag and `after` at the new one."""

    name: str
    before: int
    after: int
    path: str  # the trunk file at the new tag
    old_path: str
    line: int  # an unpacking at the new tag


def contract_findings(context: DriftContext) -> list[Finding]:
    trunk = _trunk_changes(context)
    if not trunk:
        return []
    shapes = _changed_shapes(context, trunk)
    renames = _renamed_fields(context)
    readers = _readers(context, trunk, renames)
    renames = {old: items for old, items in renames.items() if old in readers}
    if not shapes and not renames:
        return []
    findings: list[Finding] = []
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if not path.endswith(PY) or is_test_path(path):
            continue
        text = read_text(context.fork, path) or ""
        named_shapes = [shape for name, shape in shapes.items() if f"def {name}" in text]
        named_renames = {old: items for old, items in renames.items() if old in text}
        if (not named_shapes and not named_renames) or never_imported(context.fork, path):
            continue  # nothing to ask, or a backend module nothing loads
        tree = ast_or_none(text)
        if tree is None:
            continue
        for shape in named_shapes:
            if not context.own_copy(path, shape.path):
                findings += _shape_findings(context, path, tree, lines, shape)
        for old, items in named_renames.items():
            where = readers[old]
            if not all(context.own_copy(path, reader) for reader, _ in where):
                findings += _rename_findings(context, path, tree, lines, items, where)
    if findings and context.range is not None:
        findings = with_upstream_commits(context.repo, context.range.old.oid, context.range.onto.oid, findings)
    return findings


def _trunk_changes(context: DriftContext) -> list[tuple[str, str]]:
    """(old path, new path) of each trunk Python module upstream changed, tests left out."""
    return [(change.old_path, change.new_path) for change in changes_with_renames(context.upstream_old,
                                                                                   context.upstream_new)
            if change.status in ("modified", "renamed") and change.new_path is not None
            and change.new_path.startswith(TRUNK_PACKAGE) and change.new_path.endswith(PY)
            and not is_third_party(change.new_path) and not is_test_path(change.new_path)]


# ---------------------------------------------------------------- result shapes

def unpackings(tree: ast.Module) -> dict[str, dict[int, int]]:
    """Method name -> {how many names the result of `x.NAME(...)` is unpacked into -> a line}, for each plain
    assignment `a, b = x.NAME(...)` (a starred name makes the count open: not counted)."""
    found: dict[str, dict[int, int]] = defaultdict(dict)
    for node in walk_nodes(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], (ast.Tuple, ast.List)) \
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                and not any(isinstance(item, ast.Starred) for item in node.targets[0].elts):
            found[node.value.func.attr].setdefault(len(node.targets[0].elts), node.lineno)
    return found


def _changed_shapes(context: DriftContext, trunk: list[tuple[str, str]]) -> dict[str, _Shape]:
    """Method name -> how trunk's unpacking of its result changed, where one count became another in every trunk
    file upstream changed that unpacks it (names where the files disagree are left out)."""
    seen: dict[str, list[_Shape | None]] = defaultdict(list)
    for old_path, new_path in trunk:
        if not _touches_unpacking(context, old_path, new_path):
            continue  # cheap: upstream's hunks of the file change no line of a tuple assignment
        after_tree = ast_or_none(read_text(context.upstream_new, new_path) or "")
        before_tree = ast_or_none(read_text(context.upstream_old, old_path) or "")
        if after_tree is None or before_tree is None:
            continue
        after, before = unpackings(after_tree), unpackings(before_tree)
        for name in after.keys() & before.keys():
            if len(after[name]) == 1 and len(before[name]) == 1 and after[name].keys() != before[name].keys():
                (count, line), = after[name].items()
                seen[name].append(_Shape(name, next(iter(before[name])), count, new_path, old_path, line))
            else:
                seen[name].append(None)  # unchanged here, or several counts: no single contract
    agreed: dict[str, _Shape] = {}
    for name, shapes in seen.items():
        first = shapes[0]
        if first is not None and all(shape is not None and (shape.before, shape.after) == (first.before, first.after)
                                     for shape in shapes):
            agreed[name] = first
    return agreed


_ASSIGN = re.compile(r"(?<![=!<>+\-*/%&|^:@])=(?!=)")  # an assignment's `=`, not `==`, `<=`, `+=`, `:=`
_NAMES_LINE = re.compile(r"[ \t]*\(?[ \t]*[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*,?[ \t]*\)?[ \t]*=?[ \t]*")  # linear


def _touches_unpacking(context: DriftContext, old_path: str, new_path: str) -> bool:
    """Whether upstream's hunks of a file remove or add a line of a tuple assignment (`a, b = ...`, or a line
    of names of a target spread over lines)."""
    hunks = blob_hunks(context.repo, context.upstream_old.tree[old_path].id, context.upstream_new.tree[new_path].id)
    return any(_tuple_target(line) for hunk in hunks for line in (*hunk.removed, *hunk.added))


def _tuple_target(line: str) -> bool:
    """A line of a tuple assignment: a comma before its first `=`, or only names and commas (a target spread
    over lines). No pattern here can backtrack more than linearly: the lines are upstream's, read as given."""
    code = line.split("#", 1)[0]
    assign = _ASSIGN.search(code)
    if assign is not None and "," in code[:assign.start()]:
        return True
    return "," in code and _NAMES_LINE.fullmatch(code.rstrip("\n")) is not None


def _own_returns(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return]:
    """The return statements of the function itself, not of functions or classes nested in it."""
    found: list[ast.Return] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))
    return found


def _shape_findings(context: DriftContext, path: str, tree: ast.Module, lines: frozenset[int],
                    shape: _Shape) -> list[Finding]:
    findings: list[Finding] = []
    for node in walk_nodes(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.name != shape.name \
                or node.lineno not in lines:
            continue
        returns = _own_returns(node)
        if not returns or not all(isinstance(item.value, ast.Tuple) and len(item.value.elts) == shape.before
                                  and not any(isinstance(elt, ast.Starred) for elt in item.value.elts)
                                  for item in returns):
            continue  # another shape, or one this reading cannot count: no claim
        findings.append(Finding(
            "result-shape-changed", path,
            f"{shape.name} returns {shape.before} values, and trunk now unpacks the result of `.{shape.name}(...)` "
            f"into {shape.after} ({shape.path}:{shape.line}; {shape.before} at the old tag): the unpacking "
            f"raises ValueError (will not run as is)",
            f"return the {shape.after} values trunk unpacks now, as upstream's own backends do",
            node.lineno, backend_of(context.owners.owners, path), related_path=shape.path,
            details={"declaration": shape.name, "returns": shape.before, "unpacked": shape.after,
                     "sites": [f"{path}:{item.lineno}" for item in sorted(returns, key=lambda r: r.lineno)]}))
    return findings


# ---------------------------------------------------------------- renamed fields

def class_fields(tree: ast.Module) -> dict[str, list[_Field]]:
    """Module-level class -> its annotated fields in body order."""
    return {node.name: [_Field(item.target.id, ast.unparse(item.annotation),
                               ast.unparse(item.value) if item.value is not None else "", item.lineno)
                        for item in node.body if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)]
            for node in tree.body if isinstance(node, ast.ClassDef)}


def renamed_in(before: list[_Field], after: list[_Field]) -> list[tuple[_Field, _Field]]:
    """Fields renamed between two versions of one class body: a run of names replaced by as many others, each
    pair at the same place with the same annotation and default, the old name gone and the new one not there
    before."""
    names_before, names_after = [f.name for f in before], [f.name for f in after]
    pairs = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(a=names_before, b=names_after, autojunk=False).get_opcodes():
        if tag != "replace" or i2 - i1 != j2 - j1:
            continue
        for old, new in zip(before[i1:i2], after[j1:j2]):
            if (old.annotation, old.default) == (new.annotation, new.default) \
                    and old.name not in names_after and new.name not in names_before:
                pairs.append((old, new))
    return pairs


def _renamed_fields(context: DriftContext) -> dict[str, list[_Rename]]:
    """Old field name -> each upstream class that renamed it, where every such class renamed it to one name."""
    found: dict[str, list[_Rename]] = defaultdict(list)
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if change.status not in ("modified", "renamed") or change.new_path is None or not change.new_path.endswith(PY) \
                or is_test_path(change.new_path):
            continue
        text = read_text(context.upstream_old, change.old_path) or ""
        if "class " not in text or not _ANNOTATED.search(text):
            continue  # cheap: no class field to rename
        before_tree = ast_or_none(text)
        after_tree = ast_or_none(read_text(context.upstream_new, change.new_path) or "")
        if before_tree is None or after_tree is None:
            continue
        before, after = class_fields(before_tree), class_fields(after_tree)
        for klass in before.keys() & after.keys():
            for old, new in renamed_in(before[klass], after[klass]):
                found[old.name].append(_Rename(old.name, new.name, klass, change.new_path, change.old_path,
                                               frozenset(f.name for f in before[klass])))
    return {old: items for old, items in found.items() if len({item.new for item in items}) == 1}


def _attributes(tree: ast.Module, names: set[str]) -> dict[str, int]:
    """Name -> the first line reading `x.name` (or getattr(x, "name")) in the tree, for the names."""
    found: dict[str, int] = {}
    for node in walk_nodes(tree):
        if isinstance(node, ast.Attribute) and node.attr in names:
            found.setdefault(node.attr, node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in names:
            found.setdefault(str(node.args[1].value), node.lineno)
    return found


def _readers(context: DriftContext, trunk: list[tuple[str, str]],
             renames: dict[str, list[_Rename]]) -> dict[str, list[tuple[str, int]]]:
    """Old field name -> (trunk file, line) reading its new name at the new tag, where upstream's trunk no
    longer reads the old name in the files it changed."""
    if not renames:
        return {}
    new_of = {old: items[0].new for old, items in renames.items()}
    reads: dict[str, list[tuple[str, int]]] = defaultdict(list)
    still_read: set[str] = set()
    for _, new_path in trunk:
        text = read_text(context.upstream_new, new_path) or ""
        if not any(new in text or old in text for old, new in new_of.items()):
            continue
        tree = ast_or_none(text)
        if tree is None:
            continue
        seen = _attributes(tree, set(new_of) | set(new_of.values()))
        still_read |= set(new_of) & seen.keys()
        for old, new in new_of.items():
            if new in seen:
                reads[old].append((new_path, seen[new]))
    return {old: where for old, where in reads.items() if old not in still_read}


def _rename_findings(context: DriftContext, path: str, tree: ast.Module, lines: frozenset[int],
                     renames: list[_Rename], readers: list[tuple[str, int]]) -> list[Finding]:
    findings: list[Finding] = []
    old, new = renames[0].old, renames[0].new
    for klass, fields in class_fields(tree).items():
        names = {field.name for field in fields}
        declared = next((field for field in fields if field.name == old and field.line in lines), None)
        if declared is None or new in names:
            continue
        like = [item for item in renames if len(names & item.fields) >= _SHARE * len(item.fields)]
        if not like:
            continue  # no upstream class this one stands for
        reader, line = readers[0]
        classes = ", ".join(sorted({f"{item.klass} ({item.path})" for item in like}))
        findings.append(Finding(
            "field-renamed", path,
            f"{klass} declares the field {old}, which upstream renamed to {new} in {classes}; trunk now "
            f"reads `.{new}` ({reader}:{line}) and no longer `.{old}`: an AttributeError where it reads this "
            f"backend's {klass} (will not run as is)",
            f"rename the field to {new}, as upstream's own classes did",
            declared.line, backend_of(context.owners.owners, path), related_path=like[0].path,
            details={"declaration": old, "replacement": new, "class": klass,
                     "sites": [f"{path}:{declared.line}"]}))
    return findings

