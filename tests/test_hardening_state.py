"""The upgrade's state is guarded: one run at a time, a journal or state file that does not match the
planned replay is refused (exit 2, never a wrong branch), --force keeps commits made by hand, a target
ref that cannot exist is refused before the replay, and --continue finishes with the run's options."""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from sync.cli import cli
from tests.conftest import git, invoke, snapshot

ARGS = ["upgrade", "--from", "v3.5.0", "--onto", "v3.6.0", "-q"]


def upgrade(world, *extra: str):
    result = CliRunner().invoke(cli, [*ARGS, "--repo", str(world.fork), *extra])
    assert "Traceback" not in result.output and result.exit_code != 3, result.output
    return result


def state_dir(world) -> Path:
    return world.fork / ".git" / "flagtree-sync"


def stop_at_first_conflict(world, *extra: str) -> None:
    assert upgrade(world, "--on-conflict", "stop", *extra).exit_code == 4


def test_a_second_run_while_one_holds_the_lock_exits_2(world) -> None:
    state_dir(world).mkdir(parents=True, exist_ok=True)
    descriptor = os.open(state_dir(world) / "upgrade.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # what a running upgrade holds
        result = upgrade(world)
        assert result.exit_code == 2 and "another upgrade is in progress" in result.output
        assert upgrade(world, "--abort").exit_code == 2  # nor is its state pulled away
    finally:
        os.close(descriptor)
    assert "sync/v3.6.0" not in git(world.fork, "branch")
    assert upgrade(world).exit_code == 1  # the lock dies with its holder


def journal_lines(world) -> list[str]:
    return (state_dir(world) / "upgrade.journal").read_text().splitlines(keepends=True)


@pytest.mark.parametrize("edit", ["duplicate", "extra", "reorder", "foreign-head"])
def test_journal_that_does_not_match_the_plan_is_refused(world, edit: str) -> None:
    stop_at_first_conflict(world, "--target-branch", "x")  # commit 1 conflicts: nothing journalled yet
    git(world.fork, "-C", str(state_dir(world) / "worktree"), "checkout", "--theirs", "CMakeLists.txt")
    git(world.fork, "-C", str(state_dir(world) / "worktree"), "add", "CMakeLists.txt")
    assert CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "-q"]).exit_code == 4
    lines = journal_lines(world)
    assert len(lines) == 1
    first = json.loads(lines[0])
    second = json.loads(lines[0])
    second["result"]["source"] = git(world.fork, "rev-list", "--reverse", "v3.5.0..main").split()[1]
    edited = {
        "duplicate": lines + lines,
        "extra": lines + [json.dumps(second) + "\n"],  # commit 2 journalled with commit 1's result
        "reorder": [json.dumps(second) + "\n"],
        "foreign-head": [json.dumps({**first, "head": git(world.fork, "rev-parse", "v3.5.0").strip(),
                                     "result": {**first["result"], "result": git(world.fork, "rev-parse",
                                                                                   "v3.5.0").strip()}}) + "\n"],
    }[edit]
    (state_dir(world) / "upgrade.journal").write_text("".join(edited))
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "-q"])
    assert result.exit_code == 2 and "--abort" in result.output, result.output
    assert "x" not in git(world.fork, "branch", "--format=%(refname:short)").split()
    assert upgrade(world, "--abort").exit_code == 0
    assert upgrade(world).exit_code == 1


@pytest.mark.parametrize("field, value", [("surprise", 1), ("commits", "abc"), ("stopped", "yes"),
                                          ("head", None), ("options", {"out": 7})])
def test_hand_edited_state_file_is_refused(world, field: str, value) -> None:
    stop_at_first_conflict(world)
    header = json.loads((state_dir(world) / "upgrade.json").read_text())
    header[field] = value
    (state_dir(world) / "upgrade.json").write_text(json.dumps(header))
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "-q"])
    assert result.exit_code == 2 and "--abort" in result.output and "Traceback" not in result.output
    assert "sync/v3.6.0" not in git(world.fork, "branch")


def test_state_with_a_wrong_type_in_params_is_refused(world) -> None:
    stop_at_first_conflict(world)
    header = json.loads((state_dir(world) / "upgrade.json").read_text())
    header["params"]["target_branch"] = ["main"]
    (state_dir(world) / "upgrade.json").write_text(json.dumps(header))
    result = upgrade(world)
    assert result.exit_code == 2 and "params.target_branch" in result.output


