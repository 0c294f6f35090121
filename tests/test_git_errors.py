"""Whether an exception is a git error is the git package's answer: no module outside sync/git names pygit2,
not even by a string (cli.py once looked its GitError up in sys.modules)."""
from __future__ import annotations

import ast
from pathlib import Path

import pygit2

from sync.git import is_git_error

ROOT = Path(__file__).resolve().parent.parent / "sync"


def test_is_git_error_tells_libgit2_errors_from_others() -> None:
    assert is_git_error(pygit2.GitError("no error"))
    assert not is_git_error(OSError("disk"))
    assert not is_git_error(type("GitError", (Exception,), {})())  # the name alone is not enough


def _names_pygit2(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        named = (isinstance(node, ast.Constant) and node.value == "pygit2") or \
            (isinstance(node, ast.Name) and node.id == "pygit2") or \
            (isinstance(node, ast.alias) and node.name.split(".")[0] == "pygit2")
        if named:
            lines.append(getattr(node, "lineno", 0))
    return lines


def test_no_module_outside_the_git_package_names_pygit2() -> None:
    offenders = {str(path.relative_to(ROOT.parent)): lines for path in ROOT.rglob("*.py")
                 if "git" != path.relative_to(ROOT).parts[0] and (lines := _names_pygit2(path))}
    assert offenders == {}
