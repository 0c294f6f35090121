"""New trunk packages a backend's package mapping sends to a directory it lacks (issue 33, the 3.4.x -> 3.5.1 move).

FlagTree's shared setup helper gives setuptools a package_dir that installs every package setup.py finds under
python/ (find_packages) from the building backend's own third_party/<b>/python/ tree
(layout.generic_package_roots), except the ones its skip_package_dir leaves to trunk. A package upstream adds under python/triton/ is found by the upgraded
setup.py too; where the backend's tree has no directory for it, setuptools stops: `package-dir-missing`, an error.
"""
from __future__ import annotations

from posixpath import dirname

from sync.drift.context import DriftContext
from sync.facts.layout import TRUNK, generic_package_roots
from sync.facts.trees import FileTree
from sync.model import Finding

_PACKAGES = f"{TRUNK}/"


def packages(tree: FileTree) -> set[str]:
    """The packages under python/triton/ (directories with an __init__.py), as paths below it."""
    return {dirname(path)[len(_PACKAGES):] for path in tree.paths()
            if path.startswith(_PACKAGES) and path.endswith("/__init__.py") and dirname(path) != TRUNK}


def missing_package_findings(context: DriftContext) -> list[Finding]:
    # a setup script that lists its packages itself installs no package upstream adds: nothing is looked for
    roots = [root for root in generic_package_roots(context.fork) if root.backend in context.backends and root.discovered]
    if not roots:
        return []
    added = sorted(packages(context.upstream_new) - packages(context.upstream_old))
    if not added:
        return []
    tree = context.backend_files
    findings = []
    for mapped in roots:
        below = {path[len(mapped.root) + 1:] for path in tree.paths() if path.startswith(f"{mapped.root}/")}
        missing = [f"triton.{package.replace('/', '.')}" for package in added
                   if not any(path.startswith(f"{package}/") for path in below)]
        missing = [name for name in missing if not any(word in name for word in mapped.skipped)]
        if not missing:
            continue
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        findings.append(Finding(
            "package-dir-missing", mapped.root,
            f"setup installs every triton package from {mapped.root} ({mapped.via} gives package_dir), and trunk at "
            f"the new tag adds {len(missing)} package(s) it has no directory for: {shown} (will not build as is: "
            "setuptools stops on a package directory that does not exist)",
            backend=mapped.backend, related_path=f"{TRUNK}/{missing[0][len('triton.'):].replace('.', '/')}",
            details={"packages": missing, "via": mapped.via}))
    return findings
