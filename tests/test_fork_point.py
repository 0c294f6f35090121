"""--from should be where the FlagTree branch left upstream: a --from further back in upstream's history puts
upstream's commits after it in the range (found by a new user: --from c817b9b63~5 on FlagTree's triton_v3.4.x
was accepted in silence and replayed five upstream release commits). Those NEW has are left out as already
upstream (tests/test_upstream_in_range.py); either way the user is told which --from the branch is based on."""
from __future__ import annotations


from sync.demo.world import UPSTREAM_AUTHOR

from tests.conftest import git, invoke


def flagtree_branch_on(world, base: str, name: str) -> None:
    """A FlagTree branch `name`: the demo's backends in two commits on top of base (by the test's author)."""
    git(world.fork, "checkout", "-q", "-b", name, base)
    for backend in ("alpha", "beta"):
        git(world.fork, "checkout", "main", "--", f"third_party/{backend}")
        git(world.fork, "commit", "-qm", f"[{backend}] add the backend")
    git(world.fork, "checkout", "-q", "main")


def test_a_from_before_the_branchs_upstream_base_on_news_line_is_warned_about(world) -> None:
    """The branch is based on an upstream commit between the tags: the commits from --from up to it are in
    NEW's history, so they are upstream's for sure. They are left out as already upstream, and the warning names
    the --from the branch is based on."""
    base = git(world.fork, "rev-parse", "v3.6.0~1").strip()
    flagtree_branch_on(world, base, "late")
    for command in ("upgrade", "drift"):
        result = invoke(command, "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--branch", "late",
                        "-q")
        assert result.exit_code in (0, 1), result.output
        # (upgrade also warns which commits it left out as upstream's: never quiet, tests/test_upstream_in_range.py)
        warning = [line for line in result.stderr.splitlines() if line.startswith("flagtree-sync: warning: --from")]
        assert len(warning) == 1 and "is older than where late left upstream" in warning[0], result.stderr
        assert "left out as already upstream" in warning[0] and f"pass --from {base[:9]}" in warning[0]
    # only the branch's two commits were replayed onto NEW (and the pin commit recording the range on top)
    assert git(world.fork, "rev-list", "--count", "v3.6.0..sync/v3.6.0").strip() == "3"
    # the right --from: no warning
    result = invoke("drift", "--repo", str(world.fork), "--from", base, "--onto", "v3.6.0", "--branch", "late", "--json")
    assert result.exit_code in (0, 1) and "warning" not in result.stderr, result.stderr
    # a branch that merged upstream after its own commits: its --from is right, nothing to say
    git(world.fork, "checkout", "-q", "-b", "merged", "main")
    git(world.fork, "merge", "-q", "-s", "ours", "--no-edit", base)  # the graph is what counts here
    result = invoke("drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--branch", "merged",
                    "--json")
    assert result.exit_code in (0, 1) and "warning" not in result.stderr, result.stderr


def test_upstream_release_commits_after_from_are_warned_about_by_name(world) -> None:
    """A release branch parts from upstream's main line: its commits after --from reach NEW through no parent,
    but they are by NEW's authors. The warning names the commit the branch is likely based on."""
    git(world.fork, "checkout", "-q", "-b", "release", "v3.5.0")
    name, email = UPSTREAM_AUTHOR
    for number in (1, 2):
        git(world.fork, "commit", "-q", "--allow-empty", f"--author={name} <{email}>", "-m", f"[release] fix {number}")
    release = git(world.fork, "rev-parse", "HEAD").strip()
    git(world.fork, "checkout", "-q", "main")
    flagtree_branch_on(world, release, "ft")
    result = invoke("upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--branch", "ft", "-q")
    assert result.exit_code in (0, 1), result.output
    warning = [line for line in result.stderr.splitlines() if line.startswith("flagtree-sync: warning:")]
    assert len(warning) == 1 and "2 of the 2 commit(s) after it" in warning[0], result.stderr
    assert f"pass --from {release[:9]}" in warning[0] and "[release] fix 2" in warning[0]
    # from the release commit itself: the FlagTree commits that follow are nobody's upstream, no warning
    result = invoke("drift", "--repo", str(world.fork), "--from", release, "--onto", "v3.6.0", "--branch", "ft",
                    "--json")
    assert result.exit_code in (0, 1) and "warning" not in result.stderr, result.stderr
    # the demo's own branch, from its own base: no warning either
    result = invoke("drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--json")
    assert result.exit_code in (0, 1) and "warning" not in result.stderr, result.stderr


def test_the_report_keeps_the_doubt_about_from_and_status_says_it_again(world, tmp_path) -> None:
    """A new user on FlagTree main (22 upstream release commits after its merge-base with 3.3.0) missed the
    warning printed at the start: summary.md and report.json now say it under the range, and status agrees."""
    import json
    git(world.fork, "checkout", "-q", "-b", "release", "v3.5.0")
    name, email = UPSTREAM_AUTHOR
    git(world.fork, "commit", "-q", "--allow-empty", f"--author={name} <{email}>", "-m", "[release] fix 1")
    release = git(world.fork, "rev-parse", "HEAD").strip()
    git(world.fork, "checkout", "-q", "main")
    flagtree_branch_on(world, release, "ft")
    out = tmp_path / "report"
    result = invoke("upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--branch", "ft",
                    "-q", "--out", str(out))
    assert result.exit_code in (0, 1), result.output
    notes = json.loads((out / "report.json").read_text())["upgrade"]["notes"]
    assert len(notes) == 1 and f"pass --from {release[:9]}" in notes[0]
    assert "**Note:** --from v3.5.0" in (out / "summary.md").read_text()
    status = invoke("status", "--repo", str(world.fork), "--target", "sync/v3.6.0", "--json")
    assert status.exit_code in (0, 1), status.output
    again = json.loads(status.stdout)["upgrade"]["notes"]  # (status names the source by the commit it reads)
    assert len(again) == 1 and f"pass --from {release[:9]}" in again[0] and "may be older than" in again[0]
    # the right --from: no note at all
    result = invoke("upgrade", "--repo", str(world.fork), "--from", release, "--onto", "v3.6.0", "--branch", "ft",
                    "-q", "--force", "--json")
    assert "notes" not in json.loads(result.stdout)["upgrade"]
