"""Jobs: the tool's work, callable without the CLI (benchmarks and tests call these).

Each job resolves its input, runs the analyses, owns the upgrade state's lifecycle and returns a
Report (or check's findings). Commands in sync/commands only parse options, call a job and print.
Each name is imported on first use: a drift whose result is cached needs none of check's parsers.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sync.jobs.check import CheckResult, run_check
    from sync.jobs.drift import DriftOptions, run_drift
    from sync.jobs.upgrade import (ConflictPolicy, ContinueOverrides, GateOptions, ReplayChoices, RunOptions,
                                   UpgradeOptions, abort_upgrade, continue_upgrade, run_upgrade)

_HOMES = {"CheckResult": "check", "run_check": "check", "DriftOptions": "drift", "run_drift": "drift",
          "ConflictPolicy": "upgrade", "ContinueOverrides": "upgrade", "GateOptions": "upgrade",
          "ReplayChoices": "upgrade", "RunOptions": "upgrade", "UpgradeOptions": "upgrade", "abort_upgrade": "upgrade",
          "continue_upgrade": "upgrade", "run_upgrade": "upgrade"}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value
    return value
