"""Op verifiers: FlagTree-added code creates an MLIR op whose `verify()` upstream changed between the tags.

The call still compiles (its builder did not change, or call-signature says so), but the op may now reject
what FlagTree builds at run time: a new check in the verifier is a contract change no compiler reports.
The op is resolved by scope, as call-signature does: `create<X>` / `X::create` in a file that includes a
header of the directory of the .td that defines op X (not a backend's own copy of that directory, which
its build reads instead); its verifier is `X::verify` in an upstream C++ file that includes a header of the
same directory. A call that qualifies the class (`create<ns::X>`, `ns::X::create`) names that namespace's X:
it is op X only when `ns` (or what a namespace alias `ns` stands for) ends the C++ namespace the .td files of
X's directory give their dialect (`cppNamespace`), so another dialect's op of the same class name is not
taken for it. The finding carries the verifier's upstream diff.

One finding per changed verifier and backend (issue 33): every FlagTree creation of the op in a backend's
code is a site of it (details.sites, path:line), at the first site, with the upstream commit(s) that changed
the verifier and their PR numbers when the tags are known."""
from __future__ import annotations

from dataclasses import dataclass
from posixpath import dirname

from sync.git import GitTree, changes_with_renames
from sync.model import Finding
from sync.facts.trees import read_text
from sync.facts.cppcalls import (builder_calls, builder_spellings, dir_namespaces, file_aliases, include_dir, includes_of,
                                  names_op, qualifier, trunk_dialect_dirs)
from sync.drift.context import DriftContext
from sync.facts.cpp import functions
from sync.facts.delta import CPP, TD, backend_of, fork_added_lines, text_diff
from sync.facts.tdsigs import records
from sync.facts.layout import is_third_party
from sync.facts.upstreamlog import Commits, changing_commits, one_per_change


@dataclass(frozen=True)
class VerifierChange:
    op: str  # the generated class, e.g. MemDescIndexOp
    td_dir: str  # include directory of the .td defining it, e.g. triton/Dialect/TritonGPU/IR
    path: str  # the upstream C++ file defining X::verify (new tag)
    diff: str
    namespaces: frozenset[str] = frozenset()  # C++ namespaces of td_dir's dialect, e.g. mlir::triton; empty: unknown
    old_path: str = ""  # the file defining X::verify at the old tag (path, when upstream did not rename it)


def _op_dirs(tree: GitTree) -> dict[str, set[str]]:
    """Op class -> include directories of the .td files that define it (an op name can exist in two dialects)."""
    found: dict[str, set[str]] = {}
    for path in tree.paths():
        if path.endswith(TD) and not is_third_party(path):
            for record in records(path, read_text(tree, path) or ""):
                if record.kind == "op":
                    found.setdefault(record.cpp_name, set()).add(include_dir(path))
    return found


def changed_verifiers(old: GitTree, new: GitTree) -> dict[str, list[VerifierChange]]:
    """Upstream-changed `X::verify` bodies of ops, each tied to the dialect directory its file includes."""
    op_dirs = _op_dirs(new)
    namespaces = dir_namespaces(new)
    out: dict[str, list[VerifierChange]] = {}
    for change in changes_with_renames(old, new):
        if not change.old_path.endswith(CPP) or change.new_path is None or change.status == "added" \
                or is_third_party(change.old_path):
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
                                                             namespaces.get(td_dir, frozenset()), change.old_path))
    return out


def op_verifier_findings(context: DriftContext) -> list[Finding]:
    changes = changed_verifiers(context.upstream_old, context.upstream_new)
    if not changes:
        return []
    findings: list[tuple[tuple[str, ...], list[str], Finding]] = []
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
        aliases = file_aliases(context.fork, text)
        for call in calls:
            for change in changes[call.callee]:
                if change.td_dir not in included:
                    continue  # another dialect's op of the same name, or a file that cannot see it
                if not names_op(qualifier(call), change.namespaces, aliases):
                    continue  # create<mk::GatherOp> is MagicKernel's op, not tt.gather
                key = (change.op, change.td_dir, change.old_path or change.path, change.path)
                findings.append((key, [f"{path}:{call.line}"], Finding(
                    "op-verifier-changed", path,
                    f"FlagTree creates {call.callee} ({call.written}), whose verifier upstream changed in "
                    f"{change.path}: check that what FlagTree builds still passes it",
                    line=call.line, backend=backend_of(context.owners.owners, path), related_path=change.path,
                    diff=change.diff, details={"op": call.callee, "dialect_dir": change.td_dir})))
                break
    return one_per_change(findings, _changing_commits(context))


def _changing_commits(context: DriftContext) -> Commits | None:
    """The upstream commits that changed a verifier (X::verify's text), with the tags' commits; None when the
    tags are not known (drift of two trees)."""
    if context.range is None:
        return None
    old, new = context.range.old.oid, context.range.onto.oid
    # Every changed op of one file reads the same versions of it: each version's verifiers are read once.
    verifiers: dict[str, dict[str, tuple[str, ...]]] = {}  # text -> X::verify -> its normalized definitions

    def bodies(text: str) -> dict[str, tuple[str, ...]]:
        if text not in verifiers:
            found: dict[str, list[str]] = {}
            for function in functions(text):
                if function.short_name.endswith("::verify"):
                    found.setdefault(function.short_name, []).append(function.normalized)
            verifiers[text] = {name: tuple(normalized) for name, normalized in found.items()}
        return verifiers[text]

    def of(change: tuple[str, ...]) -> tuple[list[tuple[str, str]], int]:
        op, _, old_path, new_path = change
        verify = f"{op}::verify"
        return changing_commits(context.repo, old, new, (old_path, new_path), lambda text: bodies(text).get(verify, ()))
    return of
