"""Symbol drift: FlagTree-added code that uses trunk symbols upstream removed or re-declared.

A textual merge can be clean and still break: the code FlagTree adds names a field upstream
renamed, calls a Python function whose parameters changed, includes a header that moved.
The analysis starts from the identifiers on the lines FlagTree added (diff old tag -> FlagTree
branch; C++ identifiers through tree-sitter, so comments and strings do not count) and asks,
for those names only, what upstream did between the tags:

- removed: an upstream-changed file declared the name at the old tag (a Python def, class,
  parameter, field or attribute; a C++ function, field, type or enumerator, found by
  tree-sitter queries; a TableGen record or `$parameter`, whose generated accessor `getX` counts
  too) and no upstream-changed file declares it at the new tag. A forward declaration (`class X;`)
  declares nothing: X is defined elsewhere, often in MLIR, so dropping one removes no class;
- signature: a Python function of that name changed its parameters (ast);
- header: an #include FlagTree added names a file upstream deleted or renamed.

Python code reaches C++ only through bindings, which are not modelled here: a name on a Python
line matches only what upstream removed from a Python module (and Python signatures), never a C++
or TableGen declaration that happens to share it (`json.loads` is not the C++ field `loads`).
Names on C++ and TableGen lines match declarations of every language, as they always have.
A backend's own C++ (third_party/<b>/) resolves against trunk's headers, unless it carries its own
copy of the declaring header, or of trunk's headers as a whole (third_party/<b>/include/triton/:
its build reads that copy first, so upstream's removals reach it only when it takes them).
A file under a directory the build leaves out (its parent's CMakeLists.txt adds it only in a commented-out
add_subdirectory) claims nothing; a `typedef` declares its name; a file's own unqualified definition of a
function declares it for the lines after it, so neither it nor those lines use upstream's.
"""
from __future__ import annotations

import re
from dataclasses import replace
from posixpath import basename
from typing import Callable, Sequence

from sync.drift.analyses.symbolbackends import (_backend_declares, _backend_header_hits, _first_use,
                                                _qualified_as_upstreams)
from sync.drift.analyses.symboldecls import declared_names
from sync.drift.analyses.symbolindex import ChangeNames, UpstreamIndex
from sync.drift.analyses.symbolresolve import Serving, _resolved, _resolved_python, _served_where_imported
from sync.drift.analyses.symbolterms import CPP, Drift, PY, TD, Use, _header
from sync.drift.analyses.symboluses import ForkUses, embedded_c, fork_uses, own_names, still_used_on
from sync.facts.cmakebuilt import unbuilt
from sync.facts.cppscope import own_header_copy
from sync.facts.layout import own_trunk_backends, third_party_owner
from sync.facts.pyblobs import parses
from sync.facts.roles import td_overlays
from sync.facts.trees import read_text
from sync.git import GitTree, Repository, holds_conflict, split_sides
from sync.model import Finding
from sync.model.report import backend_among

# Re-exported: every name this module held before it was split (issue 49) is still imported from here
# (the registry, other analyses, the tests and the benches do), but its two #include patterns: nothing imported
# them, and #includes are read through facts/ (cpp.included_name, includes.spelled_includes).
from sync.drift.analyses.symbolbackends import (_COMMENT, _added_source,
                                                _backend_headers, _backend_lines, _backend_namespaces, _backend_uses,
                                                _first_added_line, _include_roots, backend_uses)  # noqa: F401
from sync.drift.analyses.symboldecls import (PythonShape, _DECLARATION_QUERY, _DECLARED, _TD_CONSTRUCTOR,
                                             _TD_DECLARATION, _TD_INTERFACE_METHOD, _TD_PASS, _accessor_aliases,
                                             _declared_names, _declared_spellings, _decode_shape, _encode_shape,
                                             _fewer_occurrences, _forward_declaration, _looks_declared,
                                             _one_line_body, _pass_aliases, _shape_of, _signature, pass_functions,
                                             python_shape, python_shape_ast, python_shape_libcst)  # noqa: F401
from sync.drift.analyses.symbolindex import (_TD_DEF, _gone_note, _indexed, _replacements, _scopes,
                                             _short_edit)  # noqa: F401
