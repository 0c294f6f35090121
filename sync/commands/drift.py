"""`drift`: which overlays and spec functions of each backend drifted between two upstream tags."""
from __future__ import annotations

from pathlib import Path

import click

from ..jobs import DriftOptions, run_drift
from ..jobs.upgrade import check_out
from ..report.document import render_json
from ..report.write import write_report


def run_drift_command(repo_path: str, old: str, onto: str, src: str | None, target: str | None,
                      backends: tuple[str, ...], out: Path | None, apply: bool, as_json: bool,
                      symbols: bool = False) -> int:
    if out is not None:  # before the analysis, not after it
        check_out(repo_path, out)
    report = run_drift(repo_path, old, onto, src, DriftOptions(target, frozenset(backends), apply, symbols))
    if report.drift is not None and report.drift.applied_commit:
        click.echo(f"committed the merged overlay(s) on {target} as {report.drift.applied_commit[:9]}", err=True)
    if out is not None:
        write_report(out, report)
    if as_json:
        click.echo(render_json(report), nl=False)
        return report.exit_status
    for group in report.groups:
        click.echo(f"{group.name}: {group.verdict}")
        for finding in group.findings:
            reviewed = " (reviewed)" if finding.suppressed else ""
            click.echo(f"  {finding.severity:<7} {finding.kind:<30} {finding.location()}  {finding.message}{reviewed}")
    return report.exit_status
