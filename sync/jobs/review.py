"""Review jobs: record a reviewed finding (suppressions.toml) or each file's upstream base (provenance.toml)."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from sync.drift.run import analyse_drift
from sync.errors import SyncError
from sync.git import (GitTree, Repository, branch_exists, branch_head, checked_out_branch, commit_files, current_branch,
                   open_repo)
from sync.facts.layout import backend_names, third_party_backends
from sync.model import Finding
from sync.records.provenance import Recorded, manifest_path, write_manifest
from sync.records.tomlfiles import work_tree_path
from sync.records.suppressions import (TRUNK_SUPPRESSIONS, add_suppression, added_suppression, apply_suppressions,
                                       site_paths, subject_of, subjects_of, suppressions_path)
from sync.jobs.revs import resolve_rev
from sync.jobs.upgraded import range_of, upgraded_range


def _work_tree(repo: Repository, name: str) -> Path:
    if repo.workdir is None:
        raise SyncError(f"a bare repository has no work tree to write {name} in")
    return Path(repo.workdir)


@dataclass(frozen=True, kw_only=True)
class SuppressRequest:
    kind: str
    path: str
    reason: str
    subject: str | None = None  # which finding, when the file has several of the kind
    target: str | None = None  # the upgraded branch drift --target reads; None: the in-memory replay


@dataclass(frozen=True)
class ReviewWritten:
    """Where a review went: a file written in a work tree (to commit there), or a commit made on a branch."""

    file: Path | None = None
    work_tree_of: str | None = None  # the branch checked out in the work tree written, when --target named it
    commit: str | None = None  # made in memory on --target, which no work tree has checked out
    work_tree_on: str | None = None  # without --target: the branch the work tree written is on (None: detached)


def record_suppression(repo_path: str, *, old: str | None, onto: str | None, source: str | None,
                       request: SuppressRequest) -> ReviewWritten:
    """Append the finding (kind, path[, subject]) of drift OLD -> NEW to its backend's suppressions.toml,
    found as `drift` (with the same --target) finds it: every analysis runs.

    The entry goes where the branch it belongs to is: without --target, the work tree of repo_path; with
    --target, the work tree that has that branch checked out (whichever worktree repo_path is), else a
    commit on the branch made in memory, as drift --apply does (no work tree of it to write in)."""
    repo = open_repo(repo_path)
    if request.target is not None:
        _require_local_branch(repo, request.target)
    else:
        work_tree = _work_tree(repo, "suppressions.toml")
    rng = range_of(repo, old, onto, source, request.target)
    target = resolve_rev(repo, request.target) if request.target else None
    result = analyse_drift(repo, rng, target, None, symbols=True)
    findings = result.findings
    if target is not None:
        findings = review_on_branch(findings, repo, target.oid, rng.onto.oid, result.owners.backends)
    finding = _the_finding(findings, request)
    if finding.suppressed:
        raise SyncError(f"{request.kind} on {request.path} is already suppressed for {finding.suppressed.reviewed_for}")
    new = GitTree.of_commit(repo, rng.onto.oid, rng.onto.ref)
    if request.target is None:
        return ReviewWritten(add_suppression(work_tree, finding, new, rng.onto.ref, request.reason, request.subject),
                             work_tree_on=checked_out_branch(repo))
    checkout = _checkout_of(repo, request.target)
    if checkout is not None:
        if not checkout.is_dir():
            raise SyncError(f"{request.target} is checked out in {checkout}, which is gone: run git worktree prune "
                            "and rerun (the review is then committed on the branch)")
        return ReviewWritten(add_suppression(checkout, finding, new, rng.onto.ref, request.reason, request.subject),
                             request.target)
    return ReviewWritten(commit=_commit_review(repo, request.target, finding, new, rng.onto.ref, request.reason,
                                               request.subject))


def _require_local_branch(repo: Repository, name: str) -> None:
    """A review belongs in a commit on the branch drift --target reads: a tag or a commit cannot take one."""
    if not branch_exists(repo, name):
        resolve_rev(repo, name)  # an unknown name: the usual error, with close names
        raise SyncError(f"--target {name} is not a local branch, so the review has no branch to go on: pass the "
                        f"upgraded branch (git branch <name> {name} makes one)")


def _commit_review(repo: Repository, branch: str, finding: Finding, new: GitTree, reviewed_for: str,
                   reason: str, only_subject: str | None = None) -> str:
    head = branch_head(repo, branch)
    assert head is not None  # _require_local_branch
    rel, text = added_suppression(GitTree.of_commit(repo, head.id, branch), finding, new, reviewed_for, reason,
                                  only_subject)
    subject = only_subject or subject_of(finding)
    message = (f"Review {finding.kind} on {finding.path}{f' ({subject})' if subject else ''} for {reviewed_for}"
               f"\n\n{reason}\n")
    return str(commit_files(repo, head, {rel: text.encode("utf-8")}, message, f"refs/heads/{branch}", by_user=True))


def _the_finding(findings: list[Finding], request: SuppressRequest) -> Finding:
    on_path = [f for f in findings if request.path in site_paths(f)]  # a finding per upstream change: any site's
    matches = [f for f in on_path if f.kind == request.kind]
    if not matches:
        known = sorted({f.kind for f in on_path})
        raise SyncError(f"no {request.kind} finding on {request.path}" + (f" (it has: {', '.join(known)})" if known else ""))
    subjects = sorted({subject for f in matches for subject in subjects_of(f) if subject})
    if request.subject is not None:  # a finding folded from several declarations: any of theirs
        matches = [f for f in matches if request.subject in subjects_of(f)]
        if not matches:
            raise SyncError(f"no {request.kind} finding on {request.path} about {request.subject} "
                            f"(--subject is one of: {', '.join(subjects)})")
    elif len(subjects) > 1:  # one folded finding too: a reason is about one subject (issue 48.3)
        count = f"{len(matches)} {request.kind} findings" if len(matches) > 1 else f"a {request.kind} finding"
        about = f" about {len(subjects)} subjects" if len(subjects) != len(matches) else ""
        raise SyncError(f"{count} on {request.path}{about}: pass --subject "
                        f"(one of: {', '.join(subjects)}; a review covers every finding about its subject)")
    return matches[0]


def record_provenance(repo_path: str, *, tag: str, backend: str, source: str | None,
                      old: str | None = None) -> Recorded:
    """Write the backend's provenance.toml: each file's trunk counterpart and its blob at TAG, for the files
    that hold TAG's change (write_manifest). A file the manifest has no base for is judged from OLD (given, or
    the tag the FlagTree commits the branch replays pin)."""
    repo = open_repo(repo_path)
    work_tree = _work_tree(repo, "provenance.toml")
    source = source or current_branch(repo)
    branch = GitTree.of_commit(repo, resolve_rev(repo, source).oid, source)
    if backend not in backend_names(branch):
        if backend in third_party_backends(branch):  # a backend of the tree with nothing to record (issue 48.4)
            return Recorded(work_tree / manifest_path(backend), 0, (), True, nothing=True)
        raise SyncError(f"no spec tree for backend {backend} on {source}")
    tag_tree = GitTree.of_commit(repo, resolve_rev(repo, tag).oid, tag)
    recorded = write_manifest(repo, work_tree, branch, backend, tag, tag_tree, _old_tree(repo, source, tag, old))
    if checked_out_branch(repo) != source:  # the work tree holds another branch: its files say nothing of source
        return recorded
    # provenance reads the branch's commit: a fix made in the work tree (a git rm, a hand merge) only counts once
    # committed, so a file left at its old base whose fix is not committed yet is named as such
    uncommitted = tuple(path for path in recorded.unmerged if _on_disk(work_tree, path) != branch.read(path))
    return replace(recorded, uncommitted=uncommitted)


def _on_disk(work_tree: Path, path: str) -> bytes | None:
    target = work_tree_path(work_tree, path)
    return target.read_bytes() if target.is_file() and not target.is_symlink() else None


def _old_tree(repo: Repository, branch: str, tag: str, old: str | None) -> GitTree | None:
    if old is not None:
        return GitTree.of_commit(repo, resolve_rev(repo, old).oid, old)
    try:
        rng = upgraded_range(repo, branch, onto=tag)[0]
    except SyncError:  # not a branch upgrade made, or no pin to read OLD from
        return None
    return GitTree.of_commit(repo, rng.old.oid, rng.old.ref)


def review_on_branch(findings: list[Finding], repo: Repository, branch_commit: str, onto: str,
                     backends: list[str]) -> list[Finding]:
    """Reviews committed on the upgraded branch count too (the maintainer reviews the branch that will be
    released); an entry there wins over the FlagTree branch's entry for the same finding. A finding fixed by a
    commit on the branch is gone (fixed_on_branch)."""
    branch = GitTree.of_commit(repo, branch_commit, "reviews:branch")
    kept = [finding for finding in findings if not fixed_on_branch(finding, branch)]
    return apply_suppressions(kept, branch, GitTree.of_commit(repo, onto, "new"), backends)


_SITE_LINE = re.compile(r":\d+$")


def fixed_on_branch(finding: Finding, branch: GitTree) -> bool:
    """A fix committed on the upgraded branch clears its finding (issue 48). The analyses read FlagTree's
    lines on the source branch and only move them to the branch, so a finding about names FlagTree uses at
    sites (a removed declaration, a CMake entry) is judged here: fixed once no file of its sites on the branch
    names any of them. A qualified name counts by its last part, so a doubt keeps the finding."""
    sites = finding.details.get("sites")
    names = _used_names(finding)
    if not names or not isinstance(sites, list) or not sites:
        return False
    named = re.compile("|".join(rf"(?<![\w$]){re.escape(name)}(?![\w$])" for name in sorted(names)))
    for path in {_SITE_LINE.sub("", str(site)) for site in sites}:
        data = branch.read(path)
        if data is not None and named.search(data.decode("utf-8", errors="replace")):
            return False
    return True


def _used_names(finding: Finding) -> set[str]:
    """The names a finding says FlagTree uses: its declaration ("op LoadOp", "TargetInfoBase::barrier": the last
    identifier) and each removed symbol's name."""
    details = finding.details
    names = [details.get("declaration")] + [str(symbol).split(":", 1)[0] for symbol in details.get("symbols") or []]
    return {words[-1] for name in names if isinstance(name, str) and (words := _IDENTIFIER.findall(name))}


