"""The finding record shared by check, drift and upgrade; its kind's catalogue entry gives it a severity."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from sync.model.kinds import CONFIDENCES, SEVERITIES, Kind, kind_of


@dataclass(frozen=True)
class Review:
    """A suppressions.toml entry that matched a finding: why it needs no change, for which tag."""

    reason: str
    reviewed_for: str

    def to_json(self) -> dict[str, str]:
        return {"reason": self.reason, "reviewed_for": self.reviewed_for}


_LINE_BREAK = re.compile(r"[ \t]*[\r\n]+\s*")


@dataclass(frozen=True)
class Finding:
    kind: str  # an id of sync/model/kinds.py
    path: str
    message: str
    action: str | None = None  # None: the catalogue's action for the kind
    line: int | None = None
    backend: str | None = None
    related_path: str | None = None  # the trunk counterpart, the renamed path, ...
    diff: str | None = None  # unified diff of the upstream change the finding rests on
    details: dict[str, Any] = field(default_factory=dict)
    suppressed: Review | None = None  # a still-valid review: stays in the report, leaves the exit status alone
    expired: Review | None = None  # a review whose trunk counterpart changed again since

    def __post_init__(self) -> None:
        kind_of(self.kind)  # fail at the call site, not in a renderer
        if "\n" in self.message or "\r" in self.message:  # one line a finding: code quoted in it may span lines
            object.__setattr__(self, "message", _LINE_BREAK.sub(" ", self.message))

    @property
    def spec(self) -> Kind:
        return kind_of(self.kind)

    @property
    def severity(self) -> str:
        return self.spec.severity

    @property
    def code(self) -> str | None:
        return self.spec.code

    @property
    def next_step(self) -> str:
        return self.spec.action if self.action is None else self.action

    @property
    def open(self) -> bool:
        """Counts toward the exit status: error, warning or port, not reviewed."""
        return self.severity != "info" and self.suppressed is None

    def location(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    def with_review(self, suppressed: Review | None = None, expired: Review | None = None) -> "Finding":
        return replace(self, suppressed=suppressed, expired=expired)

    def to_json(self) -> dict[str, Any]:
        """The stable form (schema flagtree-sync/report/1): empty fields are left out."""
        details = dict(self.details)
        if self.expired is not None:
            details["suppression_expired"] = self.expired.to_json()
        data: dict[str, Any] = {
            "kind": self.kind, "severity": self.severity, "path": self.path, "message": self.message,
            "action": self.next_step, "line": self.line, "backend": self.backend, "code": self.code,
            "related_path": self.related_path, "diff": self.diff, "details": details,
            "suppressed": self.suppressed.to_json() if self.suppressed else None,
            "family": self.spec.family, "confidence": self.spec.confidence, "doc": self.spec.doc_url,
        }
        return {key: value for key, value in data.items() if value not in (None, "", {})}


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    """What most likely needs a person first: severity, then confidence, then place."""
    order = {severity: rank for rank, severity in enumerate(SEVERITIES)}
    sure = {confidence: rank for rank, confidence in enumerate(CONFIDENCES)}
    return sorted(findings, key=lambda f: (f.backend or "", order[f.severity], sure[f.spec.confidence], f.path,
                                           f.line or 0, f.kind))


def needs_a_person(findings: Iterable[Finding]) -> bool:
    """Exit status 1 is for errors, warnings and port work; info and reviewed findings never fail a gate."""
    return any(finding.open for finding in findings)


def count_by_severity(findings: Iterable[Finding]) -> dict[str, int]:
    """Counts of findings still open; suppressed ones are counted apart."""
    counts = {**dict.fromkeys(SEVERITIES, 0), "suppressed": 0}
    for finding in findings:
        counts["suppressed" if finding.suppressed else finding.severity] += 1
    return counts