def test_state_whose_commit_list_was_edited_is_refused(world) -> None:
    stop_at_first_conflict(world)
    header = json.loads((state_dir(world) / "upgrade.json").read_text())
    header["commits"] = header["commits"][:1] + header["commits"][2:]  # a commit dropped from the plan
    (state_dir(world) / "upgrade.json").write_text(json.dumps(header))
    result = upgrade(world)  # a rerun of the same command resumes: it must not follow the edited plan
    assert result.exit_code == 2 and "does not match the planned replay" in result.output


def test_force_refuses_to_drop_commits_made_by_hand(world) -> None:
    assert upgrade(world).exit_code == 1
    assert upgrade(world, "--force").exit_code == 1  # what the tool made is replaced
    git(world.fork, "checkout", "-q", "sync/v3.6.0")
    (world.fork / "FIX.txt").write_text("a fix made by hand\n")
    git(world.fork, "add", "FIX.txt")
    git(world.fork, "commit", "-qm", "fix the conflict by hand")
    mine = git(world.fork, "rev-parse", "HEAD").strip()
    git(world.fork, "checkout", "-q", "main")
    result = upgrade(world, "--force")
    assert result.exit_code == 2 and mine[:9] in result.output and "fix the conflict by hand" in result.output
    assert git(world.fork, "rev-parse", "sync/v3.6.0").strip() == mine
    git(world.fork, "branch", "keep", "sync/v3.6.0")  # kept elsewhere: nothing is lost any more
    assert upgrade(world, "--force").exit_code == 1


def test_force_replaces_a_branch_onto_a_commit_no_ref_names(world) -> None:
    """--onto a bare commit id: upstream's history under it is the new branch's base, not work made by hand."""
    onto = git(world.fork, "rev-parse", "v3.6.0^{commit}").strip()
    git(world.fork, "tag", "-d", "v3.6.0")
    for ref in git(world.fork, "for-each-ref", "--format=%(refname)", "refs/remotes/").split():
        git(world.fork, "update-ref", "-d", ref)  # no tag or branch keeps upstream's new commits now
    args = ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", onto, "--target-branch", "bare", "-q"]
    assert CliRunner().invoke(cli, args).exit_code == 1
    result = CliRunner().invoke(cli, [*args, "--force"])
    assert result.exit_code == 1 and "did not make" not in result.output, result.output
    git(world.fork, "checkout", "-q", "bare")
    git(world.fork, "commit", "-q", "--allow-empty", "-m", "mine")  # still refused with a commit of the user's
    git(world.fork, "checkout", "-q", "main")
    result = CliRunner().invoke(cli, [*args, "--force"])
    assert result.exit_code == 2 and "1 commit(s) that flagtree-sync did not make" in result.output, result.output


def test_force_refuses_a_cherry_pick_by_hand_that_looks_like_the_tools(world) -> None:
    assert upgrade(world).exit_code == 1
    git(world.fork, "checkout", "-q", "sync/v3.6.0")
    source = git(world.fork, "rev-parse", "main~1").strip()
    # its message and author, and the tool's cherry-pick line: only the committer tells it apart
    editor = f"sh -c 'printf \"\\n(cherry picked from commit {source})\\n\" >> \"$1\"' -"
    subprocess.run(["git", "-C", str(world.fork), "commit", "-q", "--allow-empty", "-c", source],
                   env={**os.environ, "GIT_EDITOR": editor}, check=True)
    assert f"(cherry picked from commit {source})" in git(world.fork, "log", "-1", "--format=%B")
    git(world.fork, "checkout", "-q", "main")
    result = upgrade(world, "--force")
    assert result.exit_code == 2 and "did not make" in result.output


def test_force_refuses_a_branch_checked_out_in_a_linked_worktree(world, tmp_path: Path) -> None:
    assert upgrade(world).exit_code == 1
    git(world.fork, "worktree", "add", "-q", str(tmp_path / "wt"), "sync/v3.6.0")
    before = git(world.fork, "rev-parse", "sync/v3.6.0")
    result = upgrade(world, "--force")
    assert result.exit_code == 2 and "checked out in the worktree" in result.output
    assert git(world.fork, "rev-parse", "sync/v3.6.0") == before


