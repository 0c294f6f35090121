"""Issue #35: a FlagTree branch without a pin. The branch upgrade makes still carries its range (the pin commit
and its trailers), so status, drift --target, suppress --target and provenance need no range flag."""
from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git, invoke

LINK = "third_party/alpha/backend/spec/triton/tools/link.py"


def _unpinned_upgrade(world) -> str:
    """main without flagtree-upstream.toml, as FlagTree's branches are, upgraded with --from: main's commit."""
    git(world.fork, "rm", "-q", "flagtree-upstream.toml")
    git(world.fork, "commit", "-qm", "No pin, as on FlagTree")
    result = invoke("upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "-q")
    assert result.exit_code == 1, result.output
    return git(world.fork, "rev-parse", "main").strip()


def test_an_upgrade_of_an_unpinned_branch_pins_and_records_its_range(world) -> None:
    main = _unpinned_upgrade(world)
    assert 'tag = "v3.6.0"' in git(world.fork, "show", "sync/v3.6.0:flagtree-upstream.toml")
    message = git(world.fork, "log", "-1", "--format=%B", "sync/v3.6.0")
    v350 = git(world.fork, "rev-parse", "v3.5.0^{commit}").strip()
    assert f"Flagtree-sync-from: v3.5.0 {v350}\nFlagtree-sync-source: {main}" in message
    # the replayed tree is git cherry-pick's: the pin commit adds the pin and nothing else
    changed = git(world.fork, "diff", "--name-only", "sync/v3.6.0~1", "sync/v3.6.0").split()
    assert changed == ["flagtree-upstream.toml"]
    # --force still knows the pin commit for the tool's own
    again = invoke("upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "-q", "--force")
    assert again.exit_code == 1, again.output


def test_status_drift_suppress_and_provenance_read_the_range_from_the_branch(world, tmp_path: Path) -> None:
    main = _unpinned_upgrade(world)
    status = invoke("status", "--repo", str(world.fork), "--target", "sync/v3.6.0")
    assert status.exit_code == 1 and f"(v3.5.0..{main[:9]} onto v3.6.0)" in status.output, status.output
    drift = invoke("drift", "--repo", str(world.fork), "--target", "sync/v3.6.0", "--json")
    assert drift.exit_code == 1, drift.output
    document = json.loads(drift.stdout)
    assert document["range"]["from"]["ref"] == "v3.5.0" and document["range"]["source"]["commit"] == main
    suppress = invoke("suppress", "--repo", str(world.fork), "--target", "sync/v3.6.0", "--kind",
                      "overlay-redundant", "--path", LINK, "--reason", "kept on purpose")
    assert suppress.exit_code == 0, suppress.output
    checkout = tmp_path / "sync"
    git(world.fork, "worktree", "add", "-q", str(checkout), "sync/v3.6.0")
    status = invoke("status", "--repo", str(checkout))  # on the branch: no flag at all
    assert status.exit_code == 1 and "reviewed" in status.output, status.output
    # provenance judges a file the manifest has no base for from OLD, read from the branch
    provenance = invoke("provenance", "--repo", str(checkout), "--tag", "v3.6.0", "--backend", "alpha")
    assert provenance.exit_code in (0, 1) and "recorded" in provenance.output, provenance.output
