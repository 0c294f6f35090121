"""Run drift on a demo world from tests."""
from __future__ import annotations

import pygit2

from sync.drift import analyse_drift
from sync.findings import Finding


def alpha_findings(world, onto: str = "v3.6.0") -> dict[tuple[str, str], Finding]:
    repo = pygit2.Repository(str(world.fork))
    ids = [str(repo.revparse_single(ref).peel(pygit2.Commit).id) for ref in ("v3.5.0", onto, "main")]
    return {(f.kind, f.path): f for f in analyse_drift(repo, *ids, None, {"alpha"}).findings}
