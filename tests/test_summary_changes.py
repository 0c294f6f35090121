"""The release summary's errors and upstream changes (issue 33): errors first per group, then one row per upstream
change across backends, in summary.md, index.html and report.json alike."""
from __future__ import annotations

import copy
import html
import json
import re
from importlib import resources

import jsonschema
import pytest

from sync.model import (Conflict, Finding, Range, ReplayedCommit, Rev, Review, UpgradeInfo, build_report,
                        upstream_changes)
from sync.report.document import to_document
from sync.report.html import render_html
from sync.report.markdown import render_summary

A, B, C, D = "a" * 40, "b" * 40, "c" * 40, "d" * 40
PR = {"commits": ["371b6445f [NFC] Rename CTAEncoding as CGAEncoding (#8850)"], "prs": ["8850"]}
EVIL = "fa11ba11c Use <script>alert(1)</script> & friends"


def _sites(path: str, count: int) -> list[str]:
    return [f"{path}:{line}" for line in range(1, count + 1)]


def _findings() -> list[Finding]:
    return [
        # #8850 reaches two backends: an error and a warning in enflame, a warning in mthreads
        Finding("symbol-removed", "third_party/enflame/a.cpp", "uses CTAEncoding", line=3, backend="enflame",
                details={**PR, "sites": _sites("third_party/enflame/a.cpp", 60)}),
        Finding("call-signature", "third_party/enflame/b.cpp", "calls get(ctx)", line=9, backend="enflame",
                details=dict(PR)),  # no sites: one site
        Finding("call-signature", "third_party/mthreads/c.cpp", "calls get(ctx)", line=4, backend="mthreads",
                details={**PR, "sites": _sites("third_party/mthreads/c.cpp", 3)}),
        # a warning-only change with the most sites, named by its commit (no PR): after every error row
        Finding("co-change", "third_party/mthreads/d.cpp", "creates LoadOp", line=1, backend="mthreads",
                details={"commits": [EVIL], "prs": [], "sites": _sites("third_party/mthreads/d.cpp", 100)}),
        # a warning-only change with fewer sites
        Finding("call-signature", "third_party/enflame/e.cpp", "calls f", line=2, backend="enflame",
                details={"commits": ["9a9a9a9a9 Change f (#9000)"], "prs": ["9000"],
                         "sites": _sites("third_party/enflame/e.cpp", 5)}),
        # open, no upstream change: counted in the sentence
        Finding("overlay-orphan", "third_party/enflame/spec/gone.py", "no trunk file", backend="enflame"),
        # left out everywhere: a reviewed error and an info finding, both naming a change
        Finding("symbol-removed", "third_party/mthreads/f.cpp", "uses X", line=5, backend="mthreads",
                details={"commits": ["6666aaaa0 Drop X (#6666)"], "prs": ["6666"]},
                suppressed=Review("ported", "v3.6.0")),
        Finding("co-change-review", "third_party/mthreads/g.cpp", "look", line=6, backend="mthreads",
                details={"commits": ["7777bbbb0 Touch g (#7777)"], "prs": ["7777"]}),
        # reviewed and no change: not counted in the sentence either
        Finding("overlay-orphan", "third_party/mthreads/spec/old.py", "no trunk file", backend="mthreads",
                suppressed=Review("kept on purpose", "v3.6.0")),
    ]


def _report(findings: list[Finding] | None = None):
    commits = (ReplayedCommit(D, "Hook trunk", "e" * 40, (
        Conflict(D, "Hook trunk", "python/src/ir.cc", "content", "markers", ("shared-trunk",)),)),)
    return build_report(Range(Rev("v3.5.0", A), Rev("v3.6.0", B), Rev("main", C)), ["enflame", "mthreads"],
                        _findings() if findings is None else findings, commits,
                        UpgradeInfo("sync/v3.6.0", "9" * 40, "markers"))


def _section(summary: str, title: str) -> str:
    start = summary.index(f"## {title}")
    end = summary.find("\n## ", start + 1)
    return summary[start:end if end >= 0 else None]


def test_one_pr_in_two_backends_is_one_row_with_both_groups_and_their_sites() -> None:
    report = _report()
    first = upstream_changes(report)[0]
    assert first.key == "#8850" and first.severity == "error"
    assert first.kinds == ("call-signature", "symbol-removed")
    assert [(share.name, share.findings, share.sites) for share in first.groups] == [("enflame", 2, 61),
                                                                                     ("mthreads", 1, 3)]
    assert (first.findings, first.sites) == (3, 64)
    rows = [line for line in _section(render_summary(report), "Upstream changes").splitlines() if "#8850" in line]
    assert rows == ["| #8850: `371b6445f` \\[NFC\\] Rename CTAEncoding as CGAEncoding | error | `call-signature`, "
                    "`symbol-removed` | [enflame](enflame.md) (2 findings, 61 sites), [mthreads](mthreads.md) "
                    "(1 finding, 3 sites) | 64 |"]


