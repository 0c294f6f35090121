"""suppress --target BRANCH puts the review on BRANCH: in the worktree that has it checked out, else in a commit
made on it in memory (as drift --apply does). Found by a new user: run from the FlagTree branch's work tree, it
wrote the entry there, so the review landed on the wrong branch."""
from __future__ import annotations

import json
from pathlib import Path



from tests.conftest import git, invoke, snapshot

B = "third_party/beta/backend/spec/"
REVIEWS = B + "suppressions.toml"
KEY = ("guard-default-changed", B + "include/flagtree_spec.h")
RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]
TARGET = ["--target", "sync/v3.6.0"]


def upgraded(world) -> None:
    assert invoke("upgrade", "--repo", str(world.fork), "--onto", "v3.6.0", "-q").exit_code == 1


def suppress(repo: Path, *extra: str):
    return invoke("suppress", "--repo", str(repo), *RANGE, *extra, "--kind", KEY[0], "--path", KEY[1],
                  "--reason", "our fence covers it")


def reviewed(repo: Path) -> dict:
    document = json.loads(invoke("drift", "--repo", str(repo), *RANGE, *TARGET, "--json").stdout)
    return next(f for group in document["groups"] for f in group["findings"] if (f["kind"], f["path"]) == KEY)


def test_the_entry_goes_to_the_worktree_where_the_target_is_checked_out(world, tmp_path: Path) -> None:
    upgraded(world)
    checkout = tmp_path / "sync"
    git(world.fork, "worktree", "add", "-q", str(checkout), "sync/v3.6.0")
    before = snapshot(world.fork)
    result = suppress(world.fork, *TARGET)  # run from main's work tree
    assert result.exit_code == 0, result.output
    assert f"recorded in {checkout.resolve() / REVIEWS} (the work tree of sync/v3.6.0)" in result.output
    assert 'reason = "our fence covers it"' in (checkout / REVIEWS).read_text()
    assert snapshot(world.fork) == before  # main's work tree and every ref untouched
    hint = invoke("drift", "--repo", str(world.fork), *RANGE, *TARGET, "--backend", "beta").output
    assert f"hint: {checkout.resolve() / REVIEWS} in the work tree differs from sync/v3.6.0" in hint
    git(checkout, "add", REVIEWS)
    git(checkout, "commit", "-qm", "beta: reviewed")
    assert reviewed(world.fork)["suppressed"]["reason"] == "our fence covers it"


def test_a_target_checked_out_nowhere_gets_a_commit_of_the_users(world) -> None:
    upgraded(world)
    tip = git(world.fork, "rev-parse", "sync/v3.6.0").strip()
    before = snapshot(world.fork)
    result = suppress(world.fork, *TARGET)
    assert result.exit_code == 0, result.output
    head = git(world.fork, "rev-parse", "sync/v3.6.0").strip()
    assert f"committed the review on sync/v3.6.0 as {head[:9]}" in result.output
    assert git(world.fork, "rev-parse", "sync/v3.6.0^").strip() == tip
    assert git(world.fork, "diff", "--name-only", tip, head).split() == [REVIEWS]
    assert git(world.fork, "log", "-1", "--format=%an <%ae>|%s", head).strip() == \
        f"Test <test@example.com>|Review {KEY[0]} on {KEY[1]} (FLAGTREE_SPEC_Membar_isFenceNeeded) for v3.6.0"  # the user's: never recreated by the tool
    after = snapshot(world.fork)
    assert {k: v for k, v in after.items() if k != "refs"} == {k: v for k, v in before.items() if k != "refs"}
    assert reviewed(world.fork)["suppressed"]["reason"] == "our fence covers it"
    again = suppress(world.fork, *TARGET)
    assert again.exit_code == 2 and "already suppressed" in again.output
    assert git(world.fork, "rev-parse", "sync/v3.6.0").strip() == head


def test_a_target_that_is_no_branch_or_holds_a_symlink_is_refused_in_one_line(world) -> None:
    upgraded(world)
    for target in ("v3.6.0", git(world.fork, "rev-parse", "sync/v3.6.0").strip()):
        result = suppress(world.fork, "--target", target)
        assert result.exit_code == 2 and len(result.output.splitlines()) == 1, result.output
        assert f"--target {target} is not a local branch" in result.output
    # a suppressions.toml committed as a symlink on the branch is not written through
    git(world.fork, "worktree", "add", "-q", str(world.root / "tmp-checkout"), "sync/v3.6.0")
    (world.root / "tmp-checkout" / REVIEWS).symlink_to("/etc/passwd")
    git(world.root / "tmp-checkout", "add", REVIEWS)
    git(world.root / "tmp-checkout", "commit", "-qm", "a link")
    git(world.fork, "worktree", "remove", "--force", str(world.root / "tmp-checkout"))
    tip = git(world.fork, "rev-parse", "sync/v3.6.0").strip()
    result = suppress(world.fork, *TARGET)
    assert result.exit_code == 2 and "is a symlink on sync/v3.6.0" in result.output, result.output
    assert git(world.fork, "rev-parse", "sync/v3.6.0").strip() == tip


def test_a_worktree_on_the_target_is_found_through_a_symbolic_ref(world, tmp_path: Path) -> None:
    """--target alias, a symbolic ref to the branch a worktree has checked out: the entry goes to that worktree;
    a commit in memory would move the branch under it (its index then shows the review reversed)."""
    upgraded(world)
    checkout = tmp_path / "sync"
    git(world.fork, "worktree", "add", "-q", str(checkout), "sync/v3.6.0")
    git(world.fork, "symbolic-ref", "refs/heads/alias", "refs/heads/sync/v3.6.0")
    tip = git(world.fork, "rev-parse", "sync/v3.6.0").strip()
    result = suppress(world.fork, "--target", "alias")
    assert result.exit_code == 0, result.output
    assert git(world.fork, "rev-parse", "sync/v3.6.0").strip() == tip
    assert 'reason = "our fence covers it"' in (checkout / REVIEWS).read_text()
