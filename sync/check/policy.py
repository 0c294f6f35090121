"""The seed's directory policy, checked on any tree laid out like FlagTree."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace
from fnmatch import fnmatch
from posixpath import basename
from typing import Collection

from sync.model.kinds import BY_CODE
from sync.model import Finding
from sync.facts.layout import (HOOK_NAMES, LEGACY_HOOK_MODULES, TRUNK, backend_names, is_under, package_init,
                               package_of, seed_policy, spec_files, spec_path_verdict, trunk_rel)
from sync.records.provenance import backend_files, load_manifest, manifest_path, records_base
from sync.git.merge import conflict_hunks
from sync.records.pin import PIN_FILE, parse_pin
from sync.records.suppressions import TRUNK_SUPPRESSIONS, parse_suppressions, suppressions_path
from sync.records.tomlfiles import TomlFileError
from sync.facts.trees import FileTree, read_text
from sync.facts.callsites import TrunkHooks, index_trunk_hooks
from sync.facts.astwalk import walk_levels
from sync.facts.parsing import Unparseable, parsed_ast
from sync.facts.pychunks import merge_levels, over_chunks
from sync.facts.pyfacts import names_backend, parse_module_facts
from sync.facts.roles import (DIRECT_EDIT, ENTRY, INIT_UNUSED, OVERLAY, PACKAGE_COPY, PROTECTED, PYTHON_ROLES, RENAMED_COPY,
                    ROOT_FILE, SETUP_COPY, SPEC_MODULE, TLE, UNREACHABLE, Classified, classified_files, contained_in)

def _finding(code: str, path: str, message: str, line: int | None = None, backend: str | None = None,
             related: str | None = None) -> Finding:
    """A policy finding; its kind, severity and fix hint come from the rule's catalogue entry."""
    return Finding(BY_CODE[code].id, path, message, line=line, backend=backend, related_path=related)


def _trunk_findings(hooks: TrunkHooks, marked: Collection[str] = ()) -> list[Finding]:
    findings = []
    policy = seed_policy()
    for path, facts in sorted(hooks.facts.items()):
        rel = trunk_rel(path) or path
        if facts.error and path in marked:
            continue  # the conflict markers are the problem: FT014 names their line
        if facts.error:
            findings.append(_finding("FT013", path, f"cannot parse: {facts.error}"))
            continue
        package = package_of(rel)
        if is_under(package, policy.no_specialization) and facts.hooks:
            findings.append(_finding("FT004", path, f"{policy.no_specialization} may not be specialized",
                                     facts.hooks[0].line))
            continue
        if basename(rel) in policy.protected_files:
            continue
        if rel in policy.direct_edit_files and facts.hooks:
            findings.append(_finding("FT012", path, f"{rel} uses FlagTree hooks", facts.hooks[0].line))
        legacy = [name for name in facts.imported_names
                  if name.level == 0 and name.module in LEGACY_HOOK_MODULES and name.name in HOOK_NAMES]
        if legacy:  # one finding per file: a legacy branch imports the hooks in dozens of functions
            names = ", ".join(dict.fromkeys(name.name for name in legacy))
            more = f" (and {len(legacy) - 1} more import(s) in this file)" if len(legacy) > 1 else ""
            findings.append(_finding("FT021", path, f"imports {names} from {legacy[0].module}{more}",
                                     legacy[0].line))
        is_init = rel.endswith("__init__.py")
        for site in facts.hooks:
            if site.kind == "spec_path":
                verdict = spec_path_verdict(package if is_init else "")
                if not is_init:
                    findings.append(_finding("FT001", path, "spec_path outside a package __init__.py", site.line))
                elif verdict == "forbidden":
                    shown = package or "python/triton itself"
                    findings.append(_finding("FT001", path, f"spec_path is not allowed in {shown}", site.line))
                elif verdict == "unlisted":
                    findings.append(_finding("FT002", path, f"{package} is not in the policy's spec_path list",
                                             site.line))
            elif site.kind == "spec" and is_init and site.scope == "<module>" \
                    and site.statement_index < facts.last_import_index:
                findings.append(_finding("FT008", path, f'spec("{site.name}") runs before the last import',
                                         site.line))
    for parent in sorted(hooks.hijacked):
        for child in sorted(hooks.hijacked):
            if child != parent and is_under(child, parent):
                findings.append(_finding(
                    "FT003", package_init(child),
                    f"both {parent or 'python/triton'} and its child {child} call spec_path",
                    related=package_init(parent)))
    return findings


