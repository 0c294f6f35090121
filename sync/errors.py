"""The one exception family the CLI turns into a one-line message and exit status 2."""
from __future__ import annotations


class SyncError(Exception):
    """Expected failure caused by the input (bad ref, not a repo, dirty state, ...)."""

    exit_code = 2


class UnknownRef(SyncError):
    def __init__(self, ref: str, repo: str) -> None:
        super().__init__(f"unknown revision {ref!r} in {repo}")


class NotARepository(SyncError):
    def __init__(self, path: str) -> None:
        super().__init__(f"{path} is not a git repository")
