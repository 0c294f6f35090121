"""What FlagTree's side of a committed conflict uses that the upgraded tree no longer has (issue 45).

The replay commits a conflicted file with markers: the upgraded (new upstream) side, the parent's, and the side of the
FlagTree commit being picked, which holds FlagTree's lines together with the old tag's lines around them. Taking that
side keeps those old lines too, so a name they use that the new tag lacks breaks the build (on a real backport, every
one of the twelve breaks sat in such a hunk). For each file of the upgraded branch with whole conflict blocks, this
reads FlagTree's side (a conflict nested in the upgraded side of a later one counts by its own FlagTree side) and
reports the names it uses that resolved on the FlagTree branch and resolve nowhere in the upgraded tree:

- an `#include` (C++) or `include` (TableGen) naming a file the FlagTree branch has and the upgraded tree lacks;
- a Python module an import on that side names (python/<module>.py, or beside the importing file) that the
  FlagTree branch has and the upgraded tree lacks, or a name imported from it that the module bound on the FlagTree
  branch and binds no longer (no star import or module `__getattr__` that could bind it);
- a Python name the side uses that the FlagTree branch's version of the file binds at module level and the upgraded
  file binds nowhere (its upgraded side, and the lines around the conflicts), nor the side itself;
- an attribute of a module the upgraded file imports (`language.tuple`) that module bound on the FlagTree branch and
  binds no longer;
- a C++ identifier that a declaration the file reaches on the FlagTree branch names (a header of its include
  closure, a TableGen record, a generated pass registration) and no file of the upgraded tree declares, the
  conflicted file itself not declaring it;
- a CMake target the side links, waits for or changes that a library of the FlagTree branch is, and that no CMake
  file of the upgraded tree defines (as a library, or as the first argument of any command).

A name the upgraded side of the same file uses too is left out: the question is which side to take, and that
name is the upgraded side's problem as much.

Every name is one the FlagTree side resolved; a name that was never declared in the tree (a local, MLIR's, the
system's) is never reported. The C++ check is by name, not by type: a warning, not an error.
"""
from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass
from posixpath import dirname
from typing import Iterable

from sync.drift.context import DriftContext
from sync.facts.cpp import names_by_line
from sync.facts.declindex import DeclarationIndex, declarations_of
from sync.facts.cmake import Argument, commands as cmake_commands
from sync.facts.filekinds import CPP_SUFFIXES, PY_SUFFIXES, TD_SUFFIXES, language_of, not_built
from sync.facts.generated import pass_registrations
from sync.facts.includes import IncludeGraph, spelled_includes_of
from sync.facts.layout import third_party_owner
from sync.facts.names import significant_name
from sync.facts.parsing import Unparseable, guarded, python_ast
from sync.facts.pymodules import TRUNK_PACKAGE, absolute, module_files, package_of
from sync.facts.trees import FileTree, read_text
from sync.git import GitTree, holds_conflict
from sync.git.merge import conflict_layers
from sync.model import Finding

KIND = "conflict-side-unresolved"
_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__path__", "__package__",
                                        "__builtins__", "__loader__"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_READ = CPP_SUFFIXES + TD_SUFFIXES + PY_SUFFIXES
_FEW = 64  # names a byte search per name finds faster than one scan for every identifier


@dataclass(frozen=True)
class Sides:
    """A committed conflicted text read two ways, line numbers kept (other lines blank): `ours` takes every
    conflict's upgraded side, `theirs` the FlagTree side of every conflict, a nested one's too (the FlagTree side of
    an earlier pick that a later pick's conflict holds in its upgraded side); `lines`: those FlagTree sides' lines."""
    ours: str
    theirs: str
    lines: frozenset[int]


