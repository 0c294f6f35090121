"""`check`: the seed's directory policy on a tree laid out like FlagTree."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import SyncError
from ..jobs import run_check
from ..layout import TRUNK
from ..kinds import rules
from ..report.github import render_github
from ..report.sarif import render_sarif
from .. import __version__
from . import echo_line

SCHEMA = "flagtree-sync/check/1"


def run_check_command(path: Path, backends: tuple[str, ...], output_format: str,
                      allow_markers: tuple[str, ...] = ()) -> int:
    if path.is_dir() and not (path / TRUNK).is_dir():
        root = next((parent for parent in path.resolve().parents if (parent / TRUNK).is_dir()), None)
        if root is not None:  # e.g. PATH was python/triton itself
            raise SyncError(f"{path} has no {TRUNK}/: it is inside the FlagTree tree {root}; pass that directory")
    result = run_check(path, frozenset(backends), allow_markers)
    if output_format == "json":
        click.echo(json.dumps({"schema": SCHEMA, "root": str(path), "counts": result.counts,
                               "findings": [finding.to_json() for finding in result.findings]},
                              indent=2, ensure_ascii=False))
    elif output_format == "sarif":
        click.echo(render_sarif(result.findings, __version__), nl=False)
    elif output_format == "github":
        click.echo(render_github(result.findings), nl=False)
    else:
        for finding in result.findings:
            echo_line(f"{finding.location()}: {finding.code} {finding.severity}: {finding.message}"
                       f"  [fix: {finding.next_step}]")
        counts = result.counts
        echo_line(f"{len(result.findings)} finding(s): {counts['error']} error, {counts['warning']} warning, "
                   f"{counts['info']} info")
    return result.exit_status


def rules_table() -> str:
    return "\n".join(f"{kind.code}  {kind.id:32} {kind.severity:8} {kind.action}" for kind in rules())
