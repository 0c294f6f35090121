"""`suppress`: record a reviewed drift finding in its backend's suppressions.toml."""
from __future__ import annotations

from dataclasses import dataclass
from difflib import get_close_matches

from sync.errors import SyncError
from sync.model.kinds import BY_ID
from sync.jobs.review import SuppressRequest, record_suppression
from sync.commands import echo_line


@dataclass(frozen=True, kw_only=True)
class SuppressCommandRequest:
    """What `suppress` was given, by name (None: not given)."""

    repo_path: str = "."
    old: str | None = None  # --from
    onto: str | None = None
    source_branch: str | None = None  # --branch
    kind: str
    finding_path: str  # --path
    subject: str | None = None
    target: str | None = None
    reason: str

    def review(self) -> SuppressRequest:
        return SuppressRequest(kind=self.kind, path=self.finding_path, reason=self.reason, subject=self.subject,
                               target=self.target)


def run_suppress(given: SuppressCommandRequest) -> int:
    repo_path, old, onto, source_branch, request = (given.repo_path, given.old, given.onto, given.source_branch,
                                                    given.review())
    if request.kind not in BY_ID:  # before the analysis, and not "no such finding", which reads as a wrong path
        close = get_close_matches(request.kind, list(BY_ID), n=2)
        raise SyncError(f"unknown kind {request.kind!r}" + (f"; did you mean {' or '.join(close)}?" if close else "")
                        + " (flagtree-sync kinds lists them)")
    written = record_suppression(repo_path, old=old, onto=onto, source=source_branch, request=request)
    if written.commit is not None:
        echo_line(f"committed the review on {request.target} as {written.commit[:9]} ({request.target} is checked "
                   f"out in no work tree): drift --target {request.target} counts it now")
    elif written.work_tree_of is not None:
        echo_line(f"recorded in {written.file} (the work tree of {written.work_tree_of}): commit it on "
                   f"{written.work_tree_of} there; drift reads commits, not the work tree")
    else:
        on = written.work_tree_on
        hint = f" (the work tree is on {on or 'a detached HEAD'}, not {source_branch})" \
            if source_branch and on != source_branch else ""
        echo_line(f"recorded in {written.file}; commit it on the FlagTree branch{hint}: drift reads commits, not "
                   "the work tree")
    return 0
