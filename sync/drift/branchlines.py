"""Paths and lines on the branch the user edits (issue 45).

An analysis reads FlagTree's lines on the source branch (or a CMake target on the new tag); after an upgrade
the user edits the upgraded branch, where the replay moved those lines, and a file upstream renamed sits under
its new name. Each finding's path, line and sites are moved there, through git's diff of the two blobs: a line
outside every hunk shifts by the hunks above it; a line inside a hunk goes to the same text among the hunk's
new lines (the nearest such line), else to the line that replaced it at its place in the hunk (a signature fixed
on the branch); a line the branch deleted with nothing in its place keeps its path only.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Mapping

from sync.git import GitError, GitTree, Hunk, blob_hunks
from sync.model import Finding

FORK, NEW, BRANCH = "fork", "new", "branch"  # the tree an analysis reads its lines from
_SITE = re.compile(r"^(?P<path>.+):(?P<line>\d+)$", re.DOTALL)


def moved_line(hunks: tuple[Hunk, ...], line: int) -> int | None:
    """Where line of a blob is in the other blob of the diff whose hunks (no context) are given; None when
    the diff deleted it and put nothing in its place."""
    shift = 0
    for hunk in hunks:
        if hunk.old_lines == 0:  # lines inserted after old_start
            if line > hunk.old_start:
                shift += hunk.new_lines
                continue
            break
        if line < hunk.old_start:
            break
        if line < hunk.old_start + hunk.old_lines:
            text = hunk.removed[line - hunk.old_start].rstrip()
            same = [index for index, added in enumerate(hunk.added) if added.rstrip() == text]
            offset = line - hunk.old_start
            if same:
                return hunk.new_start + min(same, key=lambda index: (abs(index - offset), index))
            if hunk.new_lines:  # rewritten in place (a fixed signature): the line that stands where it stood
                return hunk.new_start + min(offset, hunk.new_lines - 1)
            return None
        shift += hunk.new_lines - hunk.old_lines
    return line + shift


@dataclass
class BranchPlaces:
    """Moves places read on the source branch (or the new tag) to the upgraded branch."""

    sources: Mapping[str, GitTree]  # FORK and NEW: the trees analyses read lines from
    branch: GitTree
    renames: Mapping[str, str]  # upstream's renames, old path -> new path
    _hunks: dict[tuple[str, str], tuple[Hunk, ...] | None] = field(default_factory=dict)

    def path(self, path: str) -> str:
        if self.branch.exists(path):
            return path
        return self.renames.get(path, path)

    def line(self, read_on: str, path: str, line: int) -> int | None:
        key = (read_on, path)
        if key not in self._hunks:
            self._hunks[key] = self._diff(self.sources[read_on], path)
        hunks = self._hunks[key]
        return line if hunks is None else moved_line(hunks, line)

    def _diff(self, source: GitTree, path: str) -> tuple[Hunk, ...] | None:
        """The hunks source -> branch of one file; None when there is nothing to move (the same blob, or a
        side without the file: then no line of the source names a line of the branch)."""
        before, after = source.blob_id(path), self.branch.blob_id(self.path(path))
        if before is None or after is None or before == after:
            return None
        try:
            return blob_hunks(self.branch.repo, before, after)
        except (GitError, KeyError):  # a blob a partial clone lacks: the analyses say so themselves
            return None

    def site(self, read_on: str, site: str) -> str:
        match = _SITE.match(site)
        if match is None:
            return site
        path = match["path"]
        line = self.line(read_on, path, int(match["line"]))
        return self.path(path) if line is None else f"{self.path(path)}:{line}"

    def finding(self, read_on: str, finding: Finding) -> Finding:
        if read_on == BRANCH:
            return finding
        path = self.path(finding.path)
        line = self.line(read_on, finding.path, finding.line) if finding.line else finding.line
        details = finding.details
        message = finding.message
        sites = details.get("sites")
        if isinstance(sites, list) and sites:
            moved = [self.site(read_on, str(site)) for site in sites]
            for before, after in zip(sites, moved):
                if before != after:
                    message = re.sub(re.escape(str(before)) + r"(?!\d)", lambda _: after, message)
            details = {**details, "sites": moved}
        call_site = details.get("call_site")
        if isinstance(call_site, str):
            details = {**details, "call_site": self.site(read_on, call_site)}
        if (path, line, message, details) == (finding.path, finding.line, finding.message, finding.details):
            return finding
        if line is None and finding.line is not None:
            details = {**details, "line_on_source": finding.line}
        return replace(finding, path=path, line=line, message=message, details=details)
