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

import re
from dataclasses import dataclass
from typing import Iterable

from sync.drift.context import DriftContext
from sync.facts.declindex import CPP_SUFFIXES, HEADER_SUFFIXES as HEADERS, Decl, declarations_of
from sync.facts.delta import backend_of, fork_added_lines
from sync.facts.includes import IncludeGraph
from sync.facts.filekinds import not_built
from sync.facts.layout import third_party_owner
from sync.facts.trees import read_text
from sync.git import blob_hunks, changes_with_renames
from sync.model import Finding

_KINDS = frozenset({"macro", "namespace-alias", "alias"})
# A line that can define one of those: `#define`, `namespace a = b;`, `using A = B;`, `typedef` (a text test first).
# An alias of a class or function body is indented, one at namespace scope is not (namespaces are not indented):
# only the latter is a candidate; the parse then says where each one stands.
_DEFINES = re.compile(r"^(?:[ \t]*#[ \t]*define[ \t]+(\w+)|namespace\s+(\w+)\s*=|using\s+(\w+)\s*=|typedef\b[^;]*?(\w+)\s*;)")


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


_DEFINES_ANYWHERE = re.compile(_DEFINES.pattern + r"[^\n]*", re.MULTILINE)


def _definition(match: re.Match[str]) -> tuple[str, str]:
    """(the name a defining line defines, the line with its blanks folded): two lines alike define alike."""
    return next(name for name in match.groups() if name), " ".join(match[0].split())


def _defined(lines: Iterable[str]) -> set[tuple[str, str]]:
    """(name, defining line) of each line that defines (a prefilter: the parse says what each one is)."""
    return {_definition(match) for line in lines for match in [_DEFINES_ANYWHERE.match(line)] if match is not None}


def _flagtree_candidates(context: DriftContext) -> dict[str, set[tuple[str, str]]]:
    """FlagTree's changed C/C++ files -> (name, line) of what its own lines there define (text only)."""
    found: dict[str, set[tuple[str, str]]] = {}
    own_trunk = context.own_trunk_backends  # they compile against their own copies, never upstream's new files
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if not path.endswith(CPP_SUFFIXES) or not_built(path) or third_party_owner(path) in own_trunk:
            continue
        text = read_text(context.fork, path) or ""
        defined = {_definition(match) for match in _DEFINES_ANYWHERE.finditer(text)
                   if text.count("\n", 0, match.start()) + 1 in lines}  # one scan of the text, lines counted at a match
        if defined:
            found[path] = defined
    return found


