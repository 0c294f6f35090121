"""`upgrade`: replay the FlagTree commits onto a new upstream tag and report per backend."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from sync.errors import SyncError
from sync.jobs import (ConflictPolicy, ContinueOverrides, GateOptions, ReplayChoices, RunOptions, UpgradeOptions,
                       abort_upgrade, continue_upgrade, run_upgrade)
from sync.replay.options import GATE_TIMEOUT
from sync.jobs.upgrade import kept_worktree_notice, stored_report_dir
from sync.model import Report
from sync.report.document import render_json
from sync.commands import echo_line, print_warning
from sync.commands.progress import TerminalProgress
from sync.commands.summary import print_groups


def print_summary(report: Report, out: Path | None) -> None:
    assert report.upgrade is not None
    counts = report.counts
    echo_line(f"{'resumed; ' if report.upgrade.resumed else ''}branch {report.upgrade.branch} at "
               f"{report.upgrade.head[:9]}: {len(report.commits)} commits, {report.conflicts.sentence()}, "
               f"{counts['error']} errors, {counts['warning']} warnings, {counts['port']} to port"
               + (f"; report in {out}" if out else ""))
    if report.gate is not None:
        echo_line(f"gate: {report.gate.command!r} {report.gate.verdict()}")
    print_groups(report)


@dataclass(frozen=True, kw_only=True)
class UpgradeRequest:
    """What `upgrade` was given, by name (None or empty: not given)."""

    repo_path: str = "."
    old: str | None = None  # --from
    onto: str | None = None
    source_branch: str | None = None  # --branch
    target_branch: str | None = None
    backends: tuple[str, ...] = ()
    out: Path | None = None
    as_json: bool = False
    policy: str | None = None  # --on-conflict: None keeps the run's on --continue; a new run commits markers
    stop_on: tuple[str, ...] = ()
    force: bool = False
    drop_orphan_reverts: bool = False
    do_continue: bool = False
    do_abort: bool = False
    quiet: bool = False
    exec_command: str | None = None
    exec_at: str | None = None  # None: end, or on --continue the run's
    exec_timeout: float | None = None  # None: GATE_TIMEOUT, or on --continue the run's

    def conflicts(self) -> ConflictPolicy | None:
        """--on-conflict and --stop-on, None when neither was given (--stop-on alone implies stop)."""
        if self.stop_on and self.policy not in (None, "stop"):
            raise SyncError(f"--stop-on stops on some conflicts and commits the others with markers: it goes with "
                            f"--on-conflict stop (its default), not {self.policy}")
        if self.stop_on:
            return ConflictPolicy(policy="stop", stop_on=self.stop_on)
        return None if self.policy is None else ConflictPolicy(policy=self.policy)

    def ignored_by_continue(self) -> list[str]:
        """The flags --continue leaves as the run in progress has them (its range and branches)."""
        flags = (("from", self.old), ("onto", self.onto), ("branch", self.source_branch),
                 ("target-branch", self.target_branch), ("force", self.force),
                 ("drop-orphan-reverts", self.drop_orphan_reverts))
        return [f"--{name}" for name, given in flags if given]

    def overrides(self) -> ContinueOverrides:
        return ContinueOverrides(out=self.out, exec_command=self.exec_command, exec_at=self.exec_at,
                                 exec_timeout=self.exec_timeout, backends=frozenset(self.backends),
                                 conflicts=self.conflicts())

    def options(self) -> UpgradeOptions:
        """The options of a new run."""
        gate = GateOptions(command=self.exec_command, at=self.exec_at or "end",
                           timeout=GATE_TIMEOUT if self.exec_timeout is None else self.exec_timeout) \
            if self.exec_command else None
        return UpgradeOptions(run=RunOptions(out=self.out, gate=gate, backends=frozenset(self.backends)),
                              replay=ReplayChoices(target_branch=self.target_branch,
                                                   conflicts=self.conflicts() or ConflictPolicy(),
                                                   drop_orphan_reverts=self.drop_orphan_reverts),
                              force=self.force)


DELETE_MODIFY = ("deleted-upstream", "deleted-by-flagtree")


def _say_kept_deletions(repo_path: str, report: Report) -> None:
    """A delete/modify conflict taken from a stop's index counts as resolved by hand, though `git add -A` there
    only keeps the file git left: say so where the branch still has it, or it passes unnoticed (issue 48.9).
    A file deleted at the stop (git rm) was a choice: nothing to say."""
    kept = [conflict for commit in report.commits for conflict in commit.conflicts
            if conflict.kind in DELETE_MODIFY and conflict.resolved]
    if not kept or report.upgrade is None:
        return
    from sync.jobs.status import existing_paths
    still = existing_paths(repo_path, report.upgrade.head, [conflict.path for conflict in kept])
    for conflict in kept:
        if conflict.path in still:
            echo_line(f"note: {conflict.path} ({conflict.kind}, commit {conflict.commit[:9]}) counts as resolved by "
                      "hand as the stop's index had it (git add -A keeps the file git left there); if the other "
                      "side should win, change it on the branch and commit", err=True)


def run_upgrade_command(request: UpgradeRequest) -> int:
    request.conflicts()  # a --stop-on that contradicts --on-conflict is refused first
    if request.do_abort and request.do_continue:
        raise SyncError("--continue and --abort exclude each other: pass one")
    if not request.do_continue and not request.do_abort and not request.exec_command and \
            (request.exec_at or request.exec_timeout is not None):
        raise SyncError("--exec-at and --exec-timeout set the test gate: pass --exec CMD too")
    if request.do_abort:
        return _abort(request.repo_path)
    progress = TerminalProgress(request.quiet or request.as_json)
    out = request.out
    if request.do_continue:
        out = out or stored_report_dir(request.repo_path)  # where the summary line says the report went
        report = continue_upgrade(request.repo_path, progress, lambda text: click.echo(text, err=True),
                                  overrides=request.overrides())
        _say_kept_deletions(request.repo_path, report)
    else:
        if not request.onto:
            raise SyncError("--onto is required (or --continue / --abort)")
        report = run_upgrade(request.repo_path, old=request.old, onto=request.onto,
                             source_branch=request.source_branch, options=request.options(), progress=progress,
                             warn=print_warning)
    if request.as_json:
        click.echo(render_json(report), nl=False)
    else:  # -q silences progress, never the result
        print_summary(report, out)
    return report.exit_status


def _abort(repo_path: str) -> int:
    aborted = abort_upgrade(repo_path)
    deleted = f"; branch {aborted.deleted_branch} it had made deleted" if aborted.deleted_branch else ""
    echo_line(f"upgrade aborted; state removed{deleted}" if aborted.had_state else "no upgrade in progress", err=True)
    if aborted.kept_worktree is not None:
        click.echo(kept_worktree_notice(aborted.kept_worktree), err=True)
    for path in aborted.moved_aside:  # not the tool's: kept, under a name that no longer blocks the next run
        click.echo(f"a directory stood where the upgrade state belongs; moved it aside to {path}", err=True)
    return 0
