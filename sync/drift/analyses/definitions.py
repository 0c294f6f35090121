"""Declarations that cross the fork boundary the other way (issue 45, class 2): upstream's code declares a
function that FlagTree's code defines (a plugin or module init function, a registered pass, a hook), and upstream
changed that declaration's parameters between the tags. FlagTree's definition, written for the old declaration,
no longer matches: the call upstream's code makes does not reach it (a link error), or an out-of-line member
definition matches no declaration (a compile error).

The question, asked of the declarations of both tags (declindex): for each function or method an upstream C/C++
file upstream changed declares (no body) under a qualified name, with other parameters at the new tag than at the
old one, is there a definition of that qualified name on FlagTree's own lines (a file FlagTree added, or lines it
added to a trunk file) of a file the build compiles, whose parameters are those of an old declaration and of no
new one? Parameters compare by count and by each type's last name (`py::module &&m` and `pybind11::module m`
agree; `int` and `unsigned` do not). The definition is read on the upgraded branch when there is one: a fix
made there counts.
"""
from __future__ import annotations

from dataclasses import dataclass

from sync.drift.context import DriftContext
from sync.facts.cmakebuilt import unbuilt
from sync.facts.declindex import CPP_SUFFIXES, Decl, DeclarationIndex, declarations_of
from sync.facts.delta import backend_of, fork_added_lines
from sync.facts.cppscope import own_header_copy
from sync.facts.layout import backend_dir, not_built, third_party_owner
from sync.facts.trees import read_text
from sync.git import changes_with_renames
from sync.model import Finding

Signature = tuple[str, ...]  # the parameters' type names


@dataclass(frozen=True)
class Redeclared:
    qualified: str
    path: str  # the upstream file that declares it at the new tag
    line: int
    old: frozenset[Signature]
    new: frozenset[Signature]


def _signature(decl: Decl) -> Signature:
    return tuple(param.type for param in decl.params or ())


def _declared(decls: tuple[Decl, ...]) -> dict[str, list[Decl]]:
    """Qualified name -> the plain declarations (no body, not local, not a friend or a call-like construct)."""
    found: dict[str, list[Decl]] = {}
    for decl in decls:
        if decl.kind in ("function", "method") and decl.params is not None and not decl.flags & {
                "definition", "local", "friend", "special", "in-definition", "variadic", "qualified"}:
            found.setdefault(decl.qualified, []).append(decl)
    return found


def redeclared(context: DriftContext) -> list[Redeclared]:
    """Functions an upstream-changed C/C++ file declares with other parameters at the new tag than at the old."""
    out: list[Redeclared] = []
    new_index = DeclarationIndex.of(context.upstream_new)
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if change.new_path is None or not change.old_path.endswith(CPP_SUFFIXES) or not_built(change.old_path):
            continue
        before = _declared(declarations_of(change.old_path, read_text(context.upstream_old, change.old_path) or ""))
        if not before:
            continue
        after = _declared(declarations_of(change.new_path, read_text(context.upstream_new, change.new_path) or ""))
        for qualified, old_decls in before.items():
            new_decls = after.get(qualified)
            if not new_decls:
                continue  # gone from this file: removals are symbol drift's
            old = frozenset(map(_signature, old_decls))
            new = frozenset(map(_signature, new_decls))
            if old == new:
                continue
            everywhere = {_signature(decl) for _, decl in new_index.overloads(qualified, suffixes=CPP_SUFFIXES)
                          if decl.qualified == qualified and decl.params is not None}
            out.append(Redeclared(qualified, change.new_path, new_decls[0].line, old, frozenset(new | everywhere)))
    return out


def _definitions(text: str, path: str, names: set[str]) -> list[Decl]:
    return [decl for decl in declarations_of(path, text) if decl.name in names and "definition" in decl.flags
            and decl.kind in ("function", "method") and not decl.flags & {"local", "special"}]


def definition_findings(context: DriftContext) -> list[Finding]:
    changed = redeclared(context)
    if not changed:
        return []
    by_name: dict[str, list[Redeclared]] = {}
    for item in changed:
        by_name.setdefault(item.qualified.rsplit("::", 1)[-1], []).append(item)
    added = fork_added_lines(context.upstream_old, context.fork)
    branch = context.backend_files
    fork_index = DeclarationIndex.of(context.fork)
    findings: list[Finding] = []
    for path, lines in sorted(added.items()):
        if not path.endswith(CPP_SUFFIXES) or not_built(path) or unbuilt(context.fork, path):
            continue
        fork_text = read_text(context.fork, path) or ""
        if not any(name in fork_text for name in by_name):
            continue
        mine = [decl for decl in _definitions(fork_text, path, set(by_name)) if decl.line in lines]
        if not mine:
            continue
        text = read_text(branch, path) if branch is not context.fork else fork_text
        now = _definitions(text or "", path, set(by_name)) if text is not None else mine
        backend = third_party_owner(path)
        for decl in mine:
            for item in by_name[decl.name]:
                if decl.qualified != item.qualified or _signature(decl) not in item.old:
                    continue
                if backend is not None and _backend_declares(context, fork_index, backend, item):
                    continue  # the definition implements the backend's own declaration (its header copy first)
                still = [d for d in now if d.qualified == item.qualified and _signature(d) not in item.new]
                if not still or any(_signature(d) in item.new for d in now if d.qualified == item.qualified):
                    continue  # fixed on the branch, or FlagTree defines the new form too
                findings.append(_finding(context, path, still[0], item))
    return findings


def _backend_declares(context: DriftContext, index: DeclarationIndex, backend: str, item: Redeclared) -> bool:
    """Whether the backend compiles against its own declaration of the name: it carries its own copy of trunk's
    headers, or of the declaring header, or declares the name in a header of its own."""
    where = backend_dir(backend) + "/"
    return backend in context.own_trunk_backends or own_header_copy(context.fork, where, item.path) or any(
        decl.params is not None and "definition" not in decl.flags and decl.qualified == item.qualified
        for _, decl in index.overloads(item.qualified, under=[where], suffixes=CPP_SUFFIXES))


def _shown(signatures: frozenset[Signature]) -> str:
    return " or ".join(f"({', '.join(signature)})" for signature in sorted(signatures))


def _finding(context: DriftContext, path: str, decl: Decl, item: Redeclared) -> Finding:
    return Finding(
        "definition-mismatch", path,
        f"FlagTree defines {item.qualified}{_shown(frozenset([_signature(decl)]))}, which upstream's "
        f"{item.path}:{item.line} now declares as {item.qualified}{_shown(item.new - item.old) or _shown(item.new)}: "
        "the definition no longer matches the declaration upstream's code calls (will not build or link as is)",
        line=decl.line, backend=backend_of(context.owners.owners, path), related_path=item.path,
        details={"declaration": item.qualified, "old": [list(s) for s in sorted(item.old)],
                 "new": [list(s) for s in sorted(item.new)], "defined": list(_signature(decl))})
