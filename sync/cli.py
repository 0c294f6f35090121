"""Command-line entry point: parses arguments and dispatches to sync.commands."""
from __future__ import annotations

import contextlib
import errno
import functools
import os
import shutil
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Callable, Iterable

import click

from sync import __version__
from sync.errors import EXIT_INTERNAL, EXIT_USAGE, SyncError
from sync.replay.options import GATE_TIMEOUT
from sync.support.terminal import escaped_output, printable

PROG = "flagtree-sync"


def _reported(command: Callable[..., int] | None = None, *,
              resumes: bool = False) -> Callable[..., Any]:
    """Expected failures print one line and exit 2 (4: stopped for a person); bugs leave their traceback
    in a log file whose path is printed. resumes: the command keeps an interrupted run to resume (upgrade),
    which is what Ctrl-C and a full disk then tell the user; the others start again."""
    if command is None:
        return functools.partial(_reported, resumes=resumes)
    again = "it resumes" if resumes else "it starts again"

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        with escaped_output():  # nothing printed drives the terminal (a file name's escape sequence)
            _run_reported(command, again, args, kwargs)

    return wrapper


def _run_reported(command: Callable[..., int], again: str, args: Any, kwargs: Any) -> None:
    """Run command and exit with its status, or with the one line and status its failure calls for."""
    try:
        status = command(*args, **kwargs)
    except SyncError as exc:
        click.echo(f"{PROG}: {exc.label}: {printable(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except BrokenPipeError:  # the reader went away (`| head`): nothing left to say to it
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo(f"{PROG}: interrupted; rerun the same command: {again}", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug, unless the disk is full: keep the user's terminal clean, keep the evidence
        refused = _not_writable(exc)
        if refused is not None:
            click.echo(f"{PROG}: error: {printable(refused)}; make it writable (or run as a user who may write "
                       f"there), then rerun the same command: {again}", err=True)
            sys.exit(EXIT_USAGE)
        where = _no_space_at(exc, kwargs)
        if where is None:
            _crash(exc, kwargs.get("repo_path"))
        click.echo(f"{PROG}: error: no space left on device{printable(where or '')}; free some space and rerun the "
                   f"same command: {again}", err=True)
        sys.exit(EXIT_USAGE)
    sys.exit(status)


# Below this much room an error from git is taken for a full disk: libgit2 loses the errno on the way
# (GitError 'no error', a commit it reports written but never wrote, then 'target OID ... doesn't exist').
NEARLY_FULL = 1 << 20


def _no_space_at(exc: Exception, kwargs: dict[str, Any]) -> str | None:
    """' (where)' (or '') when exc comes of a full disk; None when it is a bug."""
    full = _nearly_full(kwargs.get(name) for name in ("repo_path", "out", "directory"))
    if _disk_full(exc):
        name = getattr(exc, "filename", None) or full
        return f" ({name})" if name else ""
    if full is not None and (isinstance(exc, OSError) or _is_git_error(exc)):
        return f" ({full})"
    return None


def _nearly_full(paths: Iterable[object]) -> str | None:
    """The first of the command's places (repository, --out, demo's directory) on a file system with less
    than NEARLY_FULL left, as the nearest directory that exists."""
    for value in paths:
        if not isinstance(value, (str, Path)):
            continue
        try:  # abspath reads the current directory, which may be gone
            path = Path(os.path.abspath(value))
            existing = next((folder for folder in (path, *path.parents) if folder.is_dir()), None)
            if existing is not None and shutil.disk_usage(existing).free < NEARLY_FULL:
                return str(existing)
        except OSError:
            continue
    return None


_REFUSED = (errno.EROFS, errno.EACCES, errno.EPERM)


def _not_writable(exc: Exception) -> str | None:
    """What the file system refused (a read-only mount, a directory the user may not write), or None: the
    environment's answer, not a bug. libgit2's errors say so only in their message."""
    if isinstance(exc, OSError) and exc.errno in _REFUSED:
        return f"cannot write {exc.filename}: {exc.strerror}" if exc.filename else f"cannot write: {exc.strerror}"
    said = next((os.strerror(number) for number in _REFUSED if os.strerror(number) in str(exc)), None)
    if said is not None and (isinstance(exc, OSError) or _is_git_error(exc)):
        return f"cannot write: {str(exc).strip()}"
    return None


def _is_git_error(exc: Exception) -> bool:
    try:  # imported here, on a failure's path only: the CLI stays quick to start
        from sync.git import is_git_error
    except ImportError:  # the git libraries cannot load: exc cannot be one of their errors
        return False
    return is_git_error(exc)


def _disk_full(exc: Exception) -> bool:
    """ENOSPC or EDQUOT; libgit2's writes say so only in the message (pygit2 gives no errno, and raises an
    OSError or a GitError)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    said = any(text in str(exc) for text in (os.strerror(errno.ENOSPC), os.strerror(errno.EDQUOT)))
    return said and ((isinstance(exc, OSError) and exc.errno is None) or _is_git_error(exc))


def _crash(exc: BaseException, repo_path: str | None) -> None:
    log = write_crash_log(traceback.format_exc(), repo_path)
    where = f"traceback in {log}" if log else "no room anywhere for its traceback log"
    click.echo(f"{PROG}: internal error: {type(exc).__name__}: {printable(str(exc))} ({where})", err=True)
    sys.exit(EXIT_INTERNAL)


def write_crash_log(text: str, repo_path: str | None) -> str | None:
    """A fresh file, never through a planted link: under <git dir>/flagtree-sync/ when the command was given a
    repository (--repo, whose default is the current directory), else (or when that cannot be written: a full
    disk) in the temporary directory. The repository the shell happens to be in is not demo's or check's.
    None when no place could take it."""
    for directory in (*_repository_log_dir(repo_path), None):
        try:
            descriptor, path = tempfile.mkstemp(prefix="crash-", suffix=".log", dir=directory)  # O_EXCL: no link
        except OSError:
            continue
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
            return path
        except OSError:  # ENOSPC while writing: a half log helps no one
            with contextlib.suppress(OSError):
                os.unlink(path)
    return None


def _repository_log_dir(repo_path: str | None) -> list[Path]:
    """<git dir>/flagtree-sync of the repository at or above repo_path, when it is a real directory."""
    if repo_path is None:
        return []
    try:
        start = Path(repo_path).resolve()
    except OSError:  # the current directory was removed
        return []
    # --repo defaults to the current directory, which may be anywhere inside the work tree
    git_dir = next((folder / ".git" for folder in (start, *start.parents) if (folder / ".git").is_dir()), None)
    if git_dir is None or git_dir.is_symlink() or not _owned_by_me(git_dir):
        return []  # another user's repository (git's safe.directory case) gets no file of ours
    directory = git_dir / "flagtree-sync"
    try:
        directory.mkdir(exist_ok=True)
    except OSError:
        return []
    return [] if directory.is_symlink() else [directory]


def _owned_by_me(path: Path) -> bool:
    try:
        return path.stat().st_uid == os.geteuid()
    except OSError:
        return False


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name=PROG)
def cli() -> None:
    """Move the FlagTree delta onto a new Triton tag and tell each backend what drifted.

    Exit status: 0 clean, 1 findings that need a person, 2 unusable input, 3 internal error,
    4 upgrade stopped at a conflict for a manual resolution (--on-conflict stop).
    """


@cli.command("check")
@click.argument("path", type=click.Path(path_type=Path), required=False)
@click.option("--backend", "backends", multiple=True, metavar="B", help="Check only this backend's spec tree (repeatable).")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="text: one line per finding; json: the check document (schema "
              "flagtree-sync/check/1); sarif: SARIF 2.1.0 for code scanning; github: workflow annotations.")
@click.option("--list-rules", is_flag=True, help="Print the rule table (from the kinds catalogue) and exit; needs no PATH.")
@click.option("--allow-markers", multiple=True, metavar="GLOB",
              help="Files that may hold conflict markers on purpose, e.g. 'tests/fixtures/*' (repeatable).")
@click.option("--baseline", "baseline", type=click.Path(path_type=Path), metavar="FILE",
              help="Findings recorded in FILE (by --write-baseline) are shown as in the baseline and fail nothing: "
              "only new ones do [default: PATH/.flagtree-sync/check-baseline.json when it exists].")
@click.option("--write-baseline", "write_baseline", type=click.Path(path_type=Path), metavar="FILE",
              help="Record the current findings in FILE (rule, path and a stable subject: the flagged line's "
              "text, not the message) and exit 0; commit PATH/.flagtree-sync/check-baseline.json for every check "
              "to read it.")
@click.option("--no-baseline", is_flag=True, help="Ignore the committed default baseline: every finding counts.")
@click.option("--all", "show_all", is_flag=True, help="Also print the findings the baseline holds (text format; "
              "by default only new ones are printed, with a count of the rest).")
@_reported
def check_command(**given: Any) -> int:
    """Enforce the FlagTree directory policy on the tree at PATH.

    PATH must hold python/triton (trunk) and may hold third_party/<b>/backend/spec/triton.
    Every finding has a rule id (see --list-rules), file:line and a fix hint. Committed
    conflict markers in any file are an error (FT014) unless --allow-markers lists it.
    With a baseline (--baseline, or the committed .flagtree-sync/check-baseline.json) only
    findings not recorded in it count: pre-existing debt fails nothing, and is listed with --all.
    Directories holding a report this tool wrote (--out) are skipped.
    Exit 1 when an error is found, 0 when clean (warnings allowed), 2 for unusable input.
    """
    from sync.commands.check import CheckRequest, run_check_command

    return run_check_command(CheckRequest(**given))


@cli.command("describe")
@click.option("--repo", "repo_path", default=".", show_default=True, metavar="PATH", help="The FlagTree repository.")
@click.option("--branch", "source_branch", metavar="REF", help="The branch or commit to describe [default: the current branch].")
@_reported
def describe_command(**given: Any) -> int:
    """Print the tool's model of a FlagTree tree as JSON: hijacked packages, the role of every spec file,
    each backend's exported spec functions and their trunk call sites, FLAGTREE_SPEC_* macros with the
    header that defines each, the trunk guards they switch and the C++ spec library's functions.
    """
    from sync.commands.describe import DescribeRequest, run_describe

    return run_describe(DescribeRequest(**given))


@cli.command("kinds")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="text: a line per kind; json: the catalogue; markdown: docs/KINDS.md.")
@_reported
def kinds_command(**given: Any) -> int:
    """Print every finding kind the tool can report: id, family, severity, meaning, what to do.

    Severities in every report come from this catalogue; rule ids (FT0xx) are stable. error: it breaks the
    build, the import or the replay; warning: it likely breaks; port: upstream changed what a backend copies or
    replaces, and the copy still builds and loads without that change; info: nothing to do unless you want it.
    """
    from sync.commands.kinds import run_kinds

    return run_kinds(**given)


FROM_HELP = "Upstream tag or commit the FlagTree branch is based on"


ONTO_HELP = "Upstream tag or commit to move onto"


def _repo_range_options(from_help: str, onto_help: str = f"{ONTO_HELP}."
                        ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options upgrade and drift share; --from's and --onto's help differ (their defaults do)."""
    return functools.partial(_with_repo_range_options, from_help=from_help, onto_help=onto_help)


def _with_repo_range_options(command: Callable[..., Any], from_help: str, onto_help: str) -> Callable[..., Any]:
    for option in reversed([
        click.option("--repo", "repo_path", default=".", show_default=True, metavar="PATH",
                     help="The FlagTree repository (it must hold the upstream tags too)."),
        click.option("--from", "old", metavar="OLD", help=from_help),
        click.option("--onto", metavar="NEW", help=onto_help),
        click.option("--branch", "source_branch", metavar="SRC", help="The FlagTree branch [default: the current branch]."),
        click.option("--backend", "backends", multiple=True, metavar="B",
                     help="Report only this backend (repeatable) [default: all]."),
        click.option("--out", type=click.Path(path_type=Path), metavar="DIR",
                     help="Write summary.md, <group>.md, report.json and index.html here."),
        click.option("--json", "as_json", is_flag=True, help="Print the report document (JSON) on stdout."),
    ]):
        command = option(command)
    return command


@cli.command("upgrade")
@_repo_range_options(f"{FROM_HELP} [default: the tag in the branch's flagtree-upstream.toml].")
@click.option("--target-branch", "target_branch", metavar="NAME", help="Branch to create [default: sync/<NEW>].")
@click.option("--on-conflict", "policy", type=click.Choice(["markers", "ours", "theirs", "stop"]), default=None,
              show_default="markers", help="markers: commit conflict markers and go on; ours: keep the upgraded side; "
              "theirs: keep the FlagTree side; stop: stop in a worktree for a manual fix. Given to --continue, it "
              "holds from the commit the run stopped at on.")
@click.option("--stop-on", "stop_on", multiple=True, metavar="GLOB", help="Stop only on a conflict in a file GLOB "
              "matches (repeatable; fnmatch, * also matches /: 'third_party/mine/*'); conflicts elsewhere are committed "
              "with markers. Implies --on-conflict stop; given to --continue, it replaces the run's globs.")
@click.option("--force", is_flag=True, help="Replace the target branch if it exists.")
@click.option("--drop-orphan-reverts", is_flag=True, help="Leave out a commit that says 'This reverts commit X' "
              "where X is not replayed (left out as upstream's, or outside the range); without it such a revert is "
              "replayed, as git rebase does, and named in the report.")
@click.option("--continue", "do_continue", is_flag=True, help="Resume a stopped or interrupted upgrade, with the "
              "--out, --exec, --exec-at, --exec-timeout and --backend it was started with (those given override).")
@click.option("--abort", "do_abort", is_flag=True, help="Forget the upgrade in progress (the user's refs are untouched).")
@click.option("-q", "--quiet", is_flag=True, help="Print no progress on stderr: neither the progress bar nor the "
              "'[n/N] COMMIT conflicts: FILES' line of each conflicted commit. The summary (or --json), the stop "
              "message, the note naming the stored options --continue uses, and errors are still printed.")
@click.option("--exec", "exec_command", metavar="CMD", help="Test gate: run CMD (a shell command) on the replayed "
              "tree in a worktree of its own; a failure names the first replayed commit that broke it.")
@click.option("--exec-at", type=click.Choice(["end", "each"]), default=None, show_default="end",
              help="end: run at the branch head and bisect on failure; each: run after every replayed commit.")
@click.option("--exec-timeout", type=click.FloatRange(min=0, min_open=True), default=None, show_default=str(GATE_TIMEOUT), metavar="SECONDS",
              help="Stop each gate run after this many seconds (the run counts as failed, exit status 124).")
@_reported(resumes=True)
def upgrade_command(**given: Any) -> int:
    """Replay the FlagTree commits OLD..SRC onto NEW as a new branch, and report.

    Works in memory: the current branch, index and work tree are never touched.
    Conflicts do not stop the run (unless --on-conflict stop): each one is recorded
    with its hunks and owner (backend, flagtree-core or shared-trunk). An interrupted
    run resumes when the same command is run again. The report includes the drift
    analysis of every backend against the new branch.

    Exit status: 0 clean, 1 conflicts or drift that needs a person, 2 unusable input, 3 internal error,
    4 stopped at a conflict for a person (--on-conflict stop: resolve, git add, then --continue).
    """
    from sync.commands.upgrade import UpgradeRequest, run_upgrade_command

    request = UpgradeRequest(**given)
    if request.do_continue and not request.do_abort:  # the run in progress keeps its range and branches
        ignored = request.ignored_by_continue()
        if ignored:
            click.echo(f"note: {' '.join(ignored)} left as the upgrade in progress has them: --continue goes on "
                       "with the range and branches it was started with (another run: upgrade --abort, then start "
                       "it)", err=True)
    return run_upgrade_command(request)


@cli.command("port")
@click.option("--repo", "repo_path", default=".", show_default=True, metavar="PATH",
              help="The FlagTree repository (it must hold the upstream tags too).")
@click.option("--target", required=True, metavar="BRANCH", help="The upgraded branch (sync/<NEW>): its drift is read, "
              "and the port commits go on it. Never a branch checked out in a worktree.")
@click.option("--from", "old", metavar="OLD", help=f"{FROM_HELP} [default: the range the --target branch records].")
@click.option("--onto", metavar="NEW", help=f"{ONTO_HELP} [default: the --target branch's flagtree-upstream.toml].")
@click.option("--branch", "source_branch", metavar="SRC", help="The FlagTree branch [default: the one --target replays].")
@click.option("--backend", "backends", multiple=True, metavar="B",
              help="Port only the sites of this backend's findings (repeatable) [default: all].")
@click.option("--dry-run", is_flag=True, help="Print the unified patch on stdout (the summary on stderr); write "
              "nothing, neither commit nor ref.")
@click.option("--exec", "exec_command", metavar="CMD", help="Gate: run CMD (a shell command) on each port commit, "
              "checked out in a worktree of the tool's own; a commit that fails is not put on the branch and its "
              "change is left [default: the commits are left for review].")
@click.option("--exec-timeout", type=click.FloatRange(min=0, min_open=True), default=GATE_TIMEOUT,
              show_default=True, metavar="SECONDS", help="Stop the gate's command after this long (a failure).")
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR", help="Write the drift report port read "
              "here (summary.md, <group>.md, report.json, index.html), each finding port left with upstream's own "
              "before/after of the change.")
@click.option("-q", "--quiet", is_flag=True, help="Print no progress bar on stderr (there is one only on a "
              "terminal). What was ported and what was left, the patch of --dry-run, and errors are still printed.")
@_reported
def port_command(**given: Any) -> int:
    """Rewrite FlagTree's sites for upstream's certain renames, one commit per upstream change.

    Reads the drift of --target and, for each symbol-removed error that stands on one upstream commit,
    checks that this commit removed the declaration and added exactly one of the same kind, scope and
    signature in its place (rule renamed-declaration: read from upstream's declarations, not from the
    spelling). Each site is then rewritten on the exact identifier (C++: tree-sitter; Python: libcst), and
    the change committed on --target with a subject naming the PR and a body listing the sites and the rule.
    Overloaded or ambiguous renames, sites in a macro body or a conflict block, and everything else that is
    not certain, are left as findings and listed with the reason. Nothing is pushed; no work tree is touched.

    Exit status: 0 everything ported, 1 findings left for a person, 2 unusable input.
    """
    from sync.commands.port import PortRequest, run_port_command

    return run_port_command(PortRequest(**given))


@cli.command("drift")
@_repo_range_options(f"{FROM_HELP} [required, unless --target is a branch upgrade made: then the range it "
                     "records, as status reads it].",
                     f"{ONTO_HELP} [required, unless --target is a branch upgrade made: then its "
                     "flagtree-upstream.toml].")
@click.option("--target", metavar="REF", help="The upgraded branch to judge: its trunk hooks and guards, the "
              "backends' overlays, spec functions, macros, C++ spec library, provenance.toml and "
              "suppressions.toml, and the symbol uses it still has, so fixes committed there count "
              "[default: replay the delta in memory and read the FlagTree branch].")
@click.option("--apply", is_flag=True, help="Commit the clean 3-way merges of drifted overlays on --target; "
              "where it is checked out, the worktree is fast-forwarded (refused if a local change is in the way).")
@click.option("--fast", is_flag=True, help="Leave out the slow analyses (symbol drift, call signatures, key strings, "
              "co-change, op verifiers, build files, feature gates), which upgrade and status always run: a quick look, "
              "not the full report.")
@click.option("--symbols", is_flag=True, hidden=True, help="Deprecated, does nothing: every analysis runs by default.")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "sarif", "github"]), default="text",
              show_default=True, help="text: a line per finding; json: the report document (as --json); "
              "sarif: SARIF 2.1.0 for code scanning; github: workflow annotations.")
