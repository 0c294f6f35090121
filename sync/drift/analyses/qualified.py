"""Qualified names whose declaration upstream moved (issue 45): FlagTree's lines name a trunk declaration through
its namespace or class (`mlir::registerTritonPasses()`), the name resolved there at the old tag, and at the new
tag upstream declares it only elsewhere (`mlir::triton::registerTritonPasses`): the qualified name no longer
resolves, so the code will not build as is. Symbol drift reports a name upstream removed everywhere; this is the
name that still exists, under another scope.

The question, asked of the declarations of the old tag and of the upgraded branch (declindex, and the pass
registrations TableGen generates: facts/generated.py): does a declaration of the name sit in the namespace or
class the use spells (its qualifier, namespace aliases followed; from inside an enclosing namespace, a trailing
run of scopes) at the old tag, and none at the new one, while some other declaration of the name does? Uses are
read with tree-sitter (cppscope), on FlagTree's own lines of C/C++ files the build compiles. A backend that carries
its own copy of trunk's headers compiles against that copy and is not asked.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from sync.drift.context import DriftContext
from sync.facts.cmakebuilt import unbuilt
from sync.facts.cppscope import use_contexts
from sync.facts.declindex import CPP_SUFFIXES, Decl, DeclarationIndex
from sync.facts.delta import backend_of, fork_added_lines
from sync.facts.generated import pass_registrations
from sync.facts.layout import not_built, third_party_owner
from sync.facts.trees import FileTree, read_text
from sync.facts.upstreamlog import one_per_change
from sync.model import Finding

_QUALIFIED = re.compile(r"\b[A-Za-z_]\w*::(?:[A-Za-z_]\w*::)*([A-Za-z_]\w*)")
_SCOPED_KINDS = frozenset({"function", "method", "class", "struct", "union", "enum", "enumerator", "alias",
                           "namespace-alias"})


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


def _declarations(tree: FileTree, names: set[str]) -> dict[str, list[tuple[str, Decl]]]:
    """Each name -> (path, declaration) of its C/C++ declarations in the tree (not local ones), the generated pass
    registrations too (their path: the header that includes the generated file)."""
    found: dict[str, list[tuple[str, Decl]]] = {name: [] for name in names}
    for path, decls in DeclarationIndex.of(tree).files(suffixes=CPP_SUFFIXES, spelling=names):
        if not_built(path):
            continue
        for decl in decls:
            if decl.name in found and decl.kind in _SCOPED_KINDS and "local" not in decl.flags:
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


def _uses(context: DriftContext) -> list[QualifiedUse]:
    own_trunk = context.own_trunk_backends
    uses: list[QualifiedUse] = []
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if not path.endswith(CPP_SUFFIXES) or not_built(path) or third_party_owner(path) in own_trunk \
                or unbuilt(context.fork, path):
            continue
        text = read_text(context.fork, path) or ""
        source = text.splitlines()
        names = {match[1] for line in lines if 0 < line <= len(source)
                 for match in _QUALIFIED.finditer(source[line - 1].split("//", 1)[0])}
        if not names:
            continue
        for (name, line), contexts in use_contexts(text, names).items():
            if line in lines:
                uses += [QualifiedUse(path, line, name, use.scope.lstrip(":")) for use in contexts
                         if use.form == "qualified" and use.scope]
    return uses


def moved_findings(context: DriftContext) -> list[Finding]:
    uses = _uses(context)
    if not uses:
        return []
    names = {use.name for use in uses}
    before = _declarations(context.upstream_old, names)
    after = _declarations(context.target if context.target is not None else context.upstream_new, names)
    sited: list[tuple[tuple[str, ...], list[str], Finding]] = []
    for use in uses:
        old = [decl for _, decl in before[use.name] if _answers(decl, use.qualifier)]
        now = [decl for path, decl in after[use.name] if _visible(context, path, use.path)]
        if not old or not now or any(_answers(decl, use.qualifier) for decl in now):
            continue
        moved_to = sorted({decl.qualified for decl in now if decl.kind == old[0].kind})
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
