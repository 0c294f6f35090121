"""C++: FLAGTREE_SPEC_* guards in trunk, and whether the trunk default they guard changed upstream.

What the backend's build never meets claims nothing: a turned-off default nothing outside the guard can call (a
file-local one, or a free function no other trunk file spells, with every use inside the guard) needs no
replacement; a removed default that was file-local, a free function trunk no longer has anywhere, or a member the
backend's own declarations (its TableGen or header copies) still declare leaves the replacement as it was."""
from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable, Sequence

from sync.git import GitTree
from sync.git.merge import conflict_sections
from sync.model import Finding
from sync.facts.trees import read_text
from sync.drift.context import DriftContext
from sync.facts.tdsigs import records
from sync.facts.cpp import (CppFunction, GuardRegion, MacroDefinition, backend_macros, declarations, functions,
                            functions_in, guard_regions, header_path, mentions_spec_macro, scope_spans, stray_macros)
from sync.facts.filekinds import CPP_CODE, CPP_HEADERS, CPP_SOURCES, INC_SUFFIXES, TD_SUFFIXES, not_built
from sync.facts.layout import backend_dir, backend_spec_dir, is_third_party

CPP_SUFFIXES, TD = CPP_CODE, TD_SUFFIXES
_SOURCES = CPP_SOURCES  # a compile unit: what it defines and no header declares stays in it


def both_sides(text: str) -> str | None:
    """A text holding committed conflict markers with both sides of each conflict kept, the upgraded side
    first (a guard FlagTree closes at the end of a file often sits in its side of a conflict, after code upstream
    added there). Marker and base lines become empty lines, so line numbers stay the committed file's. None when
    the text holds no whole conflict block."""
    out: list[str] = []
    conflicts = 0
    for _, line, section in conflict_sections(text):
        conflicts += section == "marker" and line.startswith(">>>>>>>")
        out.append("\n" if section in ("marker", "base") else line)
    return "".join(out) if conflicts else None


def _readable(text: str) -> tuple[str, bool]:
    """The text the guard analysis reads, and whether it held conflict markers (then both sides are kept)."""
    resolved = both_sides(text) if "<<<<<<<" in text else None
    return (text, False) if resolved is None else (resolved, True)


def _guarded_files(context: DriftContext) -> tuple[dict[str, str], set[str]]:
    """Trunk C++ files of the fork that mention a FLAGTREE_SPEC_* macro (one read of each C++ blob), as the
    analysis reads them, and those of them that hold committed conflict markers."""
    found, conflicted = {}, set()
    for path in context.fork.paths():
        if is_third_party(path) or not path.endswith(CPP_SUFFIXES):
            continue
        text = read_text(context.fork, path)
        if text and mentions_spec_macro(text):
            found[path], marked = _readable(text)
            if marked:
                conflicted.add(path)
    return found, conflicted


def _counterparts(items: list[CppFunction], universe: list[CppFunction],
                  others: list[CppFunction]) -> list[CppFunction | None]:
    """Each item's counterpart among others (another version of the file): the function of the same name and
    parameters, else the one of that name in the same place among its overloads (upstream keeps overloads in
    order; same-named methods of several classes count as overloads here), else None. universe: every
    function of the items' own file (an item's place is counted there)."""
    by_name: dict[str, list[CppFunction]] = {}
    for other in others:
        by_name.setdefault(other.name, []).append(other)
    place: dict[tuple[str, int], int] = {}
    seen: Counter[str] = Counter()
    for function in universe:
        place[(function.name, function.start)] = seen[function.name]
        seen[function.name] += 1
    found: list[CppFunction | None] = []
    for item in items:
        same = by_name.get(item.name, [])
        exact = [other for other in same if other.params == item.params]
        rank = place.get((item.name, item.start), 0)
        found.append(exact[0] if len(exact) == 1 else same[rank] if rank < len(same) else None)
    return found


def spec_library(context: DriftContext, backend: str) -> dict[str, list[CppFunction]]:
    """The functions the backend's C++ spec library defines, by Class::method (or plain name), as the
    upgraded branch has them when one was given."""
    found: dict[str, list[CppFunction]] = {}
    prefix = f"{backend_spec_dir(backend)}/"
    tree = context.backend_files
    for path in tree.paths():
        if path.startswith(prefix) and path.endswith(CPP_SUFFIXES):
            for function in functions(read_text(tree, path) or ""):
                found.setdefault(function.short_name, []).append(replace(function, path=path))
    return found


