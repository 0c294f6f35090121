"""Python attributes of trunk classes whose name left the whole tree (issue 45, class 6): the Python side of
member-removed. On the 3.2 -> 3.3 move ascend's overlay of runtime/jit.py reads `backend.compute_spec_key`, a
method of trunk's BaseBackend that #5512 removed with every other spelling of the name.

A receiver's type is not known in Python, so the rule asks for what needs none. FlagTree's added lines of a shipped
module read `x.m` (any receiver but a module the file imports: `struct.unpack` is the struct module's), and
- upstream's trunk declared m as a member of a class at the old tag (a def, or a name its body binds);
- the new tag spells m nowhere in code (Python, C++, TableGen): no trunk object has it, a binding neither;
- nothing the reading file's process can load binds m on the upgraded branch (trunk's files, and those of the
  file's own backend: a backend's Python runs with no other backend's) on a class or an object (a def or a name
  in a class body, `obj.m = ...`), nor registers it from C++ (a string "m" in a C or C++ file, as pybind11's
  `.def("m", ...)`): a class or binding of FlagTree's own may still provide it;
- the upgraded branch still reads `.m` in the file outside its conflict blocks (a read in one is the conflict's,
  an error already, and conflict-side-unresolved names the names FlagTree's side lacks).
A file that does not parse (committed conflict markers) binds m where an indented line defines or assigns it.
The line raises AttributeError when it runs: kind attribute-removed, an error, one finding per name and backend,
every site on the upgraded branch, with the upstream commit that dropped the declaration.
"""
from __future__ import annotations

import ast
import re

