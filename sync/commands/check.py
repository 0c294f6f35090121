"""`check`: the seed's directory policy on a tree laid out like FlagTree."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from sync.check.baseline import DEFAULT as DEFAULT_BASELINE, write_baseline
from sync.errors import SyncError
from sync.jobs import run_check
from sync.facts.layout import TRUNK
from sync.model.kinds import rules
from sync.report.github import render_github
from sync.report.sarif import render_sarif
from sync import __version__
from sync.commands import echo_finding, echo_line

SCHEMA = "flagtree-sync/check/1"


@dataclass(frozen=True, kw_only=True)
class CheckRequest:
    """What `check` was given, by name (None or empty: not given)."""

    path: Path | None = None
    backends: tuple[str, ...] = ()
    output_format: str = "text"
    list_rules: bool = False
    allow_markers: tuple[str, ...] = ()
    baseline: Path | None = None  # --baseline
    write_baseline: Path | None = None  # --write-baseline
    no_baseline: bool = False  # not even the committed default
    show_all: bool = False  # --all: print the baselined findings too


def baseline_file(path: Path, request: CheckRequest) -> Path | None:
    """--baseline, else (unless --no-baseline) the committed default under PATH when there is one."""
    if request.baseline is not None:
        return request.baseline
    default = path / DEFAULT_BASELINE
    return default if not request.no_baseline and default.is_file() else None


def _write_baseline(path: Path, request: CheckRequest, file: Path) -> int:
    result = run_check(path, frozenset(request.backends), request.allow_markers)
    write_baseline(file, path, result.findings)
    reads = "check reads it from now on" if file.resolve() == (path / DEFAULT_BASELINE).resolve() \
        else f"pass --baseline {file} to check against it"
    echo_line(f"wrote {len(result.findings)} finding(s) to the baseline {file}: {reads}", err=True)
    return 0


def run_check_command(request: CheckRequest) -> int:
    if request.list_rules:
        click.echo(rules_table())
        return 0
    path = request.path
    if path is None:
        raise SyncError("PATH is required (the tree to check), unless --list-rules")
    if request.write_baseline is not None and (request.baseline is not None or request.no_baseline):
        raise SyncError("--write-baseline records every finding: leave out --baseline and --no-baseline")
    backends, allow_markers, output_format = request.backends, request.allow_markers, request.output_format
    show_all = request.show_all
    if path.is_dir() and not (path / TRUNK).is_dir():
        root = next((parent for parent in path.resolve().parents if (parent / TRUNK).is_dir()), None)
        if root is not None:  # e.g. PATH was python/triton itself
            raise SyncError(f"{path} has no {TRUNK}/: it is inside the FlagTree tree {root}; pass that directory")
    if request.write_baseline is not None:
        return _write_baseline(path, request, request.write_baseline)
    result = run_check(path, frozenset(backends), allow_markers, baseline_file(path, request))
    if result.baseline is not None and result.stale and not backends:  # a filter leaves other entries unmatched
        echo_line(f"note: {result.stale} entr(ies) of the baseline {result.baseline} match no finding any more "
                   f"(fixed): check --write-baseline {result.baseline} drops them", err=True)
    if output_format == "json":
        document: dict[str, Any] = {"schema": SCHEMA, "root": str(path), "counts": result.counts,
                                    "findings": [finding.to_json() for finding in result.findings]}
        if result.baseline is not None:
            document["baseline"] = {"file": str(result.baseline), "known": result.known, "stale": result.stale}
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    elif output_format == "sarif":
        click.echo(render_sarif(result.findings, __version__), nl=False)
    elif output_format == "github":
        click.echo(render_github(result.findings), nl=False)
    else:
        for finding in result.findings:
            if finding.suppressed and not show_all:  # what is new is what a person reads (issue 48.5)
                continue
            known = " (in the baseline)" if finding.suppressed else ""
            echo_finding(f"{finding.location()}: {finding.code} {finding.severity}{known}: ",
                         f"{finding.message}  [fix: {finding.next_step}]")
        counts = result.counts
        hidden = "" if show_all or not result.known else " (not printed: --all prints them)"
        in_baseline = f", {result.known} in the baseline {result.baseline}{hidden}" \
            if result.baseline is not None else ""
        echo_line(f"{len(result.findings)} finding(s): {counts['error']} error, {counts['warning']} warning, "
                   f"{counts['info']} info{in_baseline}")
    return result.exit_status


def rules_table() -> str:
    return "\n".join(f"{kind.code}  {kind.id:32} {kind.severity:8} {kind.action}" for kind in rules())
