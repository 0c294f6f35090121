"""Copies that track a trunk file, merged with upstream's change: one commit per backend (rule `merged-copy`).

A backend's copy under another name, or a file of its own package, is no overlay: drift --apply leaves it
(copy-stale where the backend builds against trunk's headers, copy-mergeable where it carries its own). A setup
helper's copy lands in trunk's place and is an overlay already: drift --apply merges it, so port leaves it to
--apply and the two never disagree. For each copy finding, port merges 3 ways again on the branch as port left
it (base: the copy's recorded base, as drift reads it; theirs: the trunk file at the new tag; ours: the copy),
and only a clean merge is applied. It is recorded as drift --apply records an overlay merge
(provenance.applied_manifests): the copy's base becomes the new tag's blob where provenance keeps one.

A copy-stale copy is merged on its own: its backend compiles against trunk's headers, so the copy tracks trunk.
A copy-mergeable copy belongs to a backend that carries its own tree (its own include/triton/): that tree is one
upstream version, which the backend's own sources are written against. Its copies are merged only all together,
when every one of them merges cleanly (no copy-conflicting, no copy-orphan): merging the clean ones alone would
leave two upstream versions in one tree (issue 33: on the 3.7 move hcu, metax and mthreads each have both).

A clean merge can still be half of upstream's change: upstream added a member's definition to a .cpp and its
declaration to the .h beside it. So a merge is applied only when no file beside the copy is left behind: a file
of the copy's directory whose namesake beside the trunk file upstream changed too must be merged along (on the
3.7 move enflame's TaskIdPropagation.cpp would define visitNonControlFlowArguments, which its own .h, no copy
drift recognises, does not declare).
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from sync.git import GitTree, Oid, Repository, as_oid, has_object, merge_blobs, scratch_repository
from sync.git.merge import holds_conflict
from sync.model import Finding, GateRun, Report
from sync.records.provenance import applied_manifests

__all__ = ["COPY_KINDS", "COPY_RULE", "CopyMerge", "copy_findings", "merge_copies", "recorded"]

COPY_KINDS = frozenset({"copy-stale", "copy-mergeable"})
OWN_TREE = "copy-mergeable"  # the backend carries its own tree: its copies move together or not at all
_BLOCKING = frozenset({"copy-conflicting", "copy-orphan"})  # an own tree's copies that cannot move to the new tag
COPY_RULE = "merged-copy"
_WIDTH = 72


@dataclass
class CopyMerge:
    """One backend's copies: those merged (path -> merged text), and those left with the reason."""
    backend: str
    merged: dict[str, bytes] = field(default_factory=dict)
    trunk_of: dict[str, str] = field(default_factory=dict)  # a merged copy -> the trunk file it tracks
    base_of: dict[str, str] = field(default_factory=dict)  # a merged copy -> where its base was read
    left: list[tuple[str, str]] = field(default_factory=list)
    patch: str = ""
    committed: str | None = None
    gate: GateRun | None = None

    @property
    def ported(self) -> bool:
        return bool(self.merged) and (self.gate is None or self.gate.passed)

    def message(self) -> str:
        count = len(self.merged)
        subject = f"port: merge upstream into {self.backend}'s copies ({count} file{'s' if count > 1 else ''})"
        body = [_wrapped(f"Rule: {COPY_RULE}: each file copies a trunk file under another name or in the backend's "
                         "own package; the 3-way merge of the trunk file's change (base: the copy's recorded base, "
                         "theirs: the trunk file at the new tag, ours: the copy) is clean. Recorded like a drift "
                         "--apply merge: provenance.toml names the new tag's blob where it keeps the copy's base."),
                ""]
        body += [f"- {path} <- {self.trunk_of[path]} ({self.base_of[path]})" for path in sorted(self.merged)]
        if self.left:
            body += ["", "left for a person:", *(f"  {path}: {why}" for path, why in self.left)]
        return subject + "\n\n" + "\n".join(body) + "\n"


def copy_findings(report: Report) -> dict[str, list[Finding]]:
    """The copy findings of each backend, once each (a copy's finding may be listed in several groups), with
    those of its own tree's copies that block the rest (copy-conflicting, copy-orphan)."""
    found: dict[str, dict[tuple[str, str], Finding]] = {}
    for finding in report.findings:
        if finding.kind in COPY_KINDS | _BLOCKING and finding.backend:
            found.setdefault(finding.backend, {}).setdefault((finding.kind, finding.path), finding)
    return {backend: list(by_path.values()) for backend, by_path in sorted(found.items())
            if any(finding.kind in COPY_KINDS for finding in by_path.values())}


def merge_copies(repo: Repository, report: Report, tree: GitTree, files: dict[str, str], backend: str,
                 findings: list[Finding]) -> CopyMerge:
    """The clean 3-way merges of a backend's copies on tree (files: what earlier dry-run edits made of a file)."""
    old = GitTree.of_commit(repo, report.range.old.oid, report.range.old.ref)
    new = GitTree.of_commit(repo, report.range.onto.oid, report.range.onto.ref)
    result = CopyMerge(backend)
    blocking = sorted(finding.path for finding in findings if finding.kind in _BLOCKING)
    own = [finding for finding in findings if finding.kind == OWN_TREE]
    if blocking and own:
        what = f"{len(own)} {'copy' if len(own) == 1 else 'copies'} of {backend}'s own tree (copy-mergeable)"
        result.left.append((what, _mixed(backend, blocking)))
    with scratch_repository(repo) as scratch:  # ours is written there: a dry run writes nothing into repo
        for finding in sorted(findings, key=lambda found: found.path):
            if finding.kind == "copy-stale" or finding.kind == OWN_TREE and not blocking:
                _merge_one(scratch, finding, tree, files, old, new, result)
    _without_split_changes(tree, old, new, result)
    conflicting = [path for path, _ in result.left if path in {finding.path for finding in own}]
    if conflicting:  # the own tree cannot move as one: none of its copies moves
        for finding in own:
            if result.merged.pop(finding.path, None) is not None:
                result.left.append((finding.path, _mixed(backend, conflicting)))
    return result


