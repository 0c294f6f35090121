"""The finding record shared by check, drift and upgrade, and its stable JSON form."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    kind: str  # a stable slug, e.g. "overlay-conflicting" or "spec-path-forbidden"
    severity: str  # error | warning | info
    path: str
    message: str
    action: str = ""  # what to do about it, one line
    line: int | None = None
    backend: str | None = None
    code: str | None = None  # rule id for check findings (FT001...)
    related_path: str | None = None  # the trunk counterpart, the renamed path, ...
    diff: str | None = None  # unified diff, when one helps
    details: dict[str, Any] = field(default_factory=dict)
    suppressed: dict[str, str] | None = None  # reason and tag of a still-valid review (suppressions.toml)

    def location(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {key: value for key, value in data.items() if value not in (None, "", {})}


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    order = {severity: rank for rank, severity in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: (f.backend or "", order[f.severity], f.path, f.line or 0, f.kind))


def needs_a_person(findings: Iterable[Finding]) -> bool:
    """Exit status 1 is for errors and warnings; info and reviewed (suppressed) findings never fail a gate."""
    return any(finding.severity in ("error", "warning") and not finding.suppressed for finding in findings)


def count_by_severity(findings: Iterable[Finding]) -> dict[str, int]:
    """Counts of findings still open; suppressed ones are counted apart."""
    counts = {**dict.fromkeys(SEVERITIES, 0), "suppressed": 0}
    for finding in findings:
        counts["suppressed" if finding.suppressed else finding.severity] += 1
    return counts