def _upgraded_trunk(context: DriftContext, path: str) -> tuple[str | None, bool]:
    """A trunk file as the upgraded tree has it (None without one), and whether it holds conflict markers
    (then both sides of each conflict are read)."""
    text = read_text(context.target, path) if context.target is not None else None
    return (None, False) if text is None else _readable(text)


def _conflicted_note(backend: str, path: str, where: str) -> Finding:
    return Finding("analysis-conflicted", path, f"guards: {path} holds committed conflict markers on {where}; its "
                   "FLAGTREE_SPEC_* guards and the functions in them were read with both sides of each conflict "
                   "kept (the upgraded side first), so the guard findings on it hold only until the conflict is "
                   "resolved", backend=backend)


def guard_findings(context: DriftContext) -> list[Finding]:
    files, conflicted = _guarded_files(context)
    regions = {path: guard_regions(text) for path, text in files.items()}
    defined_in_trunk: dict[str, frozenset[str]] = {}  # macro -> names, filled on the first question

    def trunk_defines(macro: str, name: str) -> bool:
        """Whether a guarded trunk file defines the function where the macro's guards do not turn it off."""
        if macro not in defined_in_trunk:
            defined_in_trunk[macro] = frozenset().union(*(defined_outside(text, macro) for text in files.values()))
        return name in defined_in_trunk[macro]

    findings: list[Finding] = []
    backend_files = context.backend_files  # macros dropped or replacements fixed on the upgraded branch count
    for backend in context.backends:
        library = spec_library(context, backend)
        own = own_tablegen(context, backend)
        macros = backend_macros(backend_files, backend)
        for stray in stray_macros(backend_files, backend, macros):
            findings.append(Finding("guard-macro-unreachable", stray.path, f"{stray.name} is defined here, but "
                                    f"{header_path(backend)} does not include this header", line=stray.line,
                                    backend=backend, details={"macro": stray.name}))
        for macro, definition in sorted(macros.items()):
            uses = [(path, region) for path, found in regions.items() for region in found if region.macro == macro]
            if not uses:
                findings.append(Finding("guard-unused", definition.path, f"{macro} guards no trunk code",
                                        "drop the macro or restore the trunk guard", definition.line, backend,
                                        details={"macro": macro}))
            for path, region in uses:
                findings.extend(_region_findings(context, backend, definition, macro, path, region, files[path],
                                                 library, trunk_defines, own, frozenset(macros)))
                if path in conflicted:
                    findings.append(_conflicted_note(backend, path, "the FlagTree branch"))
    return _once(findings)


def _once(findings: list[Finding]) -> list[Finding]:
    """The findings in order, each conflicted-file note once per backend and file (several guards may share one)."""
    seen: set[tuple[str | None, str, str]] = set()
    out = []
    for finding in findings:
        key = (finding.backend, finding.path, finding.message)
        if finding.kind == "analysis-conflicted" and key in seen:
            continue
        seen.add(key)
        out.append(finding)
    return out


def _turned_off(region: GuardRegion, fork_text: str, defined: list[CppFunction],
                new_functions: list[CppFunction], new_text: str | None,
                upgraded_text: str | None) -> list[CppFunction]:
    """What the backend must define when it defines the macro, with the parameters trunk declares on the
    upgraded tree (upstream's new tag with FlagTree's own trunk changes replayed: what the build compiles)
    when there is one, else at the new tag: #ifndef: the default functions wholly inside the guard;
    #ifdef: the declarations inside it."""
    upgraded = _same_region(region, fork_text, upgraded_text) if upgraded_text is not None else None
    if upgraded is not None and upgraded_text is not None:
        if region.directive == "ifndef":
            return _distinct([f for f in functions(upgraded_text) if f.start > upgraded.start and f.end < upgraded.end])
        if region.directive == "ifdef":
            return _distinct(_undefined([d for d in declarations(upgraded_text) if upgraded.start < d.start < upgraded.end],
                                        upgraded_text, region.macro))
        return []
    if region.directive == "ifndef":
        inside = [f for f in defined if f.start > region.start and f.end < region.end]
        now = _counterparts(inside, defined, new_functions)
    elif region.directive == "ifdef":
        declared = declarations(fork_text)
        inside = _undefined([d for d in declared if region.start < d.start < region.end], fork_text, region.macro)
        now = _counterparts(inside, declared, declarations(new_text or ""))
    else:
        return []
    unique: dict[tuple[str, str, int], CppFunction] = {}  # two overloads that met one counterpart: check it once
    for function, counterpart in zip(inside, now):
        chosen = counterpart or function
        unique.setdefault((chosen.name, chosen.params, chosen.start), chosen)
    return list(unique.values())