def test_errors_come_first_then_the_most_sites() -> None:
    report = _report()
    assert [change.key for change in upstream_changes(report)] == ["#8850", "fa11ba11c", "#9000"]
    section = _section(render_summary(report), "Upstream changes")
    assert section.startswith("## Upstream changes behind open findings (3)")
    assert section.index("#8850") < section.index("fa11ba11c") < section.index("#9000")


def test_reviewed_and_info_findings_are_left_out_and_unnamed_ones_counted() -> None:
    report = _report()
    keys = {change.key for change in upstream_changes(report.groups)}
    assert "#6666" not in keys and "#7777" not in keys  # reviewed error, info finding
    summary = render_summary(report)
    assert "Open findings that name no upstream change: 1 (the group pages list them)." in summary
    errors = _section(summary, "Errors")
    assert "f.cpp" not in errors and "old.py" not in errors and "g.cpp" not in errors


def test_no_change_named_says_none() -> None:
    orphan = Finding("overlay-orphan", "third_party/enflame/spec/gone.py", "no trunk file", backend="enflame")
    report = _report([orphan])
    section = _section(render_summary(report), "Upstream changes")
    assert section.splitlines()[2] == ("None. Open findings that name no upstream change: 1 "
                                       "(the group pages list them).")
    assert to_document(report)["summary"]["upstream_changes"] == []


def test_the_sections_come_right_after_the_table_errors_first() -> None:
    summary = render_summary(_report())
    table_end = summary.index("| [mthreads](mthreads.md)")
    assert table_end < summary.index("## Errors (2)") < summary.index("## Conflicted files") \
        < summary.index("## Upstream changes")  # errors and open conflicts first (issue 48.8)
    page = render_html(_report())
    assert page.index('id="groups"') < page.index('id="errors"') < page.index('id="conflicted"') \
        < page.index('id="upstream-changes"')


def test_errors_are_listed_per_group_with_kind_link_site_and_change() -> None:
    errors = _section(render_summary(_report()), "Errors")
    assert errors.splitlines()[2] == "**[enflame](enflame.md)** (2):"
    assert ("- [`symbol-removed`](kinds.md#kind-symbol-removed) `third_party/enflame/a.cpp:3` (upstream #8850): "
            "uses CTAEncoding") in errors
    assert "- [`overlay-orphan`](kinds.md#kind-overlay-orphan) `third_party/enflame/spec/gone.py`: no trunk file" \
        in errors
    assert "mthreads" not in errors  # its only error is reviewed
    assert "## Errors (0)\n\nNone." in render_summary(_report([]))


def test_errors_cap_at_ten_a_group_and_long_messages_are_cut() -> None:
    many = [Finding("overlay-orphan", f"third_party/enflame/spec/m{n:02}.py", "x" * 500, backend="enflame")
            for n in range(12)]
    errors = _section(render_summary(_report(many)), "Errors")
    bullets = [line for line in errors.splitlines() if line.startswith("- ")]
    assert len(bullets) == 11 and bullets[-1] == "- and 2 more on [enflame](enflame.md)"
    assert "m09.py" in errors and "m10.py" not in errors
    assert max(len(line) for line in bullets) < 320 and bullets[0].endswith("x\u2026")
    page = render_html(_report(many))
    assert page.count('data-kind="overlay-orphan"><a href="#kind-overlay-orphan">') == 10
    assert '<li>and 2 more on <a href="#group-enflame">enflame</a></li>' in page


def test_untrusted_subjects_are_escaped() -> None:
    report = _report()
    page = render_html(report)
    assert page.count("<script>") == 1 and page.rindex("<script>") > page.rindex("</section>")  # the filters' own
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; friends" in page
    assert "\\<script\\>alert(1)\\</script\\> \\& friends" in render_summary(report)
    shown = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "enflame (2 findings, 61 sites), mthreads (1 finding, 3 sites)" in shown


def _schema() -> dict:
    return json.loads(resources.files("sync.model").joinpath("report.schema.json").read_text())


def test_json_has_the_changes_in_the_table_order_and_validates() -> None:
    document = to_document(_report())
    changes = document["summary"]["upstream_changes"]
    assert [change["change"] for change in changes] == ["#8850", "fa11ba11c", "#9000"]
    assert changes[0] == {"change": "#8850", "prs": ["8850"], "commits": PR["commits"], "severity": "error",
                          "kinds": ["call-signature", "symbol-removed"],
                          "groups": {"enflame": {"findings": 2, "sites": 61}, "mthreads": {"findings": 1, "sites": 3}},
                          "findings": 3, "sites": 64}
    jsonschema.validate(document, _schema())
    broken = copy.deepcopy(document)
    broken["summary"]["upstream_changes"][0]["severity"] = "info"  # the schema knows the field
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, _schema())
