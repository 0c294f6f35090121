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


@lru_cache(maxsize=256)
def _path_changes(repo: Repository, old: str, new: str, path: str) -> tuple[tuple[Any, Any, Any], ...]:
    """(commit, blob id before, blob id after; None where absent) of each commit old..new that changed path:
    one walk per path for every finding that asks (23 asked of a few files on the 3.7 move)."""
    found = []
    for commit in _commits(repo, old, new):
        before, after = _entry_id(commit.parents[0].tree, path), _entry_id(commit.tree, path)
        if before != after:
            found.append((commit, before, after))
    return tuple(found)


def commits_changing(repo: Repository, old: str, new: str, paths: tuple[str, ...]) -> list[Any]:
    """The non-merge commits old..new that changed any of paths, oldest first."""
    changed = {commit.id for path in paths for commit, _, _ in _path_changes(repo, old, new, path)}
    return [commit for commit in _commits(repo, old, new) if commit.id in changed]


def _entry_id(tree: Any, path: str) -> Any:
    try:
        return tree[path].id
    except KeyError:
        return None


def _id_text(repo: Repository, oid: Any) -> str:
    if oid is None:
        return ""
    blob: Any = repo[oid]
    return blob.data.decode("utf-8", errors="replace") if blob.type_str == "blob" else ""


def deleting_commits(repo: Repository, old: str, new: str, path: str,
                     most: int = 3) -> tuple[list[tuple[str, str]], int]:
    """(short id, subject) of the first `most` commits old..new that deleted path (or renamed it away), oldest
    first, and how many did in all."""
    found = [(str(commit.id)[:9], commit.message.splitlines()[0] if commit.message else "")
             for commit, before, after in _path_changes(repo, old, new, path) if before is not None and after is None]
    return found[:most], len(found)


def removing_commits(repo: Repository, old: str, new: str, path: str, name: str, most: int = 2) -> list[tuple[str, str]]:
    """(short id, subject) of the commits whose diff of path drops lines that mention name (a removal, or a
    changed declaration), the biggest first. In a TableGen file an ODS record carries its dialect's prefix
    (`def TT_MakeTensorPtrOp`) and an accessor is its argument's name (getBoundaryCheck: `$boundaryCheck`)."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    spelled = [name]
    if path.endswith(".td"):
        spelled += [name[3].lower() + name[4:]] if re.match(r"get[A-Z]", name) else []
        word = re.compile(rf"(?<![A-Za-z0-9])(?:[A-Za-z0-9]+_)?(?:{'|'.join(map(re.escape, spelled))})\b")

    def mentions(text: str) -> Counter[str]:
        # Every match spells one of `spelled` (one or two spellings): substring tests rule out most lines.
        first, *other = spelled
        second = other[0] if other else first
        return Counter(line.strip() for line in text.splitlines()
                       if (first in line or second in line) and word.search(line)) \
            if first in text or second in text else Counter()

    found: list[tuple[int, str, str]] = []
    for commit, before_id, after_id in _path_changes(repo, old, new, path):
        if before_id is None:
            continue  # the file did not exist before this commit
        before, after = _id_text(repo, before_id), _id_text(repo, after_id)
        # lines that mention the name and are gone: a removal, or a changed declaration of it
        dropped = sum((mentions(before) - mentions(after)).values())
        if dropped > 0:
            found.append((dropped, str(commit.id)[:9], commit.message.splitlines()[0] if commit.message else ""))
    found.sort(key=lambda item: -item[0])
    return [(short, subject) for _, short, subject in found[:most]]


# Kinds whose details name a declaration upstream dropped from related_path.
_DROPPED = ("symbol-removed", "call-no-overload", "result-shape-changed", "field-renamed")


def with_upstream_commits(repo: Repository, old: str, new: str, findings: list[Finding]) -> list[Finding]:
    """Findings of a removed or changed declaration with the commits that dropped it and those commits' PR
    numbers."""
    out = []
    for finding in findings:
        name = finding.details.get("declaration")
        if finding.kind not in _DROPPED or not name or not finding.related_path:
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
    read_of: dict[Any, Hashable] = {}  # blob id -> read(text): a version is the after of one change, the before of the next

    def read_blob(oid: Any) -> Hashable:
        if oid not in read_of:
            read_of[oid] = read(_id_text(repo, oid))
        return read_of[oid]

    changed: dict[Any, Any] = {}  # commit id -> the commit, in the order of the commits
    for path in dict.fromkeys(paths):
        for commit, before_id, after_id in _path_changes(repo, old, new, path):
            if before_id is None or after_id is None:
                continue  # added, deleted or renamed here: not a change of the declaration in place
            if commit.id not in changed and read_blob(before_id) != read_blob(after_id):
                changed[commit.id] = commit
    order = {commit.id: number for number, commit in enumerate(_commits(repo, old, new))}
    found = [(str(commit.id)[:9], commit.message.splitlines()[0] if commit.message else "")
             for commit in sorted(changed.values(), key=lambda commit: order[commit.id])]
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
    found: dict[tuple[str, ...], tuple[list[tuple[str, str]], int]] = {}  # several backends stand on one change
    for (_, key), members in groups.items():
        members.sort(key=lambda member: (member[1].path, member[1].line or 0))
        first = members[0][1]
        sites = list(dict.fromkeys(site for member_sites, _ in members for site in member_sites))
        message = first.message
        if len(sites) > 1:
            files = len({site.rpartition(":")[0] for site in sites})
            shown = ", ".join(sites[:5]) + (f" and {len(sites) - 5} more" if len(sites) > 5 else "")
            message += f"; FlagTree has {len(sites)} site(s) of this upstream change in {files} file(s): {shown}"
        if commits is not None and key not in found:
            found[key] = commits(key)
        tail, said = commit_details(*found[key]) if commits is not None else ("", {})
        extra = merge([finding for _, finding in members], sites) if merge is not None else {}
        out.append(replace(first, message=message + tail, details={**first.details, **extra, "sites": sites, **said}))
    return sorted(out, key=lambda finding: (finding.path, finding.line or 0))
