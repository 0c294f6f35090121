"""`upgrade`: replay the FlagTree commits onto a new upstream tag and report per backend."""
from __future__ import annotations

from pathlib import Path

import click

from sync.errors import SyncError
from sync.jobs import GateOptions, UpgradeOptions, abort_upgrade, continue_upgrade, run_upgrade
from sync.jobs.upgrade import kept_worktree_notice, stored_report_dir
from sync.model import Report
from sync.report.document import render_json
from sync.report.markdown import shared_note
from sync.commands import echo_line, print_warning
from sync.commands.progress import TerminalProgress
from sync.commands.summary import group_line


def print_summary(report: Report, out: Path | None) -> None:
    assert report.upgrade is not None
    counts = report.counts
    echo_line(f"{'resumed; ' if report.upgrade.resumed else ''}branch {report.upgrade.branch} at "
               f"{report.upgrade.head[:9]}: {len(report.commits)} commits, {report.conflicts.sentence()}, "
               f"{counts['error']} errors, {counts['warning']} warnings" + (f"; report in {out}" if out else ""))
    if report.gate is not None:
        echo_line(f"gate: {report.gate.command!r} {report.gate.verdict()}")
    for group in report.groups:
        echo_line(group_line(group))
    note = shared_note(report, str, total="the first line")
    if note:
        echo_line(f"  {note}")


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


def run_upgrade_command(repo_path: str, old: str | None, onto: str | None, source_branch: str | None,
                        target_branch: str | None, out: Path | None, policy: str | None, force: bool,
                        do_continue: bool, do_abort: bool, quiet: bool, as_json: bool, backends: tuple[str, ...],
                        exec_command: str | None = None, exec_at: str | None = None,
                        exec_timeout: float | None = None, drop_orphan_reverts: bool = False,
                        stop_on: tuple[str, ...] = ()) -> int:
    """exec_at and exec_timeout are None when not given: --continue then uses the run's stored ones; policy
    None and no stop_on: --continue keeps the run's, a new run commits markers."""
    if stop_on and policy not in (None, "stop"):
        raise SyncError(f"--stop-on stops on some conflicts and commits the others with markers: it goes with "
                        f"--on-conflict stop (its default), not {policy}")
    if stop_on:
        policy = "stop"
    if do_abort and do_continue:
        raise SyncError("--continue and --abort exclude each other: pass one")
    if not do_continue and not do_abort and not exec_command and (exec_at or exec_timeout is not None):
        raise SyncError("--exec-at and --exec-timeout set the test gate: pass --exec CMD too")
    if do_abort:
        aborted = abort_upgrade(repo_path)
        deleted = f"; branch {aborted.deleted_branch} it had made deleted" if aborted.deleted_branch else ""
        echo_line(f"upgrade aborted; state removed{deleted}" if aborted.had_state else "no upgrade in progress",
                   err=True)
        if aborted.kept_worktree is not None:
            click.echo(kept_worktree_notice(aborted.kept_worktree), err=True)
        for path in aborted.moved_aside:  # not the tool's: kept, under a name that no longer blocks the next run
            click.echo(f"a directory stood where the upgrade state belongs; moved it aside to {path}", err=True)
        return 0
    progress = TerminalProgress(quiet or as_json)
    if do_continue:
        report_dir = out or stored_report_dir(repo_path)  # where the summary line says the report went
        report = continue_upgrade(repo_path, progress, lambda text: click.echo(text, err=True), out=out,
                                  exec_command=exec_command, exec_at=exec_at, exec_timeout=exec_timeout,
                                  backends=frozenset(backends),
                                  policy=None if policy is None else (policy, tuple(stop_on)))
        out = report_dir
        _say_kept_deletions(repo_path, report)
    else:
        if not onto:
            raise SyncError("--onto is required (or --continue / --abort)")
        gate = GateOptions(exec_command, exec_at or "end", 600 if exec_timeout is None else exec_timeout) \
            if exec_command else None
        options = UpgradeOptions(out=out, gate=gate, backends=frozenset(backends), target_branch=target_branch,
                                 policy=policy or "markers", force=force, drop_orphan_reverts=drop_orphan_reverts,
                                 stop_on=tuple(stop_on))
        report = run_upgrade(repo_path, old, onto, source_branch, options, progress, warn=print_warning)
    if as_json:
        click.echo(render_json(report), nl=False)
    else:  # -q silences progress, never the result
        print_summary(report, out)
    return report.exit_status
