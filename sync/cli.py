"""Command-line entry point: parses arguments and dispatches to sync.commands."""
from __future__ import annotations

import functools
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Callable

import click

from . import __version__
from .errors import SyncError

PROG = "flagtree-sync"


def _reported(command: Callable[..., int]) -> Callable[..., None]:
    """Expected failures print one line and exit 2; bugs leave their traceback in a log file."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            status = command(*args, **kwargs)
        except SyncError as exc:
            click.echo(f"{PROG}: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo(f"{PROG}: interrupted; rerun the same command to resume", err=True)
            sys.exit(130)
        except Exception as exc:  # a bug: keep the user's terminal clean, keep the evidence
            log = Path(tempfile.gettempdir()) / f"{PROG}-crash.log"
            log.write_text(traceback.format_exc(), encoding="utf-8")
            click.echo(f"{PROG}: internal error: {type(exc).__name__}: {exc} (traceback in {log})", err=True)
            sys.exit(3)
        sys.exit(status)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name=PROG)
def cli() -> None:
    """Move the FlagTree delta onto a new Triton tag and tell each backend what drifted.

    Exit status: 0 clean, 1 findings that need a person, 2 unusable input, 3 internal error.
    """


@cli.command("check")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--backend", "backends", multiple=True, metavar="B", help="Check only this backend's spec tree (repeatable).")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--list-rules", is_flag=True, help="Print the rule table and exit.")
@_reported
def check_command(path: Path, backends: tuple[str, ...], output_format: str, list_rules: bool) -> int:
    """Enforce the FlagTree directory policy on the tree at PATH.

    PATH must hold python/triton (trunk) and may hold third_party/<b>/backend/spec/triton.
    Every finding has a rule id (see --list-rules), file:line and a fix hint.
    Exit 1 when an error is found, 0 when clean (warnings allowed), 2 for unusable input.
    """
    from .commands.check import rules_table, run_check

    if list_rules:
        click.echo(rules_table())
        return 0
    return run_check(path, backends, output_format)


def main(argv: list[str] | None = None) -> None:
    cli.main(args=argv, prog_name=PROG)
