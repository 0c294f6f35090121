"""The upstream changes behind a report's open errors and warnings, across backends (issue 33).

Drift folds findings per upstream change and backend, so one PR that broke four backends is four findings on
four pages. The release summary wants it once: a row per change, with every group it reaches, so that a
maintainer reads the PR once and the release engineer sees which changes cost the most.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, NamedTuple

from sync.model.finding import Finding
from sync.model.kinds import SEVERITIES
from sync.model.report import Group, Report


class GroupShare(NamedTuple):
    """What one group holds of an upstream change."""

    name: str
    findings: int
    sites: int


@dataclass(frozen=True)
class UpstreamChange:
    """One upstream change (its PRs, else its commits) and the open findings of every group that stand on it."""

    key: str  # "#8850", "#8850, #8851", or short commit ids when no subject names a PR
    prs: tuple[str, ...]
    commits: tuple[str, ...]  # "shortid subject", the first one's order kept
    severity: str  # the worst: error or warning
    kinds: tuple[str, ...]
    groups: tuple[GroupShare, ...]  # in the report's group order

    @property
    def findings(self) -> int:
        return sum(share.findings for share in self.groups)

    @property
    def sites(self) -> int:
        return sum(share.sites for share in self.groups)

    def to_json(self) -> dict[str, Any]:
        return {"change": self.key, "prs": list(self.prs), "commits": list(self.commits), "severity": self.severity,
                "kinds": list(self.kinds),
                "groups": {share.name: {"findings": share.findings, "sites": share.sites} for share in self.groups},
                "findings": self.findings, "sites": self.sites}


def _groups(source: Report | Iterable[Group]) -> tuple[Group, ...]:
    return source.groups if isinstance(source, Report) else tuple(source)


def _strings(value: Any) -> list[str]:
    return [str(item) for item in value if str(item)] if isinstance(value, list) else []


def change_of(finding: Finding) -> str | None:
    """The upstream change a finding names: its PR numbers ("#8850", several joined), else its commits' short
    ids; None when it names no commit."""
    commits = _strings(finding.details.get("commits"))
    if not commits:
        return None
    prs = sorted(set(_strings(finding.details.get("prs"))), key=lambda pr: (len(pr), pr))  # numeric for digits
    if prs:
        return ", ".join(f"#{pr}" for pr in prs)
    return ", ".join(sorted({line.split(" ", 1)[0] for line in commits}))


def sites_of(finding: Finding) -> int:
    """A folded finding counts its sites (details.sites); any other finding is one site."""
    sites = finding.details.get("sites")
    return len(sites) if isinstance(sites, list) and sites else 1


def open_errors(source: Report | Iterable[Group]) -> list[tuple[Group, list[Finding]]]:
    """Each group with open errors, in the table's order, with them: what blocks the release first."""
    found = [(group, [f for f in group.findings if f.severity == "error" and f.suppressed is None])
             for group in _groups(source)]
    return [(group, errors) for group, errors in found if errors]


def unnamed_findings(source: Report | Iterable[Group]) -> int:
    """Open errors, warnings and port work that name no upstream change: only the group pages list them."""
    return sum(1 for group in _groups(source) for f in group.findings if f.open and change_of(f) is None)


def upstream_changes(source: Report | Iterable[Group]) -> list[UpstreamChange]:
    """One per upstream change over every group's open errors and warnings that name one: errors first, then
    the most sites, then the key."""
    members: dict[str, list[tuple[str, Finding]]] = {}
    for group in _groups(source):
        for finding in group.findings:
            key = change_of(finding) if finding.open else None
            if key is not None:
                members.setdefault(key, []).append((group.name, finding))
    changes = []
    for key, found in members.items():
        shares: dict[str, list[int]] = {}
        for name, finding in found:
            share = shares.setdefault(name, [0, 0])
            share[0] += 1
            share[1] += sites_of(finding)
        findings = [finding for _, finding in found]
        changes.append(UpstreamChange(
            key, tuple(dict.fromkeys(pr for f in findings for pr in _strings(f.details.get("prs")))),
            tuple(dict.fromkeys(line for f in findings for line in _strings(f.details.get("commits")))),
            min((f.severity for f in findings), key=SEVERITIES.index),
            tuple(sorted({f.kind for f in findings})),
            tuple(GroupShare(name, count, sites) for name, (count, sites) in shares.items())))
    return sorted(changes, key=lambda change: (change.severity != "error", -change.sites, change.key))
