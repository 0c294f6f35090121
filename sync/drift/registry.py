"""The analyses drift and upgrade run, in order, and the extractors of the Python facts they share (pyblobs).
Adding a kind: a catalogue entry in sync/model/kinds.py, an analyzer here (analyze(ctx) -> Iterable[Finding], or an
outcome.Found with the clean merges it made)
and a fixture test; the renderers need no change. An analysis that reads a fact of the shared Python parse
defines its pyblobs.Extractor and lists it in EXTRACTORS."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from sync.git import GitTree
from sync.facts.layout import backend_dir, third_party_backends
from sync.model import Finding
from sync.drift.analysis_cache import kept_piece
from sync.drift.context import DriftContext
from sync.drift.outcome import Found
from sync.drift.branchlines import BRANCH, FORK, NEW
from sync.drift.analyses.builddeps import generated_dependency_findings
from sync.drift.analyses.buildconfigs import unconfigured_target_findings
from sync.drift.analyses.bindingcopies import binding_copy_findings
from sync.drift.analyses.buildfiles import build_file_findings, output_clash_findings
from sync.drift.analyses.callsigs import CALLS, call_signature_findings, call_signature_join, call_signature_part
from sync.drift.analyses.cochange import DEF_SPANS, cochange_findings
from sync.drift.analyses.conflictsides import conflict_side_findings, restored_conflict_findings
from sync.drift.analyses.cppguards import guard_findings
from sync.drift.analyses.featuregates import feature_gate_findings
from sync.drift.analyses.overlayimports import missing_name_findings
from sync.drift.analyses.tdoverlays import td_overlay_findings
from sync.drift.analyses.packages import missing_package_findings, not_installed_import_findings
from sync.drift.analyses.abstracts import abstract_findings
from sync.drift.analyses.conventions import DECORATED, convention_findings
from sync.drift.analyses.callbacks import callback_findings
from sync.drift.analyses.contracts import contract_findings
from sync.drift.analyses.entryscripts import entry_script_findings
from sync.drift.analyses.pins import pin_findings, toolchain_name_findings
from sync.drift.analyses.dataclassfields import dataclass_field_findings
from sync.drift.analyses.keys import KEY_READS, KEY_WRITES, key_string_findings, key_string_join, key_string_part
from sync.drift.analyses.opverifiers import op_verifier_findings
from sync.drift.analyses.overlays import overlay_findings
from sync.drift.analyses.overrides import override_findings
from sync.drift.analyses.pyimports import removed_import_findings
from sync.check.policy import unrecognized_layouts
from sync.drift.analyses.specfuncs import spec_function_findings
from sync.drift.analyses.symbols import OWN_NAMES, STATEMENTS, ChangeNames, symbol_findings, symbol_join, symbol_part
from sync.facts.declindex import DECLARATIONS
from sync.facts.pyblobs import PARSES, Extractor, PythonFacts
from sync.facts.upstreamlog import with_upstream_commits
from sync.drift.analyses.methodcalls import call_no_overload_findings
from sync.drift.analyses.accessors import member_findings
from sync.drift.analyses.pymembers import ATTRIBUTE_READS, attribute_findings
from sync.drift.analyses.definitions import declaration_findings, definition_findings
from sync.drift.analyses.qualified import moved_findings
from sync.drift.analyses.clashes import clash_findings
from sync.drift.analyses.bindings import binding_findings
from sync.drift.analyses.pybindcalls import pybind_call_findings


@dataclass(frozen=True)
class Parts:
    """An analysis that can run as several parts side by side, where cores are left over (the long pole of
    a first run on a many-core machine): part(context, k, n) returns the share of part k of n (sent between
    processes: picklable), join(context, shares) the findings, the same whatever n."""
    part: Callable[[DriftContext, int, int], Any]
    join: Callable[[DriftContext, list[Any]], Iterable[Finding]]
    most: int  # more parts than this cost more than they save


@dataclass(frozen=True)
class Analyzer:
    name: str  # shown in progress output
    analyze: Callable[[DriftContext], Iterable[Finding] | Found]  # never writes into the context: it returns
    on_request: bool = False  # slow: left out by drift --fast (upgrade, status and drift run it)
    parts: Parts | None = None
    # About how long it takes, for the order heavy analyses are handed out in (the longest first, whoever is
    # free takes the next): CPU seconds of a first run of the 3.7 move on 2 cores (bench/cold_upgrade.py
    # --phases). Scheduling only: the findings are the same in any order.
    cost: float = 0.0
    # Reads what other analyses of the parent read before it (the upstream modules' Python declarations): run by
    # the parent, where those facts are in memory, never handed to a worker, which would read them again (about
    # 1 s of CPU on a first run of the 3.7 move, where overrides and abstract methods ran in the worker).
    in_parent: bool = False
    # The tree its findings' lines are read on: the FlagTree branch (FORK), the new tag (NEW), or already the
    # branch the user edits (BRANCH: the upgraded branch when one is given). The runner moves the others there.
    lines: str = FORK


def boundary_findings(context: DriftContext) -> list[Finding]:
    """FlagTree's definitions of what upstream declares, qualified names and headers whose declaration moved,
    definitions that clash in one unit, and callables passed to a parameter upstream retyped: one process, so the
    headers upstream changed are parsed once for all four (declindex's memo)."""
    return [finding for name, piece in (("definitions", definition_findings), ("declarations", declaration_findings),
                                        ("moved declarations", moved_findings), ("clashes", clash_findings),
                                        ("callbacks", callback_findings))
            for finding in kept_piece(context, name, lambda: piece(context))]  # each kept on its own


def backends_without_spec(context: DriftContext) -> list[Finding]:
    known = set(context.owners.backends) | {item.file.backend for item in context.classified}
    return [Finding("backend-without-spec", f"{backend_dir(backend)}/backend", "backend has no spec/ tree: "
                    "no overlay, spec function or C++ guard of it to drift", backend=backend)
            for backend in third_party_backends(context.fork)
            if backend not in known and (not context.filtered or backend in context.backends)]


def layouts(context: DriftContext) -> list[Finding]:
    """Hooks with no spec tree of a known layout, or a spec directory of none: said, never skipped in silence."""
    return unrecognized_layouts(context.fork, context.fork_hooks)


def _symbol_part(context: DriftContext, part: int, parts: int) -> list[ChangeNames]:
    if _added_lines_unknown(context):
        return []
    return symbol_part(context.repo, context.upstream_old, context.upstream_new, context.fork, part, parts)


def _symbol_join(context: DriftContext, shares: list[list[ChangeNames]]) -> list[Finding]:
    if _added_lines_unknown(context):
        return [_symbols_skipped()]
    return _with_commits(context, symbol_join(context.repo, context.upstream_old, context.upstream_new, context.fork,
                                              context.owners.owners, shares, target=_upgraded(context),
                                              serving=context.serving_file))


def symbol_drift(context: DriftContext) -> list[Finding]:
    """The analysis whole, in one process (its parts and their join would read the fork's files twice)."""
    if _added_lines_unknown(context):
        return [_symbols_skipped()]
    return _with_commits(context, symbol_findings(context.repo, context.upstream_old, context.upstream_new,
                                                  context.fork, context.owners.owners, target=_upgraded(context),
                                                  serving=context.serving_file))


def _with_commits(context: DriftContext, findings: list[Finding]) -> list[Finding]:
    """The upstream commits (and PR numbers) behind each removed declaration, when the tags are known."""
    if context.range is None or not any(finding.kind == "symbol-removed" for finding in findings):
        return findings
    return with_upstream_commits(context.repo, context.range.old.oid, context.range.onto.oid, findings)


def _upgraded(context: DriftContext) -> GitTree | None:
    """The upgraded branch symbol drift checks its uses against; None when only the FlagTree branch is known."""
    branch = context.backend_files
    return None if branch is context.fork else branch


def _symbols_skipped() -> Finding:
    return Finding("symbol-drift-skipped", ".", "the old tag is not an ancestor of the branch, so FlagTree's "
                   "added lines cannot be told from upstream's")


def _added_lines_unknown(context: DriftContext) -> bool:
    """FlagTree's added lines are measured from OLD: on a branch not based on it they would be upstream's."""
    return context.range is not None and not context.fork_based_on_old


def _when_based_on_old(analyze: Callable[[DriftContext], Iterable[Finding]]) -> Callable[[DriftContext], list[Finding]]:
    """FlagTree's added lines are measured from OLD: on a branch not based on it they would be upstream's
    (symbol_drift reports the skip once for all of these)."""
    def run(context: DriftContext) -> list[Finding]:
        if _added_lines_unknown(context):
            return []
        return list(analyze(context))
    return run


def _parts_when_based_on_old(part: Callable[[DriftContext, int, int], Any],
                             join: Callable[[DriftContext, list[Any]], Iterable[Finding]], most: int) -> Parts:
    """Parts of an analysis of FlagTree's added lines, which finds nothing on a branch not based on OLD."""
    def part_or_none(context: DriftContext, number: int, parts: int) -> Any:
        return None if _added_lines_unknown(context) else part(context, number, parts)

    def join_or_none(context: DriftContext, shares: list[Any]) -> list[Finding]:
        return [] if _added_lines_unknown(context) else list(join(context, shares))
    return Parts(part_or_none, join_or_none, most)


def _on_old(name: str, analyze: Callable[[DriftContext], Iterable[Finding]], cost: float,
            parts: Parts | None = None, in_parent: bool = False, lines: str = FORK) -> Analyzer:
    """A heavy analysis of FlagTree's added lines (measured from OLD: see _when_based_on_old)."""
    return Analyzer(name, _when_based_on_old(analyze), on_request=True, parts=parts, cost=cost, in_parent=in_parent,
                    lines=lines)


ANALYZERS: tuple[Analyzer, ...] = (
    Analyzer("backends", backends_without_spec),
    Analyzer("layouts", layouts),
    Analyzer("overlays", overlay_findings, lines=BRANCH),
    Analyzer("overlay imports", missing_name_findings, lines=BRANCH),
    Analyzer("binding library copies", binding_copy_findings, lines=BRANCH),
    Analyzer("TableGen overlays", td_overlay_findings, lines=BRANCH),
    Analyzer("package directories", missing_package_findings),
    Analyzer("imports of uninstalled packages", not_installed_import_findings),
    Analyzer("spec functions", spec_function_findings),
    Analyzer("C++ guards", guard_findings, lines=BRANCH),
    # the upgraded branch's committed conflicts: no FlagTree added lines asked, so on any branch
    Analyzer("conflict sides", conflict_side_findings, on_request=True, cost=1.8, lines=BRANCH),
    Analyzer("restored files in conflict", restored_conflict_findings, lines=BRANCH),
    Analyzer("symbols", symbol_drift, on_request=True, parts=Parts(_symbol_part, _symbol_join, most=4), cost=5.9),
    _on_old("co-changed functions", cochange_findings, 0.7),
    _on_old("call signatures", call_signature_findings, 4.4,
            parts=_parts_when_based_on_old(call_signature_part, call_signature_join, most=3)),
    _on_old("op verifiers", op_verifier_findings, 2.8),
    _on_old("method calls", call_no_overload_findings, 1.6),
    _on_old("member names that left the tree", member_findings, 1.0),
    _on_old("python attributes that left the tree", attribute_findings, 0.3),
    _on_old("declarations across the boundary", boundary_findings, 3.0),
    _on_old("python bindings", binding_findings, 0.8),
    _on_old("pybind calls", pybind_call_findings, 0.4),
    _on_old("build files", build_file_findings, 0.0),
    _on_old("generated outputs", output_clash_findings, 0.0, lines=BRANCH),
    _on_old("build configurations", unconfigured_target_findings, 0.1, lines=BRANCH),
    _on_old("toolchain pins", pin_findings, 0.0),
    _on_old("toolchain names", toolchain_name_findings, 0.3),
    _on_old("entry scripts", entry_script_findings, 0.0),
    _on_old("build dependencies", generated_dependency_findings, 0.1, lines=NEW),
    _on_old("key strings", key_string_findings, 0.9,
            parts=_parts_when_based_on_old(key_string_part, key_string_join, most=3)),
    _on_old("feature gates", feature_gate_findings, 1.6),
    _on_old("overrides", override_findings, 1.0, in_parent=True),
    _on_old("abstract methods", abstract_findings, 0.1, in_parent=True),
    _on_old("dataclass fields", dataclass_field_findings, 0.1, in_parent=True),
    _on_old("backend contracts", contract_findings, 0.2, in_parent=True),
    _on_old("decorator keywords", convention_findings, 0.7, in_parent=True),
    _on_old("python imports", removed_import_findings, 0.1, in_parent=True),
)

# What the shared parse of each Python blob collects (pyblobs): each run makes its PythonFacts of these.
EXTRACTORS: tuple[Extractor, ...] = (ATTRIBUTE_READS, CALLS, DECLARATIONS, DECORATED, DEF_SPANS, KEY_READS, KEY_WRITES,
                                     OWN_NAMES, PARSES, STATEMENTS)


def python_facts() -> PythonFacts:
    """The Python facts of one run: every extractor of EXTRACTORS, nothing known yet."""
    return PythonFacts(EXTRACTORS)
