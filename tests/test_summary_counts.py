"""The release summary's table: a conflict in a file several groups own is in each row, counted once in the total."""
from __future__ import annotations

import html
import re

from sync.model import Conflict, Range, ReplayedCommit, Rev, UpgradeInfo, build_report
from sync.report.html import render_html
from sync.report.markdown import render_summary

A, B, C, D = "a" * 40, "b" * 40, "c" * 40, "d" * 40


def _report(shared_owners: tuple[str, ...]):
    commits = (ReplayedCommit(D, "Hook trunk", "e" * 40, (
        Conflict(D, "Hook trunk", "python/triton/ops/matmul.py", "deleted-upstream", "markers", shared_owners),
        Conflict(D, "Hook trunk", "python/triton/language/__init__.py", "content", "markers", ("alpha",)),
        Conflict(D, "Hook trunk", "python/src/ir.cc", "content", "manual", ("shared-trunk",)))),)
    return build_report(Range(Rev("v3.5.0", A), Rev("v3.6.0", B), Rev("main", C)), ["alpha", "beta"], [], commits,
                        UpgradeInfo("sync/v3.6.0", "9" * 40, "markers"))


def _rows(summary: str) -> dict[str, list[str]]:
    rows = {}
    for line in summary.splitlines():
        if line.startswith("| ") and not line.startswith("| group"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[re.sub(r"\[(.*)\]\(.*\)", r"\1", cells[0])] = cells[3:]
    return rows


def test_a_file_two_backends_own_counts_in_both_rows_and_once_in_the_total() -> None:
    summary = render_summary(_report(("alpha", "beta")))
    rows = _rows(summary)
    assert rows["alpha"][0] == "2" and rows["beta"][0] == "1"  # matmul.py is in both rows
    assert rows["total (each conflict once)"] == ["2", "0", "0", "0", "0", "0", "1"]  # 2 open, 1 resolved: not 3
    assert ("A conflicted file owned by several groups counts in the row of each: `python/triton/ops/matmul.py` "
            "(`alpha`, `beta`). The total row counts each conflict once.") in summary
    page = html.unescape(re.sub(r"<[^>]+>", "", render_html(_report(("alpha", "beta")))))
    assert "total (each conflict once)201" not in page and "total (each conflict once)2000001" in page
    assert "counts in the row of each: python/triton/ops/matmul.py (alpha, beta)" in page


def test_no_shared_file_no_note() -> None:
    summary = render_summary(_report(("beta",)))
    assert "owned by several groups" not in summary and "several groups" not in render_html(_report(("beta",)))
    assert _rows(summary)["total (each conflict once)"][0] == "2"


def test_the_upgrade_line_says_how_many_conflicts_when_a_file_conflicts_in_several_commits(capsys) -> None:
    from sync.commands.upgrade import print_summary
    first = (Conflict(D, "one", "lib/a.cpp", "content", "markers", ("shared-trunk",)),)
    again = (Conflict(A, "two", "lib/a.cpp", "content", "markers", ("shared-trunk",)),
             Conflict(A, "two", "lib/b.cpp", "content", "markers", ("shared-trunk",)))
    report = build_report(Range(Rev("v3.5.0", A), Rev("v3.6.0", B), Rev("main", C)), ["alpha"], [],
                          (ReplayedCommit(D, "one", "e" * 40, first), ReplayedCommit(A, "two", "f" * 40, again)),
                          UpgradeInfo("sync/v3.6.0", "9" * 40, "markers"))
    print_summary(report, None)
    first_line = capsys.readouterr().out.splitlines()[0]
    assert "2 commits, 2 conflicted files (3 conflicts in all, a file once per commit)" in first_line