from sync.drift.analyses.symbolresolve import _per_file  # noqa: F401
from sync.drift.analyses.symbolterms import CODE, TRUNK_PREFIXES, _PY_DEF_LINE, _TOKEN  # noqa: F401
from sync.drift.analyses.symboluses import (FRAGMENT_THRESHOLD, OWN_NAMES, STATEMENTS, _LOCAL_QUERY,
                                            _cached_candidates, _candidates_on, _cpp_identifier_lines, _cpp_own_names,
                                            _fragments, _identifier_lines, _own_names_of, _python_own_names,
                                            _python_trunk_names, _statement_spans, _trunk_name_candidates,
                                            added_lines, uses_on_lines)  # noqa: F401
from sync.facts.cpp import NAME_QUERY, captures, node_text  # noqa: F401
from sync.facts.cppcalls import CPP_NAMESPACE, dialect_namespaces, include_dir, include_target  # noqa: F401
from sync.facts.cppscope import declaration_scopes, in_function_body, resolves, use_contexts  # noqa: F401
from sync.facts.delta import fork_added_lines, fork_lines_where  # noqa: F401
from sync.facts.layout import is_third_party  # noqa: F401
from sync.facts.names import significant_name  # noqa: F401
from sync.facts.parsing import Unparseable, parsed_ast, parsed_python, skipped  # noqa: F401
from sync.facts.pyblobs import Extractor, python_fact  # noqa: F401
from sync.facts.pychunks import over_chunks  # noqa: F401
from sync.facts.pyfacts import first_line, params_of  # noqa: F401
from sync.facts.pyfacts_cst import cst_params  # noqa: F401
from sync.facts.pyresolve import foreign, python_uses  # noqa: F401
from sync.facts.pysource import Param  # noqa: F401
from sync.git import added_lines as tree_added_lines, changes_with_renames, renames  # noqa: F401
from sync.support.cache import memoized, memoized_by  # noqa: F401
from sync.support.parselimit import oversized  # noqa: F401


def symbol_part(repo: Repository, old: GitTree, new: GitTree, fork: GitTree, part: int,
                parts: int) -> list[ChangeNames]:
    """Part `part` of `parts` of the analysis: what its share of the upstream-changed files did to the names
    FlagTree's lines use (symbol_join makes the findings of all of them)."""
    names = fork_uses(repo, old, fork, start=part / parts).names
    return UpstreamIndex(repo, old, new).changes_part(names, part, parts)


def symbol_findings(repo: Repository, old: GitTree, new: GitTree, fork: GitTree,
                    owners_of: Callable[[str], list[str]], target: GitTree | None = None,
                    serving: Serving | None = None) -> list[Finding]:
    """target: the upgraded branch, when one was given; a use it no longer has is not reported. serving: the file
    a backend's build loads in place of a trunk module (DriftContext.serving_file), when known."""
    uses = fork_uses(repo, old, fork)
    share = UpstreamIndex(repo, old, new).changes_part(uses.names, 0, 1)
    return symbol_join(repo, old, new, fork, owners_of, [share], target, uses, serving)


def _without_own_tablegen(fork: GitTree, hits_by_file: dict[str, list[tuple[Use, Drift]]]) \
        -> dict[str, list[tuple[Use, Drift]]]:
    """Less what a backend's file uses from a .td the backend builds its own version of (a TableGen overlay):
    its build generates the names from its own records, whatever trunk's new version drops (issue 33, the
    3.5.x -> 3.7 move: ascend's own TritonOps.td keeps LoadOp's boundaryCheck, so getBoundaryCheck stands)."""
    overlays = td_overlays(fork) if any(drift.path.endswith(TD) for hits in hits_by_file.values()
                                        for _, drift in hits) else frozenset()
    if not overlays:
        return hits_by_file
    kept = {path: [(use, drift) for use, drift in hits if (third_party_owner(path), drift.path) not in overlays]
            for path, hits in hits_by_file.items()}
    return {path: hits for path, hits in kept.items() if hits}


Hits = dict[str, list[tuple[Use, Drift]]]  # path -> (a use on FlagTree's lines there, what upstream did to it)


