"""An entry script upstream moved to another directory, and FlagTree code it runs that still resolves names from
the old one (issue 45: the build's own environment changes). Python puts the directory of the script it runs
first on sys.path, and a build runs with that directory as its working directory (pip, setuptools): so a
top-level import of a module that sat beside the script, and a path spelled `../x` relative to the working
directory, mean something else once the script moves. The 3.3.x -> 3.4.0 move: upstream moved python/setup.py
to the root (#6381); FlagTree's setup tools, imported by its setup.py lines, import `build_helpers` (beside the
old script, python/build_helpers.py) and build `../third_party/<backend>/...` paths from python/.

Upstream side: a Python file upstream renamed into another directory (git's similarity detection), named
setup.py or guarded by `if __name__ == "__main__"`. FlagTree side: the fork's version of the script at its old
path and the modules it imports from beside it (transitively, a few levels), on FlagTree's lines: a top-level
import whose first name is a module beside the old script and not beside the new one; a string (or the start
of an f-string) that begins with `../`. Kind entry-script-moved, an error.
"""
from __future__ import annotations

import ast
from posixpath import dirname, join

from sync.drift.context import DriftContext
from sync.facts.astwalk import walk_nodes
from sync.facts.delta import PY, backend_of, fork_added_lines
from sync.facts.parsing import ast_or_none
from sync.facts.trees import FileTree, read_text
from sync.model import Finding

_DEPTH = 3  # import levels followed from the script


def moved_scripts(context: DriftContext) -> list[tuple[str, str]]:
    """(old path, new path) of each entry script upstream moved to another directory."""
    found = []
    for old, new in sorted(context.renames.items()):
        if not old.endswith(PY) or dirname(old) == dirname(new):
            continue
        name = old.rpartition("/")[2]
        if name == "setup.py" or "__main__" in (read_text(context.upstream_new, new) or ""):
            found.append((old, new))
    return found


def beside(tree: FileTree, directory: str, module: str) -> str | None:
    """The file a top-level module name resolves to from a script in directory, or None."""
    base = join(directory, *module.split(".")) if directory else join(*module.split("."))
    for candidate in (f"{base}.py", f"{base}/__init__.py"):
        if tree.exists(candidate):
            return candidate
    return None


def _imports(tree: ast.Module) -> list[tuple[str, int]]:
    """(module, line) of each absolute import of the module's code."""
    found = []
    for node in walk_nodes(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.module, node.lineno))
            found += [(f"{node.module}.{alias.name}", node.lineno) for alias in node.names]
    return found


def _run_by(context: DriftContext, script: str) -> dict[str, ast.Module]:
    """The fork's script and the modules beside it that it imports, transitively: path -> its tree."""
    directory = dirname(script)
    found: dict[str, ast.Module] = {}
    pending, depth = [script], 0
    while pending and depth <= _DEPTH:
        following = []
        for path in pending:
            if path in found:
                continue
            tree = ast_or_none(read_text(context.fork, path) or "")
            if tree is None:
                continue
            found[path] = tree
            following += [hit for module, _ in _imports(tree) if (hit := beside(context.fork, directory, module))]
            following += _relative_targets(context.fork, path, tree)
        pending, depth = following, depth + 1
    return found


def _relative_targets(tree: FileTree, path: str, parsed: ast.Module) -> list[str]:
    """The files a module's relative imports (`from . import x`, `from .x import y`) name in the tree."""
    found = []
    for node in walk_nodes(parsed):
        if isinstance(node, ast.ImportFrom) and node.level:
            package = dirname(path)
            for _ in range(node.level - 1):
                package = dirname(package)
            names = [f"{node.module}.{alias.name}" if node.module else alias.name for alias in node.names]
            names += [node.module] if node.module else []
            found += [hit for name in names if (hit := beside(tree, package, name))]
    return found


def _relative_paths(tree: ast.Module) -> list[tuple[str, int]]:
    """(text, line) of each string or f-string that starts with `../`."""
    found = []
    nodes = walk_nodes(tree)
    parts = {id(value) for node in nodes if isinstance(node, ast.JoinedStr) for value in node.values}
    for node in nodes:
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant) \
                and str(node.values[0].value).startswith("../"):
            found.append((ast.unparse(node), node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("../") \
                and id(node) not in parts:  # an f-string's first part: said once, as the f-string
            found.append((repr(node.value), node.lineno))
    return found


def entry_script_findings(context: DriftContext) -> list[Finding]:
    scripts = moved_scripts(context)
    if not scripts:
        return []
    added = fork_added_lines(context.upstream_old, context.fork)
    findings: list[Finding] = []
    for old, new in scripts:
        if not context.fork.exists(old):
            continue
        old_dir, new_dir = dirname(old), dirname(new)
        was, now = _said(old_dir), _said(new_dir)
        for path, tree in sorted(_run_by(context, old).items()):
            lines = added.get(path, frozenset())
            backend = backend_of(context.owners.owners, path)
            for module, line in sorted(set(_imports(tree)), key=lambda item: item[1]):
                first = module.split(".")[0]
                if line in lines and beside(context.fork, old_dir, first) \
                        and not beside(context.branch, new_dir, first) \
                        and not beside(context.upstream_new, new_dir, first):
                    findings.append(Finding(
                        "entry-script-moved", path,
                        f"FlagTree imports {first}, a module beside {old}; upstream moved the script to {new}, so "
                        f"Python looks for {first} in {now}, where there is none (will not run as is)",
                        f"import it as upstream's {new} imports its neighbours now, or move it beside {new}",
                        line, backend, related_path=new, details={"declaration": first, "sites": [f"{path}:{line}"]}))
            for text, line in _relative_paths(tree):
                if line in lines:
                    findings.append(Finding(
                        "entry-script-moved", path,
                        f"FlagTree spells {text} relative to the directory the build runs from, {was}; "
                        f"upstream moved {old} to {new}, so it now starts from {now} (will not run as is)",
                        "spell the path from the new directory, or from the file's own location",
                        line, backend, related_path=new, details={"declaration": text, "sites": [f"{path}:{line}"]}))
    return _one_per_line(findings)


def _said(directory: str) -> str:
    return f"{directory}/" if directory else "the repository root"


def _one_per_line(findings: list[Finding]) -> list[Finding]:
    """An import statement naming several modules beside the script is one finding per line and name."""
    seen: set[tuple[str, int | None, str]] = set()
    kept = []
    for finding in findings:
        key = (finding.path, finding.line, str(finding.details.get("declaration")))
        if key not in seen:
            seen.add(key)
            kept.append(finding)
    return kept
