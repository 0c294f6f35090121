"""Issue #35: the release loop on a real branch: drift's defaults, one conflict model, check's baseline,
a report a busy engineer can scan."""
from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import git, invoke

RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]


def _drift_kinds(world, *extra: str) -> tuple[set[str], str]:
    result = invoke("drift", "--repo", str(world.fork), *RANGE, "--json", *extra)
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    return {finding["kind"] for group in document["groups"] for finding in group["findings"]}, result.stderr


def test_drift_runs_every_analysis_by_default_and_fast_leaves_the_slow_ones_out(world) -> None:
    symbol_kinds = {"symbol-drift", "symbol-removed"}  # what symbol drift, a slow analysis, reports
    full, _ = _drift_kinds(world)
    assert full & symbol_kinds  # as upgrade and status report it
    fast, note = _drift_kinds(world, "--fast")
    assert not fast & symbol_kinds and "--fast" in note
    deprecated, warning = _drift_kinds(world, "--symbols")  # old scripts keep working, and are told
    assert deprecated == full and "--symbols is deprecated" in warning


def _strip_markers(path: Path) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(line for line in lines if not line.startswith(("<<<<<<<", "|||||||", "=======", ">>>>>>>"))))


def _upgrade_resolving_every_stop(world, out: Path) -> str:
    """upgrade --on-conflict stop, each stop resolved by hand and --continue'd: every conflict resolved."""
    result = invoke("upgrade", "--repo", str(world.fork), *RANGE, "--on-conflict", "stop", "-q", "--out", str(out))
    worktree = world.fork / ".git" / "flagtree-sync" / "worktree"
    git(worktree, "checkout", "--theirs", "CMakeLists.txt")
    git(worktree, "add", "CMakeLists.txt")
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "-q")
    _strip_markers(worktree / "python/triton/language/__init__.py")
    git(worktree, "add", "python/triton/language/__init__.py")
    git(worktree, "rm", "-q", "python/triton/ops/__init__.py", "python/triton/ops/matmul.py")
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "-q")
    _strip_markers(worktree / "python/src/ir.cc")
    git(worktree, "add", "python/src/ir.cc")
    result = invoke("upgrade", "--repo", str(world.fork), "--continue", "-q")
    assert result.exit_code == 1, result.output
    return result.stdout


def test_after_continue_every_renderer_tells_the_same_open_and_resolved_conflicts(world, tmp_path: Path) -> None:
    out = tmp_path / "report"
    printed = _upgrade_resolving_every_stop(world, out)
    first, *rows = printed.splitlines()
    assert "5 conflicted files: 0 open, 5 resolved" in first  # not "5 conflicted files" over rows of zeros
    group_rows = [row for row in rows if "conflicts=" in row]
    assert group_rows and all("conflicts=0 " in row and "resolved=" in row for row in group_rows)
    assert sum(int(re.search(r"resolved=(\d+)", row).group(1)) for row in group_rows) >= 5
    document = json.loads((out / "report.json").read_text())
    assert document["summary"]["conflicts"]["open"] == 0 and document["summary"]["conflicts"]["resolved"] == 5
    assert document["summary"]["conflicts"]["resolved_files"] == document["summary"]["conflicted_files"]
    assert all(not conflict["open"] for group in document["groups"] for conflict in group["conflicts"])
    heading = "Conflicted files (5): 0 open, 5 resolved"
    summary = (out / "summary.md").read_text()
    assert f"## {heading}" in summary and "Resolved by hand:" in summary and "Open (resolve these)" not in summary
    assert heading in (out / "index.html").read_text()


def _checked_out_upgrade(world) -> Path:
    invoke("upgrade", "--repo", str(world.fork), *RANGE, "-q")
    git(world.fork, "checkout", "-q", "sync/v3.6.0")
    return world.fork


