"""The check job: the seed's directory policy on a tree on disk."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..analyzers.policy import check_tree
from ..errors import SyncError
from ..gcpolicy import job
from ..layout import TRUNK, backend_names
from ..model import Finding, count_by_severity, sort_findings
from ..trees import DiskTree


@dataclass(frozen=True)
class CheckResult:
    root: Path
    findings: tuple[Finding, ...]

    @property
    def counts(self) -> dict[str, int]:
        return count_by_severity(self.findings)

    @property
    def exit_status(self) -> int:
        return 1 if self.counts["error"] else 0


@job
def run_check(path: Path, backends: frozenset[str] = frozenset(), allow_markers: tuple[str, ...] = ()) -> CheckResult:
    if not path.is_dir():
        raise SyncError(f"{path} is not a directory")
    if not (path / TRUNK).is_dir():
        raise SyncError(f"{path} has no {TRUNK}/: not a FlagTree tree")
    tree = DiskTree(path)
    unknown = sorted(set(backends) - set(backend_names(tree)))
    if unknown:
        raise SyncError(f"no spec tree for backend(s) {', '.join(unknown)} under {path}/third_party")
    return CheckResult(path, tuple(sort_findings(check_tree(tree, set(backends) or None, allow_markers))))