def sides(text: str) -> Sides | None:
    """The two readings of a text with committed conflict blocks; None without a whole block."""
    ours: list[str] = []
    theirs: list[str] = []
    lines: set[int] = set()
    opened = closed = 0
    for number, line, layers in conflict_layers(text):
        blank = "\n" if line.endswith("\n") else ""
        if layers is None:
            opened += line.startswith("<<<<<<<")
            closed += line.startswith(">>>>>>>")
            ours.append(blank)
            theirs.append(blank)
            continue
        ours.append(line if all(layer == "ours" for layer in layers) else blank)
        flagtree = bool(layers) and layers[-1] == "theirs"  # blocks open only in an upgraded side
        theirs.append(line if flagtree or not layers else blank)
        if flagtree:
            lines.add(number)
    if not closed or opened != closed:
        return None
    return Sides("".join(ours), "".join(theirs), frozenset(lines))


@dataclass(frozen=True)
class Missing:
    name: str  # as the side spells it (a path for an include or module)
    line: int  # on the upgraded branch
    what: str  # what it was on the FlagTree branch, and that the upgraded tree lacks it
    form: str = "name"  # include | module (a dotted module, or module.name imported from it) | attribute | name


# --- where names resolve ---------------------------------------------------------------------------------------

def _module_file(tree: FileTree, module: str, importer: str) -> str | None:
    """The file a dotted module is in the tree: trunk's python/<module> or a module beside the importing file."""
    stem = module.replace(".", "/")
    here = dirname(importer)
    candidates = [*module_files(module)] + ([f"{here}/{stem}.py", f"{here}/{stem}/__init__.py"] if here else [])
    return next((path for path in candidates if tree.exists(path)), None)


def _absolute(module: str, importer: str) -> str | None:
    """An import's module made absolute; None for a relative import outside trunk's package directory."""
    if not module.startswith("."):
        return module
    return absolute(module, package_of(importer)) if importer.startswith(TRUNK_PACKAGE) else None


def _module_names(tree: FileTree, path: str) -> frozenset[str] | None:
    """The names a module binds at its top (a conflicted module: either side's); None when it cannot be told (no
    parse, a star import, a module __getattr__)."""
    text = read_text(tree, path)
    if text is None:
        return None
    read = sides(text) if "<<<<<<<" in text else None
    texts = [read.ours, read.theirs] if read is not None else [text]
    names: set[str] = set()
    for each in texts:
        decls = declarations_of(path, each)
        if not decls and each.strip():
            return None  # no parse, or nothing declared: nothing to stand on
        names |= {decl.name for decl in decls if not decl.scope}
    if "*" in names or "__getattr__" in names:
        return None
    if path.endswith("/__init__.py"):  # a package binds its submodules once imported: count those it has
        package = path[:-len("__init__.py")]
        names |= {rest.split("/", 1)[0].removesuffix(".py") for other in tree.paths()
                  if other.startswith(package) and (rest := other[len(package):]).endswith(".py")}
    return frozenset(names)


def _binds(tree: FileTree, path: str | None, name: str) -> bool | None:
    if path is None:
        return None
    names = _module_names(tree, path)
    return None if names is None else name in names


# --- Python ----------------------------------------------------------------------------------------------------

def _parsed(text: str) -> ast.Module | None:
    tree = guarded(lambda: python_ast(text))
    return None if isinstance(tree, Unparseable) else tree


def _bound(nodes: Iterable[ast.AST]) -> set[str]:
    """Every name the nodes bind, wherever they stand (assignments, parameters, imports, defs, handlers)."""
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, ast.alias):
            found.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            found.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            found.update(node.names)
        elif isinstance(node, ast.MatchAs) and node.name:
            found.add(node.name)
    return found


def _on(node: ast.AST, lines: frozenset[int]) -> bool:
    return getattr(node, "lineno", 0) in lines


