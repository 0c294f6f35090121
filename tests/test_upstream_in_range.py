"""Commits of OLD..SRC that are upstream's are not replayed as FlagTree's: those NEW already has (brought in by a
merge of upstream) and those that make the same change as a commit of NEW (an upstream release-branch
cherry-pick), as git rebase and git cherry decide. They count as already upstream, with the reason.

The fixture makes both kinds harmful to replay: upstream later deleted the file the merged commit adds (its
replay would bring the file back), and later changed the line the cherry-picked commit changes (its replay
would conflict)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest

from sync.drift.run import replayed_tree
from sync.git.repo import REACHABLE, SAME_PATCH, upstream_in_range
from sync.jobs.upgrade import UpgradeOptions, run_upgrade as run_upgrade_job
from sync.report.markdown import range_line
from sync.jobs.upgrade import resolve_params
from sync.replay.options import ConflictPolicy, ReplayChoices
from sync.replay.engine import StateStore, run_upgrade
from tests.conftest import git, invoke


@dataclass
class Repo:
    path: Path
    merged: str  # upstream commit brought in by a merge (in NEW's history)
    picked: str  # cherry-pick of an upstream commit (same patch as one in NEW's history)
    own: list[str]  # the fork's own commits


def _commit(path: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        target = path / name
        if text is None:
            git(path, "rm", "-q", name)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        git(path, "add", name)
    git(path, "commit", "-qm", message)
    return git(path, "rev-parse", "HEAD").strip()


def build(path: Path, upstream_in_fork: bool = True) -> Repo:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    _commit(path, {"core.py": "a = 1\n", "README": "upstream\n"}, "upstream base")
    git(path, "tag", "old")
    merged = _commit(path, {"extra.py": "temporary\n"}, "upstream: add extra.py")
    fix = _commit(path, {"core.py": "a = 2\n"}, "upstream: fix a")
    _commit(path, {"extra.py": None}, "upstream: drop extra.py again")
    _commit(path, {"core.py": "a = 3\n"}, "upstream: a is 3 now")
    git(path, "tag", "new")
    git(path, "checkout", "-q", "-b", "fork", "old")
    own = [_commit(path, {"third_party/alpha/one.txt": "one\n"}, "[ALPHA] one")]
    picked = ""
    if upstream_in_fork:
        git(path, "merge", "-q", "--no-ff", "-m", "Merge upstream's extra.py", merged)
        git(path, "cherry-pick", "-x", fix)  # same patch, another commit (as on a release branch)
        picked = git(path, "rev-parse", "HEAD").strip()
    own.append(_commit(path, {"third_party/alpha/one.txt": "one, two\n"}, "[ALPHA] two"))
    return Repo(path, merged, picked, own)


class Notes:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def phase(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, label: str, done: int | None = None) -> None:
        pass

    def note(self, line: str) -> None:
        self.lines.append(line)

    def close(self) -> None:
        pass


def _tree(path: Path, rev: str) -> str:
    return git(path, "rev-parse", f"{rev}^{{tree}}").strip()


def test_upstream_in_range_names_the_merged_and_the_cherry_picked_commits(tmp_path: Path) -> None:
    world = build(tmp_path / "repo")
    repo = pygit2.Repository(str(world.path))
    commit = lambda rev: repo.revparse_single(rev).peel(pygit2.Commit)  # noqa: E731
    found = upstream_in_range(repo, commit("old"), commit("new"), commit("fork"))
    assert {str(oid): why for oid, why in found.items()} == {world.merged: REACHABLE, world.picked: SAME_PATCH}


def test_the_upgrade_counts_them_as_already_upstream_and_says_why(tmp_path: Path) -> None:
    world = build(tmp_path / "repo")
    notes = Notes()
    report = run_upgrade_job(str(world.path), old="old", onto="new", source_branch="fork", options=UpgradeOptions(),
                             progress=notes)
    by_source = {commit.source: commit for commit in report.commits}
    assert [commit.source for commit in report.commits] == [world.own[0], world.merged, world.picked, world.own[1]]
    assert (by_source[world.merged].result, by_source[world.merged].upstream) == (None, REACHABLE)
    assert (by_source[world.picked].result, by_source[world.picked].upstream) == (None, SAME_PATCH)
    assert all(by_source[oid].result and by_source[oid].upstream is None for oid in world.own)
    assert not any(commit.conflicts for commit in report.commits)
    # NEW plus FlagTree's own change, nothing of the upstream commits replayed again (no extra.py, a = 3)
    git(world.path, "checkout", "-q", "sync/new")
    assert not (world.path / "extra.py").exists()
    assert (world.path / "core.py").read_text() == "a = 3\n"
    assert (world.path / "third_party/alpha/one.txt").read_text() == "one, two\n"
    said = "\n".join(notes.lines)
    assert "2 of the 4 commits of old..fork are upstream's" in said, said
    assert "1 in new's history" in said and "1 making the same change (git patch-id)" in said, said
    assert "4 commits, 2 already upstream, 2 of them upstream's own commits, not replayed" in range_line(report)


def test_the_replay_equals_that_of_the_fork_without_them(tmp_path: Path) -> None:
    with_upstream, plain = build(tmp_path / "with"), build(tmp_path / "plain", upstream_in_fork=False)
    for world in (with_upstream, plain):
        repo, params = resolve_params(str(world.path), old="old", onto="new", source_branch="fork")
        run_upgrade(repo, params, False, lambda *args: None)
    for world in (with_upstream, plain):  # the branch ends with the pin commit, which pins new's own commit id
        assert git(world.path, "diff", "--name-only", "sync/new~1", "sync/new").split() == ["flagtree-upstream.toml"]
    # the replay below the pin: the two worlds' upstream commits are made at their own times, their trees alike
    assert _tree(with_upstream.path, "sync/new~1") == _tree(plain.path, "sync/new~1")


def test_a_run_interrupted_after_leaving_one_out_resumes(tmp_path: Path) -> None:
    world = build(tmp_path / "repo")
    repo, params = resolve_params(str(world.path), old="old", onto="new", source_branch="fork")

    def interrupt(number: int, total: int, commit, result) -> None:
        if number == 3 and result is None:  # the journal holds the merged upstream commit, left out
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_upgrade(repo, params, False, interrupt)
    state = StateStore(repo).load()  # its "already upstream" line is accepted though a pick would change NEW
    assert state is not None and [r.result for r in state.results][1] is None
    result = run_upgrade(repo, params, False, lambda *args: None)
    assert result.resumed and result.upstream == {world.merged: REACHABLE, world.picked: SAME_PATCH}
    assert [r.result is None for r in result.results] == [False, True, True, False]


def test_drifts_in_memory_replay_leaves_them_out_too(tmp_path: Path) -> None:
    world, plain = build(tmp_path / "repo"), build(tmp_path / "plain", upstream_in_fork=False)
    repo, params = resolve_params(str(plain.path), old="old", onto="new", source_branch="fork",
                                  choices=ReplayChoices(conflicts=ConflictPolicy(policy="theirs")))
    run_upgrade(repo, params, False, lambda *args: None)
    _, params = resolve_params(str(world.path), old="old", onto="new", source_branch="fork",
                               choices=ReplayChoices(conflicts=ConflictPolicy(policy="theirs")))
    replayed = _tree(plain.path, "sync/new~1")  # below the pin commit
    assert str(replayed_tree(pygit2.Repository(str(world.path)), params.range).id) == replayed


def test_a_clone_without_upstreams_trees_still_upgrades_and_says_what_it_could_not_tell(tmp_path: Path) -> None:
    """git cherry reads the trees of NEW's history; a trimmed clone lacks some. The merged commit is still known
    (commit ancestry alone), the cherry-pick is replayed as FlagTree's, and the note says why."""
    world = build(tmp_path / "repo")
    unique_tree = _tree(world.path, "new~1")  # "drop extra.py again": no other commit has this tree
    (world.path / ".git" / "objects" / unique_tree[:2] / unique_tree[2:]).unlink()
    notes = Notes()
    report = run_upgrade_job(str(world.path), old="old", onto="new", source_branch="fork", options=UpgradeOptions(),
                             progress=notes)
    by_source = {commit.source: commit for commit in report.commits}
    assert by_source[world.merged].upstream == REACHABLE
    assert by_source[world.picked].upstream is None and by_source[world.picked].result
    said = "\n".join(notes.lines)
    assert "could not tell which commits of old..fork make the same change" in said, said
    assert "git cherry failed" in said, said


