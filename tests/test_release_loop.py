"""Issue #35: the release loop on a real branch: drift's defaults, one conflict model, check's baseline,
a report a busy engineer can scan."""
from __future__ import annotations

import json

from tests.conftest import invoke

RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]


def _drift_kinds(world, *extra: str) -> tuple[set[str], str]:
    result = invoke("drift", "--repo", str(world.fork), *RANGE, "--json", *extra)
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    return {finding["kind"] for group in document["groups"] for finding in group["findings"]}, result.stderr


def test_drift_runs_every_analysis_by_default_and_fast_leaves_the_slow_ones_out(world) -> None:
    full, _ = _drift_kinds(world)
    assert "symbol-drift" in full  # as upgrade and status report it
    fast, note = _drift_kinds(world, "--fast")
    assert "symbol-drift" not in fast and "--fast" in note
    deprecated, warning = _drift_kinds(world, "--symbols")  # old scripts keep working, and are told
    assert deprecated == full and "--symbols is deprecated" in warning
