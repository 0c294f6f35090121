"""The upgrade job: replay OLD..SOURCE onto NEW, analyse the new branch, gate it, write the report.

It owns the state's lifecycle: the state of a run stays until its report is written, so that a run
killed while reporting resumes into the report.
"""
from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from sync import __version__
from sync.drift.run import analyse_drift, parsing_ahead
from sync.errors import SyncError
from sync.support.gcpolicy import job
from sync.replay.gate import run_gate
from sync.model import GateResult, Range, Report, ReplayedCommit, Rev, UpgradeInfo, build_report
from sync.model.report import OrphanRevert
from sync.model.build import OwnersOf
from sync.replay import engine
from sync.replay.options import ConflictPolicy, ContinueOverrides, GateOptions, ReplayChoices, RunOptions
from sync.git import (GitTree, Repository, commit_of, common_git_dir, current_branch, merges_in_range, open_repo,
                      tool_dir, valid_branch_name)
from sync.git.repo import REACHABLE
from sync.facts.layout import require_backends
from sync.git.diff import changed_paths
from sync.replay.commits import ReplayedCommit as EngineCommit
from sync.support.atomic import check_report_target
from sync.report.write import write_report
from sync.support.progress import Progress, Silent
from sync.jobs.filehunks import hunks_on_branch
from sync.jobs.revs import (from_doubt, pinned_rev, range_notes, repository_forges, require_based_on, require_forward,
                             resolve_rev, upstream_moves)
from sync.jobs.review import fixed_on_branch

if TYPE_CHECKING:
    from sync.drift.ahead import Ahead


@dataclass(frozen=True, kw_only=True)
class UpgradeOptions:
    """The options of an upgrade run: run (out, gate, backends: what matters after the replay, kept in the state's
    options for --continue) and replay (what shapes the replay, resolved into the state's params)."""

    run: RunOptions = RunOptions()
    replay: ReplayChoices = ReplayChoices()
    force: bool = False  # replace the target branch if it exists


def resolve_params(repo_path: str, *, old: str | None, onto: str, source_branch: str | None,
                   choices: ReplayChoices = ReplayChoices()) -> tuple[Repository, engine.UpgradeParams]:
    """What the user typed (None: the default) as the typed parameters of a run; old defaults to the
    tag pinned on the source branch, source_branch to the current branch, target_branch to sync/<onto>."""
    repo = open_repo(repo_path)
    source = resolve_rev(repo, source_branch or current_branch(repo))
    rng = Range(resolve_rev(repo, old) if old is not None else pinned_rev(repo, source), resolve_rev(repo, onto),
                source)
    target_branch = choices.target_branch or f"sync/{onto}"
    if not valid_branch_name(target_branch):
        raise SyncError(f"{target_branch!r} is not a valid branch name: pass --target-branch")
    require_based_on(repo, rng)
    return repo, engine.UpgradeParams(repo_path, rng, target_branch, choices.conflicts.policy,
                                      choices.drop_orphan_reverts, choices.conflicts.stop_on)


@job
def run_upgrade(repo_path: str, *, old: str | None, onto: str, source_branch: str | None, options: UpgradeOptions,
                progress: Progress | None = None, warn: Callable[[str], None] | None = None) -> Report:
    """Replay old..source_branch (None: the current branch) onto onto as options.replay.target_branch.
    old None: the tag pinned in the source branch's flagtree-upstream.toml. warn is told what looks wrong
    but may be right (the command prints it even with -q)."""
    progress = progress or Silent()
    repo, params = resolve_params(repo_path, old=old, onto=onto, source_branch=source_branch, choices=options.replay)
    run = options.run
    require_forward(repo, params.range, "upgrade")  # onto == old would only copy the branch under a new name
    doubt = from_doubt(repo, params.range)
    if doubt is not None and warn is not None:
        warn(doubt)
    if run.backends:  # before the replay: a refusal after it would leave a run to --continue or --abort
        require_backends(GitTree.of_commit(repo, params.range.source.oid, "fork"), run.backends)
    if run.out is not None:
        check_out(repo, run.out)
    if params.policy == "stop":
        engine.require_checkoutable(repo, params.range, "--on-conflict stop", "pass --on-conflict markers, ours "
                                    "or theirs, which replay in memory")
    if run.gate is not None:
        engine.require_checkoutable(repo, params.range, "the test gate (--exec)", _GATE_HINT)
    _note_merges(repo, params.range, warn or progress.note)  # never quiet: what it leaves out
    try:
        with engine.run_lock(repo), ExitStack() as stack:
            # the analysis's first parse runs in worker processes while this one replays
            begun: list["Ahead"] = []
            result = engine.run_upgrade(repo, params, options.force, _replay_progress(progress), run,
                                        on_start=lambda: begun.append(stack.enter_context(
                                            parsing_ahead(repo, params.range))))
            return _finish(repo_path, result, run, progress, warn=warn, ahead=begun[0] if begun else None)
    finally:
        progress.close()


_GATE_HINT = "the gate cannot run its command here: leave --exec out, and test the branch where such names fit"


