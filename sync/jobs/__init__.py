"""Jobs: the tool's work, callable without the CLI (benchmarks and tests call these).

Each job resolves its input, runs the analyses, owns the upgrade state's lifecycle and returns a
Report (or check's findings). Commands in sync/commands only parse options, call a job and print.
"""
from .check import CheckResult, run_check
from .drift import DriftOptions, run_drift
from .upgrade import GateOptions, UpgradeOptions, abort_upgrade, continue_upgrade, run_upgrade

__all__ = ["CheckResult", "DriftOptions", "GateOptions", "UpgradeOptions", "abort_upgrade", "continue_upgrade",
           "run_check", "run_drift", "run_upgrade"]