def symbol_join(repo: Repository, old: GitTree, new: GitTree, fork: GitTree, owners_of: Callable[[str], list[str]],
                shares: Sequence[list[ChangeNames]], target: GitTree | None = None,
                uses: ForkUses | None = None, serving: Serving | None = None) -> list[Finding]:
    """The findings from the shares of every part (symbol_part), in any order; uses: fork_uses when known."""
    uses = uses or fork_uses(repo, old, fork)
    index = UpstreamIndex(repo, old, new)
    drifts = index.combine(change for share in shares for change in share)
    hits_by_file = _trunk_hits(uses, drifts, index, target)
    for path, hits in _backend_hits(old, fork, uses, drifts, index).items():
        hits_by_file.setdefault(path, []).extend(hits)
    kept = _kept_hits(old, new, fork, target, hits_by_file)
    if serving is not None:
        kept = _served_where_imported(old, fork, kept, serving)
    for path, hits in _embedded_hits(old, new, fork, target).items():
        kept.setdefault(path, []).extend(hits)
    return _findings(kept, owners_of)


EMBEDDED = "a declaration of the C source its strings hold"
_C_MARKS = re.compile(r"[;{}]")  # a line of C has one of these; a line of Python seldom does


def _embedded_hits(old: GitTree, new: GitTree, fork: GitTree, target: GitTree | None) -> Hits:
    """FlagTree's lines in the C source an upstream Python module's strings hold (a launcher it compiles at run
    time) that use a name upstream's C there declared at the old tag (a parameter, a variable) and declares no
    more: the C does not compile at the first launch. The names resolve within the module's own C; on the
    upgraded branch (target), a conflicted file is read on upstream's side and the use must stand outside its
    conflicts (issue 45 class 6: the 3.5 -> 3.6 move's clusterDimX in nvidia's driver.py). Without a target,
    what FlagTree's lines declare themselves counts as declared."""
    found: Hits = {}
    for path, lines in sorted(fork_lines_where(old, fork, lambda path: path.endswith(PY) and old.exists(path)).items()):
        text = read_text(fork, path) or ""
        split = text.split("\n")
        if not any(_C_MARKS.search(split[line - 1]) for line in lines if 0 < line <= len(split)):
            continue  # no line of FlagTree's here reads as C: the module's strings need no reading
        mine = embedded_c(text)
        used = {name: line for line in sorted(lines) for name in sorted(mine.uses.get(line, ()))}
        before = embedded_c(read_text(old, path) or "").declared if used else set()
        gone = {name for name in used if name in before}
        if not gone:
            continue
        if target is None:
            now = embedded_c(read_text(new, path) or "")
            declared = now.declared if now.uses else None
            declared = None if declared is None else declared | _declared_on(fork, path, lines)
            outside: str | None = None
        else:
            declared, outside = _branch_declared(target, path)
        if declared is None:
            continue  # no C source read there: what it declares is unknown
        # in a conflicted file, a use FlagTree's C makes outside the conflicts (the replay reports those inside)
        alone = None if outside is None else {name for names in embedded_c(outside).uses.values() for name in names}
        hits = [(Use(name, used[name]), Drift(name, "removed", path, EMBEDDED, python=False, native=False))
                for name in sorted(gone - declared, key=used.__getitem__) if alone is None or name in alone]
        if hits:
            found[path] = hits
    return found


def _declared_on(fork: GitTree, path: str, lines: set[int]) -> set[str]:
    """What FlagTree's own lines of a module's C source declare."""
    text = (read_text(fork, path) or "").split("\n")
    return embedded_c("\n".join(line if number in lines else "" for number, line in enumerate(text, 1))).declared


def _branch_declared(target: GitTree, path: str) -> tuple[set[str] | None, str | None]:
    """The names the upgraded file's C source declares, read on upstream's side of its conflicts, and the text
    outside them (None: no conflict); (None, None) where no C source is read."""
    text = read_text(target, path)
    if text is None:
        return None, None
    outside: str | None = None
    if holds_conflict(text.encode("utf-8", errors="replace")):
        outside, text = split_sides(text)
    read = embedded_c(text)
    return (read.declared if read.uses else None), outside


