"""A conflict belongs to the groups whose code is on its FlagTree side (issue 34): the upgrade passes each hunk's
FlagTree lines and the commit subject to the owner index, so a feature gate around one hunk names its feature."""
from __future__ import annotations

import json
from pathlib import Path

from sync.model.build import conflict_owners

from tests.conftest import git, invoke

MEMBAR = "lib/Analysis/Membar.cpp"


TAIL = "\nvoid g() {}\n\nvoid h() {}\n\nvoid i() {}\n"


def fork_with_conflict(tmp_path: Path, flagtree_side: str, elsewhere: str = "", pyproject: str = "") -> Path:
    """Upstream v1 -> v2 changes a line of Membar.cpp; the fork's commit on v1 changes the same line its own way
    (and adds `elsewhere` at the end of the file, far from the conflict: that merges cleanly)."""
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for key, value in (("user.name", "T"), ("user.email", "t@example.com")):
        git(repo, "config", key, value)
    (repo / "lib/Analysis").mkdir(parents=True)
    (repo / "third_party/tle/lib").mkdir(parents=True)
    (repo / "third_party/tle/lib/Ops.cpp").write_text("int tle();\n")
    (repo / MEMBAR).write_text("void f() {\n  int a = 1;\n}\n" + TAIL)
    if pyproject:
        (repo / "pyproject.toml").write_text(pyproject)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "tag", "v1")
    (repo / MEMBAR).write_text("void f() {\n  int a = 2;\n}\n" + TAIL)
    git(repo, "commit", "-qam", "upstream change")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "-b", "fork", "v1")
    (repo / MEMBAR).write_text(f"void f() {{\n{flagtree_side}}}\n" + TAIL + elsewhere)
    git(repo, "commit", "-qam", "[HINT] use the shared memory hint")  # a tag no group is named after
    return repo


def owners_of_conflict(repo: Path) -> list[str]:
    result = invoke("upgrade", "--repo", str(repo), "--from", "v1", "--onto", "v2", "--branch", "fork", "--json", "-q")
    assert result.exit_code == 1, result.output
    conflicts = [conflict for commit in json.loads(result.stdout)["commits"] for conflict in commit["conflicts"]]
    assert [conflict["path"] for conflict in conflicts] == [MEMBAR]
    return conflicts[0]["owners"]


def test_a_gate_around_the_flagtree_side_names_its_feature(tmp_path: Path) -> None:
    assert owners_of_conflict(fork_with_conflict(tmp_path, "#ifdef __TLE__\n  int a = 3;\n#endif\n")) == ["tle"]


def test_an_ungated_flagtree_side_stays_shared_trunk_though_the_file_has_a_gate_elsewhere(tmp_path: Path) -> None:
    assert owners_of_conflict(fork_with_conflict(tmp_path / "a", "  int a = 3;\n")) == ["shared-trunk"]
    gated_elsewhere = fork_with_conflict(tmp_path / "b", "  int a = 3;\n", "\n#ifdef __TLE__\nvoid t();\n#endif\n")
    assert owners_of_conflict(gated_elsewhere) == ["shared-trunk"]


def test_a_configured_commit_tag_names_its_group(tmp_path: Path) -> None:
    config = '[tool.flagtree-sync]\ncommit_tags = { "[HINT]" = "tle" }\n'
    assert owners_of_conflict(fork_with_conflict(tmp_path, "  int a = 3;\n", pyproject=config)) == ["tle"]


def test_each_hunks_side_is_asked_and_the_groups_joined_in_order() -> None:
    asked: list[tuple[str, str, tuple[str, ...]]] = []

    def owners_of(path: str, summary: str = "", flagtree_side=()) -> list[str]:
        asked.append((path, summary, tuple(flagtree_side)))
        return ["tle"] if "__TLE__" in "".join(flagtree_side) else ["shared-trunk"]

    assert conflict_owners(owners_of, "x.cpp", "[TLE] s", ["#ifdef __TLE__\nx\n#endif\n", "y\n", ""]) == \
        ("tle", "shared-trunk")
    assert asked == [("x.cpp", "[TLE] s", ("#ifdef __TLE__", "x", "#endif")), ("x.cpp", "[TLE] s", ("y",))]
    asked.clear()
    assert conflict_owners(owners_of, "gone.cpp", "s", []) == ("shared-trunk",)
    assert asked == [("gone.cpp", "s", ())]
