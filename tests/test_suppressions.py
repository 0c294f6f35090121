"""Reviewed findings: suppressed while the trunk counterpart stays the same, counted again when it changes."""
from __future__ import annotations

import json

from click.testing import CliRunner

from sync.cli import cli
from tests.conftest import git

A = "third_party/alpha/backend/spec/triton/"
SUPPRESS = ["suppress", "--from", "v3.5.0", "--onto", "v3.6.0", "--kind", "overlay-conflicting",
            "--path", A + "runtime/autotuner.py", "--reason", "we keep our own pruning"]


def drift_json(world, onto: str = "v3.6.0") -> dict:
    result = CliRunner().invoke(cli, ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", onto,
                                      "--backend", "alpha", "--json"])
    return json.loads(result.output)


def autotuner(document: dict) -> dict:
    group = next(g for g in document["groups"] if g["name"] == "alpha")
    return next(f for f in group["findings"] if f["path"] == A + "runtime/autotuner.py")


def test_suppressed_finding_stays_in_json_and_leaves_the_counts(world, monkeypatch) -> None:
    monkeypatch.chdir(world.fork)
    before = drift_json(world)
    result = CliRunner().invoke(cli, SUPPRESS)
    assert result.exit_code == 0, result.output
    entry = (world.fork / "third_party/alpha/backend/spec/suppressions.toml").read_text()
    assert 'reviewed_for = "v3.6.0"' in entry and 'trunk = "python/triton/runtime/autotuner.py"' in entry
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "alpha: reviewed the autotuner drift")
    after = drift_json(world)
    finding = autotuner(after)
    assert finding["suppressed"] == {"reason": "we keep our own pruning", "reviewed_for": "v3.6.0"}
    group_before = next(g for g in before["groups"] if g["name"] == "alpha")["counts"]
    group_after = next(g for g in after["groups"] if g["name"] == "alpha")["counts"]
    assert group_after["error"] == group_before["error"] - 1 and group_after["suppressed"] == 1
    again = CliRunner().invoke(cli, SUPPRESS)
    assert again.exit_code == 2 and "already suppressed" in again.output


def test_suppression_expires_when_trunk_changes_again(world, monkeypatch) -> None:
    monkeypatch.chdir(world.fork)
    assert CliRunner().invoke(cli, SUPPRESS).exit_code == 0
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "alpha: reviewed")
    # a later upstream release changes autotuner.py again
    upstream = world.upstream
    path = upstream / "python/triton/runtime/autotuner.py"
    path.write_text(path.read_text() + "\n\nAUTOTUNE_VERSION = 2\n")
    git(upstream, "commit", "-qam", "autotuner v2")
    git(upstream, "tag", "v3.7.0")
    git(world.fork, "fetch", "-q", "upstream", "--tags")
    finding = autotuner(drift_json(world, "v3.7.0"))
    assert "suppressed" not in finding
    assert finding["details"]["suppression_expired"]["reviewed_for"] == "v3.6.0"


def test_suppress_unknown_finding_is_a_clear_error(world, monkeypatch) -> None:
    monkeypatch.chdir(world.fork)
    result = CliRunner().invoke(cli, [*SUPPRESS[:5], "--kind", "overlay-orphan", "--path", A + "runtime/autotuner.py",
                                      "--reason", "x"])
    assert result.exit_code == 2 and "no overlay-orphan finding" in result.output
    assert "overlay-conflicting" in result.output