def _undefined(declared: list[CppFunction], text: str, macro: str) -> list[CppFunction]:
    """The declarations the file itself defines no function of that name for: one it defines (the guard only
    changes how trunk declares it, e.g. drops `static`) needs nothing of the backend. A definition the macro's
    own guards hold (an #else default) does not count: the macro turns it off."""
    defined = defined_outside(text, macro)
    return [function for function in declared if function.short_name not in defined]


def defined_outside(text: str, macro: str) -> frozenset[str]:
    """Functions the text defines that no guard of macro wholly holds (those stay whatever the backend does)."""
    held = [(region.start, region.end) for region in guard_regions(text) if region.macro == macro]
    return frozenset(function.short_name for function in functions(text)
                     if not any(start <= function.start and function.end <= end for start, end in held))


def _distinct(found: list[CppFunction]) -> list[CppFunction]:
    """One of each name and parameter list: a function on both sides of a conflict is checked once."""
    unique: dict[tuple[str, str], CppFunction] = {}
    for function in found:
        unique.setdefault((function.name, function.params), function)
    return list(unique.values())


def _same_region(region: GuardRegion, fork_text: str, other_text: str) -> GuardRegion | None:
    """The guard of the same macro and directive in another version of the file (the n-th such guard)."""
    alike = lambda text: [r for r in guard_regions(text) if (r.macro, r.directive) == (region.macro, region.directive)]
    mine, theirs = alike(fork_text), alike(other_text)
    index = mine.index(region) if region in mine else len(theirs)
    return theirs[index] if index < len(theirs) else None


# Methods of an op that TableGen declares only when its record asks for them.
_OP_HOOKS = {"fold": ("hasFolder",), "verify": ("hasVerifier",), "verifyRegions": ("hasRegionVerifier",),
             "canonicalize": ("hasCanonicalizeMethod",), "getCanonicalizationPatterns": ("hasCanonicalizer",
                                                                                         "hasCanonicalizeMethod")}


@lru_cache(maxsize=16)
def _undeclared_hooks(tree: GitTree, backend: str) -> frozenset[str]:
    """Op::hook methods the backend's own copies of TableGen files leave undeclared (the record is there and
    does not set the hook's flag, e.g. `// let hasFolder = 1;`): the backend's build generates no
    declaration, so nothing needs a replacement."""
    undeclared: set[str] = set()
    for path in tree.paths():
        if not (path.startswith(f"{backend_dir(backend)}/") and path.endswith(TD)):
            continue
        for record in records(path, read_text(tree, path) or ""):
            if record.kind != "op":
                continue
            for hook, flags in _OP_HOOKS.items():
                if not any(re.search(rf"^\s*let\s+{flag}\s*=\s*1\b", record.source, re.MULTILINE) for flag in flags):
                    undeclared.add(f"{record.cpp_name}::{hook}")
    return frozenset(undeclared)


@dataclass(frozen=True)
class OwnTableGen:
    """What a backend generates from its own versions of trunk TableGen files (overlays, copies, built in trunk's
    place): its build declares those classes' members from its own records, whatever trunk's records say, and has
    none of the classes only trunk's versions of those files generate."""
    records: dict[str, list[str]]  # generated class -> its records' text
    texts: tuple[str, ...]  # the backend's versions, each with its class records cut out (interfaces, classes left)
    replaced: frozenset[str]  # the trunk TableGen files they stand for
    trunk_only: frozenset[str]  # classes trunk's new versions of those files generate and the backend's do not


def own_tablegen(context: DriftContext, backend: str) -> OwnTableGen:
    found: dict[str, list[str]] = {}
    texts, replaced, trunk_classes = [], set(), set()
    for item in context.classified:
        trunk = item.trunk_path
        if item.file.backend != backend or not trunk or not trunk.endswith(TD) \
                or (backend, trunk) not in context.replaced_by_backend:
            continue
        text = read_text(context.backend_files, item.file.path) or ""
        for record in records(item.file.path, text):
            found.setdefault(record.cpp_name, []).append(record.source)
            text = text.replace(record.source, "")
        texts.append(text)
        replaced.add(trunk)
        new_path = context.new_path(trunk)
        if new_path is not None:
            trunk_classes |= {record.cpp_name for record in records(new_path, read_text(context.upstream_new, new_path)
                                                                    or "")}
    return OwnTableGen(found, tuple(texts), frozenset(replaced), frozenset(trunk_classes - set(found)))