@click.option("--min-severity", type=click.Choice(["info", "port", "warning", "error"]), default="info", show_default=True,
              help="The least severity the text lists (info findings are folded, a line per kind with its count); "
              "verdicts, counts, the exit status and the report files are the same whatever it is.")
@click.option("-q", "--quiet", is_flag=True, help="Print no progress bar on stderr (there is one only on a "
              "terminal). The report (text, JSON, SARIF or annotations), hints and errors are still printed.")
@_reported
def drift_command(**given: Any) -> int:
    """Tell each backend which overlays, spec functions and C++ guards drifted from OLD to NEW.

    Overlay files (spec/triton, spec/include, spec/lib) are classified against their trunk
    counterpart: in-sync, auto-mergeable, conflicting, orphan, redundant, hijack-lost.
    Spec functions are checked against their hook call sites; FLAGTREE_SPEC_* guards
    against the trunk defaults they guard.

    With --target, the backends' files (overlays, spec functions, macros and the C++ spec library,
    provenance.toml, suppressions.toml) are read from that branch, and a symbol use counts only while
    the branch still has it: a fix or a merge --apply committed there is gone the next time. Run on
    that branch, --branch defaults to the FlagTree branch it replays. Drift reads commits, never the
    work tree; a suppressions.toml changed in the work tree but not committed is named in a hint line.

    With --target a branch upgrade made (sync/<NEW>), --from, --onto and --branch may be left out:
    they are read from the branch the way status reads them.

    Every analysis upgrade and status run, symbol drift included, runs here too; --fast leaves the
    slow ones out.

    Severities: error (breaks the build, import or replay), warning (likely breaks), port (upstream changed what
    a backend copies or replaces; it still builds and loads without the change), info.

    Exit status: 0 nothing to do, 1 findings (errors, warnings or port work), 2 unusable input.
    """
    from sync.commands.drift import DriftRequest, run_drift_command

    request = DriftRequest(**given)
    if request.symbols:  # scripts written for the old default keep working
        click.echo(f"{PROG}: warning: --symbols is deprecated and does nothing: drift runs every analysis by "
                   "default (--fast leaves the slow ones out)", err=True)
    return run_drift_command(request)


