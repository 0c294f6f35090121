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

And the mirror (declaration-mismatch): FlagTree's lines declare, without a body, a function that upstream's
code defines with external linkage at the old tag (python/src/llvm.cc's translateLLVMIRToASM, which the cpu
backend's extern declaration calls), and upstream's new tree defines that qualified name only with other
parameters or with internal linkage (static, an anonymous namespace), and declares the old form nowhere, nor does
the backend define it in its own tree (xpu compiles its own python/src/llvm.cc): FlagTree's calls link to nothing
(3.3 -> 3.7, where upstream added a parameter and moved the function into an anonymous namespace).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from sync.drift.context import DriftContext
from sync.facts.cmakebuilt import unbuilt
from sync.facts.declindex import CPP_SUFFIXES, HEADER_SUFFIXES, Decl, DeclarationIndex, declarations_of
from sync.facts.delta import backend_of, fork_added_lines
from sync.facts.cppscope import own_header_copy
from sync.facts.filekinds import CPP_SOURCES, not_built
from sync.facts.layout import backend_dir, third_party_owner
from sync.facts.trees import read_text
from sync.git import blob_hunks, changes_with_renames
from sync.model import Finding

Signature = tuple[str, ...]  # the parameters' type names


@dataclass(frozen=True)
class Redeclared:
    qualified: str
    path: str  # the upstream file that declares it at the new tag
    line: int
    old: frozenset[Signature]
    new: frozenset[Signature]
    owner: str | None = None  # a method's class: its out-of-line definition spells `Owner::name`

    def spelled_in(self, text: str) -> bool:
        """Whether FlagTree's text can define it: a method's definition outside its class spells `Owner::name`."""
        return self.owner is None or f"{self.owner}::{self.qualified.rsplit('::', 1)[-1]}" in text


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


def _declaring(path: str) -> bool:
    """Where upstream declares what other files define: headers, and the binding sources that declare each
    module's init function (python/src/main.cc declares every backend's init_triton_<b>)."""
    return path.endswith(HEADER_SUFFIXES) or (path.startswith("python/src/") and path.endswith(CPP_SUFFIXES))


def redeclared(context: DriftContext) -> list[Redeclared]:
    """Functions an upstream-changed header declares with other parameters at the new tag than at the old; only
    headers whose removed lines open a parameter list are parsed (a changed declaration removes its old line)."""
    out: list[Redeclared] = []
    old, new = context.upstream_old, context.upstream_new
    for change in changes_with_renames(old, new):
        if change.new_path is None or not _declaring(change.old_path) or not_built(change.old_path):
            continue
        before_id, after_id = old.blob_id(change.old_path), new.blob_id(change.new_path)
        if before_id is None or after_id is None:
            continue
        if not any("(" in text for hunk in blob_hunks(old.repo, before_id, after_id) for text in hunk.removed):
            continue
        before = _declared(declarations_of(change.old_path, read_text(old, change.old_path) or ""))
        if not before:
            continue
        after = _declared(declarations_of(change.new_path, read_text(new, change.new_path) or ""))
        for qualified, old_decls in before.items():
            new_decls = after.get(qualified)
            if not new_decls:
                continue  # gone from this file: removals are symbol drift's
            signatures_before = frozenset(map(_signature, old_decls))
            signatures_after = frozenset(map(_signature, new_decls))
            if signatures_before != signatures_after:
                out.append(Redeclared(qualified, change.new_path, new_decls[0].line, signatures_before,
                                      signatures_after, old_decls[0].owner))
    return out


def _overloads_now(context: DriftContext, item: Redeclared) -> frozenset[Signature]:
    """Every signature the new tag's headers declare for the name (another header may keep the old one)."""
    return item.new | {_signature(decl) for _, decl in DeclarationIndex.of(context.upstream_new).overloads(
        item.qualified, suffixes=HEADER_SUFFIXES) if decl.qualified == item.qualified and decl.params is not None}


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
    # `name(params) {` (a definition: a call ends in `;`), for the names alone: one scan of a file's lines
    opens = re.compile(r"\b(" + "|".join(sorted(map(re.escape, by_name), key=len, reverse=True))
                       + r")\s*\([^;{}]*\)[\s\w&:(),<>]*\{")
    branch = context.backend_files
    fork_index = DeclarationIndex.of(context.fork)
    findings: list[Finding] = []
    own_trunk = context.own_trunk_backends  # their files implement their own copies of the headers
    for path, lines in sorted(added.items()):
        if not path.endswith(CPP_SUFFIXES) or not_built(path) or third_party_owner(path) in own_trunk \
                or unbuilt(context.fork, path):
            continue
        fork_text = read_text(context.fork, path) or ""
        source = fork_text.splitlines()
        added_text = "\n".join(source[line - 1] for line in lines if 0 < line <= len(source))
        spelled = {name for name in set(opens.findall(added_text))
                   if any(item.spelled_in(added_text) for item in by_name[name])}
        if not spelled:
            continue  # FlagTree's lines here define none of them
        mine = [decl for decl in _definitions(fork_text, path, spelled) if decl.line in lines]
        if not mine:
            continue
        text = read_text(branch, path) if branch is not context.fork else fork_text
        now = _definitions(text or "", path, spelled) if text is not None else mine
        backend = third_party_owner(path)
        for decl in mine:
            for item in by_name[decl.name]:
                if decl.qualified != item.qualified or _signature(decl) not in item.old:
                    continue
                if backend is not None and _backend_declares(context, fork_index, backend, item):
                    continue  # the definition implements the backend's own declaration (its header copy first)
                declared_now = _overloads_now(context, item)
                if _signature(decl) in declared_now:
                    continue  # another header of the new tag still declares the old form
                still = [d for d in now if d.qualified == item.qualified and _signature(d) not in declared_now]
                if not still or any(_signature(d) in declared_now for d in now if d.qualified == item.qualified):
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


def _externally_defined(decl: Decl) -> bool:
    """A function definition another compile unit can call: not static, local or in an anonymous namespace."""
    return decl.kind == "function" and "definition" in decl.flags and decl.params is not None \
        and not decl.flags & {"local", "special", "static", "internal"}


# A prototype on one line of a source: `[extern] type name(params);` (the parse then says what it is)
_PROTOTYPE = re.compile(r"^\s*(?:extern\s+)?[\w:<>,\s*&]+?[\s*&](\w+)\s*\([^;{}]*\)\s*(?:const\s*)?;", re.MULTILINE)


_NOT_A_PROTOTYPE = frozenset({"definition", "local", "friend", "special", "qualified", "static", "internal"})


def _flagtree_prototypes(context: DriftContext) -> dict[str, list[tuple[str, Decl]]]:
    """Name -> (path, declaration) of each function FlagTree's lines declare without a body in a compiled source
    (.cc/.cpp): a forward declaration of a function some other unit defines."""
    found: dict[str, list[tuple[str, Decl]]] = {}
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if not path.endswith(CPP_SOURCES) or not_built(path):
            continue
        text = read_text(context.fork, path) or ""
        source = text.splitlines()
        added = "\n".join(source[line - 1] for line in sorted(lines) if 0 < line <= len(source))
        if not _PROTOTYPE.search(added) or unbuilt(context.fork, path):
            continue
        for decl in declarations_of(path, text):
            if decl.line in lines and decl.kind == "function" and decl.params is not None \
                    and not decl.flags & _NOT_A_PROTOTYPE:
                found.setdefault(decl.name, []).append((path, decl))
    return found


def _redefined(context: DriftContext, names: set[str]) -> dict[str, tuple[str, Decl, Decl]]:
    """Qualified name -> (the upstream source that defines it at the new tag, its old definition, its new one), for
    each of the names an upstream-changed source (.cc/.cpp) defines with external linkage at the old tag and, at the
    new one, only with other parameters or with internal linkage."""
    out: dict[str, tuple[str, Decl, Decl]] = {}
    old, new = context.upstream_old, context.upstream_new
    spelled = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, names))) + r")\s*\(")
    for change in changes_with_renames(old, new):
        if change.new_path is None or not change.old_path.endswith(CPP_SOURCES) or not_built(change.old_path):
            continue
        old_text = read_text(old, change.old_path) or ""
        if not spelled.search(old_text):
            continue  # defines none of them
        before = declarations_of(change.old_path, old_text)
        after = declarations_of(change.new_path, read_text(new, change.new_path) or "")
        for decl in before:
            if decl.name not in names or not _externally_defined(decl) or decl.qualified in out:
                continue
            now = [d for d in after
                   if d.qualified == decl.qualified and "definition" in d.flags and d.params is not None]
            if now and not any(_signature(d) == _signature(decl) and _externally_defined(d) for d in now):
                out[decl.qualified] = (change.new_path, decl, now[0])
    return out