def _note_merges(repo: Repository, rng: Range, say: Callable[[str], None]) -> None:
    """Say which merges the replay leaves out (as git rebase does): what a merge itself changed is not
    replayed, and the commits it brought in are replayed one by one as the branch's own."""
    merges = merges_in_range(repo, commit_of(repo, rng.old.oid), commit_of(repo, rng.source.oid))
    if merges:
        named = ", ".join(f"{str(merge.id)[:9]} {merge.message.splitlines()[0] if merge.message else ''}".strip()
                          for merge in merges[:3]) + (f" and {len(merges) - 3} more" if len(merges) > 3 else "")
        say(f"{rng.old.ref}..{rng.source.ref} holds {len(merges)} merge commit(s), which the replay leaves "
                      f"out as git rebase does: {named}. What a merge itself changed is not replayed; the "
                      "commits it brought in are replayed as the branch's own, except those that are upstream's "
                      f"({rng.onto.ref} has them, or the same change), which count as already upstream")


def _note_upstream(result: engine.UpgradeResult, warn: Callable[[str], None]) -> None:
    """Say how many commits of the range were upstream's and so left out unpicked, and why. A warning, never
    progress that -q silences: it changes what the new branch holds (swapped arguments read as a clean run)."""
    rng = result.params.range
    if result.upstream_unchecked:
        warn(f"could not tell which commits of {rng.old.ref}..{rng.source.ref} make the same change as a "
                      f"commit of {rng.onto.ref}'s history ({result.upstream_unchecked}); any such commit was replayed "
                      "as FlagTree's (a full clone lets git compare them)")
    for commit, (reverted, cause) in result.orphan_reverts.items():
        where = "left out as upstream's" if cause == engine.LEFT_OUT else "not a commit of the range"
        then = ("left out too (--drop-orphan-reverts)" if result.params.drop_orphan_reverts else
                "replayed as git rebase would (it may conflict or undo upstream's change); "
                "--drop-orphan-reverts leaves it out")
        warn(f"{commit[:9]} reverts {reverted[:9]}, which is {where}: {then}")
    theirs = {commit: why for commit, why in result.upstream.items() if why != engine.ORPHAN_REVERT}
    if not theirs:
        return
    reachable = sum(1 for why in theirs.values() if why == REACHABLE)
    same = len(theirs) - reachable
    why = [part for part in (f"{reachable} in {rng.onto.ref}'s history (e.g. brought in by a merge of upstream)"
                             if reachable else "",
                             f"{same} making the same change (git patch-id) as a commit of {rng.onto.ref}'s "
                             "history (e.g. an upstream release-branch cherry-pick)" if same else "") if part]
    warn(f"{len(theirs)} of the {len(result.results)} commits of {rng.old.ref}..{rng.source.ref} "
                  f"are upstream's, not replayed, counted as already upstream: {'; '.join(why)}")


@job
def continue_upgrade(repo_path: str, progress: Progress | None = None, notice: Callable[[str], None] | None = None, *,
                     overrides: ContinueOverrides = ContinueOverrides()) -> Report:
    """Resume the run in progress with the options it was started with; those given override them (merged by
    ContinueOverrides alone), the conflict policy from the stopped commit on. notice is told which stored
    options are used (the user did not type them this time)."""
    progress = progress or Silent()
    if overrides.out is not None:  # against the directory the user typed it in, before leaving it
        overrides = replace(overrides, out=Path(os.path.abspath(overrides.out)))
    repo_path = _main_checkout(repo_path)
    repo = open_repo(repo_path)
    try:
        with engine.run_lock(repo):
            options, used = overrides.merged(engine.stored_options(repo))
            if options.out is not None:
                check_out(repo, options.out)
            conflicts = overrides.conflicts
            _check_checkoutable(repo, overrides.exec_command is not None,
                                conflicts is not None and conflicts.policy == "stop")
            if used and notice is not None:
                notice("using the options the upgrade was started with: " + ", ".join(used))
            result = engine.continue_upgrade(repo_path, _replay_progress(progress), options, conflicts)
            return _finish(repo_path, result, options, progress, notice, notice)
    finally:
        progress.close()


def _check_checkoutable(repo: Repository, gate: bool, stops: bool) -> None:
    """A gate or stops first asked for by --continue: the start did not check that the names fit."""
    if not gate and not stops:
        return
    state = engine.StateStore(repo).load()
    if state is None:
        return
    if gate:
        engine.require_checkoutable(repo, state.params.range, "the test gate (--exec)", _GATE_HINT)
    if stops:
        engine.require_checkoutable(repo, state.params.range, "--on-conflict stop",
                                    "pass --on-conflict markers, ours or theirs")


def stored_report_dir(repo_path: str) -> Path | None:
    """The --out the upgrade in progress writes its report to; None: none, or no upgrade in progress."""
    try:
        return engine.stored_options(open_repo(_main_checkout(repo_path))).out
    except SyncError:
        return None


