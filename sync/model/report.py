"""The report: frozen value objects built once, complete, from which every renderer works.

Verdicts are computed from everything in a group (conflicts, findings, a failed test gate),
never patched in afterwards. JSON, Markdown and HTML are renderings of these types.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from sync.model.kinds import kind_of
from sync.model.finding import Finding, count_by_severity
from sync.model.revs import Range

SCHEMA = "flagtree-sync/report/1"
BACKEND, CORE_KIND, SHARED_KIND = "backend", "core", "shared"
CORE = "flagtree-core"
SHARED = "shared-trunk"
CI = "ci"  # .github/workflows (layout.DEFAULT_OWNERS): FlagTree's own infrastructure, a group of its own
VERDICTS = ("clean", "needs-review", "blocked")


def backend_among(owners: Iterable[str]) -> str | None:
    """The first of a file's owner groups that is a backend's: neither shared trunk nor FlagTree's core."""
    return next((owner for owner in owners if owner not in (SHARED, CORE)), None)


MARKED_KINDS = ("content", "add/add", "renamed-upstream")  # the conflicts whose file holds markers


@dataclass(frozen=True)
class Hunk:
    line: int  # first line of the <<<<<<< marker in the merged text (1-based)
    ours: str  # the upgraded (new upstream) side
    base: str
    theirs: str  # the FlagTree side

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "ours": self.ours, "base": self.base, "theirs": self.theirs}


@dataclass(frozen=True)
class Conflict:
    """One conflicted file of one replayed commit."""

    commit: str  # the FlagTree commit being replayed
    summary: str
    path: str
    kind: str  # a conflict kind of sync/model/kinds.py: content | add/add | deleted-upstream | deleted-by-flagtree
    resolution: str  # markers | ours | theirs | manual
    owners: tuple[str, ...]
    hunks: tuple[Hunk, ...] = ()
    base_path: str | None = None  # where the file was at the commit's parent, when renamed
    moved_to: str | None = None  # deleted-upstream: where upstream's own diff OLD -> NEW moved the file

    @property
    def resolved(self) -> bool:
        """Resolved by a person (--on-conflict stop, then --continue): it no longer blocks."""
        return self.resolution == "manual"

    @property
    def state(self) -> str:
        """Said so that an open conflict never reads as resolved (issue 48.9), nor a file without markers as
        holding some (a delete or rename conflict is committed as git left the files)."""
        if self.resolution == "markers" and self.kind not in MARKED_KINDS:
            return "open: committed as git left it, no markers"
        return {"manual": "resolved by hand", "markers": "open: committed with markers",
                "ours": "open: the upgraded side kept, unreviewed",
                "theirs": "open: FlagTree's side kept, unreviewed"}.get(self.resolution, f"open: {self.resolution}")

    @property
    def next_step(self) -> str:
        if self.resolved:
            return "nothing: a person resolved it on the branch (check the hunks below against the result)"
        return self.action

    @property
    def action(self) -> str:
        if self.moved_to:
            return f"port the FlagTree change to {self.moved_to}, where upstream moved this file, then delete it"
        return kind_of(self.kind).action

    def to_json(self, with_commit: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "kind": self.kind, "resolution": self.resolution,
                                "open": not self.resolved, "state": self.state,
                                "hunks": [hunk.to_json() for hunk in self.hunks], "base_path": self.base_path,
                                "owners": list(self.owners), "action": self.action,
                                **({"moved_to": self.moved_to} if self.moved_to else {})}
        return {"commit": self.commit, "summary": self.summary, **data} if with_commit else data


@dataclass(frozen=True)
class FileHunks:
    """The hunks a conflicted file has now, as the branch holds it (issue 48): read from the file on the branch
    when it holds one level of markers ("branch"), else those of the single-level 3-way merge that `resolve`
    writes ("resolve"). A commit's own hunks stop matching the file once a later commit merged over them."""

    hunks: tuple[Hunk, ...]
    source: str  # branch | resolve

    def note(self, path: str) -> str:
        if self.source == "branch":
            return f"The hunks of {path} as the branch holds it:"
        return (f"The hunks of {path} as flagtree-sync resolve writes it (OLD, NEW and FlagTree's final file; "
                "the branch holds them nested):")


