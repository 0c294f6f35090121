"""TableGen overlays that no longer build with the new tag (issue 33: the 3.2 -> 3.3 and 3.4.x -> 3.5.1 moves).

A backend that builds its own version of a trunk .td file (an overlay or copy, in trunk's place) generates that
file's classes from its own records. Three upstream changes then break its build:
- trunk's new version of the file generates a class the old one did not, trunk's C++ at the new tag uses it, and
  the backend's version generates no such class: the C++ does not compile (`overlay-missing-names`);
- trunk's new version gives a class the backend's version also generates an accessor (`$a_elem_type`:
  `getAElemType`) that neither the old version nor the backend's has, and which no other declaration of the new
  tree has, so a use of the name is a use of it; trunk's C++ at the new tag uses it: the same kind (the 3.2 line,
  whose ascend TritonOps.td kept DotScaledOp's `$lhs_type` after upstream renamed it);
- trunk's new version of the file defines a TableGen record or class (a trait, an interface) the old one did not,
  another trunk .td at the new tag uses it, and the backend's version defines none: TableGen stops (the same kind);
- the backend's version includes a trunk .td file upstream deleted: TableGen stops (`overlay-include-removed`);
- the backend's version uses a TableGen record or class (a trait) a trunk .td defined at the old tag and no .td
  of upstream's new tree or of the backend defines: TableGen stops (`symbol-removed`; the 3.2 line onto 3.4,
  where ascend's TritonOps.td kept the DotLike trait upstream folded into DotOpInterface);
- upstream moved a class out of the file into a .td of another dialect namespace, and the backend's version still
  generates it in its own: a trunk file of the new tag that opens both namespaces (`using namespace` at file
  scope) and names the class unqualified meets two classes and does not compile (`overlay-class-clash`; the 3.2
  line onto 3.3, where MemDescType moved from triton to triton::gpu and ascend's TritonTypes.td kept it).

No claim for a use inside a region the backend's own FLAGTREE_SPEC_* macro turns off, in a trunk file the backend
replaces itself, or under a directory the build leaves out; nor for a class any .td of the backend's tree declares.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from posixpath import dirname, join, normpath

from sync.drift.analyses.accessors import declared_at
from sync.drift.context import DriftContext
from sync.facts.cmakebuilt import unbuilt
from sync.facts.cppcalls import dir_namespaces, include_dir
from sync.facts.cppscope import file_using_namespaces, unqualified_global_uses
from sync.facts.cpp import backend_macros, guard_regions
from sync.facts.declindex import declarations_of
from sync.facts.filekinds import CPP_CODE, is_built
from sync.facts.includes import spelled_td_includes
from sync.facts.layout import backend_dir, is_third_party, spec_files
from sync.facts.roles import TD_OVERLAY, Classified
from sync.facts.trees import FileTree, read_text
from sync.facts.upstreamlog import with_upstream_commits
from sync.git import GitTree
from sync.model import Finding

TD = ".td"
_CLASS_KINDS = ("attr", "type", "op", "enum-attr")
_WORD = re.compile(r"[A-Za-z_]\w*")
_TD_DEFINITION = re.compile(r"^\s*(?:def|class|multiclass|defvar)\s+([A-Za-z_]\w*)", re.MULTILINE)


def generated_classes(path: str, text: str | None) -> set[str]:
    """The C++ classes a .td text generates: attributes, types, ops, enums (and an enum's attribute class)."""
    found: set[str] = set()
    for decl in declarations_of(path, text or ""):
        if decl.kind in _CLASS_KINDS:
            found.add(decl.name)
            if decl.kind == "enum-attr":
                found.add(f"{decl.name}Attr")
    return found


def td_overlay_findings(context: DriftContext) -> list[Finding]:
    overlays = [item for item in context.classified if (item.trunk_path or "").endswith(TD)
                and (item.file.backend, item.trunk_path) in context.replaced_by_backend] + _new_overlays(context)
    if not overlays:
        return []
    trunk_now = context.target if context.target is not None else context.upstream_new
    findings: list[Finding] = []
    for item in overlays:
        text = read_text(context.backend_files, item.file.path)
        if text is None:
            continue
        findings += _removed_includes(context, item, text, trunk_now)
        findings += _class_clashes(context, item, text, trunk_now)
        findings += _removed_records(context, item, text)
        uses: dict[str, list[str]] = {}
        missing = _missing(context, item, text, generated_classes)
        if missing:
            uses.update(_trunk_uses(context, trunk_now, item.file.backend, missing))
        accessors = _missing_accessors(context, item, text)
        if accessors:
            found = _trunk_uses(context, trunk_now, item.file.backend, set(accessors))
            uses.update({f"{accessors[name]}::{name}": sites for name, sites in found.items()})
        missing_defs = _missing(context, item, text, lambda path, source: td_definitions(source))
        if missing_defs:
            uses.update(_td_uses(context, trunk_now, item, missing_defs))
        if uses:
            findings.append(_missing_finding(item, uses))
    return findings


def _new_overlays(context: DriftContext) -> list[Classified]:
    """A backend's spec .td whose trunk counterpart upstream adds at the new tag: the backend's CMake now picks it
    instead of trunk's new file, as it does for every mirrored .td (the 3.2 hint-manager line onto 3.5.1: ascend's
    TritonOpInterfaces.td, with only its descriptor interfaces, stands in for 3.3's new file of that name, whose
    DotOpInterface and TransposeOpInterface trunk's code uses)."""
    backends = set(context.backends) if context.filtered else None
    return [Classified(spec_file, TD_OVERLAY, why="upstream's new tag adds the trunk file it mirrors")
            for spec_file in spec_files(context.fork, backends)
            if spec_file.is_tablegen and spec_file.trunk_path and not context.fork.exists(spec_file.trunk_path)
            and not context.upstream_old.exists(spec_file.trunk_path)
            and context.upstream_new.exists(spec_file.trunk_path)]


Declared = Callable[[str, "str | None"], set[str]]  # what a .td text (at a path) declares of one sort


def _missing(context: DriftContext, item: Classified, text: str, declared: Declared) -> set[str]:
    """What trunk's new version of the file declares (generated classes, or TableGen definitions), which neither
    its version before (upstream's old tag, the FlagTree branch's) nor the overlay nor any .td of the backend's tree
    declares."""
    trunk = item.trunk_path or ""
    new_path = context.new_path(trunk)
    if new_path is None:
        return set()  # deleted upstream: overlay-orphan says so
    added = declared(new_path, read_text(context.upstream_new, new_path)) \
        - declared(trunk, read_text(context.upstream_old, trunk)) - declared(trunk, read_text(context.fork, trunk)) \
        - declared(item.file.path, text)
    if not added:
        return set()
    owned = f"{backend_dir(item.file.backend)}/"
    tree = context.backend_files
    return added - {name for path in tree.paths() if path.startswith(owned) and path.endswith(TD)
                    for name in declared(path, read_text(tree, path))}


def _accessors_by_class(path: str, text: str | None) -> dict[str, set[str]]:
    return {decl.name: set(decl.members) for decl in declarations_of(path, text or "") if decl.kind in _CLASS_KINDS}


def _missing_accessors(context: DriftContext, item: Classified, text: str) -> dict[str, str]:
    """Accessor -> its class: what trunk's new version of the file generates for a class the overlay generates
    too, which that class had in neither trunk's version before (upstream's old tag, the FlagTree branch's) nor the
    overlay (nor does the overlay or any .td of the backend spell it: hand-written in extraClassDeclaration), and
    which nothing else in upstream's new tree declares: a use of the name can only be a use of this accessor."""
    trunk = item.trunk_path or ""
    new_path = context.new_path(trunk)
    if new_path is None:
        return {}
    overlay = _accessors_by_class(item.file.path, text)
    before = [_accessors_by_class(trunk, read_text(tree, trunk)) for tree in (context.upstream_old, context.fork)]
    owned = f"{backend_dir(item.file.backend)}/"
    backend_td = [read_text(context.backend_files, path) or "" for path in context.backend_files.paths()
                  if path.startswith(owned) and path.endswith(TD)]
    missing: dict[str, str] = {}
    for name, accessors in _accessors_by_class(new_path, read_text(context.upstream_new, new_path)).items():
        if name not in overlay:
            continue  # a class the overlay lacks altogether: the class rule's
        had = overlay[name].union(*(version.get(name, set()) for version in before))
        for accessor in sorted(accessors - had):
            if not any(re.search(rf"\b{accessor}\b", source) for source in backend_td):
                missing[accessor] = name
    if not missing:
        return {}
    declared = declared_at(context.upstream_new, set(missing))
    return {accessor: name for accessor, name in missing.items() if len(declared.get(accessor, [])) == 1}


def td_definitions(text: str | None) -> set[str]:
    """The records, classes and variables a .td text defines (`def X`, `class X`, `multiclass X`, `defvar X`)."""
    return set(_TD_DEFINITION.findall(text or ""))


def _td_uses(context: DriftContext, tree: GitTree, item: Classified, names: set[str]) -> dict[str, list[str]]:
    """Name -> path:line of each use in the other trunk .td files at the new tag the backend does not replace."""
    itself = context.new_path(item.trunk_path or "")
    return _uses(tree, names, lambda path: not is_third_party(path) and path.endswith(TD)
                 and path not in (item.trunk_path, itself) and (item.file.backend, path) not in context.replaced_by_backend)


Wanted = Callable[[str], bool]  # whether a path counts
TurnedOff = Callable[[str, str], "list[tuple[int, int]] | None"]  # line spans of a text that do not count (None: all)


def _trunk_cpp_of(context: DriftContext, tree: GitTree, backend: str) -> tuple[Wanted, TurnedOff]:
    """The trunk C++ of the tree the backend compiles as is: built, not a trunk file the backend builds its own
    version of, not under a directory the CMake leaves out; and in it the regions the backend's own
    FLAGTREE_SPEC_* `#ifndef` turns off."""
    macros = set(backend_macros(context.backend_files, backend))

    def wanted(path: str) -> bool:
        return not is_third_party(path) and path.endswith(CPP_CODE) and is_built(path) \
            and not path.startswith("docs/") and (backend, path) not in context.replaced_by_backend

    def turned_off(path: str, text: str) -> list[tuple[int, int]] | None:
        if unbuilt(tree, path):
            return None
        return [(region.start, region.end) for region in guard_regions(text)
                if region.macro in macros and region.directive == "ifndef"]
    return wanted, turned_off


def _trunk_uses(context: DriftContext, tree: GitTree, backend: str, names: set[str]) -> dict[str, list[str]]:
    """Name -> path:line of each use in trunk's C++ the backend compiles, outside the regions it turns off."""
    return _uses(tree, names, *_trunk_cpp_of(context, tree, backend))


def _spelling(tree: GitTree, word: re.Pattern[str], wanted: Wanted,
              turned_off: TurnedOff) -> Iterator[tuple[str, str, list[tuple[int, int]]]]:
    """(path, text, the line spans that do not count) of each file wanted() keeps whose text the pattern matches,
    but for one turned_off() leaves out whole."""
    for path in tree.paths():
        if not wanted(path):
            continue
        text = read_text(tree, path) or ""
        if not word.search(text):
            continue
        off = turned_off(path, text)
        if off is not None:
            yield path, text, off


def _uses(tree: GitTree, names: set[str], wanted: Wanted,
          turned_off: TurnedOff = lambda path, text: []) -> dict[str, list[str]]:
    """Name -> path:line of each use of the names as words in the files wanted() keeps, outside `//` comments and
    the line spans turned_off() gives for a file that spells one (None: none of the file counts)."""
    word = re.compile(r"\b(" + "|".join(re.escape(name) for name in sorted(names)) + r")\b")
    uses: dict[str, list[str]] = {}
    for path, text, off in _spelling(tree, word, wanted, turned_off):
        for number, line in enumerate(text.splitlines(), start=1):
            if any(start <= number <= end for start, end in off):
                continue
            for name in dict.fromkeys(word.findall(line.split("//", 1)[0])):
                uses.setdefault(name, []).append(f"{path}:{number}")
    return uses


def _missing_finding(item: Classified, uses: dict[str, list[str]]) -> Finding:
    names = sorted(uses)
    sites = sorted((site for name in names for site in uses[name]),
                   key=lambda site: (site.rpartition(":")[0], int(site.rpartition(":")[2])))
    shown = ", ".join(f"{name} ({uses[name][0]}{f' and {len(uses[name]) - 1} more' if len(uses[name]) > 1 else ''})"
                      for name in names[:5]) + (" and more" if len(names) > 5 else "")
    return Finding(
        "overlay-missing-names", item.file.path,
        f"builds in place of {item.trunk_path}, and trunk's code at the new tag uses {len(names)} name(s) the new "
        f"{item.trunk_path.rsplit('/', 1)[-1] if item.trunk_path else 'file'} declares or generates that it does "
        f"not: {shown} (will not build as is)",
        "merge upstream's change into the TableGen overlay, or guard the trunk code that uses them",
        backend=item.file.backend, related_path=sites[0].rpartition(":")[0],
        details={"names": names, "sites": sites})


def _class_clashes(context: DriftContext, item: Classified, text: str, trunk_now: GitTree) -> list[Finding]:
    """A class the overlay generates that upstream moved from trunk's version of the file to a .td whose dialect
    lives in other namespaces: trunk's built C++ at the new tag that opens a namespace of each and names the class
    unqualified finds two (an ambiguous name)."""
    trunk = item.trunk_path or ""
    new_path = context.new_path(trunk)
    if new_path is None:
        return []
    kept = generated_classes(item.file.path, text) & generated_classes(trunk, read_text(context.upstream_old, trunk))
    moved = kept - generated_classes(new_path, read_text(context.upstream_new, new_path))
    namespaces = dir_namespaces(context.upstream_new)
    own = namespaces.get(include_dir(new_path), frozenset())
    if not moved or not own:
        return []
    now_in: dict[str, tuple[str, frozenset[str]]] = {}  # class -> (the .td that generates it now, its namespaces)
    for path in context.upstream_new.paths():
        if not path.endswith(TD) or is_third_party(path):
            continue
        other = namespaces.get(include_dir(path), frozenset())
        if other and other.isdisjoint(own):
            for name in sorted(moved & generated_classes(path, read_text(context.upstream_new, path)) - set(now_in)):
                now_in[name] = (path, other)
    sites: dict[str, list[str]] = {}
    for name, (_, other) in now_in.items():
        for path, line in _unqualified_uses(context, trunk_now, item.file.backend, name, own, other):
            sites.setdefault(name, []).append(f"{path}:{line}")
    return [Finding(
        "overlay-class-clash", item.file.path,
        f"generates {name} in {' / '.join(sorted(own))}, which upstream moved to {now_in[name][0]} "
        f"({' / '.join(sorted(now_in[name][1]))}); trunk's code at the new tag opens both namespaces and names "
        f"{name} unqualified at {len(found)} site(s), first {found[0]}: an ambiguous name (will not build as is)",
        f"drop {name} from the TableGen overlay, as upstream did, or qualify the uses",
        backend=item.file.backend, related_path=now_in[name][0],
        details={"names": [name], "sites": found, "moved_to": now_in[name][0]})
        for name, found in sorted(sites.items())]


def _removed_records(context: DriftContext, item: Classified, text: str) -> list[Finding]:
    """symbol-removed for each TableGen definition of trunk's old tree the overlay uses that upstream's new tree
    and the backend's own .td files define nowhere (nor the overlay itself)."""
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    used = set(_WORD.findall(code)) - td_definitions(text)
    if not used:
        return []
    old_defs = _td_definitions_of(context.upstream_old, lambda path: not is_third_party(path), used)
    gone = set(old_defs) - set(_td_definitions_of(context.upstream_new, lambda path: not is_third_party(path),
                                                  set(old_defs)))
    owned = f"{backend_dir(item.file.backend)}/"
    gone -= set(_td_definitions_of(context.backend_files, lambda path: path.startswith(owned), gone))
    findings = []
    for name in sorted(gone):
        lines = [number for number, line in enumerate(code.splitlines(), start=1) if name in _WORD.findall(line)]
        sites = [f"{item.file.path}:{number}" for number in lines]
        findings.append(Finding(
            "symbol-removed", item.file.path,
            f"{name}: TableGen definition removed from {old_defs[name]} and defined nowhere in upstream's new tree or "
            f"this backend's .td files (will not build as is: TableGen stops); the overlay uses it at "
            f"{len(sites)} site(s): {', '.join(sites[:5])}{' and more' if len(sites) > 5 else ''}",
            "merge upstream's change into the TableGen overlay", lines[0], item.file.backend,
            related_path=old_defs[name], details={"declaration": name, "sites": sites,
                                                  "symbols": [f"{name}:removed:{old_defs[name]}"], "replacements": {}}))
    if findings and context.range is not None:
        findings = with_upstream_commits(context.repo, context.range.old.oid, context.range.onto.oid, findings)
    return findings


def _td_definitions_of(tree: GitTree | FileTree, wanted: Callable[[str], bool], names: set[str]) -> dict[str, str]:
    """Which of the names the tree's .td files that wanted() keeps define, each with the first such file."""
    found: dict[str, str] = {}
    for path in sorted(tree.paths()):
        if not path.endswith(TD) or not wanted(path):
            continue
        for name in td_definitions(read_text(tree, path)) & names:
            found.setdefault(name, path)
    return found


def _unqualified_uses(context: DriftContext, tree: GitTree, backend: str, name: str, first: frozenset[str],
                      second: frozenset[str]) -> list[tuple[str, int]]:
    """(path, line) of each unqualified use of name outside named namespaces (cppscope) in trunk's C++ the backend
    compiles, outside the regions it turns off, in a file whose file-scope using-directives open a namespace of
    each set."""
    found: list[tuple[str, int]] = []
    for path, source, off in _spelling(tree, re.compile(rf"\b{re.escape(name)}\b"),
                                       *_trunk_cpp_of(context, tree, backend)):
        opened = file_using_namespaces(source)
        if opened.isdisjoint(first) or opened.isdisjoint(second):
            continue
        found += [(path, line) for line in unqualified_global_uses(source, name)
                  if not any(start <= line <= end for start, end in off)]
    return found


def _removed_includes(context: DriftContext, item: Classified, text: str, trunk_now: GitTree) -> list[Finding]:
    """An include the overlay resolved to a trunk .td that upstream deleted (and the backend does not provide)."""
    own_dir = dirname(item.file.path)
    owned = f"{backend_dir(item.file.backend)}/"
    findings = []
    for line, included in spelled_td_includes(text):
        trunk_path = f"include/{included}"
        if not context.upstream_old.exists(trunk_path) or trunk_now.exists(trunk_path) \
                or context.upstream_new.exists(trunk_path):
            continue  # not a trunk file, or still there
        if context.backend_files.exists(normpath(join(own_dir, included))) or \
                any(path.startswith(owned) and path.endswith("/" + included) for path in context.backend_files.paths()):
            continue  # the backend provides its own
        moved = context.renames.get(trunk_path)
        findings.append(Finding(
            "overlay-include-removed", item.file.path,
            f"includes {included}, which upstream {'moved to ' + moved if moved else 'deleted'}: TableGen stops "
            f"on this backend (will not build as is)",
            "merge upstream's change into the TableGen overlay", line=line, backend=item.file.backend,
            related_path=trunk_path, details={"include": included}))
    return findings
