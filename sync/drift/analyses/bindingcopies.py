"""A backend's own copy of the binding library that lacks a name trunk's Python now imports from it (issue 45,
class 2, the reverse direction; the 3.2 hint-manager line onto 3.5.1: 3.5's knobs.py imports getenv and getenv_bool
from `triton._C.libtriton`, which ascend builds from its own python/src/, and that copy registers neither).

A backend builds its own binding library where a source in the directory its build compiles instead of trunk's
python/src/ (layout.binding_source_dir) defines the module trunk's Python imports (`PYBIND11_MODULE(libtriton,
m)`): its build links that one, never trunk's. (enflame's copy of trunk under include/triton/ holds a main.cc too,
but its build takes trunk's python/src.) When trunk's Python at the new
tag imports a name from the library at module level (`from triton._C.libtriton import getenv`) that FlagTree's
trunk did not import before, and no C++ source of the backend's tree spells the name as a string literal (a pybind
`.def("getenv", ...)`, a CPython method table entry), the import fails in that backend's build whenever the
importing module loads: binding-missing-names, an error, one per backend. No claim where the backend's build
compiles no extension (a prebuilt library), loads its own copy of the importing module, installs the module's
package from its own python tree, or cannot import it (facts/importers)."""
from __future__ import annotations

import re

from sync.drift.analyses.overlayimports import imported_names
from sync.drift.context import DriftContext
from sync.facts.buildconfigs import prebuilt_extension_backends
from sync.facts.delta import backend_of
from sync.facts.filekinds import PYBIND_SOURCES
from sync.facts.importers import BINDINGS, importing_builds, installs_own_copy
from sync.facts.layout import binding_source_dir, third_party_backends
from sync.facts.trees import read_text
from sync.model import Finding

_MODULE = re.compile(rf"PYBIND11_MODULE\s*\(\s*{re.escape(BINDINGS.rpartition('.')[2])}\s*,")


def binding_copy_findings(context: DriftContext) -> list[Finding]:
    trunk_now = context.target if context.target is not None else context.upstream_new
    now = imported_names(trunk_now, {BINDINGS})[BINDINGS]
    before = imported_names(context.fork, {BINDINGS})[BINDINGS]
    added = {name: paths for name, paths in now.items() if name not in before}
    if not added:
        return []
    prebuilt = prebuilt_extension_backends(context.fork, context.upstream_old)
    tree = context.backend_files
    findings = []
    for backend in third_party_backends(context.fork):
        if context.filtered and backend not in context.backends:
            continue
        owned = f"{binding_source_dir(backend)}/"
        sources = {path: read_text(tree, path) or "" for path in tree.paths()
                   if path.startswith(owned) and path.endswith(PYBIND_SOURCES)}
        made = next(((path, text[:found.start()].count("\n") + 1) for path, text in sorted(sources.items())
                     if (found := _MODULE.search(text))), None)
        if made is None or backend in prebuilt:
            continue
        main, line = made
        missing: dict[str, str] = {}
        for name, importers in sorted(added.items()):
            if any(f'"{name}"' in text for text in sources.values()):
                continue  # registered there, or may be
            loaded = [path for path in importers if context.serving_file(backend, path) is None
                      and not installs_own_copy(context.fork, context.upstream_old, backend, path)
                      and backend in (importing_builds(context.fork, context.upstream_old, path) or {backend})]
            if loaded:
                missing[name] = loaded[0]
        if not missing:
            continue
        names = sorted(missing)
        shown = ", ".join(f"{name} ({missing[name]})" for name in names[:5]) + (" and more" if len(names) > 5 else "")
        findings.append(Finding(
            "binding-missing-names", main,
            f"backend {backend} builds its own {BINDINGS} here, and trunk's Python now imports {len(names)} name(s) "
            f"from it that this copy registers nowhere: {shown} (will not import as is: ImportError)",
            line=line, backend=backend_of(context.owners.owners, main), related_path=missing[names[0]],
            details={"module": BINDINGS, "names": names, "importers": sorted(set(missing.values())),
                     "declaration": names[0]}))
    return findings
