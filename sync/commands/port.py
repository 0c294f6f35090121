"""`port`: FlagTree's sites rewritten for upstream's certain renames, one commit per upstream change."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from sync.jobs.port import PortOptions, PortResult, run_port
from sync.replay.options import GATE_TIMEOUT
from sync.commands import echo_line, print_warning


@dataclass(frozen=True, kw_only=True)
class PortRequest:
    """What `port` was given, by name (None or empty: not given)."""

    repo_path: str = "."
    old: str | None = None  # --from
    onto: str | None = None
    source_branch: str | None = None  # --branch
    target: str = ""
    backends: tuple[str, ...] = ()
    dry_run: bool = False
    exec_command: str | None = None  # --exec
    exec_timeout: float = GATE_TIMEOUT
    quiet: bool = False
    out: Path | None = None  # --out: the report, findings left with upstream's worked example


def run_port_command(request: PortRequest) -> int:
    from sync.commands.progress import TerminalProgress
    result = run_port(request.repo_path, old=request.old, onto=request.onto, source=request.source_branch,
                      options=PortOptions(target=request.target, backends=frozenset(request.backends),
                                          dry_run=request.dry_run, gate=request.exec_command,
                                          gate_timeout=request.exec_timeout),
                      progress=TerminalProgress(request.quiet), warn=print_warning)
    if request.out is not None and result.report is not None:
        from sync.report.write import write_report
        write_report(request.out, result.report)
    if request.dry_run:
        click.echo("".join(change.patch for change in result.changes)
                   + "".join(move.patch for move in result.moves)
                   + "".join(copy.patch for copy in result.copies), nl=False)
    print_summary(result, err=request.dry_run)  # a dry run's stdout is the patch alone
    return 1 if result.left_any else 0


def _committed_as(result: PortResult, committed: str | None) -> str:
    """` as <the port commit>` after a rule's summary; nothing on a dry run, which commits nothing."""
    return "" if result.dry_run else f" as {committed[:9] if committed else '?'}"


def print_summary(result: PortResult, err: bool = False) -> None:
    done = "would port" if result.dry_run else "ported"
    for change in result.changes:
        if change.ported:
            files = len({site.rpartition(":")[0] for site in change.sites})
            where = _committed_as(result, change.committed)
            renames = ", ".join(f"{r.old} -> {r.new}" for r in change.renames)
            echo_line(f"{done} {change.label}{where}: {renames}; {len(set(change.sites))} site(s) in {files} "
                      "file(s)", err=err)
        elif change.gate is not None and not change.gate.passed:
            echo_line(f"left {change.label}: the --exec gate failed on its port commit (status {change.gate.status})",
                      err=err)
        for what, why in change.left:
            echo_line(f"  left {what} ({change.short}): {why}", err=err)
    for move in result.moves:
        if move.ported:
            where = _committed_as(result, move.committed)
            echo_line(f"{done} {move.label}{where}: the arguments of {', '.join(sorted(move.mappings))} moved "
                      f"(rule moved-arguments); {len(set(move.sites))} site(s)", err=err)
        elif move.gate is not None and not getattr(move.gate, "passed", True):
            echo_line(f"left {move.label}: the --exec gate failed on its port commit", err=err)
        for what, why in move.left:
            echo_line(f"  left the call of {what} ({move.label}): {why}", err=err)
    for copy in result.copies:
        if copy.ported:
            where = _committed_as(result, copy.committed)
            echo_line(f"{done} upstream's change into {copy.backend}'s copies{where}: {len(copy.merged)} file(s) "
                      "merged 3 ways (rule merged-copy)", err=err)
        elif copy.gate is not None and not copy.gate.passed:
            echo_line(f"left the merge into {copy.backend}'s copies: the --exec gate failed on its commit "
                      f"(status {copy.gate.status})", err=err)
        for what, why in copy.left:
            echo_line(f"  left {what} ({copy.backend}'s copy): {why}", err=err)
    said: set[str] = set()
    for finding in result.report.findings if result.report is not None else ():
        example = finding.details.get("upstream_example")
        name = str(finding.details.get("declaration") or finding.location())
        if isinstance(example, dict) and name not in said:
            said.add(name)
            echo_line(f"  upstream's own migration for {name} "
                      f"({example['commit']}): {example['path']}:{example['line']}", err=err)
    if result.other_errors:
        echo_line(f"{result.other_errors} other error finding(s) are of kinds port does not rewrite "
                  "(see drift)", err=err)
    if not result.dry_run:
        echo_line(f"{result.target} is at {result.head[:9]}", err=err)
