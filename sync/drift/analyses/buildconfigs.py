"""Build configurations: a target a CMake file links that the configuration of one FlagTree backend does not
define (issue 45, class 1; the 3.4.x -> 3.5.1 move: upstream's proton dialect, which every build adds, starts
linking TritonNVIDIAGPUToLLVM / TritonAMDGPUToLLVM, defined only under third_party/nvidia and amd, which a build
of iluvatar, mthreads or xpu does not add).

For each configuration the entry script selects (facts/buildconfigs.py: one per backend, and the build without
one), facts/cmakebuilt.configured() follows the upgraded branch's CMake: the directories that build adds, the
targets they may define, the links they certainly make. A link is reported where its target is one some CMake
file of the branch defines (so not an imported or LLVM/MLIR package), the configuration defines it nowhere, and
the same link (linking target, linked target) was not already unresolved in that backend's configuration of the
FlagTree branch at the old tag: the link is new, or the definition moved under a condition, between the tags.
A configuration that adds a directory the tree does not hold (a submodule, a download), or whose entry script or
CMake files it reads hold a conflict's markers, is left out: what that build defines is not known (the conflict is
reported already)."""
from __future__ import annotations

from sync.drift.context import DriftContext
from sync.facts.buildconfigs import Configuration, configurations
from sync.facts.cmakebuilt import Link, configured, defined_anywhere
from sync.facts.delta import backend_of
from sync.facts.trees import FileTree
from sync.model import Finding

KIND = "build-target-unconfigured"


def _unresolved(tree: FileTree, configuration: Configuration, every: dict[str, str]) -> list[Link] | None:
    """The links of the configuration to targets of the tree it does not define; None where it reads a CMake file
    the tree does not hold, or holds in conflict."""
    made = configured(tree, configuration.cache, configuration.env)
    if made.unread:
        return None
    return [link for link in made.links if link.name in every and link.name not in made.defined]


def unconfigured_target_findings(context: DriftContext) -> list[Finding]:
    branch = context.target
    if branch is None:  # without the upgraded branch there is no build to configure
        return []
    every = defined_anywhere(branch)
    before: dict[str, set[tuple[str, str]] | None] | None = None
    missing: dict[tuple[str, int, str, str], list[Configuration]] = {}
    for configuration in configurations(branch, context.upstream_new):
        links = _unresolved(branch, configuration, every)
        if not links:
            continue
        if before is None:
            before = _before(context)
        old = before.get(configuration.backend)
        if old is None:
            continue  # the old build of this backend is not read: nothing to compare with
        for link in links:
            if (link.owner, link.name) not in old:
                missing.setdefault((link.path, link.line, link.owner, link.name), []).append(configuration)
    findings = []
    for (path, line, owner, name), chosen in sorted(missing.items()):
        backends = [configuration.backend or "(none: the default build)" for configuration in chosen]
        sites = [f"{path}:{line}", *dict.fromkeys(configuration.chosen_at for configuration in chosen)]
        findings.append(Finding(
            KIND, path, f"{owner} links {name}, which the build of backend {', '.join(backends)} does not define: "
            f"only {every[name]} does, in a directory that build does not add (CMake stops at configure)",
            line=line, backend=backend_of(context.owners.owners, path), related_path=every[name],
            details={"entry": name, "declaration": name, "owner": owner, "configurations": backends,
                     "defined_in": every[name], "sites": sites}))
    return findings


def _before(context: DriftContext) -> dict[str, set[tuple[str, str]] | None]:
    """Per backend, the (linking, linked) target pairs its configuration of the FlagTree branch left unresolved
    at the old tag (None: that configuration is not read)."""
    every = defined_anywhere(context.fork)
    out: dict[str, set[tuple[str, str]] | None] = {}
    for configuration in configurations(context.fork, context.upstream_old):
        links = _unresolved(context.fork, configuration, every)
        out[configuration.backend] = None if links is None else {(link.owner, link.name) for link in links}
    return out