def test_a_ref_that_blocks_the_target_branch_is_refused_before_the_replay(world) -> None:
    git(world.fork, "branch", "sync", "main")
    before = snapshot(world.fork)
    result = upgrade(world)
    assert result.exit_code == 2 and "refs/heads/sync exists" in result.output
    assert snapshot(world.fork) == before
    assert not (state_dir(world) / "upgrade.json").exists()
    assert "refs/flagtree-sync" not in git(world.fork, "for-each-ref")


def resolve_every_stop(world, *continue_args: str):
    worktree = state_dir(world) / "worktree"
    while True:
        # FlagTree's side of each conflicted file (a file --continue takes; markers it refuses)
        for path in git(worktree, "diff", "--name-only", "--diff-filter=U").split():
            if subprocess.run(["git", "checkout", "--theirs", "--", path], cwd=worktree,
                              capture_output=True).returncode != 0:
                git(worktree, "rm", "-q", "--", path)  # deleted on FlagTree's side
        git(worktree, "add", "-A")
        result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", *continue_args])
        if result.exit_code != 4:
            return result


def test_continue_finishes_with_the_options_the_run_started_with(world) -> None:
    out = world.root / "report"
    stop_at_first_conflict(world, "--out", str(out), "--exec", "true", "--exec-timeout", "30", "--backend", "alpha")
    result = resolve_every_stop(world)
    assert result.exit_code == 1, result.output
    assert "using the options the upgrade was started with" in result.output and f"--out {out}" in result.output
    assert f"; report in {out}" in result.output  # the summary line names where the stored --out wrote it
    document = json.loads((out / "report.json").read_text())
    assert document["gate"]["command"] == "true"
    assert [group["name"] for group in document["groups"] if group["name"] in ("alpha", "beta")] == ["alpha"]


def test_a_run_stopped_by_the_previous_format_continues_with_its_options(world) -> None:
    """A state of format 2 (the options flat: exec_command, exec_at, exec_timeout), as the previous release
    wrote it when stopped, is read into the current options: --continue finishes with them."""
    out = world.root / "report"
    stop_at_first_conflict(world)
    state = state_dir(world) / "upgrade.json"
    header = json.loads(state.read_text())
    assert header["version"] == 3 and header["options"] == {"out": None, "gate": None, "backends": []}
    header.update(version=2, options={"out": str(out), "exec_command": "true", "exec_at": "each",
                                      "exec_timeout": 30, "backends": ["alpha"]})
    state.write_text(json.dumps(header, indent=1))
    result = resolve_every_stop(world)
    assert result.exit_code == 1, result.output
    assert (f"using the options the upgrade was started with: --out {out}, --exec 'true', --exec-at each, "
            "--exec-timeout 30, --backend alpha") in result.output
    document = json.loads((out / "report.json").read_text())
    assert document["gate"]["command"] == "true" and document["gate"]["at"] == "each"
    assert [group["name"] for group in document["groups"] if group["name"] in ("alpha", "beta")] == ["alpha"]


def test_the_state_keeps_the_gate_as_one_object(world) -> None:
    out = world.root / "report"
    stop_at_first_conflict(world, "--out", str(out), "--exec", "true", "--exec-timeout", "30", "--backend", "beta",
                           "--backend", "alpha")
    header = json.loads((state_dir(world) / "upgrade.json").read_text())
    assert header["version"] == 3
    assert header["options"] == {"out": str(out.resolve()), "gate": {"command": "true", "at": "end", "timeout": 30},
                                 "backends": ["alpha", "beta"]}


def test_options_given_to_continue_override_the_stored_ones(world) -> None:
    stop_at_first_conflict(world, "--out", str(world.root / "first"))
    result = resolve_every_stop(world, "--out", str(world.root / "second"))
    assert result.exit_code == 1, result.output
    assert (world.root / "second" / "report.json").exists() and not (world.root / "first").exists()
    assert "using the options" not in result.output


