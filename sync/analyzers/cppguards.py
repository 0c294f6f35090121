"""C++: FLAGTREE_SPEC_* guards in trunk, and whether the trunk default they guard changed upstream."""
from __future__ import annotations

import difflib

from ..model import Finding
from ..trees import read_text
from .context import DriftContext
from .cpp import CppFunction, backend_macros, functions, functions_in, guard_regions, header_path, mentions_spec_macro

CPP_SUFFIXES = (".h", ".hpp", ".hh", ".cpp", ".cc", ".cxx", ".inc")


def _guarded_files(context: DriftContext) -> dict[str, str]:
    """Trunk C++ files of the fork that mention a FLAGTREE_SPEC_* macro (one read of each C++ blob)."""
    found = {}
    for path in context.fork.paths():
        if path.startswith("third_party/") or not path.endswith(CPP_SUFFIXES):
            continue
        text = read_text(context.fork, path)
        if text and mentions_spec_macro(text):
            found[path] = text
    return found


def _by_name(text: str | None) -> dict[str, CppFunction]:
    return {function.name: function for function in functions(text or "")}


def guard_findings(context: DriftContext) -> list[Finding]:
    files = _guarded_files(context)
    regions = {path: guard_regions(text) for path, text in files.items()}
    findings: list[Finding] = []
    for backend in context.backends:
        header = header_path(backend)
        for macro, line in sorted(backend_macros(context.fork, backend).items()):
            uses = [(path, region) for path, found in regions.items() for region in found if region.macro == macro]
            if not uses:
                findings.append(Finding("guard-unused", header, f"{macro} guards no trunk code",
                                        "drop the macro or restore the trunk guard", line, backend))
            for path, region in uses:
                findings.extend(_region_findings(context, backend, header, macro, path, region, files[path]))
    return findings


def _region_findings(context: DriftContext, backend: str, header: str, macro: str, path: str, region,
                     fork_text: str) -> list[Finding]:
    where = f"{path}:{region.start}"

    def finding(kind: str, message: str, action: str, diff: str | None = None) -> Finding:
        return Finding(kind, header, message, action, None, backend, related_path=path, diff=diff,
                       details={"macro": macro, "guard": where, "directive": region.directive})

    new_path = context.new_path(path)
    if new_path is None:
        return [finding("guard-default-removed", f"{macro}: {path} was deleted upstream",
                        "find the new home of the guarded code and guard it there")]
    out = []
    if context.target is not None:
        target_text = read_text(context.target, new_path) or ""
        if not any(r.macro == macro for r in guard_regions(target_text)):
            out.append(finding("guard-lost", f"{macro}: the #{region.directive} guard is gone from "
                               f"{new_path} on the upgraded tree", "re-add the guard around the trunk default"))
    guarded = functions_in(region, functions(fork_text))
    old_functions = _by_name(read_text(context.upstream_old, path))
    new_functions = _by_name(read_text(context.upstream_new, new_path))
    for function in guarded:
        old, new = old_functions.get(function.name), new_functions.get(function.name)
        if old is None:
            continue  # FlagTree's own code inside the guard: nothing upstream to compare
        if new is None:
            out.append(finding("guard-default-removed", f"{macro}: guarded trunk default "
                               f"{function.name} no longer exists in {new_path}",
                               "re-target the backend replacement at the code that replaced it"))
        elif old.normalized != new.normalized:
            diff = "".join(difflib.unified_diff(old.text.splitlines(keepends=True), new.text.splitlines(keepends=True),
                                                f"a/{path}", f"b/{new_path}"))
            out.append(finding("guard-default-changed", f"{macro}: guarded trunk default "
                               f"{function.name} ({where}) changed upstream",
                               "port the upstream change into the backend's replacement", diff=diff))
    return out