from sync.drift.analyses.accessors import spelled_in
from sync.drift.context import DriftContext
from sync.facts.declindex import PY_SUFFIXES, DeclarationIndex
from sync.facts.delta import backend_of, fork_lines_where
from sync.facts.filekinds import CPP_CODE, is_shipped_python
from sync.facts.layout import THIRD_PARTY, TRUNK, backend_root
from sync.facts.parsing import ast_or_none
from sync.facts.pyblobs import Extractor, python_fact
from sync.facts.trees import FileTree, read_text
from sync.facts.upstreamlog import commit_details, removing_commits
from sync.git import conflict_sections
from sync.model import Finding

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SHIPPED = (f"{TRUNK}/", f"{THIRD_PARTY}/")  # where upstream's installed Python lives (not its tests)


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _attribute_items(nodes: list[ast.AST]) -> list[tuple]:
    items: list[tuple] = []
    for node in nodes:
        if isinstance(node, ast.Attribute):
            if isinstance(node.ctx, ast.Load) and not node.attr.startswith("__"):  # dunders are Python's own
                root = _root(node.value)
                if not isinstance(root, ast.Constant):
                    items.append(("read", node.attr, node.lineno, root.id if isinstance(root, ast.Name) else ""))
        elif isinstance(node, ast.Import):
            items += [("import", alias.asname or alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            items += [("import", alias.asname or alias.name) for alias in node.names]
    return items


def _attribute_reads_of(items: list[tuple] | None) -> list[tuple[str, int]]:
    """(name, line) of each `x.name` read whose receiver is no module the file imports, wherever the import
    stands (an import may follow the read it serves)."""
    if items is None:
        return []
    imported = {item[1] for item in items if item[0] == "import"}
    return sorted({(item[1], item[2]) for item in items if item[0] == "read" and item[3] not in imported},
                  key=lambda read: (read[1], read[0]))


# One parse per blob, shared with the other Python readers (facts/pyblobs.py; listed in registry.EXTRACTORS).
ATTRIBUTE_READS = Extractor("attribute-reads", 1, _attribute_items, _attribute_reads_of,
                            encode=lambda reads: [list(read) for read in reads],
                            decode=lambda stored: [(str(name), int(line)) for name, line in stored],
                            reads=frozenset({ast.Attribute, ast.Import, ast.ImportFrom}))


def attribute_reads(text: str, lines: set[int]) -> list[tuple[str, int]]:
    """(name, line) of each `x.name` read on the lines whose receiver is no module the file imports (nor a
    literal)."""
    return [(name, line) for name, line in python_fact(ATTRIBUTE_READS.name, text) if line in lines]


def _members(tree: FileTree, names: set[str], under: tuple[str, ...] = ()) -> dict[str, list[tuple[str, str]]]:
    """name -> (path, Class) of each class-body binding of the names in the tree's Python files (under the
    prefixes), in one pass: a file that binds a name spells it."""
    found: dict[str, list[tuple[str, str]]] = {}
    if not names:
        return found
    for path, decls in DeclarationIndex.of(tree).files(under, PY_SUFFIXES, spelling=sorted(names)):
        for decl in decls:
            if decl.scope and decl.name in names and decl.kind in ("def", "assign"):
                found.setdefault(decl.name, []).append((path, decl.scope))
    return found


def _bindings(tree: FileTree, names: set[str]) -> dict[str, set[str]]:
    """name -> where the tree binds it: Python on a class (a def or a name in its body) or an object
    (`x.name = ...`, also `+=`), C or C++ by its string; '' for trunk (every process loads it), else a backend's
    root."""
    found: dict[str, set[str]] = {}
    if not names:
        return found
    for name, places in _members(tree, names).items():
        found.setdefault(name, set()).update(backend_root(path) or "" for path, _ in places)
    spelled_as = "|".join(map(re.escape, sorted(names)))
    pattern = re.compile(rf"\.\s*({spelled_as})\s*(?:[-+*/|&]?=)(?!=)")
    indented = re.compile(rf"^[ \t]+(?:def\s+({spelled_as})\b|({spelled_as})\s*(?::[^=\n]*)?=(?!=))", re.MULTILINE)
    index = DeclarationIndex.of(tree)
    for path in index.paths((), PY_SUFFIXES):
        text = index.text(path)
        if not any(name in text for name in names):
            continue
        spelled = {match[1] for match in pattern.finditer(text)}
        if ast_or_none(text) is None:  # its declarations are unknown: an indented def or assignment may be a member
            spelled |= {match[1] or match[2] for match in indented.finditer(text)}
        for name in spelled:
            found.setdefault(name, set()).add(backend_root(path) or "")
    # A binding library registers a Python name by its string (pybind11's `.def("name", ...)`): a backend's own
    # ir.cc may give its builder the method trunk's lost (metax on the 3.7 move: create_advance).
    for path in index.paths((), CPP_CODE):
        text = index.text(path)
        for name in names:
            if f'"{name}"' in text:
                found.setdefault(name, set()).add(backend_root(path) or "")
    return found


def _outside_conflicts(text: str) -> list[str]:
    """The text's lines outside every conflict block."""
    return [line for _, line, section in conflict_sections(text) if section is None]


def _read_outside_conflicts(text: str, name: str) -> bool:
    """Whether the text reads `.name` on a line outside every conflict block."""
    return _reads(_outside_conflicts(text), name)


def _reads(lines: list[str], name: str) -> bool:
    read = re.compile(rf"\.\s*{re.escape(name)}\b")
    return any(read.search(line) for line in lines)


def attribute_findings(context: DriftContext) -> list[Finding]:
    if context.range is None:
        return []
    lines_by_path = fork_lines_where(context.upstream_old, context.fork, is_shipped_python)
    reads: dict[str, list[tuple[str, int]]] = {}
    for path, lines in sorted(lines_by_path.items()):
        found = attribute_reads(read_text(context.fork, path) or "", lines)
        if found:
            reads[path] = found
    read_names = {name for found in reads.values() for name, _ in found if _NAME.match(name)}
    unspelled = read_names - spelled_in(context.upstream_new, read_names)  # one pass, and few names are left
    declared = _members(context.upstream_old, unspelled, _SHIPPED)
    gone = set(declared)
    branch = context.branch
    bound = _bindings(branch, gone)
    gone -= {name for name, roots in bound.items() if "" in roots}
    if not gone:
        return []
    sites: dict[tuple[str, str | None], list[str]] = {}
    for path, found in reads.items():
        outside = _outside_conflicts(read_text(branch, context.branch_path(path)) or "")  # once per file
        for name, line in found:
            if name not in gone or (backend_root(path) or "") in bound.get(name, set()):
                continue  # the file's own backend binds it
            if not _reads(outside, name):
                continue  # the upgraded branch reads it no more in this file, or only where a conflict decides
            key = (name, backend_of(context.owners.owners, path))
            site = context.edited_site(f"{path}:{line}")
            if site not in sites.setdefault(key, []):
                sites[key].append(site)
    old, new = str(context.range.old.oid), str(context.range.onto.oid)
    findings = []
    for (name, backend), found_sites in sorted(sites.items(), key=lambda item: (item[0][0], item[0][1] or "")):
        path, owner = declared[name][0]
        commits = removing_commits(context.repo, old, new, path, name)
        tail, details = commit_details(commits, len(commits))
        first, _, number = found_sites[0].rpartition(":")
        findings.append(Finding(
            "attribute-removed", first,
            f"{name}: trunk's {owner}.{name} ({path}) is gone at {context.range.onto.ref}, which spells the name "
            f"nowhere, and nothing on the upgraded branch binds it: reading it raises AttributeError; FlagTree reads "
            f"it at {len(found_sites)} site(s): {', '.join(found_sites)}{tail}",
            line=int(number) if number.isdigit() else None, backend=backend, related_path=path,
            details={"declaration": f"{owner}.{name}", "sites": found_sites, **details}))
    return findings