_DECLARING_FLAGS = {**_OP_HOOKS, "verify": ("hasVerifier", "genVerifyDecl"),
                    "parse": ("hasCustomAssemblyFormat", "assemblyFormat"),
                    "print": ("hasCustomAssemblyFormat", "assemblyFormat")}
_PARAMETER = re.compile(r"\$([A-Za-z_]\w*)")


def _qualifier(function: CppFunction) -> str:
    return function.name.rpartition("::")[0].split("::")[-1]


def _own_declaration(context: DriftContext, function: CppFunction, own: OwnTableGen) -> bool | None:
    """For a member of a class whose TableGen the backend builds its own version of: whether its build declares
    the member (None: not such a member). Declared: the backend's record spells it, sets the flag that generates
    it, has the parameter it reads (getX), or it is a builder; or a TableGen file the build reads names it as an
    interface method ("name", quoted). A class only trunk's version generates does not exist in its build: none
    (the overlay's overlay-missing-names says what trunk's code misses)."""
    qualifier = _qualifier(function)
    if qualifier in own.trunk_only:
        return False
    if qualifier not in own.records:
        return None
    name = function.name.split("::")[-1]
    word = re.compile(rf"\b{re.escape(name)}\b")
    for source in own.records[qualifier]:
        flags = _DECLARING_FLAGS.get(name, ())
        if word.search(source) or any(re.search(rf"\blet\s+{flag}\s*=", source) for flag in flags):
            return True
        if name in ("get", "getChecked", "build") or \
                any(name == "get" + parameter[:1].upper() + parameter[1:] for parameter in _PARAMETER.findall(source)):
            return True
    quoted = f'"{name}"'
    tree = context.upstream_new
    texts = [*own.texts, *(read_text(tree, path) or "" for path in tree.paths()
                           if path.endswith(TD) and not is_third_party(path) and path not in own.replaced)]
    naming = [interfaces for text in texts if quoted in text for interfaces in [_defs_naming(text, quoted)]]
    if any(interfaces is None for interfaces in naming):
        return True  # named outside any def: taken as declared, as before
    # An interface method reaches the class only through an interface its own records list (issue 33, the
    # 3.5.x -> 3.7 move: ascend's own TritonOps.td lists no PredicatedOpInterface, so its LoadOp has no
    # getPredicateOperand to define)
    return any(re.search(rf"\b{re.escape(interface)}\b", source)
               for interfaces in naming for interface in interfaces or () for source in own.records[qualifier])


_DEF = re.compile(r"^def\s+([A-Za-z_]\w*)", re.MULTILINE)


def _defs_naming(text: str, quoted: str) -> set[str] | None:
    """The TableGen defs (interfaces) of a text whose body spells quoted; None where it occurs before any def."""
    starts = [(match.start(), match[1]) for match in _DEF.finditer(text)]
    found: set[str] = set()
    at = text.find(quoted)
    while at != -1:
        owner = next((name for start, name in reversed(starts) if start < at), None)
        if owner is None:
            return None
        found.add(owner)
        at = text.find(quoted, at + 1)
    return found


