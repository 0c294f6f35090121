"""Noise a maintainer can read (issue 48.7): drift's text folds info findings a line per kind, --min-severity
leaves out what is below it (verdicts and exit status unchanged), and a group page of a backend with nothing to
do but many info findings stays short enough to send."""
from __future__ import annotations

import re

from sync.model import Finding, Range, Rev, build_report, DriftInfo
from sync.report.markdown import render_group
from tests.conftest import invoke

RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]
ROW = re.compile(r"^  (error|warning|info|reviewed) +(\S+)")


def _rows(output: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for line in output.splitlines() if (m := ROW.match(line))]


def test_drift_folds_info_by_kind_and_min_severity_filters_what_is_printed(world) -> None:
    runs = {level: invoke("drift", "--repo", str(world.fork), *RANGE, "-q", "--min-severity", level)
            for level in ("info", "warning", "error")}
    assert {result.exit_code for result in runs.values()} == {1}
    verdicts = {level: [line for line in result.output.splitlines() if not line.startswith(" ")]
                for level, result in runs.items()}
    assert verdicts["info"] == verdicts["warning"] == verdicts["error"]  # the group lines never change
    sections = re.split(r"^\S.*$", runs["info"].output, flags=re.M)
    info_rows = [kind for section in sections for severity, kind in _rows(section) if severity == "info"]
    for section in sections:  # one line per kind and group, with its count
        kinds = [kind for severity, kind in _rows(section) if severity == "info"]
        assert len(kinds) == len(set(kinds)), section
    assert info_rows
    assert all(re.search(rf"^  info +{re.escape(kind)} +\d+: ", runs["info"].output, re.M) for kind in info_rows)
    assert {severity for severity, _ in _rows(runs["warning"].output)} <= {"error", "warning", "reviewed"}
    assert {severity for severity, _ in _rows(runs["error"].output)} <= {"error", "reviewed"}
    assert any(severity == "warning" for severity, _ in _rows(runs["warning"].output))


def test_a_page_of_many_info_findings_is_short() -> None:
    diff = "@@ -1,100 +1,100 @@\n" + "".join(f"-old {n}\n+new {n}\n" for n in range(100))
    findings = [Finding("overlay-in-sync", f"third_party/b/backend/spec/triton/m{n}.py", "nothing to merge", "",
                        backend="b", diff=diff) for n in range(1000)]
    report = build_report(Range(Rev("v1", "a" * 40), Rev("v2", "b" * 40), Rev("main", "c" * 40)), ["b"], findings,
                          drift=DriftInfo("(replayed in memory)"))
    page = render_group(report, report.groups[0])
    assert len(page.splitlines()) < 1100, len(page.splitlines())  # was over 100,000 lines: a diff per finding
    assert "<summary>overlay-in-sync: 1000</summary>" in page and "+new 5" not in page
