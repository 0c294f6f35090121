"""What a job tells about its progress; the CLI shows it, tests and benchmarks pass Silent()."""
from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def phase(self, name: str, total: int | None = None) -> None:
        """A new phase of work starts (replay, an analysis, the gate, the report)."""

    def advance(self, label: str, done: int | None = None) -> None:
        """One more item of the current phase (done: items finished so far, when known)."""

    def note(self, line: str) -> None:
        """A line worth keeping on screen, e.g. a commit that conflicted."""

    def close(self) -> None:
        """The job is over: clear whatever is transient."""


class Silent:
    def phase(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, label: str, done: int | None = None) -> None:
        pass

    def note(self, line: str) -> None:
        pass

    def close(self) -> None:
        pass