def _replacement_findings(finding: Callable[..., Finding], macro: str, region: GuardRegion, path: str,
                          trunk: list[CppFunction], library: dict[str, list[CppFunction]],
                          undeclared: frozenset[str], trunk_defines: Callable[[str, str], bool],
                          own_declares: Callable[[CppFunction], bool | None],
                          uncalled: Callable[[CppFunction], bool] = lambda function: False) -> list[Finding]:
    """Each trunk function the guard turns off (#ifndef: the default; #ifdef: a declaration the backend fills)
    needs a definition in the backend's spec library, with the parameters trunk declares; not an op hook the
    backend's own TableGen records never declare. A member of a class the backend generates from its own record
    (own_tablegen) is declared as the backend's build declares it: a replacement is missing only where that build
    declares the member, and trunk's parameters are not the ones to match (issue 33, the 3.4.x -> 3.5.1 move:
    sunrise's own TritonGPUAttrDefs.td keeps 3.4's AMDMfmaEncodingAttr::verify and has no hasUnitTilesPerWarp)."""
    out = []
    for function in trunk:
        replacements = library.get(function.short_name, [])
        if not replacements and function.short_name in undeclared:
            continue
        declared = own_declares(function)
        if declared is False or (replacements and declared is not None):
            continue
        if not replacements and region.directive == "ifdef" and trunk_defines(macro, function.short_name):
            continue  # the guard changes how trunk declares it (e.g. drops `static` in the file that defines it)
        if not any(r.params == function.params or "::" in r.name for r in replacements) and uncalled(function):
            # nothing else calls it: no definition missing, and another parameter list is an overload -- unless
            # the replacement is defined by a qualified name (`T ns::f(...)`), which must match a declaration
            continue
        if not replacements:
            what = "turns off trunk" if region.directive == "ifndef" else "declares, for the backend,"
            out.append(finding("guard-replacement-missing", f"{macro} {what} {function.name} "
                               f"({path}:{function.start}) but the backend's spec library defines no "
                               f"{function.short_name}", "define the replacement in spec/lib, or drop the macro"))
        elif function.params and not any(r.params == function.params for r in replacements):
            # the replacement that looks most like it (an overload is paired with its own, not the first of
            # as many parameters)
            where = max(replacements, key=lambda r: difflib.SequenceMatcher(None, r.params, function.params).ratio())
            out.append(finding("guard-signature-mismatch", f"{macro}: trunk {function.name}({function.params}) "
                               f"but the replacement in {where.path}:{where.start} takes ({where.params})",
                               "change the replacement's parameters to trunk's"))
        elif (returned := _other_return(function, replacements)) is not None:
            # the header declares trunk's return type: a definition that differs only in it does not compile
            out.append(finding("guard-signature-mismatch", f"{macro}: trunk {function.name}({function.params}) "
                               f"returns {function.returns} but the replacement in {returned.path}:{returned.start} "
                               f"returns {returned.returns}", "change the replacement's return type to trunk's"))
    return out


def _other_return(function: CppFunction, replacements: list[CppFunction]) -> CppFunction | None:
    """The replacement taking trunk's parameters, when every such one returns another type than trunk's (both
    written out: `auto` and constructors compare nothing)."""
    same = [r for r in replacements if r.params == function.params]
    if not function.returns or not same or not all(r.returns and r.returns != function.returns for r in same):
        return None
    return same[0]


def _replacement_unaffected(context: DriftContext, backend: str, function: CppFunction, text: str,
                            own: OwnTableGen) -> bool:
    """A guarded default upstream removed whose removal leaves the backend's replacement building as it does:
    - file-local (`static`, an anonymous namespace, a member of a class the file defines): nothing outside the
      file ever meant it;
    - a free function trunk defines nowhere with the same parameters any more: the replacement is the backend's
      own function now, or another overload (where trunk defines it alike elsewhere, it moved, and two
      definitions would clash: reported);
    - a member of a class the backend's own TableGen generates (or, where only trunk's version of that file
      generates it, a class its build does not have): as its build declares it, whatever upstream did;
    - a member the backend's own declarations still declare (a TableGen file it builds in trunk's place, its copy
      of trunk's headers): its build declares the member its replacement defines (issue 33, the 3.4.x -> 3.5.1
      move: sunrise substitutes its own TritonGPUAttrDefs.td, which keeps the CTA getters 3.5 made defaults)."""
    if _qualifier(function) in own.records or _qualifier(function) in own.trunk_only:
        return True
    anonymous, bodies = scope_spans(text)
    if _static(function) or _within(function, anonymous) or _file_local(function, text):
        return True
    name = function.name.split("::")[-1]
    if "::" not in function.name and not _within(function, bodies):
        return not _defined_alike(context.upstream_new, function)
    return _spelled_in(context.backend_files, name, lambda path: path.startswith(backend_dir(backend) + "/")
                       and path.endswith(TD + CPP_HEADERS + INC_SUFFIXES))


def _defined_alike(tree: GitTree, function: CppFunction) -> bool:
    """Whether trunk code of the tree defines a function of that name with the same parameters: a definition the
    replacement's would clash with (one with other parameters is another overload, or another namespace's)."""
    name = function.name.split("::")[-1]
    word = re.compile(rf"\b{re.escape(name)}\b")
    return any(other.name.split("::")[-1] == name and other.params == function.params
               for path in tree.paths() if _trunk_code(path) and path.endswith(_SOURCES + CPP_HEADERS)
               for text in [read_text(tree, path) or ""] if word.search(text) for other in functions(text))


