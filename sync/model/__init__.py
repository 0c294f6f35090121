"""The typed core: revisions, findings and the report that every command builds and every renderer reads."""
from sync.model.build import build_report, group_kind
from sync.model.finding import Finding, Review, count_by_severity, needs_a_person, sort_findings
from sync.model.merged import MergedOverlay
from sync.model.report import (CORE, SCHEMA, SHARED, Conflict, ConflictTally, DriftInfo, GateResult, GateRun, Group,
                               Hunk, Report, ReplayedCommit, UpgradeInfo)
from sync.model.revs import Range, Rev

__all__ = ["CORE", "SCHEMA", "SHARED", "Conflict", "ConflictTally", "DriftInfo", "Finding", "GateResult", "GateRun",
           "Group", "Hunk", "MergedOverlay", "Range", "Report", "ReplayedCommit", "Review", "Rev", "UpgradeInfo",
           "build_report", "count_by_severity", "group_kind", "needs_a_person", "sort_findings"]