def _backend_selection(tree: FileTree, hooks: TrunkHooks) -> list[Finding]:
    findings = []
    for path in tree.paths():
        rel = trunk_rel(path)
        if rel is None or not rel.endswith(".py") or rel.startswith("backends/") or \
                basename(rel) in seed_policy().protected_files:
            continue
        text = read_text(tree, path) or ""
        if "FLAGTREE_BACKEND" not in text:
            continue
        facts = hooks.facts.get(path) or parse_module_facts(path, text)
        for line, code in sorted([*facts.backend_selections, *_truth_tests(text)]):
            if _tests_for_no_backend(code):
                findings.append(replace(_finding("FT010", path, f"trunk tests whether a backend is installed: {code}",
                                                 line), action=_NO_BACKEND_REMEDY))
            else:
                findings.append(_finding("FT010", path, f"trunk selects a backend: {code}", line))
    return findings


# Comparing with "" selects no backend: it asks whether FlagTree runs with one at all, which the hooks answer.
_NO_BACKEND_REMEDY = ("drop the test: with no backend installed every hook is already a no-op (spec(...) returns "
                      "None, spec_func(name, default) returns default), so call the hook unconditionally and keep "
                      "what a backend does in its spec tree")


def _truthy_use(expr: ast.expr) -> bool:
    """FLAGTREE_BACKEND used for its truth value: alone, under `not`, in and/or, or in bool(...)."""
    if names_backend(expr):
        return True
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        return _truthy_use(expr.operand)
    if isinstance(expr, ast.BoolOp):
        return any(_truthy_use(value) for value in expr.values)
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "bool" \
        and len(expr.args) == 1 and names_backend(expr.args[0])


def _truth_tests(text: str) -> list[tuple[int, str]]:
    """Conditions (if, while, assert, x if c else y, comprehension ifs) that test whether FLAGTREE_BACKEND
    is set at all; comparisons are the module facts' backend selections already."""
    found = over_chunks(text, parsed_ast, lambda trees: _truth_tests_of(text, trees))  # a large text: by chunks
    return [] if isinstance(found, Unparseable) else found  # FT013 reports an unparseable file


def _truth_tests_of(text: str, trees: Iterator[ast.Module]) -> list[tuple[int, str]]:
    parts: list[list[list[tuple[int, str]]]] = []  # per chunk, per depth of the walk (ast.walk's order)
    for tree in trees:
        parts.append([[(condition.lineno, ast.get_source_segment(text, condition) or ast.unparse(condition))
                       for node in level
                       for condition in ([node.test] if isinstance(node, (ast.If, ast.While, ast.Assert, ast.IfExp))
                                         else node.ifs if isinstance(node, ast.comprehension) else [])
                       if _truthy_use(condition) and not _compares_backend(condition)]
                      for level in walk_levels(tree)])
        del tree
    return merge_levels(parts)


def _compares_backend(condition: ast.expr) -> bool:
    """A condition that also compares the backend is reported by that comparison (which names it)."""
    return any(isinstance(node, ast.Compare) and any(map(names_backend, (node.left, *node.comparators)))
               for node in ast.walk(condition))


def _tests_for_no_backend(code: str) -> bool:
    """FLAGTREE_BACKEND compared only with "" or None (==, !=, is, in a tuple of them), or tested for its
    truth value: no backend is named."""
    try:
        tree = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return False
    if _truthy_use(tree):
        return True
    if not isinstance(tree, ast.Compare):
        return False
    others = [operand for operand in (tree.left, *tree.comparators) if not names_backend(operand)]
    values = [element for operand in others
              for element in (operand.elts if isinstance(operand, (ast.Tuple, ast.List, ast.Set)) else [operand])]
    return bool(values) and all(isinstance(value, ast.Constant) and value.value in ("", None) for value in values)


_ROOT_REMEDY = {"knobs.py": "specialize knobs.py directly in trunk, as Triton does",
                "_internal_testing.py": "specialize _internal_testing.py directly in trunk, as Triton does"}