def _needs_no_replacement(context: DriftContext, path: str, function: CppFunction, macro: str, texts: list[str],
                          read_from: list[str]) -> bool:
    """A default an #ifndef turns off in a source file that nothing outside the guard can call: file-local (`static`,
    an anonymous namespace, a member of a class the file itself defines) or a free function no other trunk file
    spells, with
    every use of its name in the file inside the macro's guards, so its callers go with it (issue 33, the 3.4.x ->
    3.5.1 move: sunrise's static parseType and file-local LayoutPropagation::getRewrittenValue need no replacement)."""
    name = function.name.split("::")[-1]
    if _used_outside_guard(texts, macro, name):
        return False  # a use outside the guard: the backend must provide it
    defining = next((text for text in read_from if any(defined.name == function.name for defined in functions(text))),
                    None)  # the version the function was read from
    if defining is not None and _file_local(function, defining):
        return True
    # a member's class is declared somewhere (a header, usually): only a free function can be unknown elsewhere
    elsewhere = lambda other: other != path and _trunk_code(other)
    return "::" not in function.name and not any(_spelled_in(tree, name, elsewhere)  # upstream's and FlagTree's trunk
                                                 for tree in (context.upstream_new, context.backend_files))


def _uncalled(context: DriftContext, backend: str, path: str, function: CppFunction, off: frozenset[str]) -> bool:
    """A free function other trunk files spell, none of which the backend's build compiles and can call it (see
    _called_elsewhere): without a definition nothing is left unresolved, though a replacement must still agree
    with a declaration it sees. A backend with its own python/src/ builds its extension from it instead of
    trunk's (as bindings.py reads it: ascend's guarded Ops.cpp on the 3.5.x -> 3.7 move, whose
    deduceScaleFactor only trunk's python/src/ir.cc calls). Test trees (unittest/) are no callers: FlagTree's
    CMake turns the C++ unit tests off in a backend's build (TRITON_BUILD_UT is OFF under FLAGTREE_BACKEND)."""
    name = function.name.split("::")[-1]
    own_src = _own_python_src(context.backend_files, backend)
    return _free(function) and not _called_elsewhere(
        [context.backend_files, context.upstream_new], name,
        lambda other: other != path and _trunk_code(other) and not not_built(other)
        and not (own_src and other.startswith(TRUNK_PYTHON_SRC)), off)


def _free(function: CppFunction) -> bool:
    """A free function: unqualified, or qualified by namespaces alone (`mlir::triton::gpu::f`; namespaces are
    lower case in this code base, classes are not: a qualifier that may be a class keeps the claim)."""
    qualifier = function.name.rpartition("::")[0]
    return not qualifier or all(part[:1].islower() for part in qualifier.split("::") if part)


TRUNK_PYTHON_SRC = "python/src/"


@lru_cache(maxsize=16)
def _own_python_src(tree: GitTree, backend: str) -> bool:
    """Whether the backend carries its own python/src/ (third_party/<b>/python/src/), built in trunk's place."""
    own = f"{backend_dir(backend)}/{TRUNK_PYTHON_SRC}"
    return any(path.startswith(own) for path in tree.paths())


