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


@dataclass(frozen=True)
class BaselineOptions:
    file: Path | None = None  # --baseline
    write: Path | None = None  # --write-baseline
    ignore: bool = False  # --no-baseline: not even the committed default


def baseline_file(path: Path, options: BaselineOptions) -> Path | None:
    """--baseline, else the committed default under PATH when there is one."""
    if options.file is not None:
        return options.file
    default = path / DEFAULT_BASELINE
    return default if not options.ignore and default.is_file() else None


def _write_baseline(path: Path, backends: tuple[str, ...], allow_markers: tuple[str, ...], file: Path) -> int:
    result = run_check(path, frozenset(backends), allow_markers)
    write_baseline(file, path, result.findings)
    reads = "check reads it from now on" if file.resolve() == (path / DEFAULT_BASELINE).resolve() \
        else f"pass --baseline {file} to check against it"
    echo_line(f"wrote {len(result.findings)} finding(s) to the baseline {file}: {reads}", err=True)
    return 0


def run_check_command(path: Path, backends: tuple[str, ...], output_format: str,
                      allow_markers: tuple[str, ...] = (), baseline: BaselineOptions = BaselineOptions(),
                      show_all: bool = False) -> int:
    if path.is_dir() and not (path / TRUNK).is_dir():
        root = next((parent for parent in path.resolve().parents if (parent / TRUNK).is_dir()), None)
        if root is not None:  # e.g. PATH was python/triton itself
            raise SyncError(f"{path} has no {TRUNK}/: it is inside the FlagTree tree {root}; pass that directory")
    if baseline.write is not None:
        return _write_baseline(path, backends, allow_markers, baseline.write)
    result = run_check(path, frozenset(backends), allow_markers, baseline_file(path, baseline))
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