def _imported_modules(module: ast.Module, path: str) -> dict[str, str]:
    """Name -> the absolute dotted target a top-level import of the file binds it to (`from .. import language` in
    triton.compiler: language -> triton.language)."""
    bound: dict[str, str] = {}
    for node in module.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                bound[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            for alias in node.names:
                target = _absolute(f"{base}.{alias.name}" if node.module else f"{base}{alias.name}", path)
                if target is not None and alias.name != "*":
                    bound[alias.asname or alias.name] = target
    return bound


def python_missing(context: DriftContext, path: str, read: Sides) -> list[Missing]:
    theirs, ours = _parsed(read.theirs), _parsed(read.ours)
    if theirs is None or ours is None:
        return []
    target = context.branch
    found: list[Missing] = []
    side = sorted((node for node in ast.walk(theirs) if _on(node, read.lines)),
                  key=lambda node: (getattr(node, "lineno", 0), getattr(node, "col_offset", 0)))
    for node in side:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += _import_missing(context, path, node)
    ours_nodes = list(ast.walk(ours))
    bound_here = _bound(ours_nodes) | _bound(side) | _BUILTINS
    star = any(isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)
               for node in ours_nodes)
    fork_text = read_text(context.fork, path)
    fork_top = {decl.name: decl for decl in declarations_of(path, fork_text or "") if not decl.scope}
    seen: set[str] = set()
    if not star:
        for node in side:
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in bound_here \
                    and node.id in fork_top and node.id not in seen:
                seen.add(node.id)
                decl = fork_top[node.id]
                how = f"`{decl.target}`" if decl.kind == "import" else f"its {decl.kind}"
                found.append(Missing(node.id, node.lineno, f"bound by {how} at line {decl.line} of the FlagTree "
                                     "branch's file; nothing in the upgraded file binds it"))
    modules = _imported_modules(ours, path)
    for node in side:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            module = modules[node.value.id]
            spelled = f"{node.value.id}.{node.attr}"
            if spelled in seen:
                continue
            old_file = _module_file(context.fork, module, path)
            new_file = _module_file(target, module, path)
            if old_file is None or new_file is None or _owned_copy(context, path, new_file):
                continue
            if _binds(context.fork, old_file, node.attr) and _binds(target, new_file, node.attr) is False:
                seen.add(spelled)
                found.append(Missing(spelled, node.lineno, f"module {module} ({new_file}) bound {node.attr} on the "
                                     "FlagTree branch and binds it no longer", "attribute"))
    return found


def _owned_copy(context: DriftContext, path: str, module_file: str) -> bool:
    """A backend's file whose build puts the backend's own copy of the module in place of trunk's."""
    return third_party_owner(path) is not None and context.own_copy(path, module_file[len(TRUNK_PACKAGE):]
                                                                    if module_file.startswith(TRUNK_PACKAGE)
                                                                    else module_file)


def _import_missing(context: DriftContext, path: str, node: ast.Import | ast.ImportFrom) -> list[Missing]:
    target = context.branch
    asked: list[tuple[str, str | None]]
    if isinstance(node, ast.Import):
        asked = [(alias.name, None) for alias in node.names]
    else:
        dots = "." * node.level
        if node.module is None:  # `from . import x`: x a submodule (a name of the package is not asked about)
            asked = [(module, None) for alias in node.names
                     for module in [_absolute(dots + alias.name, path)] if module is not None]
        else:
            base = _absolute(dots + node.module, path)
            asked = [(base, alias.name) for alias in node.names] if base else []
    found: list[Missing] = []
    for module, name in asked:
        old_file = _module_file(context.fork, module, path)
        if old_file is None:
            continue  # not a module of the tree (the standard library, a package): nothing known
        new_file = _module_file(target, module, path)
        if _owned_copy(context, path, old_file):
            continue
        if new_file is None:
            found.append(Missing(module, node.lineno, f"module {module} is {old_file} on the FlagTree branch; the "
                                 "upgraded tree has no such module", "module"))
        elif name is not None and name != "*" and _binds(context.fork, old_file, name) \
                and _binds(target, new_file, name) is False:
            found.append(Missing(f"{module}.{name}", node.lineno, f"{old_file} bound {name} on the FlagTree branch; "
                                 f"{new_file} binds it no longer", "module"))
    return found


# --- includes --------------------------------------------------------------------------------------------------