def test_quiet_still_says_which_commits_are_upstreams(tmp_path: Path) -> None:
    """Left-out commits change what the branch holds: -q silences progress, never that."""
    world = build(tmp_path / "repo")
    result = invoke("upgrade", "--repo", str(world.path), "--from", "old", "--onto", "new", "--branch", "fork", "-q")
    assert result.exit_code in (0, 1), result.output
    assert "2 of the 4 commits of old..fork are upstream's" in result.output, result.output


def test_a_range_of_upstreams_commits_only_is_refused_as_swapped_arguments(tmp_path: Path) -> None:
    """Upstream's history as --branch (the arguments mixed up): nothing of FlagTree's, never a clean upgrade."""
    world = build(tmp_path / "repo")
    git(world.path, "branch", "upstream-line", world.merged)
    result = invoke("upgrade", "--repo", str(world.path), "--from", "old", "--onto", "new", "--branch",
                    "upstream-line", "-q")
    assert result.exit_code == 2 and "all 1 commits of old..upstream-line are upstream's" in result.output
    assert "swapped" in result.output and "sync/new" not in git(world.path, "branch")
    assert not (world.path / ".git" / "flagtree-sync" / "upgrade.json").exists()


def test_a_revision_named_by_its_commit_id_is_printed_once(tmp_path: Path) -> None:
    """Seen on triton_v3.5.x onto 1859e68db: the summary said "onto `1859e68db` (`1859e68db`)"."""
    from dataclasses import replace
    from sync.model import Rev
    world = build(tmp_path / "repo")
    report = run_upgrade_job(str(world.path), old="old", onto="new", source_branch="fork", options=UpgradeOptions(),
                             progress=Notes())
    onto = report.range.onto
    assert f"onto `new` (`{onto.short}`)" in range_line(report)
    by_id = replace(report, range=replace(report.range, onto=Rev(onto.oid[:9], onto.oid)))
    assert f"onto `{onto.oid[:9]}` as branch" in range_line(by_id), range_line(by_id)