def _trunk_hits(uses: ForkUses, drifts: dict[str, list[Drift]], index: UpstreamIndex,
                target: GitTree | None) -> Hits:
    """The uses on FlagTree's lines in trunk's code files of what upstream removed or changed, and their
    #includes of files upstream deleted or renamed."""
    hits_by_file: Hits = {}
    for path, (identifiers, includes) in sorted(uses.uses_by_file.items()):
        python = path.endswith(PY)  # Python lines reach only Python declarations (module docstring)
        own = uses.own_by_file[path] | (uses.flagtree_python if python else set())
        hits = [(use, drift) for use in identifiers if use.name not in own
                for drift in drifts.get(use.name, [])
                if drift.path != path and (drift.python if python else drift.native)
                and (not path.endswith(CPP) or drift.change != "removed" or _header(drift.path))]
        if target is not None:
            # the FlagTree branch's file still declares what upstream removed from it: the upgraded file says
            hits += _same_file_removals(path, target, identifiers, drifts)
        for include in includes:
            for removed, note in index.removed_files.items():
                if removed.endswith("/" + include.name) or removed == include.name:
                    hits.append((include, Drift(include.name, "header", removed, note)))
        if hits:
            hits_by_file[path] = hits
    return hits_by_file


def _backend_hits(old: GitTree, fork: GitTree, uses: ForkUses, drifts: dict[str, list[Drift]],
                  index: UpstreamIndex) -> Hits:
    """A backend's (third_party/<b>/) #includes of headers upstream deleted or moved, then its uses of header
    declarations upstream removed. A backend that carries its own copy of trunk's headers
    (third_party/<b>/include/triton/) compiles against that copy: upstream's removals reach it only when it takes
    them (the copy kinds say what changed there)."""
    own_trunk = own_trunk_backends(fork) if uses.backend_uses else set()
    found = _backend_header_hits(old, fork, index.removed_headers, own_trunk)
    for path, words in uses.backend_uses.items():
        if third_party_owner(path) in own_trunk:
            continue
        hits = _backend_word_hits(old, fork, path, words, drifts)
        if hits:
            found.setdefault(path, []).extend(hits)  # beside its includes of deleted headers
    return found


def _backend_word_hits(old: GitTree, fork: GitTree, path: str, words: list[str],
                       drifts: dict[str, list[Drift]]) -> list[tuple[Use, Drift]]:
    """The words on FlagTree's lines of one backend file that name a header declaration upstream removed, less
    those the file or its backend declares itself, unless a line spells upstream's by its namespace."""
    backend_dir = "/".join(path.split("/")[:2]) + "/"
    hits = [(_first_use(old, fork, path, name), drift) for name in words for drift in drifts.get(name, [])
            if drift.native and drift.change == "removed" and drift.scopes and _header(drift.path)
            and not own_header_copy(fork, backend_dir, drift.path)]
    if hits:
        text = read_text(fork, path) or ""
        mine = own_names(path, text)
        theirs = _backend_declares(fork, backend_dir, {use.name for use, _ in hits}) - mine
        hits = [(use, drift) for use, drift in hits if use.name not in mine and use.name not in theirs] + [
            (qualified, replace(drift, scopes=()))  # its line is where it is spelled as upstream's
            for use, drift in hits if use.name in theirs
            and (qualified := _qualified_as_upstreams(old, fork, backend_dir, path, use.name, drift)) is not None]
    return hits


def _kept_hits(old: GitTree, new: GitTree, fork: GitTree, target: GitTree | None, hits_by_file: Hits) -> Hits:
    """The hits that break something: in a file the build takes, where the use resolves to upstream's
    declaration, not generated by the backend's own TableGen, and still on the upgraded branch (target)."""
    # a C++ file the build leaves out (a commented-out add_subdirectory above it) breaks nothing
    hits_by_file = _resolved(old, fork, {path: hits for path, hits in hits_by_file.items()
                                         if not (path.endswith(CPP) and unbuilt(fork, path))})
    hits_by_file = _without_own_tablegen(fork, _resolved_python(old, fork, hits_by_file))
    if target is not None and hits_by_file:
        used = still_used_on(target, new, set(hits_by_file), old)
        hits_by_file = {path: [hit for hit in hits if hit[0].name in used.get(path, set())]
                        for path, hits in hits_by_file.items()}
    return hits_by_file


def _findings(hits_by_file: Hits, owners_of: Callable[[str], list[str]]) -> list[Finding]:
    """One finding per upstream change and backend: every FlagTree site of a removed declaration (or deleted
    header) under it, so the maintainer reads the change once and fixes all sites; one per file for the rest."""
    findings = []
    groups: dict[tuple[str | None, str, str], list[tuple[str, Use, Drift]]] = {}
    for path, hits in hits_by_file.items():
        owners = owners_of(path)
        backend = backend_among(owners)
        for use, drift in hits:
            if drift.change in ("removed", "header"):
                groups.setdefault((backend, drift.path, drift.name), []).append((path, use, drift))
        changed = [hit for hit in hits if hit[1].change not in ("removed", "header")]
        if changed:
            findings.append(_symbol_finding("symbol-drift", path, changed, owners, backend))
    for (backend, declaring, name), sites in groups.items():
        findings.append(_removed_finding(backend, sites, owners_of))
    return findings