def include_missing(context: DriftContext, path: str, read: Sides, old: IncludeGraph,
                    new: IncludeGraph) -> list[Missing]:
    spelled = [(line, name) for line, name in spelled_includes_of(path, read.theirs) if line in read.lines]
    found: list[Missing] = []
    for line, name in spelled:
        before = old.resolve(path, name)
        if before and not new.resolve(path, name):
            found.append(Missing(name, line, f"the FlagTree branch has {before[0]}; no file of the upgraded tree "
                                 "is what it names", "include"))
    return found


# --- C++ names -------------------------------------------------------------------------------------------------

def cpp_candidates(path: str, read: Sides) -> dict[str, int]:
    """Significant identifiers on the FlagTree side's lines that the file itself (either side) does not declare."""
    by_line = names_by_line(read.theirs)
    own = {decl.name for text in (read.theirs, read.ours) for decl in declarations_of(path, text)}
    found: dict[str, int] = {}
    for line in sorted(read.lines):
        for name in sorted(by_line.get(line, ())):
            if significant_name(name) and name not in own:
                found.setdefault(name, line)
    return found


def declared(tree: GitTree, names: set[str], within: set[str] | None = None) -> dict[str, list[str]]:
    """Where files of the tree declare the names (C++ declarations, TableGen records and their accessors, pass
    registrations TableGen generates, placed at the header that includes them): name -> paths. within: only these
    C++ files are read (TableGen files always); None: every C++ file that spells one of the names."""
    index = DeclarationIndex.of(tree)
    found: dict[str, list[str]] = {}
    for decl in pass_registrations(tree):
        if decl.name in names:
            found.setdefault(decl.name, []).append(decl.target)
    paths = index.paths(suffixes=TD_SUFFIXES + (CPP_SUFFIXES if within is None else ()))
    if within is not None:
        paths = sorted({*paths, *(path for path in within if path.endswith(CPP_SUFFIXES) and tree.exists(path))})
    # a few names: a byte search first, so the files that spell none are neither decoded nor kept as text
    needles = [name.encode() for name in names] if len(names) <= _FEW else []
    for path in paths:
        if not path.endswith(TD_SUFFIXES):
            if needles and not any(needle in (tree.read(path) or b"") for needle in needles):
                continue
            if not names & set(_IDENTIFIER.findall(index.text(path))):
                continue
        for decl in index.file(path):
            for name in (decl.name, *(decl.members if path.endswith(TD_SUFFIXES) else ())):
                if name in names and path not in found.get(name, ()):
                    found.setdefault(name, []).append(path)
    return found


def cpp_missing(context: DriftContext, candidates: dict[str, dict[str, int]]) -> dict[str, list[Missing]]:
    """Per conflicted C++ file, the candidates a declaration the file reaches on the FlagTree branch names (through
    its includes, or a TableGen record: what TableGen generates is included under another name), that no
    file of the upgraded tree declares."""
    graph = IncludeGraph.of(context.fork)
    reached = {path: graph.closure(path) for path in candidates if context.fork.exists(path)}
    asked = {name for path in reached for name in candidates[path]}
    # what the files reach, not the whole tree: a first run of the 3.7 move parsed 4,215 files for this (6.8 s)
    before = declared(context.fork, asked, set().union(*reached.values())) if asked else {}
    # a name still declared where it was resolves; the whole upgraded tree is asked only of the others
    after = declared(context.branch, set(before), {place for places in before.values() for place in places})
    if set(before) - set(after):
        after.update(declared(context.branch, set(before) - set(after)))
    found: dict[str, list[Missing]] = {}
    for path, names in candidates.items():
        if path not in reached:
            continue
        for name, line in names.items():
            places = [place for place in before.get(name, ()) if place in reached[path] or place.endswith(TD_SUFFIXES)]
            if places and name not in after:
                found.setdefault(path, []).append(Missing(name, line, f"declared in {places[0]} on the FlagTree "
                                                          "branch; no file of the upgraded tree declares it"))
    return found


# --- CMake targets ---------------------------------------------------------------------------------------------