def _without_split_changes(tree: GitTree, old: GitTree, new: GitTree, result: CopyMerge) -> None:
    """Each merge whose neighbour would keep the old side of upstream's change moved to result.left, until every
    merge left stands with its neighbours (a merge dropped can leave another one behind)."""
    names: dict[str, list[str]] = {}
    for path in tree.paths():
        folder, _, name = path.rpartition("/")
        names.setdefault(folder, []).append(name)
    dropped = True
    while dropped:
        dropped = False
        for path in sorted(result.merged):
            folder, _, own = path.rpartition("/")
            trunk_folder = result.trunk_of[path].rpartition("/")[0]
            behind = [f"{folder}/{name}" for name in names.get(folder, []) if name != own
                      and f"{folder}/{name}" not in result.merged
                      and old.blob_id(f"{trunk_folder}/{name}") != new.blob_id(f"{trunk_folder}/{name}")]
            if behind:  # named first: the copy's own header or source (same stem), the likeliest other half
                behind.sort(key=lambda other: other.rpartition("/")[2].split(".")[0] != own.split(".")[0])
                del result.merged[path]
                result.left.append((path, f"upstream also changed {trunk_folder}/{behind[0].rpartition('/')[2]}, "
                                          f"and {behind[0]} beside the copy is not merged along: merging this file "
                                          "alone would split upstream's change"))
                dropped = True


def _mixed(backend: str, blocking: list[str]) -> str:
    more = f" and {len(blocking) - 1} more" if len(blocking) > 1 else ""
    return (f"{backend} carries its own tree, and {len(blocking)} of its copies ({blocking[0]}{more}) conflict or "
            "were deleted upstream: merging the others alone would mix two upstream versions in it")


def _merge_one(scratch: Repository, finding: Finding, tree: GitTree, files: dict[str, str], old: GitTree,
               new: GitTree, result: CopyMerge) -> None:
    path, trunk = finding.path, finding.related_path or ""
    theirs = new.blob_id(trunk) if trunk and not finding.details.get("renamed_to") else None
    if theirs is None:
        result.left.append((path, f"{trunk or 'its trunk file'} is not at the new tag under that name: nothing to "
                                  "merge"))
        return
    if not tree.exists(path) or not tree.is_regular_file(path):
        result.left.append((path, "not a plain file on the branch (a link, an executable, or gone): never merged"))
        return
    base, said = _base(scratch, finding, old, trunk)
    if base is None:
        result.left.append((path, "no base known for the copy: nothing to merge from"))
        return
    ours = files[path].encode("utf-8") if path in files else tree.read(path) or b""
    if holds_conflict(ours):
        result.left.append((path, "holds committed conflict blocks: never merged"))
        return
    outcome = merge_blobs(scratch, path, base, scratch.create_blob(ours), theirs,
                          (f"{trunk} (base)", f"{result.backend} copy", f"{trunk} (new tag)"))
    if not outcome.clean:
        result.left.append((path, f"the 3-way merge with {trunk} conflicts in {len(outcome.hunks)} hunk(s): "
                                  "merge by hand"))
    elif outcome.data != ours:
        result.merged[path] = outcome.data
        result.trunk_of[path] = trunk
        result.base_of[path] = said


def _base(repo: Repository, finding: Finding, old: GitTree, trunk: str) -> tuple[Oid | None, str]:
    """The copy's 3-way merge base as drift read it: its provenance entry, else the trunk file at the old tag."""
    base = finding.details.get("base")
    if isinstance(base, dict) and base.get("source") == "provenance" and has_object(repo, str(base.get("blob"))):
        return as_oid(str(base["blob"])), f"base {base.get('tag')} from provenance.toml"
    return old.blob_id(trunk), f"base {old.label}"


def recorded(repo: Repository, report: Report, tree: GitTree, merged: set[str]) -> dict[str, bytes]:
    """provenance.toml of the backend as drift --apply writes it after merging these files (the same recorder)."""
    old = GitTree.of_commit(repo, report.range.old.oid, report.range.old.ref)
    new = GitTree.of_commit(repo, report.range.onto.oid, report.range.onto.ref)
    manifests = applied_manifests(tree, merged, report.range.onto.ref, new, report.range.old.ref, old)
    return {path: text.encode("utf-8") for path, text in manifests.items() if text != _text(tree, path)}


def _text(tree: GitTree, path: str) -> str | None:
    data = tree.read(path)
    return data.decode("utf-8", errors="replace") if data is not None else None


def _wrapped(text: str) -> str:
    return textwrap.fill(text, _WIDTH, break_long_words=False, break_on_hyphens=False)