@cli.command("status")
@click.option("--repo", "repo_path", default=".", show_default=True, metavar="PATH",
              help="The FlagTree repository (it must hold the upstream tags too).")
@click.option("--target", metavar="BRANCH", help="The upgraded branch, e.g. sync/v3.6.0 [default: the current branch].")
@click.option("--from", "old", metavar="OLD", help="The upstream tag the FlagTree branch was on "
              "[default: the range the branch's pin commit records, else the pin in the tree of the newest replayed "
              "FlagTree commit].")
@click.option("--onto", metavar="NEW", help="The upstream tag the branch is on [default: the branch's "
              "flagtree-upstream.toml].")
@click.option("--branch", "source_branch", metavar="SRC", help="The FlagTree branch that was replayed [default: the newest "
              "commit named by a '(cherry picked from commit ...)' line of the branch].")
@click.option("--backend", "backends", multiple=True, metavar="B",
              help="Report only this backend (repeatable) [default: all].")
@click.option("--out", type=click.Path(path_type=Path), metavar="DIR",
              help="Rewrite summary.md, <group>.md, report.json and index.html here.")
@click.option("--json", "as_json", is_flag=True, help="Print the report document (JSON) on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="Print no progress bar on stderr (there is one only on a "
              "terminal). The status lines (or --json) and errors are still printed.")
@_reported
def status_command(**given: Any) -> int:
    """Re-derive the upgrade report of an upgraded branch as it is now.

    After conflicts were resolved and committed by hand on sync/<NEW>: a replayed file that no
    longer holds conflict markers counts as resolved (resolution manual); drift and every verdict
    are computed again on the branch tip, and the report is rewritten (--out). Everything comes
    from the branch itself, never from an earlier report. The test gate is not rerun.

    Exit status: 0 clean, 1 conflicts or findings that need a person, 2 unusable input.
    """
    from sync.commands.status import StatusRequest, run_status_command

    return run_status_command(StatusRequest(**given))


@cli.command("suppress")
@click.option("--repo", "repo_path", default=".", show_default=True, metavar="PATH",
              help="The FlagTree repository; the entry is written in its work tree (with --target: see there).")
@click.option("--from", "old", metavar="OLD",
              help="Upstream tag or commit the FlagTree branch is based on (as given to drift) [required, unless "
              "--target is a branch upgrade made: then read from it, as drift and status do].")
@click.option("--onto", metavar="NEW", help="The tag the finding was reviewed for [required, unless --target is a "
              "branch upgrade made: then its flagtree-upstream.toml].")
@click.option("--branch", "source_branch", metavar="SRC", help="The FlagTree branch whose finding it is "
              "[default: the current branch].")
@click.option("--kind", required=True, help="The finding's kind, e.g. overlay-conflicting.")
@click.option("--path", "finding_path", required=True, help="The finding's path, as the report shows it.")
@click.option("--subject", metavar="NAME", help="Which finding, when the path has several of the kind: the macro, "
              "spec function, key, callee or CMake entry it is about (the error lists them).")
@click.option("--target", metavar="BRANCH", help="The upgraded branch whose finding it is, as drift --target "
              "reads it. The entry is written in the worktree that has BRANCH checked out (commit it there), or, "
              "when none has, committed on BRANCH in memory [default: replay the delta in memory].")
@click.option("--reason", required=True, help="Why the finding needs no change (kept in the report).")
@_reported
def suppress_command(**given: Any) -> int:
    """Mark a drift finding as reviewed for NEW in the backend's spec/suppressions.toml.

    Every finding of a backend can be reviewed. The entry records the trunk counterpart's blob at NEW:
    while it stays the same the finding is shown as reviewed and leaves the exit status alone; when
    upstream changes that file again the entry expires. A finding with no trunk file at NEW (a macro no
    trunk code tests, a call site in a deleted file) is reviewed for that release only: the entry records
    NEW's tree. The file is written in the work tree: commit it with the backend. With --target it goes
    where BRANCH is checked out, or into a commit of yours on BRANCH when no worktree has it.
    """
    from sync.commands.suppress import SuppressCommandRequest, run_suppress

    return run_suppress(SuppressCommandRequest(**given))


@cli.command("resolve")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--repo", "repo_path", default=".", show_default=True, metavar="PATH",
              help="The work tree with the upgraded branch checked out.")
