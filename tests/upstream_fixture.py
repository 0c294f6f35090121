"""A tiny upstream with two tags and a fork based on the first, as a DriftContext (for analyzer tests)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from sync.drift.context import DriftContext
from sync.git import GitTree
from tests.test_symbols import commit, history_trees


def context_of(tmp_path: Path, old: dict[str, str], new: dict[str, str], fork: dict[str, str],
               removed_upstream: tuple[str, ...] = ()) -> DriftContext:
    repo, (old_tree, new_tree, fork_tree) = history_trees(tmp_path, old, new, fork, removed_upstream)
    return DriftContext(repo, old_tree, new_tree, fork_tree, None)


def sites_of(findings) -> list[tuple[str, int]]:
    """Every FlagTree site (path, line) the findings stand for: a finding per upstream change lists them in
    details.sites, its own place first."""
    out = []
    for finding in findings:
        for site in finding.details.get("sites") or [f"{finding.path}:{finding.line}"]:
            path, _, line = site.rpartition(":")
            out.append((path, int(line)))
    return sorted(out)


def context_with_history(tmp_path: Path, old: dict[str, str], upstream: list[tuple[str, dict[str, str]]],
                         fork: dict[str, str]) -> DriftContext:
    """As context_of, with upstream's move from the old tag to the new one as the commits upstream (subject,
    files written), and the range named, so that findings can name the upstream commits and their PRs."""
    from sync.model import Range, Rev
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    old_id = commit(tmp_path, old, "old")
    fork_id = commit(tmp_path, fork, "flagtree")
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", old_id], check=True)
    new_id = old_id
    for subject, files in upstream:
        new_id = commit(tmp_path, files, subject)
    repo = pygit2.Repository(str(tmp_path))
    tree = lambda sha, label: GitTree(repo, repo[sha].tree, label)
    return DriftContext(repo, tree(old_id, "old"), tree(new_id, "new"), tree(fork_id, "fork"), None,
                        range=Range(Rev("old", old_id), Rev("new", new_id), Rev("fork", fork_id)))
