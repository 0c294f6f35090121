"""Overlays that lack a name trunk now imports from them (issue 33): a Python overlay, or a file a setup helper
copies over trunk's, loads in place of a trunk module. When trunk's modules at the new tag import a name from
that module at module level which FlagTree's trunk did not import from it before, and the overlay binds the name
nowhere at module level, importing trunk fails on that backend (ImportError): `overlay-missing-names`, an error.

No claim where the overlay could provide the name in a way not read here: `from x import *` or a module-level
`__getattr__`, or a text that does not parse. An importing trunk file the same backend replaces too does not
load there, so its imports do not count.
"""
from __future__ import annotations

from sync.drift.context import DriftContext
from sync.facts.declindex import Decl, declarations_of
from sync.facts.layout import TRUNK
from sync.facts.pyblobs import parses
from sync.facts.roles import OVERLAY, SETUP_COPY, Classified, shadows_trunk
from sync.facts.trees import FileTree, read_text
from sync.git import holds_conflict, split_sides
from sync.model import Finding

_LOADED_IN_TRUNKS_PLACE = (OVERLAY, SETUP_COPY)
_UNKNOWN = None  # bound_names: the module may bind any name


def module_name(path: str) -> str | None:
    """`triton.language.core` for python/triton/language/core.py (a package's __init__.py: the package)."""
    if not path.startswith(f"{TRUNK}/") or not path.endswith(".py"):
        return None
    parts = path[len("python/"):-len(".py")].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: str, decl: Decl) -> tuple[str, str]:
    """(module, name) of a `from module import name` declaration of path, relative modules resolved."""
    relative = decl.target.lstrip(".")
    level = len(decl.target) - len(relative)
    module, _, name = relative.rpartition(".")
    if not level:
        return module, name
    package = module_name(path) or ""
    if not path.endswith("/__init__.py"):
        package = package.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return (f"{package}.{module}" if module else package), name


def imported_names(tree: FileTree, modules: set[str]) -> dict[str, dict[str, list[str]]]:
    """Module -> name -> the trunk files that import the name from that module at module level (`from module
    import name`, relative forms too), for the modules asked about: from the declaration index, reading only
    the files that could. A conflicted file of the upgraded branch is read on its upgraded side, the lines
    outside its conflicts included (the 3.2 hint-manager line onto 3.5.1: compiler/__init__.py's conflict hid
    its new import of get_cache_key from ascend's overlay of compiler.py)."""
    leaves = {module.rpartition(".")[2] for module in modules}
    found: dict[str, dict[str, list[str]]] = {module: {} for module in modules}
    for path in sorted(tree.paths()):
        if not path.startswith(f"{TRUNK}/") or not path.endswith(".py"):
            continue
        text = read_text(tree, path) or ""
        if "import" not in text or not any(leaf in text for leaf in leaves):
            continue  # cheap: an import of a module names its last part
        if holds_conflict(text.encode("utf-8", errors="replace")):
            text = split_sides(text)[1]  # the imports of upstream's side (FlagTree's lines are the fork's own reading)
        for decl in declarations_of(path, text):
            if decl.kind == "import" and "from" in decl.flags and not decl.scope:
                module, name = _imported(path, decl)
                if module in found and name != "*":
                    found[module].setdefault(name, []).append(path)
    return found


def bound_names(text: str) -> set[str] | None:
    """Names a module binds when imported (the index's module-level declarations); None when it may bind any
    (a star import, a module-level __getattr__, a text that does not parse)."""
    if not parses(text):
        return _UNKNOWN
    names = {decl.name for decl in declarations_of("module.py", text) if not decl.scope}
    return _UNKNOWN if "*" in names or "__getattr__" in names else names


def missing_name_findings(context: DriftContext) -> list[Finding]:
    loaded = [(classified, module) for classified in context.classified
              if classified.role in _LOADED_IN_TRUNKS_PLACE and classified.file.is_python
              for module in [module_name(classified.file.trunk_path or "")] if module is not None]
    if not loaded:
        return []
    modules = {module for _, module in loaded}
    trunk_now = context.target if context.target is not None else context.upstream_new
    now, before = imported_names(trunk_now, modules), imported_names(context.fork, modules)
    # A trunk file the same backend also replaces does not load there: its imports are not the backend's.
    replaced = {(classified.file.backend, classified.file.trunk_path) for classified in context.classified
                if shadows_trunk(classified)}
    findings = []
    for classified, module in loaded:
        backend = classified.file.backend
        new_imports = {name: importers[0] for name, paths in now[module].items() if name not in before[module]
                       for importers in [[path for path in paths if (backend, path) not in replaced]] if importers}
        finding = _missing(context, classified, module, new_imports) if new_imports else None
        if finding is not None:
            findings.append(finding)
    return findings


def _missing(context: DriftContext, classified: Classified, module: str, new_imports: dict[str, str]) -> Finding | None:
    spec_file = classified.file
    text = read_text(context.backend_files, spec_file.path)
    bound = bound_names(text) if text is not None else _UNKNOWN
    if bound is _UNKNOWN:
        return None
    missing = {name: path for name, path in new_imports.items() if name not in bound}
    if not missing:
        return None
    names = sorted(missing)
    shown = ", ".join(f"{name} ({missing[name]})" for name in names[:5]) + (" and more" if len(names) > 5 else "")
    return Finding(
        "overlay-missing-names", spec_file.path,
        f"loads in place of {spec_file.trunk_path}, and trunk now imports {len(names)} name(s) from {module} that "
        f"it does not define: {shown} (will not import as is: ImportError)",
        "merge upstream's change into the overlay, or define the names", backend=spec_file.backend,
        related_path=missing[names[0]], details={"module": module, "names": names,
                                                  "importers": sorted(set(missing.values()))})