@dataclass(frozen=True)
class FileConflict:
    """A conflicted file once, with the conflict of each replayed commit that met one there (issue 48.1)."""

    path: str
    conflicts: tuple[Conflict, ...]  # in replay order
    now: FileHunks | None = None  # its hunks on the branch; None: those of its last commit

    @property
    def hunks(self) -> tuple[Hunk, ...]:
        """What the file's conflicts look like: as it is now where known, else as its last commit left it."""
        return self.now.hunks if self.now is not None else self.last.hunks

    @property
    def hunks_note(self) -> str:
        """Whose hunks `hunks` are, said above them when it is not plain (several commits, or read anew)."""
        if self.now is not None and (self.now.source != "branch" or len(self.conflicts) > 1):
            return self.now.note(self.path)
        return f"The hunks of the last, {self.last.commit[:9]}:" if len(self.conflicts) > 1 and not self.now else ""

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "commits": [conflict.commit for conflict in self.conflicts],
                "kinds": list(self.kinds), "open": self.open, "state": self.state,
                "hunks": [hunk.to_json() for hunk in self.hunks],
                "hunks_from": self.now.source if self.now is not None else "commit"}

    @property
    def open(self) -> bool:
        return any(not conflict.resolved for conflict in self.conflicts)

    @property
    def last(self) -> Conflict:
        return self.conflicts[-1]

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(conflict.kind for conflict in self.conflicts))

    @property
    def owners(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(owner for conflict in self.conflicts for owner in conflict.owners))

    @property
    def state(self) -> str:
        opened = [conflict for conflict in self.conflicts if not conflict.resolved]
        return opened[-1].state if opened else "resolved by hand"

    @property
    def next_step(self) -> str:
        if not self.open:
            return self.last.next_step
        if len(self.conflicts) > 1 and "content" in self.kinds:
            return (f"{len(self.conflicts)} commits conflicted here, their markers nested: flagtree-sync resolve "
                    f"{self.path} writes one conflict (OLD, NEW and FlagTree's final file), then resolve it")
        return self.last.next_step


def conflicts_by_file(conflicts: Iterable[Conflict],
                      now: Mapping[str, FileHunks] | None = None) -> list[FileConflict]:
    """Each conflicted path once, in the order it first conflicted; with now, each with its hunks on the
    branch (Report.file_hunks)."""
    found: dict[str, list[Conflict]] = {}
    for conflict in conflicts:
        found.setdefault(conflict.path, []).append(conflict)
    return [FileConflict(path, tuple(listed), (now or {}).get(path)) for path, listed in found.items()]


@dataclass(frozen=True)
class ReplayedCommit:
    source: str
    summary: str
    result: str | None  # the new commit; None when the change was already upstream
    conflicts: tuple[Conflict, ...] = ()
    # why a commit of upstream's own was left out unpicked: "reachable" (NEW's history has it) or "same-patch"
    # (a commit of NEW's history makes the same change); None for FlagTree's commits
    upstream: str | None = None
    reverts: "OrphanRevert | None" = None  # it reverts a commit the run does not replay

    def to_json(self) -> dict[str, Any]:
        data = {"source": self.source, "summary": self.summary, "result": self.result,
                "conflicts": [conflict.to_json(with_commit=False) for conflict in self.conflicts],
                "upstream": self.upstream}
        return {**data, "reverts": self.reverts.to_json()} if self.reverts is not None else data


@dataclass(frozen=True)
class OrphanRevert:
    """A FlagTree commit that says "This reverts commit X" where X is not replayed: X is upstream's and so left
    out ("left-out"), or not a commit of the range ("outside-range"). git rebase would replay the revert onto a
    branch without X (it conflicts, or undoes upstream's own change); --drop-orphan-reverts leaves it out."""

    commit: str  # X
    why: str  # left-out | outside-range
    dropped: bool

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "why": self.why, "dropped": self.dropped}


@dataclass(frozen=True)
class GateRun:
    commit: str  # the replayed commit the command ran on
    label: str  # what it is: the new tag, or the FlagTree commit it replays
    passed: bool
    status: int
    output: str  # the tail of stdout and stderr

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "label": self.label, "passed": self.passed, "status": self.status,
                "output": self.output}


