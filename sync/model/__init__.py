"""The typed core: revisions, findings and the report that every command builds and every renderer reads."""
from sync.model.build import build_report, group_kind
from sync.model.changes import GroupShare, UpstreamChange, change_of, open_errors, unnamed_findings, upstream_changes
from sync.model.finding import Finding, Review, count_by_severity, needs_a_person, sort_findings
from sync.model.merged import MergedOverlay
from sync.model.report import (CORE, SCHEMA, SHARED, Conflict, ConflictTally, DriftInfo, FileConflict, FileHunks,
                               GateResult,
                               GateRun, Group, Hunk, Report, ReplayedCommit, UpgradeInfo, conflicts_by_file)
from sync.model.revs import Range, Rev

__all__ = ["CORE", "SCHEMA", "SHARED", "Conflict", "ConflictTally", "DriftInfo", "FileConflict", "FileHunks", "conflicts_by_file",
           "Finding", "GateResult", "GateRun",
           "Group", "GroupShare", "Hunk", "MergedOverlay", "Range", "Report", "ReplayedCommit", "Review", "Rev",
           "UpgradeInfo", "UpstreamChange", "build_report", "change_of", "count_by_severity", "group_kind",
           "needs_a_person", "open_errors", "sort_findings", "unnamed_findings", "upstream_changes"]