@click.option("--all", "every", is_flag=True, help="Every file of the branch that still holds the conflict markers "
              "a replayed commit committed.")
@click.option("--target", metavar="BRANCH", help="The upgraded branch [default: the branch checked out].")
@_reported
def resolve_command(**given: Any) -> int:
    """Write each file's single-level 3-way merge into the work tree: base the file at OLD, ours the file
    at NEW, theirs FlagTree's final file at SRC (the range is read from the branch, as status reads it).

    In markers mode a file that several replayed commits conflicted in holds nested markers; this gives
    one conflict per file instead. A file with local changes is refused (nothing is written). Exit 0 when
    every file merged cleanly, 1 when conflict blocks are left for you, 2 for unusable input. Then resolve
    what is left, git add and commit; status tells what is still open.
    """
    from sync.commands.resolve import ResolveRequest, run_resolve

    return run_resolve(ResolveRequest(**given))


@cli.command("provenance")
@click.option("--repo", "repo_path", default=".", show_default=True, metavar="PATH",
              help="The FlagTree repository; the manifest is written in its work tree.")
@click.option("--tag", required=True, metavar="TAG", help="The upstream tag the backend's files were derived from.")
@click.option("--backend", required=True, metavar="B", help="The backend whose files to record.")
@click.option("--branch", "source_branch", metavar="SRC", help="The FlagTree branch [default: the current branch].")
@click.option("--from", "old", metavar="OLD", help="The tag the files were based on before, for files the manifest "
              "has no base for [default: read from the branch, as status does].")
