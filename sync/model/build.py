"""Assemble a Report from what a run produced: replayed commits, findings, a gate result."""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Mapping, Protocol, Sequence

from sync.model.finding import Finding, sort_findings
from sync.model.report import (BACKEND, CI, CORE, CORE_KIND, SHARED, SHARED_KIND, Conflict, DriftInfo, Forge, Forges,
                               GateResult, Group, Report, ReplayedCommit, UpgradeInfo)
from sync.model.revs import Range

class OwnersOf(Protocol):
    """Who owns a path; given a commit subject and a conflict's FlagTree side, the groups of the tags and gates
    of that side (OwnerIndex.owners)."""

    def __call__(self, path: str, summary: str = "", flagtree_side: Sequence[str] = ()) -> Sequence[str]: ...


def conflict_owners(owners_of: OwnersOf, path: str, summary: str, flagtree_sides: Iterable[str]) -> tuple[str, ...]:
    """Every group whose code is on the FlagTree side of a conflict: the owners of each hunk's FlagTree lines
    (a gate around one hunk names its feature), or of the path where no hunk has lines (delete/modify)."""
    sides = [side.splitlines() for side in flagtree_sides if side.strip()]
    found = [group for side in sides for group in owners_of(path, summary, side)] if sides \
        else list(owners_of(path, summary))
    return tuple(dict.fromkeys(found))


def group_kind(name: str) -> str:
    return CORE_KIND if name in (CORE, CI) else SHARED_KIND if name == SHARED else BACKEND


def build_report(range_: Range, backends: Iterable[str], findings: Iterable[Finding],
                 commits: Sequence[ReplayedCommit] = (), upgrade: UpgradeInfo | None = None,
                 drift: DriftInfo | None = None, gate: GateResult | None = None,
                 only: set[str] | None = None, tool_version: str = "", strict: bool = False,
                 forges: Forges = Forges(), moves: Mapping[str, str] | None = None) -> Report:
    """Groups are every backend (or `only` those, each a row even when it has nothing: the caller checked the
    names are groups of the tree), plus core and shared where they have something. strict (drift, status):
    `only` those groups and nothing else, so a report of B shows and exits on B alone (an upgrade keeps core and
    shared: its replay is of the whole branch). A conflict no kept group owns is left out of the commits too.
    moves: upstream's renames OLD -> NEW, so a file deleted upstream names where upstream moved it (git's
    cherry-pick compares FlagTree's version, often too changed to follow the rename)."""
    if moves:
        commits = [replace(commit, conflicts=tuple(
            replace(c, moved_to=moves[c.path]) if c.kind == "deleted-upstream" and c.path in moves else c
            for c in commit.conflicts)) for commit in commits]
    conflicts: dict[str, list[Conflict]] = {}
    grouped: dict[str, list[Finding]] = {}
    names = sorted(only) if only else list(backends)

    def keep(name: str) -> bool:
        return not only or name in only or (not strict and name in (CORE, SHARED))

    if only and strict:
        commits = [replace(commit, conflicts=tuple(c for c in commit.conflicts if any(map(keep, c.owners))))
                   for commit in commits]

    for commit in commits:
        for conflict in commit.conflicts:
            for owner in conflict.owners:
                if keep(owner):
                    conflicts.setdefault(owner, []).append(conflict)
    for finding in sort_findings(findings):
        owner = finding.backend or SHARED
        if keep(owner):
            grouped.setdefault(owner, []).append(finding)
    blamed = set(gate.blamed_groups) if gate is not None and not gate.passed else set()
    names += [name for name in (*conflicts, *grouped, *blamed) if name not in names and keep(name)]
    ordered = sorted(set(names), key=lambda name: (group_kind(name) != BACKEND, name))
    groups = tuple(Group(name, group_kind(name), tuple(conflicts.get(name, ())), tuple(grouped.get(name, ())),
                         gate_failed=name in blamed) for name in ordered)
    return Report(range_, groups, tuple(commits), upgrade, drift, gate, tool_version, forges=forges)


def forges_of(remotes: dict[str, str]) -> Forges:
    """The forges a repository's remotes (name -> URL) name: upstream's is the remote called upstream (else the
    first other than origin that names one), FlagTree's the one called origin."""
    named = {name: forge for name, url in remotes.items() if (forge := Forge.of_remote(url)) is not None}
    upstream = named.get("upstream") or next((forge for name, forge in named.items() if name != "origin"), None)
    return Forges(upstream, named.get("origin"))