def test_apply_commits_as_the_user_now_and_force_still_knows_it(world, monkeypatch) -> None:
    """Issue 31.20: drift --apply's commit is the user's (DCO, audit), dated now; --force still replaces it as
    the tool's (its trailer names its tree), and refuses it once amended by hand."""
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Committer Person")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
    apply = ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--target", "sync/v3.6.0",
             "--apply"]
    assert upgrade(world).exit_code == 1
    assert invoke(*apply).exit_code == 1
    who = git(world.fork, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%ct|%s", "sync/v3.6.0").strip().split("|")
    assert who[:2] == ["Test <test@example.com>", "Committer Person <committer@example.com>"]
    assert abs(int(who[2]) - time.time()) < 120 and who[3] == "Auto-merge drifted overlays"
    assert upgrade(world, "--force").exit_code == 1  # the tool's own commit: replaced
    assert invoke(*apply).exit_code == 1
    git(world.fork, "checkout", "-q", "sync/v3.6.0")
    (world.fork / "FIX.txt").write_text("added by hand\n")
    git(world.fork, "add", "FIX.txt")
    git(world.fork, "commit", "-q", "--amend", "--no-edit")  # same message and trailer, another tree
    amended = git(world.fork, "rev-parse", "HEAD").strip()
    git(world.fork, "checkout", "-q", "main")
    result = upgrade(world, "--force")
    assert result.exit_code == 2 and amended[:9] in result.output
    assert git(world.fork, "rev-parse", "sync/v3.6.0").strip() == amended


def test_apply_signs_with_the_committer_identity_git_config_gives(world, monkeypatch) -> None:
    """committer.name/committer.email (git 2.22+) come before user.name, as git commit reads them."""
    for variable in ("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(variable)
    git(world.fork, "config", "user.name", "User Name")
    git(world.fork, "config", "user.email", "user@example.com")
    git(world.fork, "config", "committer.email", "ci@example.com")
    assert upgrade(world).exit_code == 1
    assert invoke("drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--target",
                  "sync/v3.6.0", "--apply").exit_code == 1
    assert git(world.fork, "log", "-1", "--format=%cn <%ce>", "sync/v3.6.0").strip() == "User Name <ci@example.com>"


def test_apply_honours_git_s_date_variables(world, monkeypatch) -> None:
    """As git commit does: GIT_COMMITTER_DATE (here ISO 8601) dates the commit, so a scripted run is reproducible."""
    monkeypatch.setenv("GIT_AUTHOR_DATE", "@1767614400 +0100")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-01-05T12:00:00+00:00")
    assert upgrade(world).exit_code == 1
    apply = ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--target", "sync/v3.6.0",
             "--apply"]
    assert invoke(*apply).exit_code == 1
    assert git(world.fork, "log", "-1", "--format=%ad|%cd", "--date=raw", "sync/v3.6.0").strip() == \
        "1767614400 +0100|1767614400 +0000"
    monkeypatch.setenv("GIT_COMMITTER_DATE", "last tuesday-ish")
    assert upgrade(world, "--force").exit_code == 1
    result = invoke(*apply)
    assert result.exit_code == 2 and "GIT_COMMITTER_DATE='last tuesday-ish' is not a date" in result.output


def test_a_kill_while_the_run_is_forgotten_never_leaves_a_run_without_its_results(world, monkeypatch) -> None:
    """kill -9 at a random moment (tests/test_faults_random.py, seed 2) once landed between the removal of the
    journal and of the header: the rerun then read a run that had replayed nothing and refused its own branch.
    The header goes first: a kill after it leaves no run in progress, whatever journal is left."""
    from sync.git import open_repo
    from sync.replay import store as store_module
    stop_at_first_conflict(world, "--target-branch", "x")
    git(world.fork, "-C", str(state_dir(world) / "worktree"), "checkout", "--theirs", "CMakeLists.txt")
    git(world.fork, "-C", str(state_dir(world) / "worktree"), "add", "CMakeLists.txt")
    assert CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "-q"]).exit_code == 4
    assert journal_lines(world)  # a run with results in its journal

    removed: list[Path] = []
    real = store_module.remove_state_entry

    def killed_after_one(path: Path) -> Path | None:
        if removed:
            raise KeyboardInterrupt  # the process dies here
        removed.append(path)
        return real(path)
    monkeypatch.setattr(store_module, "remove_state_entry", killed_after_one)
    store = store_module.StateStore(open_repo(str(world.fork)))
    with pytest.raises(KeyboardInterrupt):
        store.clear()
    assert store.load() is None  # no run in progress, rather than a run with no results
