"""Where a use of a removed declaration can mean it, for the symbol analysis (symbols.py): a C++ use through
cppscope, a Python use through its file's imports (pyresolve); a use nothing resolves is no finding."""
from __future__ import annotations

from typing import Callable

from sync.drift.analyses.symbolterms import CPP, Drift, PY, Use
from sync.facts.cppscope import resolves, use_contexts
from sync.facts.delta import fork_lines_where
from sync.facts.importers import declared_where_imported
from sync.facts.layout import is_third_party
from sync.facts.pyresolve import foreign, python_uses
from sync.facts.trees import read_text
from sync.git import GitTree


def _resolved_python(old: GitTree, fork: GitTree, hits_by_file: dict[str, list[tuple[Use, Drift]]]
                     ) -> dict[str, list[tuple[Use, Drift]]]:
    """Keep a Python use of a removed or changed declaration only where its imports (or a string receiver) let it
    mean one of trunk's (pyresolve): `struct.unpack` after `import struct` is no use of a trunk method `unpack`,
    nor `name.split(".")` with name = __name__ a use of trunk's `split`. Its line becomes the first FlagTree line
    where it may."""
    def resolve_file(path: str, hits: list[tuple[Use, Drift]], lines: set[int]) -> list[tuple[Use, Drift]]:
        text = read_text(fork, path) or ""
        kept: list[tuple[Use, Drift]] = []
        for use, drift in hits:
            found = python_uses(text, use.name)
            if found is None:
                kept.append((use, drift))
                continue
            where = sorted(found_use.line for found_use in found if found_use.line in lines and not foreign(found_use))
            if where:
                kept.append((Use(use.name, where[0]), drift))
            elif not any(found_use.line in lines for found_use in found):
                kept.append((use, drift))  # a keyword or an import: not a form pyresolve reads
        return kept
    return _per_file(old, fork, hits_by_file, lambda path, hits: path.endswith(PY), resolve_file)


Serving = Callable[[str, str], "str | None"]  # (backend, trunk path) -> the file its build loads instead, or None


def _served_where_imported(old: GitTree, fork: GitTree, hits_by_file: dict[str, list[tuple[Use, Drift]]],
                           serving: Serving) -> dict[str, list[tuple[Use, Drift]]]:
    """Less a trunk Python module's use of a name upstream removed from another module, where only some backends'
    builds can import the using module (facts/importers: FlagTree's TLE loads only where libtriton has its
    submodule) and each of them loads its own file in place of the declaring module, one that still declares
    the name (ascend's overlay of triton/language/core.py keeps `_value`): no build meets the removal there."""
    out: dict[str, list[tuple[Use, Drift]]] = {}
    for path, hits in hits_by_file.items():
        if path.endswith(PY) and not is_third_party(path):
            hits = [(use, drift) for use, drift in hits if drift.change != "removed" or drift.path == path
                    or not declared_where_imported(fork, old, path, drift.path, use.name, serving)]
        if hits:
            out[path] = hits
    return out


def _per_file(old: GitTree, fork: GitTree, hits_by_file: dict[str, list[tuple[Use, Drift]]],
              wanted: Callable[[str, list[tuple[Use, Drift]]], bool],
              resolve_file: Callable[[str, list[tuple[Use, Drift]], set[int]], list[tuple[Use, Drift]]]
              ) -> dict[str, list[tuple[Use, Drift]]]:
    """hits_by_file with each wanted file's hits as resolve_file(path, hits, FlagTree's lines there) keeps them (a
    file left with none drops out); the others as they are."""
    paths = {path for path, hits in hits_by_file.items() if wanted(path, hits)}
    if not paths:
        return hits_by_file
    lines_by_path = fork_lines_where(old, fork, lambda path: path in paths)
    out: dict[str, list[tuple[Use, Drift]]] = {}
    for path, hits in hits_by_file.items():
        kept = resolve_file(path, hits, lines_by_path.get(path, set())) if path in paths else hits
        if kept:
            out[path] = kept
    return out


def _resolved(old: GitTree, fork: GitTree, hits_by_file: dict[str, list[tuple[Use, Drift]]]
              ) -> dict[str, list[tuple[Use, Drift]]]:
    """Keep a C++ use of a removed declaration only where its spelling can mean that declaration (cppscope):
    `vals.push_back` is a member of the receiver's type, not a free function; `MemoryEffects::Write` is
    not an enumerator of another enum. A use nothing resolves is no finding. Its line becomes the first
    FlagTree line where it resolves, and each other line where it does is a site of its own."""
    def resolve_file(path: str, hits: list[tuple[Use, Drift]], lines: set[int]) -> list[tuple[Use, Drift]]:
        names = {use.name for use, drift in hits if drift.change == "removed" and drift.scopes}
        contexts = use_contexts(read_text(fork, path) or "", names)
        # A file's own unqualified definition of a function declares it for every line after it; where upstream
        # removed the name from this very file, only FlagTree's own definition does (upstream's went with it).
        removed_here = {use.name for use, drift in hits if drift.path == path and drift.change == "removed"}
        defined = {name: min((line for (found_name, line), found in contexts.items() if found_name == name
                              and (name not in removed_here or line in lines)
                              and any(context.form == "defines" for context in found)), default=None)
                   for name in names}
        kept: list[tuple[Use, Drift]] = []
        for use, drift in hits:
            if drift.change != "removed" or not drift.scopes:
                kept.append((use, drift))
                continue
            own = defined.get(use.name)
            where = sorted(line for (name, line), found in contexts.items() if name == use.name and line in lines
                           and (own is None or line < own)
                           and any(resolves(context, set(drift.scopes)) for context in found))
            kept += [(Use(use.name, line), drift) for line in where]  # every site, not the first alone
        return kept
    return _per_file(old, fork, hits_by_file, lambda path, hits: path.endswith(CPP) and any(
        drift.change == "removed" and drift.scopes for _, drift in hits), resolve_file)
