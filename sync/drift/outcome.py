"""What an analysis gives back: its findings, and the clean overlay merges `drift --apply` may commit.

An analysis never writes into the DriftContext: the runner (drift/parallel.py) collects what each returns,
whichever process ran it, in the registry's order."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sync.model import Finding, MergedOverlay


@dataclass(frozen=True)
class Found:
    findings: list[Finding]
    merged: list[MergedOverlay] = field(default_factory=list)


def found(result: "Found | Iterable[Finding]") -> Found:
    """An analysis's result as a Found: most analyses return their findings alone."""
    return result if isinstance(result, Found) else Found(list(result))
