"""`drift`: which overlays and spec functions of each backend drifted between two upstream tags."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from sync.errors import SyncError
from sync.jobs.drift import DriftOptions, looks_like_flagtree, run_drift
from sync.model import Finding, Report
from sync.commands import echo_finding, echo_line, print_warning


@dataclass(frozen=True, kw_only=True)
class DriftRequest:
    """What `drift` was given, by name (None or empty: not given)."""

    repo_path: str = "."
    old: str | None = None  # --from
    onto: str | None = None
    source_branch: str | None = None  # --branch
    target: str | None = None
    backends: tuple[str, ...] = ()
    out: Path | None = None
    as_json: bool = False
    apply: bool = False
    fast: bool = False  # leave the slow analyses out
    symbols: bool = False  # deprecated --symbols, which does nothing
    output_format: str = "text"
    quiet: bool = False
    min_severity: str = "info"  # --min-severity: what the text output leaves out (never the verdicts)


def run_drift_command(request: DriftRequest) -> int:
    repo_path, old, onto, source_branch = request.repo_path, request.old, request.onto, request.source_branch
    target, out, apply, output_format = request.target, request.out, request.apply, request.output_format
    symbols = not request.fast
    min_severity = request.min_severity
    # Modules are imported where used: a cached drift is mostly the time it takes to import them.
    if out is not None:  # before the analysis, not after it
        from sync.jobs.upgrade import check_out
        check_out(repo_path, out)
    from sync.commands.progress import TerminalProgress  # a bar on stderr, on a terminal only: stdout stays the report
    if not symbols:  # a partial report must not read as a full one
        click.echo("note: --fast: the slow analyses (symbol drift, call signatures, key strings, ...) were left out",
                   err=True)
    report = run_drift(repo_path, old=old, onto=onto, source=source_branch,
                       options=DriftOptions(target=target, backends=frozenset(request.backends), apply=apply,
                                            symbols=symbols),
                       progress=TerminalProgress(request.quiet), warn=print_warning)
    if not looks_like_flagtree(repo_path, report):  # an upstream clone, or the wrong branch: not "clean"
        raise SyncError(f"{target or report.range.source.ref} has no FlagTree backend (third_party/<backend>/backend/"
                        "spec/) and no FlagTree hook in trunk: nothing to drift; is this the FlagTree fork?")
    if report.drift is not None and report.drift.applied_commit:
        echo_line(f"committed the merged overlay(s) on {target} as {report.drift.applied_commit[:9]}", err=True)
    read_from = target or source_branch or report.range.source.oid
    from sync.jobs.review import uncommitted_suppressions  # [] for a bare repository: no work tree to differ from
    for path in uncommitted_suppressions(repo_path, read_from, [g.name for g in report.groups]):
        echo_line(f"hint: {path} in the work tree differs from {target or report.range.source.ref}, which "
                   "drift read: commit it there for its reviews to count", err=True)
    if out is not None:
        from sync.report.write import write_report
        write_report(out, report)
    output_format = "json" if request.as_json else output_format
    if output_format == "json":
        from sync.report.document import render_json
        click.echo(render_json(report), nl=False)
    elif output_format == "sarif":
        from sync.report.sarif import render_sarif
        open_conflicts = {(c.commit, c.path): c for group in report.groups for c in group.conflicts if not c.resolved}
        click.echo(render_sarif(report.findings, report.tool_version, open_conflicts.values()), nl=False)
    elif output_format == "github":
        from sync.report.github import render_github
        click.echo(render_github(report.findings), nl=False)
    else:
        print_groups(report, min_severity)
    return report.exit_status


_RANK = {"info": 0, "port": 1, "warning": 2, "error": 3}
FOLDED_PATHS = 3  # paths named on an info kind's line


def print_groups(report: Report, min_severity: str = "info") -> None:
    """A line per group, then its errors and warnings (reviewed ones too) a line each, and its info findings a
    line per kind: 1,114 of drift's 1,175 lines were info on the 3.7 move (issue 48.7)."""
    least = _RANK[min_severity]
    for group in report.groups:
        counts = group.counts
        echo_line(f"{group.name}: {group.verdict} (conflicts={counts['conflicts']} errors={counts['error']} "
                  f"warnings={counts['warning']} port={counts['port']} info={counts['info']} "
                  f"reviewed={counts['suppressed']})")
        shown = [f for f in group.findings if _RANK.get(f.severity, 0) >= least]
        for finding in shown:
            if finding.severity == "info" and not finding.suppressed and not finding.expired:
                continue
            reviewed = f" (reviewed: {finding.suppressed.reason})" if finding.suppressed else ""
            if finding.expired:  # the review no longer holds: say so, or it reads as never reviewed
                reviewed = (f" (review for {finding.expired.reviewed_for} expired: the trunk counterpart changed "
                            f"again; it said: {finding.expired.reason})")
            severity = "reviewed" if finding.suppressed else finding.severity
            echo_finding(f"  {severity:<8} {finding.kind:<30} {finding.location()}  ", f"{finding.message}{reviewed}")
        _print_folded_info([f for f in shown if f.severity == "info" and not f.suppressed and not f.expired])


def _print_folded_info(findings: list[Finding]) -> None:
    by_kind: dict[str, list[Finding]] = {}
    for finding in findings:
        by_kind.setdefault(finding.kind, []).append(finding)
    for kind, chosen in sorted(by_kind.items(), key=lambda item: (-len(item[1]), item[0])):
        paths = ", ".join(finding.location() for finding in chosen[:FOLDED_PATHS])
        more = f" and {len(chosen) - FOLDED_PATHS} more" if len(chosen) > FOLDED_PATHS else ""
        echo_finding(f"  {'info':<8} {kind:<30} {len(chosen)}: ", f"{paths}{more}")