def _replay_progress(progress: Progress) -> engine.Progress:
    """The replay engine's per-commit callback, told as a phase with one step per commit."""
    started: list[bool] = []

    def report(number: int, total: int, commit, result) -> None:
        if result is None:
            if not started:
                started.append(True)
                progress.phase("replay", total)
            progress.advance(f"{str(commit.id)[:9]} {commit.message.splitlines()[0] if commit.message else ''}",
                             number - 1)
        elif result.conflicts:
            paths = ", ".join(conflict.path for conflict in result.conflicts)
            progress.note(f"[{number}/{total}] {result.source[:9]} conflicts: {paths}")
            progress.advance("", number)
        else:
            progress.advance("", number)
    return report


def _main_checkout(repo_path: str) -> str:
    """The repository itself, also when the user runs --continue or --abort inside the stop worktree
    (where the stop message sends them): the run's state lives in the common git directory, and the
    worktree is removed when the run ends or is aborted, so the process leaves it first (between stops it
    stays: the next stop is checked out in it in place)."""
    common = common_git_dir(open_repo(repo_path))
    main = open_repo(common)
    where = Path(main.workdir) if main.workdir else common
    try:
        inside = Path.cwd().resolve().is_relative_to(tool_dir(main).resolve())
    except OSError:  # the current directory is already gone
        inside = True
    if inside:
        os.chdir(where)
    return str(where)


def abort_upgrade(repo_path: str) -> engine.Aborted:
    repo_path = _main_checkout(repo_path)
    with engine.run_lock(open_repo(repo_path)):  # never pull the state from under a running upgrade
        return engine.abort_upgrade(repo_path)


def check_out(repo: Repository | str, out: Path) -> None:
    """Refuse a bad --out before any replay, not after it (drift calls it too, before its analysis)."""
    repo = open_repo(repo) if isinstance(repo, str) else repo
    check_report_target(out, Path(repo.workdir) if repo.workdir else None, Path(repo.path))


def _commits(results: Sequence[EngineCommit], owners_of: OwnersOf, upstream: dict[str, str],
             orphans: dict[str, tuple[str, str]] | None = None, dropped: bool = False) -> tuple[ReplayedCommit, ...]:
    commits = []
    for result in results:
        conflicts = tuple(conflict.to_model(result.source, result.summary, owners_of) for conflict in result.conflicts)
        orphan = (orphans or {}).get(result.source)
        commits.append(ReplayedCommit(result.source, result.summary, result.result, conflicts,
                                      upstream.get(result.source),
                                      OrphanRevert(orphan[0], orphan[1], dropped) if orphan else None))
    return tuple(commits)


def _finish(repo_path: str, result: engine.UpgradeResult, options: RunOptions, progress: Progress,
            notice: Callable[[str], None] | None = None, warn: Callable[[str], None] | None = None,
            ahead: "Ahead | None" = None) -> Report:
    repo = open_repo(repo_path)
    params = result.params
    backends = set(options.backends) or None
    _note_upstream(result, warn or progress.note)
    progress.phase("analysing the new branch")
    drift = analyse_drift(repo, params.range, Rev(params.target_branch, result.head), backends, True, progress, ahead)
    owners_of = drift.owners.owners
    if options.gate:
        progress.phase(f"test gate: {options.gate.command}")
    gate = _gate(repo, result, options.gate, owners_of) if options.gate else None
    branch = GitTree.of_commit(repo, result.head, params.target_branch)  # as drift --target and status judge it
    findings = [finding for finding in drift.findings if not fixed_on_branch(finding, branch)]
    commits = _commits(result.results, owners_of, result.upstream, result.orphan_reverts, params.drop_orphan_reverts)
    report = build_report(params.range, drift.owners.backends, findings, commits,
                          UpgradeInfo(params.target_branch, result.head, params.policy, result.resumed,
                                      range_notes(repo, params.range)), gate=gate,
                          only=backends, tool_version=__version__, forges=repository_forges(repo),
                          moves=upstream_moves(repo, params.range, commits))
    report = replace(report, file_hunks=hunks_on_branch(repo, params.range, result.head, report.commits))
    if options.out is not None:
        write_report(options.out, report)
    kept = engine.finish_upgrade(repo)
    if kept is not None and notice is not None:
        notice(kept_worktree_notice(kept))
    return report


def kept_worktree_notice(kept: Path) -> str:
    return (f"kept the stop worktree {kept}: it holds files git does not track; when you no longer need them: "
            f"git worktree remove --force {kept}")


def _gate(repo: Repository, result: engine.UpgradeResult, options: GateOptions, owners_of: OwnersOf) -> GateResult:
    replayed = [(r.result, f"{r.source[:9]} {r.summary}") for r in result.results if r.result]
    if replayed and replayed[-1][0] != result.head:
        replayed.append((result.head, "the pin of the new upstream"))
    onto = result.params.range.onto
    outcome = run_gate(repo, (onto.oid, onto.ref), replayed, options.command, options.at, options.timeout)
    if outcome.first_failure is None:
        return outcome
    blamed = sorted({owner for path in changed_paths(repo, outcome.first_failure.commit) for owner in owners_of(path)})
    return replace(outcome, blamed_groups=tuple(blamed))
