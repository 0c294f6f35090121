"""One module per subcommand: call a job, print its result, return the exit status."""
from __future__ import annotations

import click

from sync.support import terminal
from sync.support.terminal import printable


def print_warning(line: str) -> None:
    """Something that looks wrong but may be right: on stderr, also with -q and --json (it is no progress)."""
    click.echo(f"flagtree-sync: warning: {printable(line)}", err=True)


def echo_line(line: str, err: bool = False) -> None:
    """One line that may quote repository text: a newline or escape in a file name cannot start another."""
    click.echo(printable(line), err=err)


def echo_finding(head: str, message: str) -> None:
    """A finding's line: on a terminal cut to its width (the message shortened, head kept whole: the report has
    every word); piped or to a file, whole, since scripts read it."""
    click.echo(terminal.fit(printable(head), printable(message), terminal.terminal_width()))