@_reported
def provenance_command(**given: Any) -> int:
    """Write third_party/B/backend/spec/provenance.toml: each overlay's and spec module's trunk
    counterpart and its blob at TAG. Drift then merges from these bases, and check keeps the
    manifest honest. The file is written in the work tree: commit it with the backend.

    A file that does not hold TAG's change yet (a clean 3-way merge from its old base would still
    add it) keeps its old base and is named: recording TAG would hide that change from drift.
    Exit status: 0 recorded, 1 some files left at their old base, 2 unusable input.
    """
    from sync.commands.provenance import ProvenanceRequest, run_provenance

    return run_provenance(ProvenanceRequest(**given))


@cli.command("hooks")
@click.argument("triton_package", type=click.Path(path_type=Path))
@click.option("--hook-set", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="The hook set [default: patches/hooks.toml of this checkout].")
@_reported
def hooks_command(**given: Any) -> int:
    """Report whether each FlagTree hook still applies to the triton package at TRITON_PACKAGE.

    TRITON_PACKAGE is an installed or extracted upstream triton package directory (or a
    directory holding one). Nothing is written. Exit 1 when a hook no longer applies.
    """
    from sync.commands.hookset_check import HooksRequest, run_hooks

    return run_hooks(HooksRequest(**given))


@cli.command("demo")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--no-run", is_flag=True, help="Only build the demo repositories.")
@click.option("--native", is_flag=True, help="The native world: a C++ library (CMake) and a backend with a C++ spec "
              "library; the upgrade's gate builds it.")
