"""A phase of unknown length shows a spinner, never `0/?` (issue 48.9: "analysing the branch" showed 0/? for
7 seconds); a phase of known length shows n/N."""
from __future__ import annotations

from io import StringIO

from rich.console import Console

from sync.commands.progress import TerminalProgress


def _drawn(total: int | None, done: int = 0) -> str:
    progress = TerminalProgress()
    progress.console = Console(file=StringIO(), force_terminal=True, width=120)
    progress.live = True
    progress.phase("analysing the branch", total)
    if done:
        progress.advance("x", done)
    assert progress.bar is not None
    shown = Console(file=StringIO(), width=120, force_terminal=False)
    with shown.capture() as captured:
        shown.print(progress.bar.get_renderable())
    progress.bar.stop()
    return captured.get()


def test_an_unknown_total_is_no_zero_of_question_mark() -> None:
    assert "analysing the branch" in _drawn(None) and "?" not in _drawn(None)
    assert "2/5" in _drawn(5, 2)