def _spec_file_findings(tree: FileTree, classified: Classified, marked: Collection[str] = ()) -> list[Finding]:
    spec_file, role = classified.file, classified.role
    path, backend, rel = spec_file.path, spec_file.backend, spec_file.rel
    trunk_path = spec_file.trunk_path or ""
    if role not in PYTHON_ROLES or role == ENTRY and rel != "__init__.py":
        return []
    if role == PROTECTED:
        return [_finding("FT011", path, f"backend ships its own {rel}", backend=backend)]
    if role == TLE:
        return [_finding("FT004", path, f"{seed_policy().no_specialization} may not be specialized", backend=backend)]
    text = read_text(tree, path) or ""
    facts = parse_module_facts(path, text)
    if facts.error:
        return [] if path in marked else [_finding("FT013", path, f"cannot parse: {facts.error}", backend=backend)]
    if role in (DIRECT_EDIT, ROOT_FILE):
        remedy = _ROOT_REMEDY.get(rel, f"put the changed functions in a spec-function module and call them from "
                                       f"{trunk_path} with spec/spec_func")
        return [replace(_finding("FT018", path, f"{rel} at the root of the spec tree replaces trunk {trunk_path} "
                                                f"whole: {classified.why}", backend=backend, related=trunk_path),
                        action=remedy)]
    if role == INIT_UNUSED:
        return [_finding("FT007", path, classified.why, backend=backend, related=trunk_path)]
    if role == UNREACHABLE:
        return [_finding("FT019", path, f"never imported: {classified.why}", backend=backend,
                         related=f"{TRUNK}/{classified.hidden_by}/__init__.py")]
    findings = []
    if role == OVERLAY:
        trunk_text = read_text(tree, trunk_path)
        if trunk_text is not None:
            if trunk_text == text:
                findings.append(_finding("FT005", path, f"identical to {trunk_path}", backend=backend,
                                         related=trunk_path))
            else:
                how = contained_in(text, trunk_text)
                if how is not None:
                    findings.append(_finding("FT006", path, f"{how} {trunk_path}: wholly contained in it",
                                             backend=backend, related=trunk_path))
    elif role == SPEC_MODULE:
        for line, code in facts.relative_imports:
            findings.append(_finding("FT009", path, f"relative import in a spec-function module: {code}",
                                     line, backend))
    return findings


def _conflict_markers(tree: FileTree, allowed: tuple[str, ...]) -> list[Finding]:
    """Committed merge conflicts anywhere in the tree (a release branch once shipped one in Python)."""
    findings = []
    for path in tree.paths():
        if any(fnmatch(path, pattern) for pattern in allowed):
            continue
        data = tree.read(path)
        if not data or b"<<<<<<<" not in data or b"\0" in data:
            continue
        hunks = conflict_hunks(data.decode("utf-8", errors="replace"))
        if hunks:
            lines = ", ".join(str(hunk.line) for hunk in hunks)
            findings.append(_finding("FT014", path, f"{len(hunks)} unresolved conflict(s) (marker line(s) {lines})",
                                     hunks[0].line))
    return findings


def _config_invalid(error: TomlFileError, backend: str | None = None) -> Finding:
    finding = _finding("FT017", error.where, error.problem, error.line, backend)
    return replace(finding, action=f"{finding.next_step}: {error.problem}")


def _config_files(tree: FileTree, backends: list[str]) -> list[Finding]:
    """The pin and each backend's suppressions.toml must read as drift and upgrade will read them."""
    findings = []
    pin = read_text(tree, PIN_FILE)
    if pin is not None:
        try:
            parse_pin(pin)
        except TomlFileError as error:
            findings.append(_config_invalid(error))
    for backend in backends:
        text = read_text(tree, suppressions_path(backend))
        if text is not None:
            try:
                parse_suppressions(text, suppressions_path(backend))
            except TomlFileError as error:
                findings.append(_config_invalid(error, backend))
    text = read_text(tree, TRUNK_SUPPRESSIONS)  # the reviews of findings of no backend
    if text is not None:
        try:
            parse_suppressions(text, TRUNK_SUPPRESSIONS)
        except TomlFileError as error:
            findings.append(_config_invalid(error))
    return findings


