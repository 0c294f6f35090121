"""The JSON rendering of a Report: schema flagtree-sync/report/1 (fields are only ever added)."""
from __future__ import annotations

import json
from typing import Any

from sync.model import SCHEMA, Report, upstream_changes


def to_document(report: Report) -> dict[str, Any]:
    rng = report.range
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "tool": {"name": "flagtree-sync", "version": report.tool_version},
        "range": rng.to_json(),
        "groups": [group.to_json() for group in report.groups],
        "summary": {
            "conflicted_files": report.conflicted_files,
            "files": [item.to_json() for item in report.files_in_conflict],  # each once, hunks as on the branch
            "conflicts": report.conflicts.to_json(),  # open and resolved, each (commit, file) once
            "findings": report.counts,
            "needs_a_person": report.needs_a_person,
            "releasable": report.releasable,
            "verdicts": {group.name: group.verdict for group in report.groups},
            # one per upstream change across groups, in summary.md's order (the findings keep their details)
            "upstream_changes": [change.to_json() for change in upstream_changes(report)],
        },
    }
    if report.upgrade is not None:
        upgrade = report.upgrade
        document["upgrade"] = {
            **rng.to_json(), "branch": upgrade.branch, "head": upgrade.head, "policy": upgrade.policy,
            "commits": len(report.commits), "empty": sum(1 for commit in report.commits if commit.result is None),
            "upstream": sum(1 for commit in report.commits if commit.upstream is not None),
            "releasable": report.releasable,
            **({"notes": list(upgrade.notes)} if upgrade.notes else {}),
        }
        document["commits"] = [commit.to_json() for commit in report.commits]
    if report.gate is not None:
        document["gate"] = report.gate.to_json()
    if report.drift is not None:
        document["drift"] = {"from": rng.old.ref, "onto": rng.onto.ref, "branch": rng.source.ref,
                             "target": report.drift.target, "applied_commit": report.drift.applied_commit}
    return document


def render_json(report: Report) -> str:
    return json.dumps(to_document(report), indent=2, ensure_ascii=False) + "\n"
