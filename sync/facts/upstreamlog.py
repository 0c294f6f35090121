"""Which upstream commit made a change a finding stands on, and its PR number (issue 33): a maintainer reads
that PR once and fixes every FlagTree site under the finding.

For a declaration upstream removed from a file: the commits old..new that touched the file (or the path it
had) and lowered the count of the declaration's name there, newest last; the PR number is the `(#NNNN)` that
ends a subject, as upstream Triton writes them. For a declaration upstream changed (a builder's parameters,
a Python function's, an op's verifier): the commits whose change of its file changed what the caller reads
of it there (`changing_commits`), oldest first.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from typing import Any, Callable, Hashable

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
    changed declaration), the biggest first. In a TableGen file an ODS record carries its dialect's prefix
    (`def TT_MakeTensorPtrOp`) and an accessor is its argument's name (getBoundaryCheck: `$boundaryCheck`)."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    if path.endswith(".td"):
        spelled = [name] + ([name[3].lower() + name[4:]] if re.match(r"get[A-Z]", name) else [])
        word = re.compile(rf"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+_)?(?:{'|'.join(map(re.escape, spelled))})\b")
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


def changing_commits(repo: Repository, old: str, new: str, paths: tuple[str, ...],
                     read: Callable[[str], Hashable], most: int = 3) -> tuple[list[tuple[str, str]], int]:
    """(short id, subject) of the first `most` commits old..new, oldest first, whose change of the file (at any
    of paths: the path it had at the old tag, and at the new one) changed read(text) -- a declaration's
    parameters, a verifier's body -- and how many commits did in all."""
    found: list[tuple[str, str]] = []
    for commit in _commits(repo, old, new):
        parent = commit.parents[0]
        for path in dict.fromkeys(paths):
            try:
                before_id = parent.tree[path].id
                after_id = commit.tree[path].id
            except KeyError:
                continue  # added, deleted or renamed here: not a change of the declaration in place
            if before_id == after_id:
                continue
            if read(_blob_text(parent.tree, path) or "") != read(_blob_text(commit.tree, path) or ""):
                found.append((str(commit.id)[:9], commit.message.splitlines()[0] if commit.message else ""))
                break
    return found[:most], len(found)


def pr_of(subject: str) -> str | None:
    """The PR number that ends an upstream subject (`... (#8850)`), or None."""
    match = _PR.search(subject)
    return match[1] if match else None


def commit_details(commits: list[tuple[str, str]], total: int) -> tuple[str, dict[str, Any]]:
    """What a finding per upstream change says of the commits that made it: a message tail, e.g.
    "; upstream change: 1a2b3c4d5 (#8850)", and its details (commits, prs, and commits_more when more commits
    changed it than are listed); nothing when none was found."""
    if not commits:
        return "", {}
    said = ", ".join(f"{short}{f' (#{pr})' if (pr := pr_of(subject)) else ''}" for short, subject in commits)
    more = f" and {total - len(commits)} more" if total > len(commits) else ""
    prs = [pr for _, subject in commits if (pr := pr_of(subject))]
    details: dict[str, Any] = {"commits": [f"{short} {subject}" for short, subject in commits], "prs": prs}
    if total > len(commits):
        details["commits_more"] = total - len(commits)  # how many commits changed it besides those listed
    return f"; upstream change: {said}{more}", details


Commits = Callable[[tuple[str, ...]], tuple[list[tuple[str, str]], int]]


def one_per_change(sited: list[tuple[tuple[str, ...], list[str], Finding]], commits: Commits | None = None,
                   merge: Callable[[list[Finding], list[str]], dict[str, Any]] | None = None) -> list[Finding]:
    """One finding per upstream change and backend (issue 33): the per-site findings that share a key (the
    change they stand on) and a backend become the first site's finding, its message counting every site
    (path:line, details.sites), with the commit(s) that made the change and their PR numbers (commits(key))
    and what merge(findings, sites) adds to its details; a maintainer reads the PR once and fixes every site.
    Findings come out in the order of their first site."""
    groups: dict[tuple[str | None, tuple[str, ...]], list[tuple[list[str], Finding]]] = {}
    for key, sites, finding in sited:
        groups.setdefault((finding.backend, key), []).append((sites, finding))
    out = []
    for (_, key), members in groups.items():
        members.sort(key=lambda member: (member[1].path, member[1].line or 0))
        first = members[0][1]
        sites = list(dict.fromkeys(site for member_sites, _ in members for site in member_sites))
        message = first.message
        if len(sites) > 1:
            files = len({site.rpartition(":")[0] for site in sites})
            shown = ", ".join(sites[:5]) + (f" and {len(sites) - 5} more" if len(sites) > 5 else "")
            message += f"; FlagTree has {len(sites)} site(s) of this upstream change in {files} file(s): {shown}"
        tail, said = commit_details(*commits(key)) if commits is not None else ("", {})
        extra = merge([finding for _, finding in members], sites) if merge is not None else {}
        out.append(replace(first, message=message + tail, details={**first.details, **extra, "sites": sites, **said}))
    return sorted(out, key=lambda finding: (finding.path, finding.line or 0))