def _provenance(tree: FileTree, backends: list[str]) -> list[Finding]:
    findings = []
    for backend in backends:
        try:
            manifest = load_manifest(tree, backend)
        except TomlFileError as error:  # its entries cannot be trusted, so no FT015/FT016 either
            findings.append(_config_invalid(error, backend))
            continue
        if manifest is None:
            continue
        where = manifest_path(backend)
        for entry in manifest.values():
            if not tree.exists(entry.path) or not tree.exists(entry.trunk):
                gone = entry.path if not tree.exists(entry.path) else entry.trunk
                findings.append(_finding("FT015", where, f"lists {entry.path}, but {gone} does not exist",
                                         backend=backend))
        for spec_file in backend_files(tree, {backend}):  # every route drift merges from the record
            trunk = spec_file.trunk_path
            if trunk and tree.exists(trunk) and spec_file.path not in manifest and records_base(tree, spec_file):
                findings.append(_finding("FT016", spec_file.path, f"not in {where}", backend=backend,
                                         related=trunk))
    return findings


def unrecognized_layouts(tree: FileTree, hooks: TrunkHooks) -> list[Finding]:
    """Never analyse nothing in silence: hooks without any spec tree, Python files in a spec dir of no known layout."""
    findings = []
    if hooks.sites and not backend_names(tree):
        site = hooks.sites[0]
        findings.append(_finding("FT020", site.path, f"trunk calls {site.kind} ({len(hooks.sites)} hook call(s)) but "
                                 "no backend spec tree of a known layout exists", site.line))
    stray: dict[str, list[str]] = {}
    for spec_file in spec_files(tree):
        if spec_file.area == "other" and spec_file.rel.endswith(".py") and spec_file.rel != "__init__.py":
            stray.setdefault(spec_file.backend, []).append(spec_file.path)
    for backend, paths in sorted(stray.items()):
        findings.append(_finding("FT020", paths[0], f"{len(paths)} Python file(s) in a spec directory of no known "
                                 "layout (expected spec/triton/...)", backend=backend))
    return findings


def check_tree(tree: FileTree, backends: set[str] | None = None, allow_markers: tuple[str, ...] = ()) -> list[Finding]:
    hooks = index_trunk_hooks(tree)
    markers = _conflict_markers(tree, allow_markers)
    marked = {finding.path for finding in markers}  # their parse errors are the markers' doing
    findings = _trunk_findings(hooks, marked) + _backend_selection(tree, hooks) + markers
    findings += unrecognized_layouts(tree, hooks)
    names = sorted(backends) if backends else backend_names(tree)
    findings += _config_files(tree, names) + _provenance(tree, names)
    classified = classified_files(tree, hooks, backends)
    for item in classified:
        findings.extend(_spec_file_findings(tree, item, marked))
    return findings + _copy_findings(classified)


def _copy_findings(classified: list[Classified]) -> list[Finding]:
    """The routes around the seed's hooks: one finding per setup helper and mechanism (it names the files), one
    per copy under another name (each has its own trunk file to follow)."""
    findings = []
    routes: dict[tuple[str, str, str], list[Classified]] = {}
    for item in classified:
        if item.role in (SETUP_COPY, PACKAGE_COPY) or item.file.layout in (SETUP_COPY, PACKAGE_COPY):
            routes.setdefault((item.file.backend, item.file.via or "", item.file.layout), []).append(item)
        elif item.role == RENAMED_COPY:
            findings.append(_finding("FT024", item.file.path, f"{item.why}: a copy of it under another name",
                                     backend=item.file.backend, related=item.file.trunk_path))
    for (backend, via, layout), items in sorted(routes.items()):
        replaced = [item for item in items if item.role in (SETUP_COPY, PACKAGE_COPY)]
        shown = ", ".join(item.file.trunk_path or "" for item in replaced[:3]) + (" ..." if len(replaced) > 3 else "")
        if layout == SETUP_COPY:
            message = f"copies {len(items)} file(s) of {backend} over trunk at build time ({shown})"
        else:
            root = items[0].file.path[: len(items[0].file.path) - len(items[0].file.rel)].rstrip("/")
            message = (f"maps the triton package to {root}: {len(items)} file(s), {len(replaced)} of them in place of "
                       f"a trunk file ({shown})")
        findings.append(_finding("FT022" if layout == SETUP_COPY else "FT023", via, message, backend=backend,
                                 related=replaced[0].file.path if replaced else items[0].file.path))
    return findings
