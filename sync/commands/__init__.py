"""One module per subcommand: call a job, print its result, return the exit status."""
from __future__ import annotations

import click

from sync.support.terminal import printable


def print_warning(line: str) -> None:
    """Something that looks wrong but may be right: on stderr, also with -q and --json (it is no progress)."""
    click.echo(f"flagtree-sync: warning: {printable(line)}", err=True)


def echo_line(line: str, err: bool = False) -> None:
    """One line that may quote repository text: a newline or escape in a file name cannot start another."""
    click.echo(printable(line), err=err)