_TARGET_COMMANDS = ("target_link_libraries", "add_dependencies")  # every argument after the first names a target
_DEPENDING = frozenset({"DEPENDS", "LINK_LIBS", "PUBLIC", "PRIVATE", "INTERFACE"})  # a library's target sections
_SECTIONS = _DEPENDING | {"LINK_COMPONENTS", "ADDITIONAL_HEADER_DIRS"}
_TARGET_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]*")


def cmake_candidates(read: Sides) -> dict[str, int]:
    """Targets the FlagTree side's commands name: what target_link_libraries / add_dependencies link or wait for
    (and the target they change), and a library's DEPENDS / LINK_LIBS / PUBLIC / PRIVATE / INTERFACE words."""
    found: dict[str, int] = {}
    for command in cmake_commands(read.theirs):
        named: list[Argument] = []
        if command.name in _TARGET_COMMANDS or command.name.startswith("target_"):
            named = list(command.args if command.name in _TARGET_COMMANDS else command.args[:1])
        elif command.name.startswith("add_") and command.name.endswith("library"):
            section = None
            for argument in command.args[1:]:
                if argument.text.upper() in _SECTIONS:
                    section = argument.text.upper()
                elif section in _DEPENDING:
                    named.append(argument)
        else:
            continue
        for argument in named:
            if argument.line in read.lines and not argument.quoted and _TARGET_WORD.fullmatch(argument.text) \
                    and argument.text.upper() not in _DEPENDING:
                found.setdefault(argument.text, argument.line)
    return found


def cmake_targets(tree: GitTree, names: set[str], loose: bool) -> dict[str, str]:
    """Which of the names a CMake file of the tree defines as a library (declaration index): name -> path; loose:
    also any command's first argument (an executable, a custom or TableGen target, a variable: anything that could
    be the name)."""
    index = DeclarationIndex.of(tree)
    found: dict[str, str] = {}
    for path in tree.paths():
        if language_of(path) != "cmake" or not names & set(_TARGET_WORD.findall(index.text(path))):
            continue
        for decl in index.file(path):
            if decl.kind == "cmake-target" and decl.name in names:
                found.setdefault(decl.name, path)
        if loose:
            for command in cmake_commands(index.text(path)):
                if command.args and command.args[0].text in names:
                    found.setdefault(command.args[0].text, path)
    return found


def cmake_missing(context: DriftContext, candidates: dict[str, dict[str, int]]) -> dict[str, list[Missing]]:
    asked = {name for names in candidates.values() for name in names}
    before = cmake_targets(context.fork, asked, loose=False) if asked else {}
    after = cmake_targets(context.branch, set(before), loose=True) if before else {}
    return {path: [Missing(name, line, f"a library {before[name]} defines on the FlagTree branch; no CMake file "
                           "of the upgraded tree defines it") for name, line in names.items()
                   if name in before and name not in after] for path, names in candidates.items()}


# --- the join --------------------------------------------------------------------------------------------------

def _restored(context: DriftContext, path: str) -> bool:
    """Whether the FlagTree branch holds the file exactly as the old tag has it."""
    blob = context.fork.blob_id(path)
    return blob is not None and blob == context.upstream_old.blob_id(path)


def restored_conflict_findings(context: DriftContext) -> list[Finding]:
    """conflict-take-upstream (info): a file of the upgraded branch with committed conflicts that the FlagTree
    branch holds exactly as the old tag has it. Its commits changed it and changed it back, so nothing of
    FlagTree's is left to keep: upstream's new file resolves every conflict in it."""
    target = context.target
    if target is None or context.range is None:
        return []
    onto = context.range.onto.ref
    found = []
    for path in sorted(target.paths()):
        if target.blob_id(path) == context.upstream_new.blob_id(path) or not _restored(context, path):
            continue
        data = target.read(path) or b""
        if holds_conflict(data):
            found.append(Finding(
                "conflict-take-upstream", path,
                f"the FlagTree branch holds {path} exactly as the old tag has it (its commits changed it and changed "
                f"it back), so its conflicts keep nothing of FlagTree's: upstream's file at {onto} resolves them",
                f"git checkout {onto} -- {path}", related_path=path))
    return found