@dataclass(frozen=True)
class GateResult:
    command: str
    at: str  # end | each
    runs: tuple[GateRun, ...] = ()
    first_failure: GateRun | None = None
    baseline_failed: bool = False  # fails on the new tag itself: no replayed commit is to blame
    blamed_groups: tuple[str, ...] = ()  # owners of what the first failing commit changed

    @property
    def passed(self) -> bool:
        return all(run.passed for run in self.runs)

    def verdict(self) -> str:
        if self.passed:
            return f"passed ({len(self.runs)} run(s))"
        if self.baseline_failed:
            return "fails on the new tag itself, so no replayed commit is to blame"
        if self.first_failure is not None:
            return f"first fails at {self.first_failure.commit[:9]} ({self.first_failure.label})"
        return "failed"

    def to_json(self) -> dict[str, Any]:
        return {"command": self.command, "at": self.at, "passed": self.passed, "verdict": self.verdict(),
                "baseline_failed": self.baseline_failed, "runs": [run.to_json() for run in self.runs],
                "first_failure": self.first_failure.to_json() if self.first_failure else None,
                "blamed_groups": list(self.blamed_groups)}


@dataclass(frozen=True)
class Group:
    """Who must look: a backend, FlagTree core or shared trunk, with everything that is theirs."""

    name: str
    kind: str  # backend | core | shared
    conflicts: tuple[Conflict, ...] = ()
    findings: tuple[Finding, ...] = ()
    gate_failed: bool = False  # the test gate's first failure is in this group's code

    @property
    def open_conflicts(self) -> tuple[Conflict, ...]:
        return tuple(conflict for conflict in self.conflicts if not conflict.resolved)

    @property
    def resolutions(self) -> tuple[Conflict, ...]:
        return tuple(conflict for conflict in self.conflicts if conflict.resolved)

    @property
    def tally(self) -> ConflictTally:
        return ConflictTally.of(self.conflicts)

    @property
    def counts(self) -> dict[str, int]:
        return {"conflicts": len(self.open_conflicts), **count_by_severity(self.findings),
                "resolved": len(self.resolutions)}

    @property
    def verdict(self) -> str:
        counts = self.counts
        if counts["conflicts"] or counts["error"] or self.gate_failed:
            return "blocked"
        if counts["warning"] or counts["port"]:
            return "needs-review"
        return "clean"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "verdict": self.verdict, "counts": self.counts,
                "gate_failed": self.gate_failed, "conflicts": [conflict.to_json() for conflict in self.conflicts],
                "findings": [finding.to_json() for finding in self.findings]}


_REMOTE = re.compile(r"^(?:(?:https?|ssh|git)://(?:[^@/]+@)?(?P<host>[^/:]+)(?::\d+)?/|(?:[^@/]+@)?"
                     r"(?P<scp>[^/:]+):)(?P<path>[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+)/?$")


@dataclass(frozen=True)
class Forge:
    """Where a repository's commits and pull requests are on the web, when its remote names a forge."""

    kind: str  # github | gitlab
    base: str  # https://github.com/owner/name

    @classmethod
    def of_remote(cls, url: str) -> Forge | None:
        """github.com, gitlab.com or a gitlab.* host, over https, ssh or scp-style; anything else None."""
        found = _REMOTE.match(url.strip())
        if found is None:
            return None
        host = (found.group("host") or found.group("scp") or "").lower()
        kind = "github" if host == "github.com" else "gitlab" if host == "gitlab.com" or host.startswith("gitlab.") \
            else None
        path = found.group("path").removesuffix(".git")
        return cls(kind, f"https://{host}/{path}") if kind and ".." not in path else None

    def commit(self, commit_id: str) -> str:
        return f"{self.base}{'/-' if self.kind == 'gitlab' else ''}/commit/{commit_id}"

    def pull(self, number: str) -> str:
        return f"{self.base}/-/merge_requests/{number}" if self.kind == "gitlab" else f"{self.base}/pull/{number}"


@dataclass(frozen=True)
class Forges:
    """Upstream's forge (its commits and PRs: the findings' upstream changes) and FlagTree's (its commits)."""

    upstream: Forge | None = None
    fork: Forge | None = None


@dataclass(frozen=True)
class UpgradeInfo:
    branch: str
    head: str
    policy: str
    resumed: bool = False
    notes: tuple[str, ...] = ()  # what looks wrong about the run's input but may be right (a --from too old)