def _used_outside_guard(texts: list[str], macro: str, name: str) -> bool:
    """Whether a version of the guarded file the build may compile spells name outside the macro's guards."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    return any(name in outside and word.search(outside) for text in texts for outside in [_outside_guard(text, macro)])


@lru_cache(maxsize=64)
def _outside_guard(text: str, macro: str) -> str:
    """The lines of text no guard of macro holds, one per line: read once per guarded file and macro, where every
    guarded function asked again (3.4 s of the 3.4.x -> 3.6.0 move's guard analysis)."""
    regions = [region for region in guard_regions(text) if region.macro == macro]
    return "\n".join(line for number, line in enumerate(text.splitlines(), start=1)
                     if not any(region.start <= number <= region.end for region in regions))


def _file_local(function: CppFunction, text: str) -> bool:
    """Whether the file's definitions of the function are static, in an anonymous namespace, or members of a class
    whose body the file holds."""
    qualifier = function.name.rpartition("::")[0]
    if qualifier and re.search(rf"\b(?:class|struct)\s+{re.escape(qualifier.split('::')[-1])}\b[^;{{]*\{{", text):
        return True
    anonymous, bodies = scope_spans(text)
    found = [defined for defined in functions(text) if defined.name == function.name]
    return bool(found) and all(_static(defined) or _within(defined, anonymous + bodies) for defined in found)


def _static(function: CppFunction) -> bool:
    return function.text.lstrip().startswith("static ")


def _within(function: CppFunction, spans: Sequence[tuple[int, int]]) -> bool:
    return any(first <= function.start and function.end <= last for first, last in spans)


def _trunk_code(path: str) -> bool:
    """A C++ or TableGen file of trunk (not of a backend's tree)."""
    return not is_third_party(path) and path.endswith(CPP_SUFFIXES + TD)


def _spelled_in(tree: GitTree, name: str, wanted: Callable[[str], bool]) -> bool:
    """Whether a file of the tree that wanted() keeps spells name as a whole word."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    return any(name in text and word.search(text) for path in tree.paths() if wanted(path)
               for text in [read_text(tree, path) or ""])


def _called_elsewhere(trees: list[GitTree], name: str, wanted: Callable[[str], bool],
                      off: frozenset[str] = frozenset()) -> bool:
    """Whether files of the trees that wanted() keeps can call the free function name: one declares it (C++ calls
    nothing it has not seen declared) and one spells it outside such declarations. A declaration nobody else
    calls, or a same-named lambda or member where nothing declares the function, needs no definition (issue 33,
    the 3.5.x -> 3.7 move: ascend's guarded Ops.cpp takes its only callers of deduceScaleFactor and
    verifyGatherScatterOp with it; FpSanitizer's own deduceScaleFactor lambda is another name). off: the
    backend's FLAGTREE_SPEC_* macros: a line an #ifndef of one turns off is no caller in its build (sunrise's
    guarded RemoveLayoutConversions.cpp, the only caller of canUseResultEncoding, on the 3.4.x -> 3.7 move)."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    # what is not a call of the free function: a member access (`op.name()`), a line that declares a member or
    # a prototype (`static LogicalResult name(...` in a record's extraClassDeclaration: types, then the name), and
    # every spelling in a file that makes a local of that name (`auto name = [&](...)`)
    call = re.compile(rf"(?<![.>\w])(?<!\.\s)(?<!->\s){re.escape(name)}\b")  # a call or a reference (`fn = name;`)
    declaration_line = re.compile(rf"^\s*(?!(?:return|else|throw|case|new|delete|co_return|co_yield|co_await)\b)"
                                  rf"[\w:<>,*&]+(?:\s+[\w:<>,*&]+)*\s+[*&]?{re.escape(name)}\s*\(")
    local = re.compile(rf"\bauto\s*&?\s*{re.escape(name)}\s*=")
    declared = used = False
    guarded: set[str] = set()  # files the first tree (the build's) guards with the backend's macros: that version
    for tree in trees:        # stands for the file; upstream's, without FlagTree's guards, does not
        for path in tree.paths():
            if path in guarded:
                continue
            text = read_text(tree, path) if wanted(path) else None
            if not text or name not in text or not word.search(text):
                continue
            if off and any(macro in text for macro in off):
                guarded.add(path)
            spans = [(decl.start, decl.end) for decl in declarations(text) if decl.name.split("::")[-1] == name] \
                if path.endswith(CPP_SUFFIXES) else []
            declared = declared or bool(spans)
            turned_off = [(region.start, region.end) for region in guard_regions(text)
                          if region.directive == "ifndef" and region.macro in off] if off else []
            used = used or (not local.search(text) and any(
                call.search(line) and not declaration_line.match(line)
                and not any(start <= number <= end for start, end in spans + turned_off)
                for number, line in enumerate(text.splitlines(), start=1)))
            if declared and used:
                return True
    return False


def _region_findings(context: DriftContext, backend: str, definition: MacroDefinition, macro: str, path: str,
                     region: GuardRegion, fork_text: str, library: dict[str, list[CppFunction]],
                     trunk_defines: Callable[[str, str], bool], own: OwnTableGen,
                     off: frozenset[str] = frozenset()) -> list[Finding]:
    """off: the backend's FLAGTREE_SPEC_* macros (backend_macros), read once per backend by guard_findings."""
    where = context.edited_site(f"{path}:{region.start}")

    def finding(kind: str, message: str, action: str, diff: str | None = None,
                sites: tuple[str, ...] = (), functions: tuple[str, ...] = ()) -> Finding:
        # at the macro's definition (read on the branch the user edits): what each action changes, or drops
        return Finding(kind, definition.path, message, action, definition.line, backend, related_path=path, diff=diff,
                       details={"macro": macro, "guard": where, "directive": region.directive,
                                **({"sites": list(sites)} if sites else {}),
                                **({"functions": list(functions)} if functions else {})})

    new_path = context.new_path(path)
    if new_path is None:
        return [finding("guard-default-removed", f"{macro}: {path} was deleted upstream",
                        "find the new home of the guarded code and guard it there")]
    out = []
    upgraded_text, marked = _upgraded_trunk(context, new_path)
    if marked:
        out.append(_conflicted_note(backend, new_path, "the upgraded tree"))
    if context.target is not None:
        if not any(r.macro == macro for r in guard_regions(upgraded_text or "")):
            out.append(finding("guard-lost", f"{macro}: the #{region.directive} guard is gone from "
                               f"{new_path} on the upgraded tree", "re-add the guard around the trunk default"))
    defined = functions(fork_text)
    guarded = functions_in(region, defined)
    old_functions = functions(read_text(context.upstream_old, path) or "")
    new_text = read_text(context.upstream_new, new_path)
    new_functions = functions(new_text or "")
    with_guards = [text for text in (upgraded_text, fork_text) if text]  # the versions that hold FlagTree's guards
    read_from = [text for text in (upgraded_text, new_text, fork_text) if text]  # where _turned_off reads them
    turned_off = [function for function in _turned_off(region, fork_text, defined, new_functions, new_text, upgraded_text)
                  if not (region.directive == "ifndef" and path.endswith(_SOURCES)
                          and _needs_no_replacement(context, path, function, macro, with_guards, read_from))]
    out += _replacement_findings(finding, macro, region, path, turned_off, library,
                                 _undeclared_hooks(context.backend_files, backend), trunk_defines,
                                 lambda function: _own_declaration(context, function, own),
                                 lambda function: region.directive == "ifndef" and path.endswith(_SOURCES)
                                 and not _used_outside_guard(with_guards, macro, function.name.split("::")[-1])
                                 and _uncalled(context, backend, path, function, off))
    olds = _counterparts(guarded, defined, old_functions)
    upstream = [(function, old) for function, old in zip(guarded, olds) if old is not None]  # not FlagTree's own
    news = _counterparts([old for _, old in upstream], old_functions, new_functions)
    for (function, old), new in zip(upstream, news):
        # Its own line, which also tells apart same-named defaults (overloads, a method of several classes); the
        # guard's line separately: one guard may hold a whole file of defaults.
        site = context.edited_site(f"{path}:{function.start}")
        named = f"{function.name} at {site} (in the guard at {where})"
        if new is None:
            if _replacement_unaffected(context, backend, function, fork_text, own):
                continue
            out.append(finding("guard-default-removed", f"{macro}: guarded trunk default "
                               f"{named} no longer exists in {new_path}",
                               "re-target the backend replacement at the code that replaced it",
                               sites=(site,)))
        elif old.normalized != new.normalized:
            diff = "".join(difflib.unified_diff(old.text.splitlines(keepends=True), new.text.splitlines(keepends=True),
                                                f"a/{path}", f"b/{new_path}"))
            out.append(finding("guard-default-changed", f"{macro}: guarded trunk default "
                               f"{named} changed upstream",
                               "port the upstream change into the backend's replacement", diff=diff,
                               sites=(site,), functions=(function.name,)))
    return _one_per_guard(out, macro, where)


def _one_per_guard(found: list[Finding], macro: str, where: str) -> list[Finding]:
    """The guard-default-changed findings of one guard as one, in the place of the first: one guard may hold a
    whole file of defaults (ascend's Ops.cpp on 3.5 -> 3.7: 24 findings, one port of one file)."""
    changed = [f for f in found if f.kind == "guard-default-changed"]
    if len(changed) < 2:
        return found
    sites = [site for f in changed for site in f.details["sites"]]
    names = [name for f in changed for name in f.details["functions"]]
    one = replace(changed[0], message=f"{macro}: {len(changed)} guarded trunk defaults in the guard at {where} "
                  f"changed upstream: " + ", ".join(f"{name} at {site}" for name, site in zip(names, sites)),
                  diff="".join(f.diff or "" for f in changed) or None,
                  details={**changed[0].details, "sites": sites, "functions": names})
    first = found.index(changed[0])
    return [one if index == first else f for index, f in enumerate(found) if f.kind != "guard-default-changed"
            or index == first]
