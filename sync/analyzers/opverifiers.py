"""Op verifiers: FlagTree-added code creates an MLIR op whose `verify()` upstream changed between the tags.

The call still compiles (its builder did not change, or call-signature says so), but the op may now reject
what FlagTree builds at run time: a new check in the verifier is a contract change no compiler reports.
The op is resolved by scope, as call-signature does: `create<X>` / `X::create` in a file that includes a
header of the directory of the .td that defines op X (not a backend's own copy of that directory, which
its build reads instead); its verifier is `X::verify` in an upstream C++ file that includes a header of the
same directory. A call that qualifies the class (`create<ns::X>`, `ns::X::create`) names that namespace's X:
it is op X only when `ns` (or what a namespace alias `ns` stands for) ends the C++ namespace the .td files of
X's directory give their dialect (`cppNamespace`), so another dialect's op of the same class name is not
taken for it. The finding carries the verifier's upstream diff."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable
from posixpath import dirname

from ..git import GitTree, changes_with_renames
from ..model import Finding
from ..trees import read_text
from .callsigs import CppCall, builder_calls, builder_spellings, include_dir, includes_of, trunk_dialect_dirs
from .context import DriftContext
from .cpp import functions
from .delta import CPP, TD, backend_of, fork_added_lines, text_diff
from .tdsigs import records


@dataclass(frozen=True)
class VerifierChange:
    op: str  # the generated class, e.g. MemDescIndexOp
    td_dir: str  # include directory of the .td defining it, e.g. triton/Dialect/TritonGPU/IR
    path: str  # the upstream C++ file defining X::verify (new tag)
    diff: str
    namespaces: frozenset[str] = frozenset()  # C++ namespaces of td_dir's dialect, e.g. mlir::triton; empty: unknown


_CPP_NAMESPACE = re.compile(r'\blet\s+cppNamespace\s*=\s*"([\w:]+)"')
_ALIAS = re.compile(r"^\s*namespace\s+(\w+)\s*=\s*([\w:]+)\s*;", re.MULTILINE)
_QUALIFIER_END = re.compile(r"(?:::\s*)?(?:\w+\s*::\s*)*$")  # `a::b::` (or `::a::`) just before a name


def _dir_namespaces(tree: GitTree) -> dict[str, frozenset[str]]:
    """Include directory of trunk .td files -> the C++ namespaces they give their dialect, attributes and types."""
    found: dict[str, set[str]] = {}
    for path in tree.paths():
        if path.endswith(TD) and not path.startswith("third_party/"):
            names = {name.lstrip(":") for name in _CPP_NAMESPACE.findall(read_text(tree, path) or "")}
            if names:
                found.setdefault(include_dir(path), set()).update(names)
    return {directory: frozenset(names) for directory, names in found.items()}


@lru_cache(maxsize=4)
def dialect_namespaces(tree: GitTree) -> dict[str, frozenset[str]]:
    """_dir_namespaces, once per tree (call signatures ask it for every fork file)."""
    return _dir_namespaces(tree)


def file_aliases(tree: GitTree, text: str) -> Callable[[], dict[str, set[str]]]:
    return _file_aliases(tree, text)


def _aliases_in(text: str) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for alias, target in _ALIAS.findall(text):
        found.setdefault(alias, set()).add(target.lstrip(":"))
    return found


@lru_cache(maxsize=4)
def _tree_aliases(tree: GitTree) -> dict[str, set[str]]:
    """Every `namespace a = b;` of the tree's C++ files (aliases usually come from a header the file includes
    through others; read only when a call's qualifier is not itself a namespace's ending)."""
    found: dict[str, set[str]] = {}
    for path in tree.paths():
        if path.endswith(CPP):
            text = read_text(tree, path) or ""
            if "namespace" in text:
                for alias, targets in _aliases_in(text).items():
                    found.setdefault(alias, set()).update(targets)
    return found


def qualifier(call: CppCall) -> str:
    """The namespace a builder call spells before the op class (`ttg` of `create<ttg::LocalAllocOp>`, of
    `ttg::LocalAllocOp::create`), without a leading `::`; empty when the class is unqualified."""
    for match in re.finditer(rf"\b{re.escape(call.callee)}\b", call.written):
        before = _QUALIFIER_END.search(call.written[:match.start()])
        return re.sub(r"\s+", "", before[0] if before else "").strip(":")
    return ""


def _ends(namespace: str, spelled: str) -> bool:
    """Whether the C++ namespace ends with the spelled one, a whole component at a time."""
    return namespace == spelled or namespace.endswith("::" + spelled)


def names_op(spelled: str, namespaces: frozenset[str], aliases: Callable[[], dict[str, set[str]]]) -> bool:
    """Whether a call qualified by spelled can name an op of a dialect in these namespaces. Unqualified, or a
    dialect whose namespace is unknown: scope alone decides. A qualifier is looked up from the calling scope,
    so it names a namespace that ends with it; its first component may be a namespace alias."""
    if not spelled or not namespaces:
        return True
    if any(_ends(namespace, spelled) for namespace in namespaces):
        return True
    head, _, rest = spelled.partition("::")
    expanded = {target + ("::" + rest if rest else "") for target in aliases().get(head, set())}
    return any(_ends(namespace, name) for namespace in namespaces for name in expanded)


def _op_dirs(tree: GitTree) -> dict[str, set[str]]:
    """Op class -> include directories of the .td files that define it (an op name can exist in two dialects)."""
    found: dict[str, set[str]] = {}
    for path in tree.paths():
        if path.endswith(TD) and not path.startswith("third_party/"):
            for record in records(path, read_text(tree, path) or ""):
                if record.kind == "op":
                    found.setdefault(record.cpp_name, set()).add(include_dir(path))
    return found


def changed_verifiers(old: GitTree, new: GitTree) -> dict[str, list[VerifierChange]]:
    """Upstream-changed `X::verify` bodies of ops, each tied to the dialect directory its file includes."""
    op_dirs = _op_dirs(new)
    namespaces = _dir_namespaces(new)
    out: dict[str, list[VerifierChange]] = {}
    for change in changes_with_renames(old, new):
        if not change.old_path.endswith(CPP) or change.new_path is None or change.status == "added" \
                or change.old_path.startswith("third_party/"):
            continue
        text = read_text(old, change.old_path) or ""
        if "::verify" not in text:
            continue  # cheap: an X::verify definition spells it (most changed files define none)
        before = {f.short_name: f for f in functions(text) if f.name.endswith("::verify")}
        if not before:
            continue
        after = {f.short_name: f for f in functions(read_text(new, change.new_path) or "") if f.name.endswith("::verify")}
        included = {dirname(include) for include in includes_of(new, change.new_path)}
        for name, function in before.items():
            op = name.split("::")[0]
            now = after.get(name)
            if op not in op_dirs or now is None or now.normalized == function.normalized:
                continue
            for td_dir in op_dirs[op] & included:
                out.setdefault(op, []).append(VerifierChange(op, td_dir, change.new_path,
                                                             text_diff(function.text, now.text, change.old_path,
                                                                       change.new_path),
                                                             namespaces.get(td_dir, frozenset())))
    return out


def _file_aliases(tree: GitTree, text: str) -> Callable[[], dict[str, set[str]]]:
    """The namespace aliases a file may use, asked for only when needed: its own, else those of the tree."""
    def aliases() -> dict[str, set[str]]:
        return {**_tree_aliases(tree), **_aliases_in(text)}
    return aliases


def op_verifier_findings(context: DriftContext) -> list[Finding]:
    changes = changed_verifiers(context.upstream_old, context.upstream_new)
    if not changes:
        return []
    findings = []
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if not path.endswith(CPP):
            continue
        text = read_text(context.fork, path) or ""
        if not any(name in text for name in changes) or builder_spellings(text).isdisjoint(changes):
            continue  # cheap: a builder call of a changed op spells it so; most files name none
        calls = [call for call in builder_calls(text) if call.callee in changes
                 and call.line in lines]  # only op classes are keys: an Attr/Type `get` never matches
        if not calls:
            continue
        included = trunk_dialect_dirs(context.fork, path)
        aliases = _file_aliases(context.fork, text)
        for call in calls:
            for change in changes[call.callee]:
                if change.td_dir not in included:
                    continue  # another dialect's op of the same name, or a file that cannot see it
                if not names_op(qualifier(call), change.namespaces, aliases):
                    continue  # create<mk::GatherOp> is MagicKernel's op, not tt.gather
                findings.append(Finding(
                    "op-verifier-changed", path,
                    f"FlagTree creates {call.callee} ({call.written}), whose verifier upstream changed in "
                    f"{change.path}: check that what FlagTree builds still passes it",
                    line=call.line, backend=backend_of(context.owners.owners, path), related_path=change.path,
                    diff=change.diff, details={"op": call.callee, "dialect_dir": change.td_dir}))
                break
    return findings
