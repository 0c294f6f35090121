"""`status`: the report of an upgraded branch as it is now, after hand resolutions committed on it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from sync.jobs.status import StatusOptions, refresh_status
from sync.model import Report
from sync.report.document import render_json
from sync.report.write import write_report
from sync.commands import echo_line
from sync.commands.progress import TerminalProgress
from sync.commands.summary import print_groups


def print_status(report: Report, out: Path | None) -> None:
    assert report.upgrade is not None
    counts = report.counts
    echo_line(f"branch {report.upgrade.branch} at {report.upgrade.head[:9]} ({report.range.old.ref}.."
               f"{report.range.source.ref} onto {report.range.onto.ref}): {report.conflicts.sentence()}, "
               f"{counts['error']} errors, {counts['warning']} warnings, {counts['port']} to port, "
               f"{counts['suppressed']} reviewed"
               + (f"; report in {out}" if out else ""))
    print_groups(report)


@dataclass(frozen=True, kw_only=True)
class StatusRequest:
    """What `status` was given, by name (None or empty: not given)."""

    repo_path: str = "."
    target: str | None = None
    old: str | None = None  # --from
    onto: str | None = None
    source_branch: str | None = None  # --branch
    backends: tuple[str, ...] = ()
    out: Path | None = None
    as_json: bool = False
    quiet: bool = False


def run_status_command(request: StatusRequest) -> int:
    report = refresh_status(request.repo_path, StatusOptions(target=request.target, old=request.old, onto=request.onto,
                                                             source=request.source_branch,
                                                             backends=frozenset(request.backends)),
                            TerminalProgress(request.quiet or request.as_json))
    if request.out is not None:
        write_report(request.out, report)
    if request.as_json:
        click.echo(render_json(report), nl=False)
    else:
        print_status(report, request.out)
    return report.exit_status
