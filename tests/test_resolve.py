"""One conflict per file (issue 48.1): in markers mode a later commit merges on top of an earlier commit's
committed markers, nesting them. The report lists each conflicted file once with its commits; `resolve` writes
the single-level 3-way merge of (old upstream file, new upstream file, FlagTree's final file) into the work
tree; stop mode writes the markers markers mode writes (diff3, the same labels)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from sync.demo.content import FORK_COMMITS, UPSTREAM_BASE, UPSTREAM_COMMITS
from sync.demo.world import build_scripted_world
from tests.conftest import git, invoke

RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]
FILE = "python/triton/runtime/nested.py"
BASE = "".join(f"line_{n} = {n}\n" for n in range(12))
UPSTREAM = BASE.replace("line_5 = 5", "line_5 = 'upstream'")
FIRST = BASE.replace("line_5 = 5", "line_5 = 'flagtree one'")
SECOND = BASE.replace("line_5 = 5", "line_5 = 'flagtree two'")
THIRD = SECOND.replace("line_0 = 0", "line_0 = 'flagtree three'")
MARKER = re.compile(r"^(<<<<<<<|\|\|\|\|\|\|\||=======|>>>>>>>)( |$)", re.M)


def nested_world(root: Path):
    """Upstream changes line 5 of FILE; three FlagTree commits change it too, one after another."""
    return build_scripted_world(root, "Triton", {**UPSTREAM_BASE, FILE: BASE},
                                [*UPSTREAM_COMMITS, ("upstream edit", {FILE: UPSTREAM})],
                                [*FORK_COMMITS, ("[CORE] first", {FILE: FIRST}), ("[CORE] second", {FILE: SECOND}),
                                 ("[CORE] third", {FILE: THIRD})])


def _upgraded_checkout(tmp_path: Path):
    world = nested_world(tmp_path / "w")
    out = tmp_path / "report"
    done = invoke("upgrade", "--repo", str(world.fork), *RANGE, "-q", "--out", str(out))
    assert done.exit_code == 1, done.output
    git(world.fork, "checkout", "-q", "sync/v3.6.0")
    return world, out


def test_markers_mode_nests_and_the_report_lists_the_file_once_with_its_commits(tmp_path: Path) -> None:
    world, out = _upgraded_checkout(tmp_path)
    text = (world.fork / FILE).read_text()
    assert text.count("<<<<<<<") > 1  # the premise: each later commit merged on top of the markers
    summary = (out / "summary.md").read_text()
    listed = [line for line in summary.splitlines() if FILE in line and line.lstrip().startswith(("-", "|", "#"))]
    assert len(listed) == 1, listed
    assert all(subject in listed[0] for subject in ("first", "second"))


def test_resolve_writes_the_single_level_merge_of_the_three_files(tmp_path: Path) -> None:
    world, _ = _upgraded_checkout(tmp_path)
    done = invoke("resolve", "--repo", str(world.fork), "--all")
    assert done.exit_code == 1, done.output  # a conflict is left for a person, now one level deep
    assert FILE in done.output and "1 conflict block" in done.output
    text = (world.fork / FILE).read_text()
    markers = [line for line in text.splitlines() if MARKER.match(line)]
    assert [line[:7] for line in markers] == ["<<<<<<<", "|||||||", "=======", ">>>>>>>"], markers
    assert markers[0] == "<<<<<<< v3.6.0 (upgraded)" and markers[1] == "||||||| v3.5.0 (old upstream)"
    assert markers[3].startswith(">>>>>>> ") and markers[3].endswith(" (FlagTree)")
    assert "line_5 = 'upstream'" in text and "line_5 = 'flagtree two'" in text
    assert "line_0 = 'flagtree three'" in text  # FlagTree's later change merged in cleanly
    # a file with a change of the user's is never overwritten
    (world.fork / FILE).write_text("mine\n")
    refused = invoke("resolve", "--repo", str(world.fork), FILE)
    assert refused.exit_code == 2 and "local changes" in refused.output
    assert (world.fork / FILE).read_text() == "mine\n"


def test_stop_mode_writes_the_markers_markers_mode_writes(tmp_path: Path) -> None:
    world = nested_world(tmp_path / "stop")
    stopped = invoke("upgrade", "--repo", str(world.fork), *RANGE, "-q", "--on-conflict", "stop",
                     "--stop-on", FILE)
    assert stopped.exit_code == 4, stopped.output
    worktree = world.fork / ".git" / "flagtree-sync" / "worktree"
    stop_markers = MARKER.findall((worktree / FILE).read_text())
    stop_lines = [line for line in (worktree / FILE).read_text().splitlines() if MARKER.match(line)]
    marked = nested_world(tmp_path / "markers")
    invoke("upgrade", "--repo", str(marked.fork), *RANGE, "-q")
    first = git(marked.fork, "log", "--format=%H", "--grep", "first", "sync/v3.6.0").split()[0]
    marked_lines = [line for line in git(marked.fork, "show", f"{first}:{FILE}").splitlines() if MARKER.match(line)]
    assert stop_lines == marked_lines and len(stop_markers) == 4, (stop_lines, marked_lines)


def test_continue_says_a_delete_modify_conflict_taken_from_the_index(world) -> None:
    """Issue 48.9: `git add -A` at a stop marks a delete/modify conflict resolved by hand without a word."""
    result = invoke("upgrade", "--repo", str(world.fork), *RANGE, "--on-conflict", "stop", "-q")
    worktree = world.fork / ".git" / "flagtree-sync" / "worktree"
    for _ in range(10):
        assert result.exit_code in (1, 4), result.output
        if result.exit_code == 1:
            break
        for path in git(worktree, "diff", "--name-only", "--diff-filter=U").split():
            target = worktree / path
            if target.is_file():
                target.write_text("".join(line for line in target.read_text().splitlines(keepends=True)
                                          if not MARKER.match(line)))
        git(worktree, "add", "-A")
        result = invoke("upgrade", "--repo", str(world.fork), "--continue", "-q")
    assert result.exit_code == 1, result.output
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: ") and "deleted-" in line]
    assert notes and all("git add -A keeps the file" in note for note in notes), result.stderr


def _file_entry(report_dir: Path) -> dict:
    document = json.loads((report_dir / "report.json").read_text())
    return next(item for item in document["summary"]["files"] if item["path"] == FILE)


def test_the_reports_hunks_of_a_file_are_those_the_branch_holds(tmp_path: Path) -> None:
    """Issue 48: for a file several commits conflicted in, the report showed the last commit's hunks, which no
    longer matched the file (later merges nested them). While the file is nested, its hunks are those of the
    single-level merge resolve writes; once resolve's merge is committed, those parsed from the file itself:
    each hunk's line is where its <<<<<<< marker is on the branch, and its sides are the file's."""
    world, out = _upgraded_checkout(tmp_path)
    nested = _file_entry(out)
    assert nested["hunks_from"] == "resolve" and len(nested["hunks"]) == 1, nested
    assert "flagtree two" in nested["hunks"][0]["theirs"] and "upstream" in nested["hunks"][0]["ours"]
    assert "flagtree one" not in json.dumps(nested["hunks"])  # the first commit's side is no longer in the file
    page = (out / "shared-trunk.md").read_text()
    assert "as flagtree-sync resolve writes it" in page and "The hunks of the last" not in page
    invoke("resolve", "--repo", str(world.fork), FILE)
    git(world.fork, "commit", "-qam", "One conflict for the nested file")
    status = invoke("status", "--repo", str(world.fork), "-q", "--out", str(tmp_path / "after"))
    assert status.exit_code == 1, status.output
    committed = _file_entry(tmp_path / "after")
    assert committed["hunks_from"] == "branch", committed
    lines = (world.fork / FILE).read_text().splitlines()
    for hunk in committed["hunks"]:
        assert lines[hunk["line"] - 1].startswith("<<<<<<< ")
        assert hunk["theirs"] in (world.fork / FILE).read_text()


def test_a_delete_conflict_never_reads_as_holding_markers() -> None:
    """On the 3.7 move the 9 workflows FlagTree deleted read "open: committed with markers", though the branch
    held upstream's files without a marker; a content conflict still reads so."""
    from sync.model import Conflict
    deleted = Conflict("c", "s", ".github/workflows/wheels.yml", "deleted-by-flagtree", "markers", ("ci",))
    content = Conflict("c", "s", "CMakeLists.txt", "content", "markers", ("ci",))
    assert deleted.state == "open: committed as git left it, no markers" and not deleted.resolved
    assert content.state == "open: committed with markers"
