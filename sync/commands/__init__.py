"""One module per subcommand: call a job, print its result, return the exit status."""
from __future__ import annotations

import click


def print_warning(line: str) -> None:
    """Something that looks wrong but may be right: on stderr, also with -q and --json (it is no progress)."""
    click.echo(f"flagtree-sync: warning: {line}", err=True)
