"""Which upstream commit made a change a finding stands on, and its PR number (issue 33): a maintainer reads
that PR once and fixes every FlagTree site under the finding.

For a declaration upstream removed from a file: the commits old..new that touched the file (or the path it
had) and lowered the count of the declaration's name there, newest last; the PR number is the `(#NNNN)` that
ends a subject, as upstream Triton writes them.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from typing import Any

from sync.git import Repository, range_commits
from sync.model import Finding

_PR = re.compile(r"\(#(\d+)\)\s*$")


@lru_cache(maxsize=4)
def _commits(repo: Repository, old: str, new: str) -> tuple[Any, ...]:
    """Non-merge commits old..new, oldest first (one revwalk per pair of tags)."""
    first, last = repo[old], repo[new]
    return tuple(commit for commit in range_commits(repo, first, last) if len(commit.parents) == 1)  # type: ignore[arg-type]


def _blob_text(tree: Any, path: str) -> str | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    return entry.data.decode("utf-8", errors="replace") if entry.type_str == "blob" else None


def removing_commits(repo: Repository, old: str, new: str, path: str, name: str, most: int = 2) -> list[tuple[str, str]]:
    """(short id, subject) of the commits whose diff of path drops lines that mention name (a removal, or a
    changed declaration), the biggest first."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    found: list[tuple[int, str, str]] = []
    for commit in _commits(repo, old, new):
        parent = commit.parents[0]
        try:
            before_id = parent.tree[path].id
        except KeyError:
            continue  # the file did not exist before this commit
        try:
            after_id = commit.tree[path].id
        except KeyError:
            after_id = None
        if before_id == after_id:
            continue
        before = _blob_text(parent.tree, path) or ""
        after = _blob_text(commit.tree, path) or ""
        # lines that mention the name and are gone: a removal, or a changed declaration of it
        kept = Counter(line.strip() for line in after.splitlines() if word.search(line))
        dropped = sum((Counter(line.strip() for line in before.splitlines() if word.search(line)) - kept).values())
        if dropped > 0:
            found.append((dropped, str(commit.id)[:9], commit.message.splitlines()[0] if commit.message else ""))
    found.sort(key=lambda item: -item[0])
    return [(short, subject) for _, short, subject in found[:most]]


def with_upstream_commits(repo: Repository, old: str, new: str, findings: list[Finding]) -> list[Finding]:
    """symbol-removed findings with the commits that removed their declaration and those commits' PR numbers."""
    out = []
    for finding in findings:
        name = finding.details.get("declaration")
        if finding.kind not in ("symbol-removed", "call-no-overload") or not name or not finding.related_path:
            out.append(finding)
            continue
        commits = removing_commits(repo, old, new, finding.related_path, str(name).rsplit("/", 1)[-1])
        prs = [match[1] for _, subject in commits for match in [_PR.search(subject)] if match]
        if not commits:
            out.append(finding)
            continue
        said = ", ".join(f"{short}{f' (#{pr})' if pr else ''}" for (short, _), pr in
                         zip(commits, [(_PR.search(subject) or [None, None])[1] for _, subject in commits]))
        out.append(replace(finding, message=f"{finding.message}; upstream change: {said}",
                           details={**finding.details, "commits": [f"{short} {subject}" for short, subject in commits],
                                    "prs": prs}))
    return out