def conflicted_files(context: DriftContext) -> dict[str, Sides]:
    """The upgraded branch's built C++, TableGen and Python files holding whole committed conflict blocks, less
    those the FlagTree branch holds exactly as the old tag has them: their conflicts come from commits that changed
    the file and then changed it back (or an upstream release's cherry-pick a merge brought in and a later commit
    undid), and upstream's new file is the whole answer (proton's HsaApi.h on the SharedMemory line and on the 3.2
    hint-manager line onto 3.5.1)."""
    target, new = context.target, context.upstream_new
    found: dict[str, Sides] = {}
    if target is None:
        return found
    for path in target.paths():
        if not (path.endswith(_READ) or language_of(path) == "cmake") or not_built(path) \
                or target.blob_id(path) == new.blob_id(path):
            continue
        if _restored(context, path):
            continue  # FlagTree's branch holds the old tag's file: its side keeps nothing of FlagTree's
        text = read_text(target, path)
        if text and "<<<<<<<" in text:
            read = sides(text)
            if read is not None:
                found[path] = read
    return found


def conflict_side_findings(context: DriftContext) -> list[Finding]:
    files = conflicted_files(context)
    if not files:
        return []
    missing: dict[str, list[Missing]] = {}
    old, new = IncludeGraph.of(context.fork), IncludeGraph.of(context.branch)
    candidates: dict[str, dict[str, int]] = {}
    targets: dict[str, dict[str, int]] = {}
    for path, read in files.items():
        if language_of(path) == "cmake":
            targets[path] = cmake_candidates(read)
            missing[path] = []
            continue
        missing[path] = [*include_missing(context, path, read, old, new)]
        if path.endswith(PY_SUFFIXES):
            missing[path] += python_missing(context, path, read)
        elif path.endswith(CPP_SUFFIXES):
            candidates[path] = cpp_candidates(path, read)
    for path, found in [*cpp_missing(context, candidates).items(), *cmake_missing(context, targets).items()]:
        missing[path] += found
    findings = []
    for path, found in sorted(missing.items()):
        read = files[path]
        kept = [item for item in _distinct(found) if not _spells(path, read.ours, item)]  # see the module's note
        if kept:
            rows = read.theirs.splitlines()
            lines = [line for line in sorted(read.lines) if line <= len(rows)
                     and any(_spells(path, rows[line - 1], item) for item in kept)]
            findings.append(_finding(path, kept, lines))
    return findings


def _spells(path: str, text: str, item: Missing) -> bool:
    """Whether the text uses the name as the FlagTree side did: includes the file, names the module's last part, the
    attribute through its receiver (`language.tuple`: `tuple` alone a builtin may spell), or the identifier."""
    if item.form == "include":
        return any(name == item.name for _, name in spelled_includes_of(path, text))
    if item.form == "attribute":
        return re.search(rf"(?<![\w.]){re.escape(item.name)}\b", text) is not None
    last = item.name.rsplit(".", 1)[-1] if item.form == "module" else item.name
    return last in _IDENTIFIER.findall(text)


def _distinct(found: list[Missing]) -> list[Missing]:
    """Each name once, at its first line."""
    first: dict[str, Missing] = {}
    for item in sorted(found, key=lambda item: (item.line, item.name)):
        first.setdefault(item.name, item)
    return list(first.values())


def _finding(path: str, found: list[Missing], lines: list[int]) -> Finding:
    shown = ", ".join(f"{item.name} (line {item.line})" for item in found[:8])
    more = f" and {len(found) - 8} more" if len(found) > 8 else ""
    return Finding(KIND, path, f"FlagTree's side of the conflict uses {len(found)} name(s) that resolved on the "
                   f"FlagTree branch and that the upgraded tree does not have: {shown}{more} (taking that side as it "
                   "is will not build or import)", line=found[0].line, backend=third_party_owner(path),
                   details={"names": [{"name": item.name, "line": item.line, "why": item.what} for item in found],
                            "sites": [f"{path}:{line}" for line in lines]})