def declaration_findings(context: DriftContext) -> list[Finding]:
    """declaration-mismatch: FlagTree's own declarations (no body) of functions upstream's sources define and
    changed (the module's second question)."""
    prototypes = _flagtree_prototypes(context)
    changed = _redefined(context, set(prototypes)) if prototypes else {}
    if not changed:
        return []
    new_index, fork_index = DeclarationIndex.of(context.upstream_new), DeclarationIndex.of(context.fork)
    findings: list[Finding] = []
    for path, decl in sorted(((path, decl) for sites in prototypes.values() for path, decl in sites),
                             key=lambda site: (site[0], site[1].line)):
        item = changed.get(decl.qualified)
        if item is None:
            continue
        where, old_definition, new_definition = item
        if _signature(decl) != _signature(old_definition):
            continue  # not the old definition's form: FlagTree declares something else
        if any(d.qualified == decl.qualified and _signature(d) == _signature(decl)
               and not d.flags & {"static", "internal", "local"}
               for _, d in new_index.overloads(decl.qualified, suffixes=HEADER_SUFFIXES)):
            continue  # a header of the new tree still declares the old form
        backend = third_party_owner(path)
        if backend is not None and any(
                d.qualified == decl.qualified and _signature(d) == _signature(decl) and _externally_defined(d)
                for _, d in fork_index.overloads(decl.qualified, under=[backend_dir(backend) + "/"],
                                                 suffixes=CPP_SOURCES)):
            continue  # the backend compiles its own definition of the old form (xpu's python/src/llvm.cc)
        new_form = f"as {decl.qualified}{_shown(frozenset([_signature(new_definition)]))}"
        how = "in an anonymous namespace" if "internal" in new_definition.flags else "static" \
            if "static" in new_definition.flags else new_form
        findings.append(Finding(
            "declaration-mismatch", path,
            f"FlagTree declares {decl.qualified}{_shown(frozenset([_signature(decl)]))} to call upstream's definition "
            f"in {where}, which upstream now defines {how} (line {new_definition.line}): no definition matches "
            "FlagTree's declaration, so its calls link to nothing (will not link as is)",
            "declare and call the function as upstream now defines it, or keep a definition of FlagTree's own",
            decl.line, backend_of(context.owners.owners, path), related_path=where,
            details={"declaration": decl.qualified, "declared": list(_signature(decl)),
                     "defined": list(_signature(new_definition)),
                     "linkage": sorted(new_definition.flags & {"static", "internal"})}))
    return findings


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
