"""The check job: the seed's directory policy on a tree on disk."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sync.check.policy import check_tree
from sync.check.baseline import apply_baseline, load_baseline
from sync.errors import SyncError
from sync.support.gcpolicy import job
from sync.facts.layout import TRUNK, backend_names
from sync.model import Finding, count_by_severity, sort_findings
from sync.facts.trees import DiskTree


@dataclass(frozen=True)
class CheckResult:
    root: Path
    findings: tuple[Finding, ...]
    baseline: Path | None = None  # the baseline read: its findings are reviewed, only new ones fail
    known: int = 0  # findings the baseline matched
    stale: int = 0  # baseline entries no finding matched (fixed since)

    @property
    def counts(self) -> dict[str, int]:
        return count_by_severity(self.findings)

    @property
    def exit_status(self) -> int:
        return 1 if self.counts["error"] else 0


@job
def run_check(path: Path, backends: frozenset[str] = frozenset(), allow_markers: tuple[str, ...] = (),
              baseline: Path | None = None) -> CheckResult:
    """baseline: a file of check --write-baseline; the findings it holds no longer fail the check."""
    known = load_baseline(baseline) if baseline is not None else None  # a bad file fails before the walk
    result = _checked(path, backends, allow_markers)
    if baseline is None or known is None:
        return result
    applied = apply_baseline(path, result.findings, known, str(baseline))
    return CheckResult(path, applied.findings, baseline, applied.known, applied.stale)


def _checked(path: Path, backends: frozenset[str], allow_markers: tuple[str, ...]) -> CheckResult:
    if not path.is_dir():
        raise SyncError(f"{path} is not a directory")
    if not (path / TRUNK).is_dir():
        raise SyncError(f"{path} has no {TRUNK}/: not a FlagTree tree")
    tree = DiskTree(path)
    unknown = sorted(set(backends) - set(backend_names(tree)))
    if unknown:
        raise SyncError(f"no spec tree for backend(s) {', '.join(unknown)} under {path}/third_party")
    return CheckResult(path, tuple(sort_findings(check_tree(tree, set(backends) or None, allow_markers))))
