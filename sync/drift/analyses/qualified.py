"""Qualified names whose declaration upstream moved (issue 45): FlagTree's lines name a trunk declaration through
its namespace or class (`mlir::registerTritonPasses()`), the name resolved there at the old tag, and at the new
tag upstream declares it only elsewhere (`mlir::triton::registerTritonPasses`): the qualified name no longer
resolves, so the code will not build as is. Symbol drift reports a name upstream removed everywhere; this is the
name that still exists, under another scope.

The question, asked of the declarations of the old tag and of the upgraded branch (declindex, and the pass
registrations TableGen generates: facts/generated.py): does a declaration of the name sit in the namespace or
class the use spells (its qualifier, namespace aliases followed; from inside an enclosing namespace, a trailing
run of scopes) at the old tag, and none at the new one, while some other declaration of the name does? At the
old tag the qualifier must name the scope from the top (so that it cannot mean a class of the backend's own); at
the new one any scope that could answer it from an enclosing namespace keeps the finding away. Uses are
read with tree-sitter (cppscope), on FlagTree's own lines of C/C++ files the build compiles. A backend that carries
its own copy of trunk's headers compiles against that copy and is not asked.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from sync.drift.context import DriftContext
from sync.facts.cmakebuilt import unbuilt
from sync.facts.cppscope import resolves, use_contexts
from sync.facts.declindex import CPP_SUFFIXES, Decl, DeclarationIndex, declarations_of
from sync.facts.delta import backend_of, fork_added_lines
from sync.facts.generated import pass_registrations
from sync.facts.includes import IncludeGraph
from sync.facts.moves import HEADERS, SCOPED_KINDS, Left, declarations_that_left
from sync.facts.filekinds import not_built
from sync.facts.layout import third_party_owner
from sync.facts.trees import FileTree, read_text
from sync.facts.upstreamlog import one_per_change
from sync.model import Finding

_QUALIFIED = re.compile(r"\b[A-Za-z_]\w*::(?:[A-Za-z_]\w*::)*([A-Za-z_]\w*)")


@dataclass(frozen=True)
class QualifiedUse:
    path: str
    line: int
    name: str
    qualifier: str


def _answers(decl: Decl, qualifier: str) -> bool:
    """Whether a declaration is what `qualifier::name` can mean (from the top, or from an enclosing namespace)."""
    scope = decl.scope
    return scope == qualifier or scope.endswith("::" + qualifier)


def _meant(decl: Decl, qualifier: str) -> bool:
    """Whether `qualifier::name` names the declaration from the top: a qualifier that starts lower down
    (`WarpGroupDotOp::verifyDims` inside a backend's namespace) may mean a class of the backend's own."""
    return decl.scope == qualifier


def _aliases(tree: FileTree, names: set[str]) -> dict[str, list[Decl]]:
    """Each name -> the `using NAME = ...` and `typedef ... NAME;` aliases of it the tree's headers declare; only
    headers that spell such a line are parsed (a namespace's name is in most headers, an alias of it in few)."""
    found: dict[str, list[Decl]] = {name: [] for name in names}
    needles = tuple(needle for name in sorted(names) for needle in (f"using {name} =", f"using {name}=", f" {name};"))
    for path, decls in DeclarationIndex.of(tree).files(suffixes=HEADERS, spelling=needles) if needles else ():
        if not_built(path):
            continue
        for decl in decls:
            if decl.kind == "alias" and decl.name in found:
                found[decl.name].append(decl)
    return found


def _same_class(decl: Decl, old: Decl) -> bool:
    """Whether decl could be old moved to another namespace: a member stays a member of a class of its name."""
    return old.owner is None or decl.scope.rsplit("::", 1)[-1] == old.scope.rsplit("::", 1)[-1]


def _declarations(tree: FileTree, names: set[str]) -> dict[str, list[tuple[str, Decl]]]:
    """Each name -> (path, declaration) of its declarations in the tree's C/C++ headers (not local ones), the
    generated pass registrations too (their path: the header that includes the generated file)."""
    found: dict[str, list[tuple[str, Decl]]] = {name: [] for name in names}
    for path, decls in DeclarationIndex.of(tree).files(suffixes=HEADERS, spelling=names):  # what other files see
        if not_built(path):
            continue
        for decl in decls:
            if decl.name in found and decl.kind in SCOPED_KINDS and "local" not in decl.flags:
                found[decl.name].append((path, decl))
    for decl in pass_registrations(tree):
        if decl.name in found:
            found[decl.name].append((decl.target, decl))
    return found


def _visible(context: DriftContext, declared_in: str, used_in: str) -> bool:
    """Whether a use's build sees a declaration of the upgraded branch: trunk's files, upstream's own
    third_party trees, and the use's own backend; another FlagTree backend's files are not on its include path."""
    owner = third_party_owner(declared_in)
    return owner is None or owner == third_party_owner(used_in) or context.upstream_new.exists(declared_in)


def _spelled(context: DriftContext) -> dict[str, frozenset[int]]:
    """FlagTree's lines of the C/C++ files its build compiles (a backend with its own trunk copy: none)."""
    own_trunk = context.own_trunk_backends
    return {path: lines for path, lines in fork_added_lines(context.upstream_old, context.fork).items()
            if path.endswith(CPP_SUFFIXES) and not not_built(path) and third_party_owner(path) not in own_trunk
            and not unbuilt(context.fork, path)}


def _qualified_names(context: DriftContext, files: dict[str, frozenset[int]]) -> dict[str, set[str]]:
    """Each name spelled after a `::` on FlagTree's lines -> the files that spell it so (a text test, no parse)."""
    found: dict[str, set[str]] = {}
    for path, lines in files.items():
        source = (read_text(context.fork, path) or "").splitlines()
        for line in lines:
            if 0 < line <= len(source) and "::" in source[line - 1]:
                for match in _QUALIFIED.finditer(source[line - 1].split("//", 1)[0]):
                    found.setdefault(match[1], set()).add(path)
    return found


def _scopes_upstream_left(moved: dict[str, list[Left]], generated: list[Decl], names: set[str],
                          now: dict[str, list[tuple[str, Decl]]]) -> dict[str, list[Decl]]:
    """Names some header upstream changed declared at the old tag in a scope where the new tag (its declarations:
    now) declares them nowhere (facts/moves.py), generated pass registrations too: name -> those old declarations.
    Only these can answer a qualifier at the old tag and not at the new one."""
    candidates = {name: [left.decl for left in moved[name]] for name in names & moved.keys()}
    for decl in generated:
        if decl.name in names:
            candidates.setdefault(decl.name, []).append(decl)
    left: dict[str, list[Decl]] = {}
    for name, decls in candidates.items():
        scopes = {decl.scope for _, decl in now[name]}
        gone = [decl for decl in decls if decl.scope not in scopes]
        if gone:
            left[name] = gone
    return left


def _uses(context: DriftContext, files: dict[str, frozenset[int]], by_name: dict[str, set[str]],
          names: set[str]) -> list[QualifiedUse]:
    uses: list[QualifiedUse] = []
    for path in sorted({path for name in names for path in by_name.get(name, ())}):
        lines = files[path]
        for (name, line), contexts in use_contexts(read_text(context.fork, path) or "", names).items():
            if line in lines:
                uses += [QualifiedUse(path, line, name, use.scope.lstrip(":")) for use in contexts
                         if use.form == "qualified" and use.scope]
    return uses


def moved_findings(context: DriftContext) -> list[Finding]:
    files = _spelled(context)
    by_name = _qualified_names(context, files)
    moved = declarations_that_left(context.upstream_old, context.upstream_new)
    generated = [decl for decl in pass_registrations(context.upstream_old) if decl.name in by_name]
    # the new tag's declarations of every name either question asks about, looked up once
    now = _declarations(context.upstream_new, set(moved) | {decl.name for decl in generated})
    left = _scopes_upstream_left(moved, generated, set(by_name), now)
    uses = _uses(context, files, by_name, set(left))
    return _namespace_moves(context, uses, left) + _header_moves(context, files, moved, now)


def _namespace_moves(context: DriftContext, uses: list[QualifiedUse], left: dict[str, list[Decl]]) -> list[Finding]:
    if not uses:
        return []
    names = {use.name for use in uses}
    after = _declarations(context.branch, names)
    sited: list[tuple[tuple[str, ...], list[str], Finding]] = []
    candidates = []
    for use in uses:
        old = [decl for decl in left[use.name] if _meant(decl, use.qualifier)]
        now = [decl for path, decl in after[use.name] if _visible(context, path, use.path)]
        if old and now and not any(_answers(decl, use.qualifier) for decl in now):
            candidates.append((use, old, now))
    aliases = _aliases(context.branch, {use.qualifier.rsplit("::", 1)[-1] for use, _, _ in candidates})
    for use, old, now in candidates:
        if any(alias.qualified == use.qualifier or alias.qualified.endswith("::" + use.qualifier)
               for alias in aliases[use.qualifier.rsplit("::", 1)[-1]]):
            continue  # the class is an alias now (of a template, say): its members are the target's, not followed
        # the same declaration in another namespace: a member of a class of the same name, not one of any class
        moved_to = sorted({decl.qualified for decl in now if decl.kind == old[0].kind and _same_class(decl, old[0])})
        if not moved_to:
            continue
        spelled = f"{use.qualifier}::{use.name}"
        sited.append((("moved", spelled), [f"{use.path}:{use.line}"], Finding(
            "symbol-moved", use.path,
            f"{spelled}: upstream moved it; the new tag declares it as {', '.join(moved_to[:3])} "
            "(will not build as is)", line=use.line, backend=backend_of(context.owners.owners, use.path),
            related_path=next((path for path, decl in after[use.name] if decl.qualified == moved_to[0]), None),
            details={"declaration": spelled, "replacements": {spelled: moved_to[0]}, "moved_to": moved_to})))
    return one_per_change(sited, None)


def _header_moves(context: DriftContext, files: dict[str, frozenset[int]], moved: dict[str, list[Left]],
                  now: dict[str, list[tuple[str, Decl]]]) -> list[Finding]:
    """Declarations upstream moved to another header (same name and scope), used on FlagTree's lines of a file
    that reached the old header through its includes and reaches none of the new ones (facts/includes.py): the
    name no longer resolves there, so the file will not build as is."""
    if not moved:
        return []
    to: dict[tuple[str, str], tuple[list[str], list[str]]] = {}  # (name, scope) -> (old headers, new headers)
    for name, lefts in moved.items():
        for left in lefts:
            headers = sorted({path for path, decl in now[name] if decl.scope == left.decl.scope
                              and decl.kind == left.decl.kind and path != left.header})
            if headers:
                olds = to.setdefault((name, left.decl.scope), ([], headers))[0]
                olds.append(left.header)
    if not to:
        return []
    names = {name for name, _ in to}
    before, after = IncludeGraph.of(context.fork), IncludeGraph.of(context.branch)
    sited: list[tuple[tuple[str, ...], list[str], Finding]] = []
    for path, lines in sorted(files.items()):
        text = read_text(context.fork, path) or ""
        spelled = {name for name in names if name in text}
        if not spelled:
            continue
        contexts = use_contexts(text, spelled)
        own = {(decl.name, decl.scope) for decl in declarations_of(path, text)}
        for (name, line), found in sorted(contexts.items(), key=lambda item: item[0][1]):
            if line not in lines:
                continue
            for (moved_name, scope), (olds, news) in to.items():
                if moved_name != name or (name, scope) in own:
                    continue
                kinds = {f"free:{scope}", f"member:{scope.rsplit('::', 1)[-1]}", f"type:{scope}"}
                if not any(resolves(use, kinds) for use in found):
                    continue
                if not before.closure(path) & set(olds) or after.closure(context.branch_path(path)) & set(news):
                    continue  # it never reached the old header, or it reaches the new one
                qualified = f"{scope}::{name}" if scope else name
                sited.append((("header", qualified), [f"{path}:{line}"], Finding(
                    "symbol-moved", path,
                    f"{qualified}: upstream moved its declaration from {olds[0]} to {news[0]}, which this file does "
                    "not include, directly or through the headers it includes (will not build as is)",
                    line=line, backend=backend_of(context.owners.owners, path), related_path=news[0],
                    details={"declaration": qualified, "moved_from": olds, "moved_to_headers": news})))
    return one_per_change(sited, None)

