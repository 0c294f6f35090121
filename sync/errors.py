"""The exception family the CLI turns into a one-line message and an exit status (never a traceback)."""
from __future__ import annotations

EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_STOPPED = 4  # upgrade --on-conflict stop left a conflict for a person: the expected path, not an error


class SyncError(Exception):
    """Expected failure caused by the input (bad ref, not a repo, dirty state, ...)."""

    exit_code = EXIT_USAGE
    label = "error"


class UpgradeStopped(SyncError):
    """The upgrade stopped at a conflict for a manual resolution; the message says what to do next."""

    exit_code = EXIT_STOPPED
    label = "stopped"


class UnknownRef(SyncError):
    def __init__(self, ref: str, repo: str, suggestions: list[str] | None = None) -> None:
        hint = f"; did you mean {' or '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"unknown revision {ref!r} in {repo}{hint}")


class NotARepository(SyncError):
    def __init__(self, path: str) -> None:
        super().__init__(f"{path} is not a git repository")
