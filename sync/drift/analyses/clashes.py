"""FlagTree definitions that clash with upstream's new ones in one translation unit (issue 45, class 3): a file
FlagTree changed defines a macro, a namespace alias or a `using` alias on its own lines, and between the tags
upstream added a definition of the same name (and scope) with another body or target to a file that meets
FlagTree's in a translation unit: one includes the other on the upgraded branch, directly or through the headers it
includes (facts/includes.py). A namespace or type alias redefined to another target does not compile; a macro
redefined with another body is a warning that trunk's build (-Werror) makes an error.

Definitions come from the declaration model (declindex: `macro`, `namespace-alias`, `alias`, not local ones); a
macro FlagTree defines under `#ifndef NAME` (or after `#undef NAME`) gives way to one defined before it, and is no
clash.
"""
from __future__ import annotations

from dataclasses import dataclass

from sync.drift.context import DriftContext
from sync.facts.declindex import CPP_SUFFIXES, Decl, declarations_of
from sync.facts.delta import backend_of, fork_added_lines
from sync.facts.includes import IncludeGraph
from sync.facts.layout import not_built
from sync.facts.trees import read_text
from sync.git import changes_with_renames
from sync.model import Finding

_KINDS = frozenset({"macro", "namespace-alias", "alias"})


@dataclass(frozen=True)
class Definition:
    path: str
    decl: Decl

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.decl.kind, self.decl.name, self.decl.scope)


def _definitions(path: str, text: str) -> list[Decl]:
    return [decl for decl in declarations_of(path, text) if decl.kind in _KINDS and "local" not in decl.flags]


def _guarded(text: str, decl: Decl) -> bool:
    """A macro FlagTree defines only where it is not defined yet (`#ifndef NAME`, `!defined(NAME)`, `#undef NAME`
    just above): no redefinition."""
    above = "\n".join(text.splitlines()[max(0, decl.line - 4):decl.line - 1])
    return any(spelled in above for spelled in (f"ifndef {decl.name}", f"!defined({decl.name})",
                                                 f"!defined {decl.name}", f"undef {decl.name}"))


def _flagtree_definitions(context: DriftContext) -> list[Definition]:
    found: list[Definition] = []
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if not path.endswith(CPP_SUFFIXES) or not_built(path):
            continue
        text = read_text(context.fork, path) or ""
        if "#" not in text and "namespace" not in text and "using" not in text:
            continue
        found += [Definition(path, decl) for decl in _definitions(path, text) if decl.line in lines
                  and not (decl.kind == "macro" and _guarded(text, decl))]
    return found


def _upstream_definitions(context: DriftContext, keys: set[tuple[str, str, str]]) -> list[Definition]:
    """Definitions of those names that upstream's files make at the new tag and did not make at the old one."""
    old, new = context.upstream_old, context.upstream_new
    names = {name for _, name, _ in keys}
    found: list[Definition] = []
    for change in changes_with_renames(old, new):
        path = change.new_path
        if path is None or not path.endswith(CPP_SUFFIXES) or not_built(path):
            continue
        text = read_text(new, path) or ""
        if not any(name in text for name in names):
            continue
        before = {(decl.kind, decl.name, decl.scope, decl.target)
                  for decl in _definitions(change.old_path, read_text(old, change.old_path) or "")} \
            if change.status != "added" else set()
        found += [Definition(path, decl) for decl in _definitions(path, text)
                  if (decl.kind, decl.name, decl.scope) in keys
                  and (decl.kind, decl.name, decl.scope, decl.target) not in before]
    return found


def clash_findings(context: DriftContext) -> list[Finding]:
    mine = _flagtree_definitions(context)
    if not mine:
        return []
    theirs = _upstream_definitions(context, {definition.key for definition in mine})
    if not theirs:
        return []
    branch = context.target if context.target is not None else context.upstream_new
    graph = IncludeGraph.of(branch)
    findings: list[Finding] = []
    for flagtree in mine:
        for upstream in theirs:
            if upstream.key != flagtree.key or _same(upstream.decl, flagtree.decl):
                continue
            path = flagtree.path if branch.exists(flagtree.path) else context.renames.get(flagtree.path, flagtree.path)
            if upstream.path not in graph.closure(path) and path not in graph.closure(upstream.path):
                continue  # they never meet in one translation unit
            findings.append(_finding(context, flagtree, upstream))
    return findings


def _same(one: Decl, other: Decl) -> bool:
    return one.target.replace(" ", "").lstrip(":") == other.target.replace(" ", "").lstrip(":")


def _finding(context: DriftContext, flagtree: Definition, upstream: Definition) -> Finding:
    what = {"macro": "macro", "namespace-alias": "namespace alias", "alias": "type alias"}[flagtree.decl.kind]
    name = f"{flagtree.decl.scope}::{flagtree.decl.name}" if flagtree.decl.scope else flagtree.decl.name
    return Finding(
        "definition-clash", flagtree.path,
        f"FlagTree defines the {what} {name} as `{flagtree.decl.target}`; upstream now defines it as "
        f"`{upstream.decl.target}` in {upstream.path}:{upstream.decl.line}, and the two files meet in one translation "
        "unit on the upgraded branch (will not build as is)", line=flagtree.decl.line,
        backend=backend_of(context.owners.owners, flagtree.path), related_path=upstream.path,
        details={"declaration": name, "flagtree": flagtree.decl.target, "upstream": upstream.decl.target})