def test_check_baseline_fails_only_on_new_findings_and_survives_line_moves(world) -> None:
    tree = _checked_out_upgrade(world)
    before = invoke("check", str(tree))
    assert before.exit_code == 1 and "FT014 error" in before.output  # the branch's markers: pre-existing errors
    written = invoke("check", str(tree), "--write-baseline", str(tree / ".flagtree-sync" / "check-baseline.json"))
    assert written.exit_code == 0 and "check reads it from now on" in written.stderr
    known = invoke("check", str(tree))  # the committed default location is read when present
    assert known.exit_code == 0, known.output
    assert "(in the baseline)" not in known.output and " 0 error," in known.output  # only what is new is printed
    assert "--all prints them" in known.output
    assert "FT014 error (in the baseline)" in invoke("check", str(tree), "--all").output
    cmake = tree / "CMakeLists.txt"
    cmake.write_text("# moved\n# down\n" + cmake.read_text())  # the flagged line moves: still the same finding
    assert invoke("check", str(tree)).exit_code == 0
    (tree / "python" / "triton" / "fresh.py").write_text("<<<<<<< a\nx = 1\n=======\nx = 2\n>>>>>>> b\n")
    new = invoke("check", str(tree), "--format", "json")
    assert new.exit_code == 1
    document = json.loads(new.stdout)
    errors = [f["path"] for f in document["findings"] if f["severity"] == "error" and "suppressed" not in f]
    assert errors == ["python/triton/fresh.py"] and document["baseline"]["known"] >= 1
    assert invoke("check", str(tree), "--no-baseline").output.count("(in the baseline)") == 0


def test_the_baseline_key_is_rule_path_and_subject_never_the_message(tmp_path: Path) -> None:
    """Issue 48.5: a release that rewords a message must not turn old findings into new ones."""
    from dataclasses import replace
    from sync.check.baseline import Baseline, apply_baseline, key, render_baseline, SCHEMA
    from sync.model import Finding
    (tmp_path / "a.py").write_text("x = 1\n<<<<<<< ours\n")
    finding = Finding("conflict-markers", "a.py", "committed conflict markers at line 2", "resolve", line=2)
    reworded = replace(finding, message="a conflict block was committed (2 markers)")
    assert key(tmp_path, finding) == key(tmp_path, reworded) == ("FT014", "a.py", "<<<<<<< ours")
    document = json.loads(render_baseline(tmp_path, [finding]))
    from collections import Counter
    known = Baseline(document["schema"], Counter({key(tmp_path, finding): 1}))
    assert document["schema"] == SCHEMA and apply_baseline(tmp_path, [reworded], known, "b").known == 1


def test_a_report_written_inside_the_tree_is_no_source_for_check(world) -> None:
    """Issue 48.5: status --out report/ inside the worktree, then check .: the report's files (conflict hunks
    quoted with their markers) are skipped, by the marker file every report directory carries."""
    tree = _checked_out_upgrade(world)
    assert invoke("check", str(tree), "--write-baseline", str(tree / ".flagtree-sync" / "check-baseline.json")
                  ).exit_code == 0
    status = invoke("status", "--repo", str(tree), "--out", str(tree / "report"), "-q")
    assert status.exit_code == 1 and (tree / "report" / ".flagtree-sync-report.json").is_file()
    (tree / "report" / "extra.md").write_text("<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n")  # whatever it holds
    checked = invoke("check", str(tree))
    assert checked.exit_code == 0, checked.output
    assert "report/" not in checked.output


def test_a_broken_baseline_is_one_line_exit_2(world, tmp_path: Path) -> None:
    tree = _checked_out_upgrade(world)
    for text in ("{", json.dumps({"schema": "other", "findings": []}),
                 json.dumps({"schema": "flagtree-sync/check-baseline/1", "findings": [{"rule": "FT014"}]})):
        (tmp_path / "b.json").write_text(text)
        result = invoke("check", str(tree), "--baseline", str(tmp_path / "b.json"))
        assert result.exit_code == 2 and result.output.startswith("flagtree-sync: error: ")
        assert len(result.output.splitlines()) == 1, result.output
    missing = invoke("check", str(tree), "--baseline", str(tmp_path / "none.json"))
    assert missing.exit_code == 2 and "--write-baseline" in missing.output


