"""The shape of sync/: packages by concern, each importing only the floors below it, with no import circles
(function-local imports included) and pygit2/GitPython only inside sync.git (docs/ARCHITECTURE.md)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "sync"

# Lowest first: a package may import its own floor and the floors below it, never one above.
FLOORS = [
    {"sync", "sync.errors", "sync.support"},  # sync itself holds only __version__
    {"sync.git"},
    {"sync.model"},
    {"sync.facts"},
    {"sync.records"},
    {"sync.check", "sync.replay"},
    {"sync.drift"},
    {"sync.report"},
    {"sync.builder", "sync.demo"},
    {"sync.jobs"},
    {"sync.commands"},
    {"sync.cli", "sync.__main__"},
]
GIT_LIBRARIES = ("pygit2", "git")


def modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports_of(name: str, path: Path, known: dict[str, Path]) -> tuple[set[str], set[str]]:
    """(the sync modules a module imports anywhere in its text, the outside top-level packages it imports)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    inside, outside = set(), set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        for target in targets:
            if target == "sync" or target.startswith("sync."):
                while target not in known:
                    target = target.rpartition(".")[0]
                if target != name:
                    inside.add(target)
            else:
                outside.add(target.split(".")[0])
    return inside, outside


def graph() -> dict[str, tuple[set[str], set[str]]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def floor(module: str) -> int:
    package = ".".join(module.split(".")[:2])
    for number, members in enumerate(FLOORS):
        if package in members:
            return number
    raise AssertionError(f"{module}: its package is on no floor of FLOORS; add it there")


def test_no_import_circle() -> None:
    edges = {name: inside for name, (inside, _) in graph().items()}
    done: set[str] = set()

    def visit(name: str, trail: list[str]) -> None:
        if name in trail:
            pytest.fail("import circle: " + " -> ".join(trail[trail.index(name):] + [name]))
        if name in done:
            return
        for target in sorted(edges[name]):
            visit(target, trail + [name])
        done.add(name)

    for name in sorted(edges):
        visit(name, [])


def test_no_upward_import() -> None:
    upward = [f"{name} -> {target}" for name, (inside, _) in graph().items() for target in inside
              if floor(target) > floor(name)]
    assert upward == []


def test_git_libraries_only_inside_the_gateway() -> None:
    leaks = [f"{name} imports {library}" for name, (_, outside) in graph().items()
             for library in outside & set(GIT_LIBRARIES) if not (name == "sync.git" or name.startswith("sync.git."))]
    assert leaks == []


def test_at_most_four_modules_at_the_top() -> None:
    assert sorted(path.name for path in ROOT.glob("*.py")) == ["__init__.py", "__main__.py", "cli.py", "errors.py"]


def test_the_checks_see_a_circle_and_an_upward_import(tmp_path: Path) -> None:
    """The walker itself: a two-module circle and an import from a higher floor are found."""
    package = tmp_path / "sync"
    (package / "git").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "git" / "__init__.py").write_text("from sync.git import b\n")
    (package / "git" / "a.py").write_text("def f():\n    from sync.git.b import g\n")
    (package / "git" / "b.py").write_text("from sync.git.a import f\nfrom sync.cli import main\n")
    (package / "cli.py").write_text("")
    known = {name: package.parent / (name.replace(".", "/") + ".py") for name in ("sync.git.a", "sync.git.b", "sync.cli")}
    inside, _ = imports_of("sync.git.a", known["sync.git.a"], known)
    assert inside == {"sync.git.b"}
    inside, _ = imports_of("sync.git.b", known["sync.git.b"], known)
    assert inside == {"sync.git.a", "sync.cli"} and floor("sync.cli") > floor("sync.git.b")


def test_commands_do_no_git() -> None:
    """commands/ parse and print; the jobs open repositories (docs/ARCHITECTURE.md)."""
    reaching = [f"{name} -> {target}" for name, (inside, _) in graph().items() if name.startswith("sync.commands")
                for target in inside if target == "sync.git" or target.startswith("sync.git.")]
    assert reaching == []


def test_the_backend_layout_is_spelled_in_one_module() -> None:
    """Where a backend's files live (third_party/<b>/...) is a rule of facts/layout.py alone: another module asks
    it (backend_dir, backend_spec_dir, is_third_party) instead of spelling the path. The demo world builds
    fixtures and the builder lays out a package: both spell paths of their own."""
    spelled = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative == "facts/layout.py" or relative.startswith(("demo/", "builder/")):
            continue
        tree = ast.parse(path.read_text(), str(path))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            if id(node) in docstrings:
                continue
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
            if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                text = str(node.values[0].value)
            if text is not None and (text.startswith("third_party/") or text == "third_party"):
                spelled.append(f"{relative}:{node.lineno}")
    assert spelled == []
