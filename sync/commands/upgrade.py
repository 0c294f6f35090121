"""`upgrade`: replay the FlagTree commits onto a new upstream tag and report per backend."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..drift import analyse_drift
from ..errors import SyncError
from ..replay import ReplayedCommit
from ..report.model import build_report, exit_status
from ..report.write import write_report
from ..git import Commit, Repository, open_repo
from ..gate import GateResult, run_gate
from ..upgrade import (UpgradeResult, abort_upgrade, continue_upgrade, finish_upgrade, resolve_params,
                       run_upgrade)


def _gate_line(gate: dict | None) -> str | None:
    if gate is None:
        return None
    if gate["passed"]:
        return f"gate: {gate['command']!r} passed ({len(gate['runs'])} run(s))"
    if gate["baseline_failed"]:
        return f"gate: {gate['command']!r} fails on the new tag itself, so no replayed commit is to blame"
    failure = gate["first_failure"]
    return f"gate: {gate['command']!r} first fails at {failure['commit'][:9]} ({failure['label']})"


class ProgressPrinter:
    """'[n/N] sha subject' on a TTY; nothing in quiet mode; conflicts only otherwise."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()

    def __call__(self, number: int, total: int, commit: Commit, result: ReplayedCommit | None) -> None:
        if self.quiet:
            return
        if result is None:
            if self.tty:
                click.echo(f"\r[{number}/{total}] {str(commit.id)[:9]} {commit.message.splitlines()[0][:60]}",
                           err=True, nl=False)
            return
        if result.conflicts:
            paths = ", ".join(conflict.path for conflict in result.conflicts)
            prefix = "\n" if self.tty else ""
            click.echo(f"{prefix}[{number}/{total}] {result.source[:9]} conflicts: {paths}", err=True)
        elif self.tty and number == total:
            click.echo("", err=True)


def _analyse(repo: Repository, upgrade: UpgradeResult, backends: tuple[str, ...]) -> dict:
    params = upgrade.params
    drift = analyse_drift(repo, params.old_id, params.onto_id, params.src_id, upgrade.head,
                          set(backends) or None, symbols=True)
    return build_report(upgrade, drift.owners, drift.findings, only=set(backends) or None)


def _gate(repo: Repository, upgrade: UpgradeResult, command: str, at: str, timeout: float) -> GateResult:
    replayed = [(r.result, f"{r.source[:9]} {r.summary}") for r in upgrade.results if r.result]
    if replayed and replayed[-1][0] != upgrade.head:
        replayed.append((upgrade.head, "the pin of the new upstream"))
    return run_gate(repo, (upgrade.params.onto_id, upgrade.params.onto), replayed, command, at, timeout)


def run_upgrade_command(repo_path: str, old: str | None, onto: str | None, src: str | None,
                        branch: str | None, out: Path | None, policy: str, force: bool, do_continue: bool,
                        do_abort: bool, quiet: bool, as_json: bool, backends: tuple[str, ...],
                        exec_command: str | None = None, exec_at: str = "end", exec_timeout: float = 600) -> int:
    if do_abort:
        had = abort_upgrade(repo_path)
        click.echo("upgrade aborted; state removed" if had else "no upgrade in progress", err=True)
        return 0
    progress = ProgressPrinter(quiet or as_json)
    if do_continue:
        upgrade = continue_upgrade(repo_path, progress)
    else:
        if not onto:
            raise SyncError("--onto is required (or --continue / --abort)")
        repo, params = resolve_params(repo_path, old, onto, src, branch, policy)
        upgrade = run_upgrade(repo, params, force, progress)
    repo = open_repo(repo_path)
    document = _analyse(repo, upgrade, backends)
    if exec_command:
        gate = _gate(repo, upgrade, exec_command, exec_at, exec_timeout)
        document["gate"] = gate.to_json()
        document["summary"]["needs_a_person"] |= not gate.passed
    if out is not None:
        write_report(out, document)
    finish_upgrade(repo)
    if as_json:
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    elif not quiet:
        summary = document["summary"]
        click.echo(f"{'resumed; ' if upgrade.resumed else ''}branch {upgrade.params.branch} at {upgrade.head[:9]}: "
                   f"{len(upgrade.results)} commits, {len(summary['conflicted_files'])} conflicted files, "
                   f"{summary['findings']['error']} errors, {summary['findings']['warning']} warnings"
                   + (f"; report in {out}" if out else ""))
        gate_line = _gate_line(document.get("gate"))
        if gate_line:
            click.echo(gate_line)
        for group in document["groups"]:
            counts = group["counts"]
            click.echo(f"  {group['name']:<16} {group['verdict']:<13} conflicts={counts['conflicts']} "
                       f"errors={counts['error']} warnings={counts['warning']}")
    return exit_status(document)