def _same_file_removals(path: str, target: GitTree, uses: list[Use],
                        drifts: dict[str, list[Drift]]) -> list[tuple[Use, Drift]]:
    """FlagTree's uses of a declaration upstream removed from the same file, where the upgraded file merged
    cleanly and declares the name nowhere: git took upstream's removal and kept FlagTree's lines, so nothing
    conflicts and the use is left without its declaration (a conflicted file is the replay's to report)."""
    python = path.endswith(PY)
    same = [(use, drift) for use in uses for drift in drifts.get(use.name, [])
            if drift.path == path and drift.change == "removed" and (drift.python if python else drift.native)]
    if not same:
        return []
    text = read_text(target, path)
    if text is None:
        return []
    outside: str | None = None  # a conflicted file: the lines outside its conflicts, where a use is FlagTree's alone
    if holds_conflict(text.encode("utf-8", errors="replace")):
        outside, text = split_sides(text)  # and upstream's side
    if python and not parses(text):
        return []  # what it binds is unknown
    declared = own_names(path, text) | declared_names(path, text)
    return [(use, drift) for use, drift in same if use.name not in declared
            and (outside is None or re.search(rf"\b{re.escape(use.name)}\b", outside))]


def _removed_finding(backend: str | None, sites: list[tuple[str, Use, Drift]],
                     owners_of: Callable[[str], list[str]]) -> Finding:
    sites.sort(key=lambda site: (site[0], site[1].line))
    path, use, drift = sites[0]
    where = [f"{p}:{u.line}" for p, u, _ in sites]
    files = len({p for p, _, _ in sites})
    what = "header deleted or renamed" if drift.change == "header" else f"removed from {drift.path}" + (
        f" ({EMBEDDED})" if drift.detail == EMBEDDED else "")
    will = "compile when the module builds that C" if drift.detail == EMBEDDED else \
        "import" if path.endswith(PY) else "build"
    instead = f"; upstream declares {drift.replacement} in its place" if drift.replacement else ""
    shown = ", ".join(where[:5]) + (f" and {len(where) - 5} more" if len(where) > 5 else "")
    return Finding("symbol-removed", path,
                   f"{use.name}: {what}{instead} (will not {will} as is); "
                   f"FlagTree uses it at {len(where)} site(s) "
                   f"in {files} file(s): {shown}",
                   "port these uses to the new tag's declarations", use.line, backend, related_path=drift.path,
                   details={"symbols": [f"{use.name}:{drift.change}:{drift.path}"], "sites": where,
                            "replacements": {use.name: drift.replacement} if drift.replacement else {},
                            "declaration": use.name, "owners": owners_of(path)})


def _symbol_finding(kind: str, path: str, hits: list[tuple[Use, Drift]], owners: list[str],
                    backend: str | None) -> Finding:
    hits.sort(key=lambda hit: hit[0].line)
    described = [f"{use.name} ({drift.change} in {basename(drift.path)}"
                 f"{': ' + drift.detail if drift.detail else ''}"
                 f"{'; now ' + drift.replacement if drift.replacement else ''})" for use, drift in hits[:6]]
    more = f" and {len(hits) - 6} more" if len(hits) > 6 else ""
    if kind == "symbol-removed":
        message = "FlagTree code here uses trunk declarations upstream removed (will not build as is): "
        action = "port these uses to the new tag's declarations"
    else:
        message = "FlagTree code here uses trunk symbols upstream changed: "
        action = "check these uses against the new tag: the clean merge proves nothing about them"
    return Finding(kind, path, message + ", ".join(described) + more, action, hits[0][0].line, backend,
                   related_path=hits[0][1].path,
                   details={"symbols": [f"{use.name}:{drift.change}:{drift.path}" for use, drift in hits],
                            "replacements": {use.name: drift.replacement for use, drift in hits if drift.replacement},
                            "owners": owners})