@dataclass(frozen=True)
class DriftInfo:
    target: str  # the upgraded branch analysed, or "(replayed in memory)"
    applied_commit: str | None = None  # drift --apply


@dataclass(frozen=True)
class ConflictTally:
    """Open and resolved conflicts, each (commit, file) once: the one count every command and renderer shows."""

    open: int
    resolved: int
    open_files: tuple[str, ...]  # a file with at least one open conflict
    resolved_files: tuple[str, ...]  # a file whose every conflict a person resolved

    @classmethod
    def of(cls, conflicts: Iterable[Conflict]) -> ConflictTally:
        unique = {(conflict.commit, conflict.path): conflict for conflict in conflicts}
        open_files = {path for (_, path), conflict in unique.items() if not conflict.resolved}
        files = {path for _, path in unique}
        return cls(sum(1 for conflict in unique.values() if not conflict.resolved),
                   sum(1 for conflict in unique.values() if conflict.resolved),
                   tuple(sorted(open_files)), tuple(sorted(files - open_files)))

    @property
    def files(self) -> int:
        return len(self.open_files) + len(self.resolved_files)

    def sentence(self) -> str:
        """e.g. "23 conflicted files (32 conflicts in all, a file once per commit): 0 open, 32 resolved"."""
        count = self.open + self.resolved
        per_commit = f" ({count} conflicts in all, a file once per commit)" if count != self.files else ""
        return f"{self.files} conflicted files{per_commit}: {self.open} open, {self.resolved} resolved"

    def to_json(self) -> dict[str, Any]:
        return {"open": self.open, "resolved": self.resolved, "open_files": list(self.open_files),
                "resolved_files": list(self.resolved_files)}


@dataclass(frozen=True)
class Report:
    range: Range
    groups: tuple[Group, ...]
    commits: tuple[ReplayedCommit, ...] = ()
    upgrade: UpgradeInfo | None = None
    drift: DriftInfo | None = None
    gate: GateResult | None = None
    tool_version: str = ""
    notes: tuple[Finding, ...] = field(default=())  # findings of no group (kept for completeness)
    forges: Forges = field(default=Forges())  # where commits and PRs link to, from the repository's remotes
    file_hunks: Mapping[str, FileHunks] = field(default_factory=dict)  # each conflicted file's hunks on the branch

    @property
    def findings(self) -> list[Finding]:
        return [finding for group in self.groups for finding in group.findings]

    @property
    def conflicted_files(self) -> list[str]:
        return sorted({conflict.path for commit in self.commits for conflict in commit.conflicts})

    @property
    def conflicts(self) -> ConflictTally:
        return ConflictTally.of(conflict for commit in self.commits for conflict in commit.conflicts)

    @property
    def files_in_conflict(self) -> list[FileConflict]:
        return conflicts_by_file((conflict for commit in self.commits for conflict in commit.conflicts),
                                 self.file_hunks)

    def by_file(self, conflicts: Iterable[Conflict]) -> list[FileConflict]:
        """conflicts_by_file with each file's hunks on the branch: what every rendering shows."""
        return conflicts_by_file(conflicts, self.file_hunks)

    @property
    def conflicted_commits(self) -> list[ReplayedCommit]:
        return [commit for commit in self.commits if commit.conflicts]

    @property
    def releasable(self) -> bool:
        """A branch with committed conflict markers, or one its test gate fails on, must not be released."""
        return not self.not_releasable_because

    @property
    def not_releasable_because(self) -> list[str]:
        """Why the branch must not be released, as plain sentences (each rendering escapes them)."""
        why = []
        if any(conflict.resolution == "markers" for commit in self.commits for conflict in commit.conflicts):
            why.append("conflicts were committed with markers; resolve them before release")
        if self.gate is not None and not self.gate.passed:
            why.append(f"the test gate ({self.gate.command}) {self.gate.verdict()}")
        return why

    @property
    def needs_a_person(self) -> bool:
        return any(group.verdict != "clean" for group in self.groups) or bool(
            self.gate is not None and not self.gate.passed) or any(
            not conflict.resolved for commit in self.commits for conflict in commit.conflicts)

    @property
    def exit_status(self) -> int:
        return 1 if self.needs_a_person else 0

    @property
    def counts(self) -> dict[str, int]:
        return count_by_severity(self.findings)
