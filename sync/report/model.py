"""Assemble the report document (the stable JSON schema every renderer reads)."""
from __future__ import annotations

from typing import Any, Iterable

from .. import __version__
from ..analyzers.owners import CORE, SHARED, OwnerIndex
from ..findings import Finding, count_by_severity, needs_a_person, sort_findings
from ..upgrade import UpgradeResult

SCHEMA = "flagtree-sync/report/1"


def _verdict(conflicts: int, findings: list[Finding]) -> str:
    counts = count_by_severity(findings)
    if conflicts or counts["error"]:
        return "blocked"
    if counts["warning"]:
        return "needs-review"
    return "clean"


def build_report(upgrade: UpgradeResult | None, owners: OwnerIndex, findings: Iterable[Finding],
                 drift_range: dict[str, str] | None = None, only: set[str] | None = None) -> dict[str, Any]:
    """The document; with `only`, backend groups other than those are left out (core and shared stay)."""
    findings = sort_findings(findings)
    groups: dict[str, dict[str, Any]] = {}

    def group(name: str) -> dict[str, Any]:
        kind = "core" if name == CORE else "shared" if name == SHARED else "backend"
        return groups.setdefault(name, {"name": name, "kind": kind, "conflicts": [], "findings": []})

    for backend in owners.backends:
        if not only or backend in only:
            group(backend)
    commits = []
    if upgrade is not None:
        for result in upgrade.results:
            entries = []
            for conflict in result.conflicts:
                entry = {**conflict.to_json(), "owners": owners.owners(conflict.path)}
                entries.append(entry)
                for owner in entry["owners"]:
                    if not only or owner in only or owner in (CORE, SHARED):
                        group(owner)["conflicts"].append({"commit": result.source, "summary": result.summary, **entry})
            commits.append({"source": result.source, "summary": result.summary, "result": result.result,
                            "conflicts": entries})
    for finding in findings:
        group(finding.backend or SHARED)["findings"].append(finding.to_json())
    for entry in groups.values():
        entry_findings = [f for f in findings if (f.backend or SHARED) == entry["name"]]
        entry["counts"] = {"conflicts": len(entry["conflicts"]), **count_by_severity(entry_findings)}
        entry["verdict"] = _verdict(len(entry["conflicts"]), entry_findings)

    conflicted_files = sorted({c["path"] for commit in commits for c in commit["conflicts"]})
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "tool": {"name": "flagtree-sync", "version": __version__},
        "groups": [groups[name] for name in sorted(groups, key=lambda n: (groups[n]["kind"] != "backend", n))],
        "summary": {
            "conflicted_files": conflicted_files,
            "findings": count_by_severity(findings),
            "needs_a_person": bool(conflicted_files) or needs_a_person(findings),
        },
    }
    if upgrade is not None:
        params = upgrade.params
        uses_markers = params.policy == "markers" and bool(conflicted_files)
        document["upgrade"] = {
            "from": {"ref": params.old, "commit": params.old_id},
            "onto": {"ref": params.onto, "commit": params.onto_id},
            "source": {"ref": params.src, "commit": params.src_id},
            "branch": params.branch, "head": upgrade.head, "policy": params.policy,
            "commits": len(upgrade.results),
            "empty": sum(1 for result in upgrade.results if result.result is None),
            "releasable": not uses_markers,
        }
        document["commits"] = commits
    if drift_range is not None:
        document["drift"] = drift_range
    return document


def exit_status(document: dict[str, Any]) -> int:
    return 1 if document["summary"]["needs_a_person"] else 0
