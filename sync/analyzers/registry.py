"""The analyses drift and upgrade run, in order. Adding a kind: a catalogue entry in sync/kinds.py, an
analyzer here (analyze(ctx) -> Iterable[Finding]) and a fixture test; the renderers need no change."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from ..layout import third_party_backends
from ..model import Finding
from .context import DriftContext
from .builddeps import generated_dependency_findings
from .buildfiles import build_file_findings
from .callsigs import call_signature_findings
from .cochange import cochange_findings
from .cppguards import guard_findings
from .featuregates import feature_gate_findings
from .keys import key_string_findings
from .opverifiers import op_verifier_findings
from .overlays import backend_tree, overlay_findings
from .policy import unrecognized_layouts
from .specfuncs import spec_function_findings
from .symbols import symbol_findings


@dataclass(frozen=True)
class Analyzer:
    name: str  # shown in progress output
    analyze: Callable[[DriftContext], Iterable[Finding]]
    on_request: bool = False  # runs only when asked for (drift --symbols; upgrade always asks)


def backends_without_spec(context: DriftContext) -> list[Finding]:
    known = set(context.owners.backends)
    return [Finding("backend-without-spec", f"third_party/{backend}/backend", "backend has no spec/ tree: "
                    "no overlay, spec function or C++ guard of it to drift", backend=backend)
            for backend in third_party_backends(context.fork)
            if backend not in known and (not context.filtered or backend in context.backends)]


def layouts(context: DriftContext) -> list[Finding]:
    """Hooks with no spec tree of a known layout, or a spec directory of none: said, never skipped in silence."""
    return unrecognized_layouts(context.fork, context.fork_hooks)


def symbol_drift(context: DriftContext) -> list[Finding]:
    rng, branch = context.range, backend_tree(context)
    if rng is not None and not context.fork_based_on_old:
        # FlagTree's added lines are measured from OLD: on a branch not based on it they would be upstream's.
        return [Finding("symbol-drift-skipped", ".", "the old tag is not an ancestor of the branch, so FlagTree's "
                        "added lines cannot be told from upstream's")]
    return symbol_findings(context.repo, context.upstream_old, context.upstream_new, context.fork,
                           context.owners.owners, target=None if branch is context.fork else branch)


def _when_based_on_old(analyze: Callable[[DriftContext], Iterable[Finding]]) -> Callable[[DriftContext], list[Finding]]:
    """FlagTree's added lines are measured from OLD: on a branch not based on it they would be upstream's
    (symbol_drift reports the skip once for all of these)."""
    def run(context: DriftContext) -> list[Finding]:
        if context.range is not None and not context.fork_based_on_old:
            return []
        return list(analyze(context))
    return run


ANALYZERS: tuple[Analyzer, ...] = (
    Analyzer("backends", backends_without_spec),
    Analyzer("layouts", layouts),
    Analyzer("overlays", overlay_findings),
    Analyzer("spec functions", spec_function_findings),
    Analyzer("C++ guards", guard_findings),
    Analyzer("symbols", symbol_drift, on_request=True),
    Analyzer("co-changed functions", _when_based_on_old(cochange_findings), on_request=True),
    Analyzer("call signatures", _when_based_on_old(call_signature_findings), on_request=True),
    Analyzer("op verifiers", _when_based_on_old(op_verifier_findings), on_request=True),
    Analyzer("build files", _when_based_on_old(build_file_findings), on_request=True),
    Analyzer("build dependencies", _when_based_on_old(generated_dependency_findings), on_request=True),
    Analyzer("key strings", _when_based_on_old(key_string_findings), on_request=True),
    Analyzer("feature gates", _when_based_on_old(feature_gate_findings), on_request=True),
)
