"""Deterministic fault injection for the fault tests: FLAGTREE_SYNC_FAULT=<point> kills the process there.

Points: "commit:N" (right after the state for commit N is saved) and "report" (after the first
report file is written into the staging directory). os._exit skips every cleanup, like kill -9.
"""
from __future__ import annotations

import os

VARIABLE = "FLAGTREE_SYNC_FAULT"
EXIT_STATUS = 137  # what a shell reports for SIGKILL


def checkpoint(point: str) -> None:
    if os.environ.get(VARIABLE) == point:
        os._exit(EXIT_STATUS)
