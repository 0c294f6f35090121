"""Progress on the terminal through rich: a transient bar per phase on a TTY, only notes otherwise."""
from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, Task, TaskID, TextColumn,
                           TimeElapsedColumn)
from rich.text import Text

from sync.support.terminal import fit, printable, unfiltered


class CountColumn(MofNCompleteColumn):
    """n/N where the total is known; nothing where it is not (rich would show 0/? for seconds, issue 48.9): the
    spinner beside it says the phase is at work."""

    def render(self, task: Task) -> Text:
        return super().render(task) if task.total is not None else Text("")


class TerminalProgress:
    """Bars clear the line they draw on (rich redraws in place); notes are printed above them."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        # the bar's own escapes go out as they are; what is printed through it is escaped (note, label)
        self.console = Console(file=unfiltered(sys.stderr), highlight=False, soft_wrap=True)
        self.live = not quiet and self.console.is_terminal
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def _ensure_bar(self) -> Progress:
        if self.bar is None:
            self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(),
                                CountColumn(),
                                TextColumn("{task.fields[label]}", markup=False), TimeElapsedColumn(), console=self.console,
                                transient=True)
            self.bar.start()
        return self.bar

    def phase(self, name: str, total: int | None = None) -> None:
        if not self.live:
            return
        bar = self._ensure_bar()
        if self.task is not None:
            bar.remove_task(self.task)
        self.task = bar.add_task(printable(name), total=total, label="")

    def advance(self, label: str, done: int | None = None) -> None:
        if self.live and self.bar is not None and self.task is not None:
            if done is None:
                self.bar.update(self.task, advance=1, label=printable(label[:60]))
            else:
                self.bar.update(self.task, completed=done, label=printable(label[:60]))

    def note(self, line: str) -> None:
        if self.quiet:
            return
        line = printable(line)
        if self.console.is_terminal:  # a conflict note can name dozens of files: the report has them all
            line = fit("", line, self.console.width)
        self.console.print(line, markup=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None
