"""The terminal's group rows, one format for upgrade and status: open and resolved conflicts side by side."""
from __future__ import annotations

from sync.model import Group


def group_line(group: Group) -> str:
    counts = group.counts
    gate = " test-gate=failed" if group.gate_failed else ""  # else a blocked row of zeros says nothing why
    return (f"  {group.name:<16} {group.verdict:<13} conflicts={counts['conflicts']} resolved={counts['resolved']} "
            f"errors={counts['error']} warnings={counts['warning']} reviewed={counts['suppressed']}{gate}")
