"""`status`: the report of an upgraded branch as it is now, after hand resolutions committed on it."""
from __future__ import annotations

from pathlib import Path

import click

from sync.jobs.status import StatusOptions, refresh_status
from sync.model import Report
from sync.report.document import render_json
from sync.report.markdown import shared_note
from sync.report.write import write_report
from sync.commands import echo_line
from sync.commands.progress import TerminalProgress
from sync.commands.summary import group_line


def print_status(report: Report, out: Path | None) -> None:
    assert report.upgrade is not None
    counts = report.counts
    echo_line(f"branch {report.upgrade.branch} at {report.upgrade.head[:9]} ({report.range.old.ref}.."
               f"{report.range.source.ref} onto {report.range.onto.ref}): {report.conflicts.sentence()}, "
               f"{counts['error']} errors, {counts['warning']} warnings, {counts['suppressed']} reviewed"
               + (f"; report in {out}" if out else ""))
    for group in report.groups:
        echo_line(group_line(group))
    note = shared_note(report, str, total="the first line")
    if note:
        echo_line(f"  {note}")


def run_status_command(repo_path: str, target: str | None, old: str | None, onto: str | None, source_branch: str | None,
                       backends: tuple[str, ...], out: Path | None, as_json: bool, quiet: bool) -> int:
    report = refresh_status(repo_path, StatusOptions(target, old, onto, source_branch, frozenset(backends)),
                            TerminalProgress(quiet or as_json))
    if out is not None:
        write_report(out, report)
    if as_json:
        click.echo(render_json(report), nl=False)
    else:
        print_status(report, out)
    return report.exit_status
