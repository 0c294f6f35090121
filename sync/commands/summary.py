"""The terminal's group rows, one format and one printer for upgrade and status: open and resolved conflicts side
by side."""
from __future__ import annotations

from sync.commands import echo_line
from sync.model import Group, Report
from sync.report.markdown import shared_note


def group_line(group: Group) -> str:
    counts = group.counts
    gate = " test-gate=failed" if group.gate_failed else ""  # else a blocked row of zeros says nothing why
    return (f"  {group.name:<16} {group.verdict:<13} conflicts={counts['conflicts']} resolved={counts['resolved']} "
            f"errors={counts['error']} warnings={counts['warning']} port={counts['port']} "
            f"reviewed={counts['suppressed']}{gate}")


def print_groups(report: Report) -> None:
    """A row per group, then the note naming the files that count in more than one row."""
    for group in report.groups:
        echo_line(group_line(group))
    note = shared_note(report, str, total="the first line")
    if note:
        echo_line(f"  {note}")