@_reported
def demo_command(**given: Any) -> int:
    """Build the demo world in DIRECTORY and run the upgrade on it.

    DIRECTORY/upstream is a miniature Triton with tags v3.5.0 and v3.6.0; DIRECTORY/flagtree
    is a fork with FlagTree commits and backends alpha and beta. The report goes to
    DIRECTORY/report. Exit status is the upgrade's (1: the demo plants conflicts and drift).
    """
    from sync.commands.demo import DemoRequest, run_demo

    return run_demo(DemoRequest(**given))


def main(argv: list[str] | None = None) -> None:
    _open_closed_standard_streams()
    try:
        cli.main(args=argv, prog_name=PROG)
    except OSError as exc:  # click's own output (--help, --version, usage) could not be written: /dev/full
        _output_failed(exc)


def _open_closed_standard_streams() -> None:
    """A closed stdin, stdout or stderr (`>&-`) reads and writes /dev/null, as git does: else the next file the
    process opens would take its descriptor, and what it prints would land in that file."""
    for number, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(number)
            continue
        except OSError:
            pass
        descriptor = os.open(os.devnull, os.O_RDWR)
        if descriptor != number:
            os.dup2(descriptor, number)
            os.close(descriptor)
        if getattr(sys, name) is None:
            setattr(sys, name, open(number, mode, encoding="utf-8", errors="backslashreplace", closefd=False))


def _output_failed(exc: OSError) -> None:
    """Say once, on stderr where it can, that the output could not be written; exit 2 (no traceback, and
    nothing more for the interpreter to flush into the same failing file at exit)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno() if sys.stdout is not None else 1)
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{PROG}: error: cannot write the output: {exc.strerror or exc}\n")
        sys.stderr.flush()
    sys.exit(EXIT_USAGE)
