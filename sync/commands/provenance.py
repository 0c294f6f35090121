"""`provenance`: record the upstream base of every file of a backend."""
from __future__ import annotations

from dataclasses import dataclass

from sync.jobs.review import record_provenance
from sync.commands import echo_line


@dataclass(frozen=True, kw_only=True)
class ProvenanceRequest:
    """What `provenance` was given, by name (None: not given)."""

    repo_path: str = "."
    tag: str
    backend: str
    source_branch: str | None = None  # --branch
    old: str | None = None  # --from


def run_provenance(request: ProvenanceRequest) -> int:
    tag = request.tag
    recorded = record_provenance(request.repo_path, tag=tag, backend=request.backend, source=request.source_branch,
                                 old=request.old)
    if recorded.nothing:
        echo_line(f"nothing to record: no file of backend {request.backend} stands in for a trunk file at {tag} "
                  f"({recorded.manifest.name} not written)")
        return 0
    if recorded.count == 0 and not recorded.unmerged:
        echo_line(f"{recorded.manifest} already records these bases: nothing changed")
    elif recorded.count:
        echo_line(f"recorded {recorded.count} file(s) in {recorded.manifest}; commit it with the backend")
    if recorded.marked:
        echo_line(f"left at their old base: {', '.join(recorded.marked)}: they hold committed conflict markers; "
                  "resolve them, commit, and run provenance again", err=True)
    to_merge = [path for path in recorded.unmerged if path not in recorded.redundant + recorded.marked]
    if to_merge:
        echo_line(f"left at their old base: {', '.join(to_merge)}: {tag}'s change is not in them (merging "
                   "it from their base would still change them); merge it (drift --apply, or by hand and "
                   "commit) and run provenance again",
                   err=True)
    if recorded.redundant:  # a merge would only make them copies of the new trunk file: nothing of FlagTree's
        echo_line(f"left at their old base: {', '.join(recorded.redundant)}: identical to their trunk file at their "
                   f"base, so they hold nothing of FlagTree's (drift: overlay-redundant); delete them (git rm) rather "
                   "than merge and commit, then run provenance again", err=True)
    if recorded.uncommitted:  # provenance reads the branch's commit, never the work tree
        echo_line(f"changed here but not committed: {', '.join(recorded.uncommitted)}: provenance reads the "
                   "branch's commit; commit the change, then run provenance again", err=True)
    if recorded.unmerged:
        return 1
    if not recorded.checked:
        echo_line(f"note: not checked that every file holds {tag}'s change (no recorded base, and no --from OLD "
                   "nor pinned FlagTree commits to read it from): run drift first", err=True)
    return 0