_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def uncommitted_suppressions(repo_path: str, read_from: str, backends: list[str]) -> list[str]:
    """suppressions.toml files that differ from the branch drift read, in the work tree that has it checked
    out (named whole when that is another worktree): `suppress` writes there, drift reads commits only (a
    report must not depend on uncommitted files)."""
    repo = open_repo(repo_path)
    work_tree = _work_tree_holding(repo, read_from)
    if work_tree is None:
        return []
    tree = GitTree.of_commit(repo, resolve_rev(repo, read_from).oid, "reviews")
    here = repo.workdir is not None and work_tree.resolve() == Path(repo.workdir).resolve()
    changed = []
    for rel in [suppressions_path(backend) for backend in backends] + [TRUNK_SUPPRESSIONS]:
        on_disk = work_tree / rel
        if on_disk.is_symlink() or not on_disk.is_file():
            continue
        if on_disk.read_bytes() != tree.read(rel):
            changed.append(rel if here else str(on_disk))
    return changed


def _work_tree_holding(repo: Repository, read_from: str) -> Path | None:
    """The work tree whose files belong to read_from: where that branch is checked out (None: nowhere, or
    a bare repository), else (a commit, a tag) repo's own."""
    if branch_exists(repo, read_from) and checked_out_branch(repo) != read_from:
        found = _checkout_of(repo, read_from)  # GitPython: only when another worktree may hold it
        return found if found is not None and found.is_dir() else None
    return Path(repo.workdir) if repo.workdir is not None else None


def _checkout_of(repo: Repository, branch: str) -> Path | None:
    """The worktree that has branch checked out, compared as full ref names: a symbolic ref to the branch a
    worktree is on is that branch (a commit on it in memory would move the branch under that worktree)."""
    from sync.git.repo import full_ref_name
    from sync.git.worktree import branches_in_worktrees  # GitPython: only here
    ref = full_ref_name(repo, f"refs/heads/{branch}") or f"refs/heads/{branch}"
    return next((path for used, path in branches_in_worktrees(repo).items()
                 if ref in (used, full_ref_name(repo, used))), None)