def _upstream_candidates(context: DriftContext, names: set[str]) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(old path, new path) of each file upstream changed -> (name, line) of those of names its added lines define."""
    old, new = context.upstream_old, context.upstream_new
    found: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for change in changes_with_renames(old, new):
        path = change.new_path
        if path is None or not path.endswith(CPP_SUFFIXES) or not_built(path):
            continue
        before_id, after_id = old.blob_id(change.old_path), new.blob_id(path)
        if after_id is None:
            continue
        if before_id is None:
            added = (read_text(new, path) or "").splitlines()
        else:
            added = [line for hunk in blob_hunks(new.repo, before_id, after_id) for line in hunk.added]
        defined = {item for item in _defined(added) if item[0] in names}
        if defined:
            found[(change.old_path, path)] = defined
    return found


def clash_findings(context: DriftContext) -> list[Finding]:
    flagtree_files = _flagtree_candidates(context)
    flagtree_names = {name for defined in flagtree_files.values() for name, _ in defined}
    upstream_files = _upstream_candidates(context, flagtree_names) if flagtree_files else {}
    if not upstream_files:
        return []
    # Two definitions meet only through a header (a source file includes no other source) or in one file: a
    # FlagTree source is asked of what upstream's headers (or the same file) define, a FlagTree header of all.
    # A name both define with the same line cannot clash.
    in_headers = {item for (_, path), defined in upstream_files.items() if path.endswith(HEADERS) for item in defined}
    in_sources = {path: defined for (_, path), defined in upstream_files.items() if not path.endswith(HEADERS)}
    every = {item for defined in upstream_files.values() for item in defined}

    def clashing(path: str, defined: set[tuple[str, str]]) -> set[str]:
        theirs = every if path.endswith(HEADERS) else in_headers | in_sources.get(path, set())
        return {name for name, line in defined if any(other == name and not _alike(text, line) for other, text in theirs)}
    names_by_file = {path: clashing(path, defined) for path, defined in flagtree_files.items()}
    names_by_file = {path: names for path, names in names_by_file.items() if names}
    names = set().union(*names_by_file.values()) if names_by_file else set()
    if not names:
        return []
    old, new = context.upstream_old, context.upstream_new
    theirs: list[Definition] = []
    for (old_path, path), defined in upstream_files.items():
        wanted = {name for name, _ in defined} & names
        if not wanted:
            continue
        before = {(decl.kind, decl.name, decl.scope, decl.target)
                  for decl in _definitions(old_path, read_text(old, old_path) or "")} if old.exists(old_path) else set()
        theirs += [Definition(path, decl) for decl in _definitions(path, read_text(new, path) or "")
                   if decl.name in wanted and (decl.kind, decl.name, decl.scope, decl.target) not in before]
    mine: list[Definition] = []
    added = fork_added_lines(context.upstream_old, context.fork)
    for path, wanted in names_by_file.items():
        text = read_text(context.fork, path) or ""
        mine += [Definition(path, decl) for decl in _definitions(path, text) if decl.line in added[path]
                 and decl.name in wanted and not (decl.kind == "macro" and _guarded(text, decl))]
    graph = IncludeGraph.of(context.branch)
    findings: list[Finding] = []
    for flagtree in mine:
        for upstream in theirs:
            if upstream.key != flagtree.key or _same(upstream.decl, flagtree.decl):
                continue
            path = context.branch_path(flagtree.path)
            if upstream.path not in graph.closure(path) and path not in graph.closure(upstream.path):
                continue  # they never meet in one translation unit
            if upstream.path == path and _kept_once(context, path, flagtree.key):
                continue  # two versions of one definition, and the branch's file keeps one: no second one meets it
            findings.append(_finding(context, flagtree, upstream))
    return findings


def _kept_once(context: DriftContext, path: str, key: tuple[str, str, str]) -> bool:
    """Whether the upgraded branch's file defines the name once at most (seen on triton_v3.3.x onto 3.5.1: FlagTree
    and upstream each rewrote FOR_EACH_ARG_N in python/src/main.cc, and the branch holds FlagTree's alone)."""
    defined = [decl for decl in _definitions(path, read_text(context.branch, path) or "")
               if (decl.kind, decl.name, decl.scope) == key]
    return len(defined) < 2


def _same_target(one: str, other: str) -> bool:
    """Whether two targets may name one thing: equal, or one the other written from an enclosing namespace
    (`triton::gpu` inside `namespace mlir` is `mlir::triton::gpu`)."""
    one, other = one.replace(" ", "").lstrip(":"), other.replace(" ", "").lstrip(":")
    return one == other or one.endswith("::" + other) or other.endswith("::" + one)


def _same(one: Decl, other: Decl) -> bool:
    return _same_target(one.target, other.target) if one.kind != "macro" else one.target == other.target


_ALIAS_LINE = re.compile(r"^(?:namespace|using)\s+\w+\s*=\s*([^;]+);")


def _alike(line: str, other: str) -> bool:
    """Two defining lines that define alike (an alias's target compared as _same_target does)."""
    if line == other:
        return True
    first, second = _ALIAS_LINE.match(line), _ALIAS_LINE.match(other)
    return first is not None and second is not None and _same_target(first[1], second[1])


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