def _big_report():
    """16 findings with a 1000-line upstream diff each, a conflict of 10 hunks of 500-line sides, resolved
    conflicts, a reviewed warning and info findings: the shape of the 3.7 move's hcu page."""
    from sync.model import (Conflict, Finding, Hunk, Range, ReplayedCommit, Review, Rev, UpgradeInfo,
                            build_report)
    a, b, c, d = "a" * 40, "b" * 40, "c" * 40, "d" * 40
    diff = "@@ -1,1000 +1,1000 @@\n" + "".join(f"-old_line_{n}\n+new_line_{n}\n" for n in range(500))
    side = "".join(f"line {n}\n" for n in range(500))
    path = "third_party/hcu/backend/spec/triton/x{}.py"
    findings = [Finding("overlay-conflicting", path.format(n), "merge conflicts", backend="hcu", diff=diff)
                for n in range(16)]
    findings += [Finding("overlay-auto-mergeable", path.format("r"), "clean merge", backend="hcu",
                         suppressed=Review("checked by hand", "v3.7.0")),
                 Finding("overlay-in-sync", path.format("i"), "nothing to merge", backend="hcu")]
    hunks = tuple(Hunk(n * 600, side, side, side) for n in range(10))
    commits = (ReplayedCommit(d, "Port hcu", "e" * 40, (
        Conflict(d, "Port hcu", "third_party/hcu/a.cc", "content", "markers", ("hcu",), hunks),
        Conflict(d, "Port hcu", "third_party/hcu/b.cc", "content", "manual", ("hcu",), hunks))),)
    return build_report(Range(Rev("v3.6.0", a), Rev("v3.7.0", b), Rev("main", c)), ["hcu"], findings, commits,
                        UpgradeInfo("sync/v3.7.0", "9" * 40, "markers"))


def test_group_pages_and_index_html_cap_diffs_and_hunks_and_say_where_the_whole_text_is() -> None:
    from sync.report.html import render_html
    from sync.report.markdown import render_group
    report = _big_report()
    page = render_group(report, report.groups[0])
    assert len(page.splitlines()) < 2500, len(page.splitlines())  # was over 40,000 lines
    assert "more lines left out here: the whole text is under groups[].findings[].diff in report.json" in page
    assert "more hunks left out here" in page
    index = render_html(report)
    assert len(index.encode()) < 250_000, len(index.encode())
    assert "report.json" in index and "new_line_499" not in index and "new_line_499" not in page


def test_html_puts_open_items_first_in_one_table_and_folds_the_rest() -> None:
    from sync.report.html import render_html
    section = render_html(_big_report()).split('<section id="group-hcu" data-group="hcu">')[1]
    table = section.index('<table class="open">')
    assert table < section.index("Resolved conflicts") < section.index(">Info (")
    assert section.count('<td class="port">port</td>') == 16 and section.count('class="conflict">conflict<') == 1
    for title in ("Resolved conflicts", "Reviewed", "Info"):  # folded: a <details> without open
        assert '<details class="' in section and f"<summary>{title} (" in section
    assert "<details open" not in section
    reviewed = section[section.index("<summary>Reviewed ("):]
    assert '<span class="reviewed">reviewed</span>' in reviewed and 'class="warning"' not in reviewed
    assert section.count("<svg") == 1 and "<rect" in section  # the group's stacked bar, inline


def test_markdown_group_page_starts_with_the_open_table() -> None:
    from sync.report.markdown import render_group
    report = _big_report()
    page = render_group(report, report.groups[0])
    assert (page.index("## Open (17)") < page.index("## To port (16)") < page.index("## Conflict resolutions")
            < page.index("## Reviewed (1)"))
    reviewed = page.split("## Reviewed (1)")[1]  # a collapsed list per kind, a line each (issue 48.7)
    assert "<summary>overlay-auto-mergeable: 1</summary>" in reviewed and "(reviewed for `v3.7.0`: checked by hand)" in reviewed
