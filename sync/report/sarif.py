"""SARIF 2.1.0 of a list of findings (check, drift): GitHub code scanning shows them on the pull request.

Rules come from the kinds catalogue: the rule id is a policy kind's code (FT0xx) or the kind's id, its
description the kind's meaning, its help the kind's action, and the property `doc` the kind's anchor in
docs/KINDS.md (relative to the repository root, where the tool's docs live; not helpUri, which SARIF requires
to be an absolute URI). A reviewed finding keeps its result with an external suppression that carries the
reviewer's reason.
"""
from __future__ import annotations

import json
from typing import Any, Iterable
from urllib.parse import quote

from ..kinds import Kind
from ..model import Finding

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def rule_id(kind: Kind) -> str:
    return kind.code or kind.id


def _rule(kind: Kind) -> dict[str, Any]:
    rule: dict[str, Any] = {"id": rule_id(kind), "name": kind.id, "shortDescription": {"text": kind.meaning},
                            "defaultConfiguration": {"level": LEVELS[kind.severity]},
                            "properties": {"family": kind.family, "confidence": kind.confidence, "doc": kind.doc_url}}
    if kind.action:
        rule["help"] = {"text": kind.action}
    return rule


def artifact_uri(path: str) -> str:
    """A relative URI reference for a repository path: every byte but unreserved ones and '/' percent-encoded
    (UTF-8; a non-UTF-8 name's own bytes), so '#', '?', '%' or ':' in a name stay part of the path."""
    return quote(path.encode("utf-8", errors="surrogateescape"), safe="/")


def _result(finding: Finding, index: int) -> dict[str, Any]:
    text = finding.message + (f" (what to do: {finding.next_step})" if finding.next_step else "")
    location: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(finding.path)}}
    if finding.line:
        location["region"] = {"startLine": finding.line}
    result: dict[str, Any] = {"ruleId": rule_id(finding.spec), "ruleIndex": index, "level": LEVELS[finding.severity],
                              "message": {"text": text}, "locations": [{"physicalLocation": location}]}
    if finding.backend:
        result["properties"] = {"backend": finding.backend}
    if finding.suppressed is not None:
        result["suppressions"] = [{"kind": "external", "status": "accepted",
                                   "justification": f"{finding.suppressed.reason} (reviewed for "
                                                    f"{finding.suppressed.reviewed_for})"}]
    return result


def sarif_log(findings: Iterable[Finding], tool_version: str) -> dict[str, Any]:
    findings = list(findings)
    kinds: list[Kind] = []
    for finding in findings:
        if finding.spec not in kinds:
            kinds.append(finding.spec)
    index = {kind.id: number for number, kind in enumerate(kinds)}
    driver = {"name": "flagtree-sync", "version": tool_version, "rules": [_rule(kind) for kind in kinds]}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION,
            "runs": [{"tool": {"driver": driver},
                      "results": [_result(finding, index[finding.kind]) for finding in findings]}]}


def render_sarif(findings: Iterable[Finding], tool_version: str) -> str:
    return json.dumps(sarif_log(findings, tool_version), indent=2, ensure_ascii=False) + "\n"
