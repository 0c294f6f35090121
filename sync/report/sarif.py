"""SARIF 2.1.0 of a list of findings (check, drift), and of drift's open replay conflicts: GitHub code scanning
shows them on the pull request. A conflict where a rename is involved names the other path as a related location.

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

from sync.model.kinds import Kind, kind_of
from sync.model import Finding
from sync.model.report import Conflict

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "port": "warning", "info": "note"}


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


SITES_SHOWN = 100  # related locations of one result; report.json keeps every site


def _sites(finding: Finding) -> list[tuple[str, int | None]]:
    """details.sites (path:line) of a finding per upstream change, in order."""
    sites = finding.details.get("sites")
    out: list[tuple[str, int | None]] = []
    for site in sites if isinstance(sites, list) else []:
        path, _, line = str(site).rpartition(":")
        out.append((path, int(line)) if path and line.isdigit() else (str(site), None))
    return list(dict.fromkeys(out))


def _declarations(finding: Finding) -> dict[tuple[str, int | None], str]:
    """Site -> the declaration it uses, for a finding folded from several (details.declarations)."""
    parts = finding.details.get("declarations")
    out: dict[tuple[str, int | None], str] = {}
    for part in parts if isinstance(parts, list) else []:
        for site in _sites(Finding(finding.kind, finding.path, "", details={"sites": part.get("sites") or []})):
            out.setdefault(site, str(part.get("declaration")))
    return out


def _result(finding: Finding, index: int) -> dict[str, Any]:
    text = finding.message + (f" (what to do: {finding.next_step})" if finding.next_step else "")
    location: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(finding.path)}}
    if finding.line:
        location["region"] = {"startLine": finding.line}
    result: dict[str, Any] = {"ruleId": rule_id(finding.spec), "ruleIndex": index, "level": LEVELS[finding.severity],
                              "message": {"text": text}, "locations": [{"physicalLocation": location}]}
    if finding.backend:
        result["properties"] = {"backend": finding.backend}
    others = [site for site in _sites(finding) if site != (finding.path, finding.line)]
    declared = _declarations(finding)
    if others:  # a finding per upstream change: its other FlagTree sites
        result["relatedLocations"] = [
            {"id": number, "message": {"text": "another site of the same upstream change"
                                               + (f" ({declared[(path, line)]})" if (path, line) in declared else "")},
             "physicalLocation": {"artifactLocation": {"uri": artifact_uri(path)},
                                  **({"region": {"startLine": line}} if line else {})}}
            for number, (path, line) in enumerate(others[:SITES_SHOWN], start=1)]
    if finding.suppressed is not None:
        result["suppressions"] = [{"kind": "external", "status": "accepted",
                                   "justification": f"{finding.suppressed.reason} (reviewed for "
                                                    f"{finding.suppressed.reviewed_for})"}]
    return result


def _conflict_result(conflict: Conflict, index: int) -> dict[str, Any]:
    """An open replay conflict; where a rename is involved, the other path is a related location."""
    kind = kind_of(conflict.kind)
    where = f" (the file was {conflict.base_path} before)" if conflict.base_path else ""
    result: dict[str, Any] = {
        "ruleId": rule_id(kind), "ruleIndex": index, "level": LEVELS[kind.severity],
        "message": {"text": f"{conflict.kind} conflict replaying {conflict.commit[:9]} {conflict.summary}{where} "
                            f"(what to do: {conflict.next_step})"},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": conflict.path}}}]}
    if conflict.base_path:
        result["relatedLocations"] = [{"id": 1, "message": {"text": "the path at the commit's parent"},
                                       "physicalLocation": {"artifactLocation": {"uri": conflict.base_path}}}]
    return result


def sarif_log(findings: Iterable[Finding], tool_version: str, conflicts: Iterable[Conflict] = ()) -> dict[str, Any]:
    findings, conflicts = list(findings), list(conflicts)
    kinds: list[Kind] = []
    for spec in [finding.spec for finding in findings] + [kind_of(conflict.kind) for conflict in conflicts]:
        if spec not in kinds:
            kinds.append(spec)
    index = {kind.id: number for number, kind in enumerate(kinds)}
    driver = {"name": "flagtree-sync", "version": tool_version, "rules": [_rule(kind) for kind in kinds]}
    results = [_result(finding, index[finding.kind]) for finding in findings]
    results += [_conflict_result(conflict, index[conflict.kind]) for conflict in conflicts]
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [{"tool": {"driver": driver}, "results": results}]}


def render_sarif(findings: Iterable[Finding], tool_version: str, conflicts: Iterable[Conflict] = ()) -> str:
    return json.dumps(sarif_log(findings, tool_version, conflicts), indent=2, ensure_ascii=False) + "\n"
