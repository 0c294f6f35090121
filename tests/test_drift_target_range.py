"""drift --target BRANCH without --from/--onto reads the range from the branch upgrade made, as status does."""
from __future__ import annotations

import json

from click.testing import CliRunner

from sync.cli import cli

from tests.conftest import git


def _run(world, *args: str):
    result = CliRunner().invoke(cli, [*args[:1], "--repo", str(world.fork), *args[1:]])
    assert "Traceback" not in result.output and result.exit_code != 3, result.output
    return result


def _findings(document: dict) -> list[tuple[str, str, str]]:
    return [(f["kind"], f["path"], f["message"]) for g in document["groups"] for f in g["findings"]]


def test_drift_reads_the_range_from_the_upgraded_branch(world) -> None:
    assert _run(world, "upgrade", "--onto", "v3.6.0", "-q").exit_code == 1
    derived = _run(world, "drift", "--target", "sync/v3.6.0", "--json")
    given = _run(world, "drift", "--from", "v3.5.0", "--onto", "v3.6.0", "--target", "sync/v3.6.0", "--json")
    assert derived.exit_code == given.exit_code == 1, derived.output
    document, expected = json.loads(derived.stdout), json.loads(given.stdout)
    assert document["range"]["from"]["ref"] == "v3.5.0" and document["range"]["onto"]["ref"] == "v3.6.0"
    assert document["range"]["source"]["commit"] == git(world.fork, "rev-parse", "main").strip()
    assert _findings(document) == _findings(expected) and _findings(document)
    # one of them given: it wins, the other is read from the branch
    only_onto = json.loads(_run(world, "drift", "--onto", "v3.6.0", "--target", "sync/v3.6.0", "--json").stdout)
    assert only_onto["range"]["from"]["ref"] == "v3.5.0" and _findings(only_onto) == _findings(expected)


def test_a_target_upgrade_did_not_make_is_a_clear_error(world) -> None:
    result = _run(world, "drift", "--target", "main")
    assert result.exit_code == 2
    assert "cannot read the upgrade's range from main" in result.output and "--from" in result.output


def test_without_target_the_range_is_required_and_says_how_else(world) -> None:
    result = _run(world, "drift")
    assert result.exit_code == 2 and "--from and --onto are required, unless --target" in result.output
    result = _run(world, "drift", "--target", "sync/nope")
    assert result.exit_code == 2 and "unknown revision 'sync/nope'" in result.output


def test_suppress_reads_the_range_from_the_target_too(world, tmp_path) -> None:
    assert _run(world, "upgrade", "--onto", "v3.6.0", "-q").exit_code == 1
    link = "third_party/alpha/backend/spec/triton/tools/link.py"
    result = _run(world, "suppress", "--target", "sync/v3.6.0", "--kind", "overlay-redundant", "--path", link,
                  "--reason", "kept on purpose")
    assert result.exit_code == 0, result.output
    # sync/v3.6.0 is checked out nowhere: the review is committed on it, main's work tree is left alone
    assert not (world.fork / "third_party/alpha/backend/spec/suppressions.toml").exists()
    written = git(world.fork, "show", "sync/v3.6.0:third_party/alpha/backend/spec/suppressions.toml")
    assert 'reviewed_for = "v3.6.0"' in written and "kept on purpose" in written
    result = _run(world, "suppress", "--kind", "overlay-redundant", "--path", link, "--reason", "r")
    assert result.exit_code == 2 and "--from and --onto are required, unless --target" in result.output


def test_on_the_upgraded_branch_the_error_names_it_as_the_target(world, tmp_path) -> None:
    assert _run(world, "upgrade", "--onto", "v3.6.0", "-q").exit_code == 1
    checkout = tmp_path / "sync"
    git(world.fork, "worktree", "add", "-q", str(checkout), "sync/v3.6.0")
    result = CliRunner().invoke(cli, ["drift", "--repo", str(checkout)])
    assert result.exit_code == 2 and "pass --target sync/v3.6.0, the upgraded branch checked out here" in result.output
    result = CliRunner().invoke(cli, ["drift", "--repo", str(world.fork)])  # on main: no such hint
    assert result.exit_code == 2 and "checked out here" not in result.output


def test_the_flagtree_branch_is_read_from_the_target_whatever_is_checked_out(world) -> None:
    """Seen on FlagTree: with --from/--onto and --target given, the FlagTree branch defaulted to the current
    branch (there main, unrelated to the range) and the error blamed a correct --from."""
    assert _run(world, "upgrade", "--onto", "v3.6.0", "-q").exit_code == 1
    given = json.loads(_run(world, "drift", "--from", "v3.5.0", "--onto", "v3.6.0", "--target", "sync/v3.6.0",
                            "--json").stdout)
    git(world.fork, "checkout", "-q", "v3.6.0")  # detached on upstream: "the current branch" is no FlagTree branch
    git(world.fork, "checkout", "-q", "-b", "elsewhere")
    result = _run(world, "drift", "--from", "v3.5.0", "--onto", "v3.6.0", "--target", "sync/v3.6.0", "--json")
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    assert document["range"]["source"]["commit"] == given["range"]["source"]["commit"]
    assert _findings(document) == _findings(given)
