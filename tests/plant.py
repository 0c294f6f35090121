"""Commit a path git's own porcelain refuses ('..', '.git' components) with git's plumbing, as a hostile
repository would: mktree writes any name."""
from __future__ import annotations

import subprocess
from pathlib import Path


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=True,
                          text=True).stdout.strip()


def _with_entry(repo: Path, tree: str | None, parts: list[str], blob: str) -> str:
    lines = [line for line in _git(repo, "ls-tree", tree).split("\n") if line] if tree else []
    name, rest = parts[0], parts[1:]
    keep = [line for line in lines if line.split("\t", 1)[1] != name]
    if not rest:
        keep.append(f"100644 blob {blob}\t{name}")
    else:
        old = next((line.split()[2] for line in lines if line.split("\t", 1)[1] == name), None)
        keep.append(f"040000 tree {_with_entry(repo, old, rest, blob)}\t{name}")
    return _git(repo, "mktree", stdin="\n".join(keep) + "\n")


def plant(repo: Path, parts: list[str], content: str, message: str = "odd path") -> str:
    """A commit on HEAD's branch adding a file at the path of these components; the work tree is left alone."""
    blob = _git(repo, "hash-object", "-w", "--stdin", stdin=content)
    tree = _with_entry(repo, _git(repo, "rev-parse", "HEAD^{tree}"), parts, blob)
    commit = _git(repo, "commit-tree", tree, "-p", "HEAD", "-m", message)
    _git(repo, "update-ref", "HEAD", commit)
    return commit
