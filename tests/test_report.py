"""The report model and its three renderings: one rich report, every section in JSON, Markdown and HTML."""
from __future__ import annotations

import html
import json
import re
from importlib import resources

import jsonschema
import pytest
from markdown_it import MarkdownIt

from sync.model import (Conflict, DriftInfo, Finding, GateResult, GateRun, Hunk, Range, Report, ReplayedCommit, Rev,
                        Review, UpgradeInfo, build_report)
from sync.report.document import render_json, to_document
from sync.report.html import render_html
from sync.report.markdown import PORT_LEGEND, SEVERITY_LEGEND, code, page_name, render_group, render_summary
from sync.report.write import report_files

A, B, C, D = "a" * 40, "b" * 40, "c" * 40, "d" * 40
EVIL = '"><img src=x onerror=alert(1)>'


def schema() -> dict:
    return json.loads(resources.files("sync.model").joinpath("report.schema.json").read_text())


def rich_report() -> Report:
    rng = Range(Rev("v3.5.0", A), Rev("v3.6.0", B), Rev("main", C))
    owners = {"lib/x.cpp": ("alpha",), "gone.py": ("beta",), "ir.cc": ("shared-trunk",)}
    commits = (
        ReplayedCommit(D, f"Fix {EVIL}", "e" * 40, (
            Conflict(D, f"Fix {EVIL}", "lib/x.cpp", "content", "markers", owners["lib/x.cpp"],
                     (Hunk(3, "upgraded_line\n", "base_line\n", "flagtree_line\n"),)),
            Conflict(D, f"Fix {EVIL}", "gone.py", "deleted-upstream", "markers", owners["gone.py"]))),
        ReplayedCommit("f" * 40, "Bind types", "1" * 40, (
            Conflict("f" * 40, "Bind types", "ir.cc", "content", "manual", owners["ir.cc"],
                     (Hunk(6, "ours_ir\n", "", "theirs_ir\n"),)),)),
        ReplayedCommit("2" * 40, "Already upstream", None),
    )
    findings = [
        Finding("overlay-conflicting", "third_party/alpha/backend/spec/triton/tools/a.py", "merge conflicts in 1 hunk",
                backend="alpha", related_path="python/triton/tools/a.py", diff="@@ -1 +1 @@\n-old_api()\n+new_api()\n",
                details={"hunks": [{"line": 2, "ours": "trunk_side\n", "base": "base_side\n", "theirs": "overlay_side\n"}]}),
        Finding("overlay-auto-mergeable", "third_party/alpha/backend/spec/triton/tools/b.py", "clean merge",
                backend="alpha", suppressed=Review("reviewed_reason_text", "v3.6.0")),
        Finding("spec-enclosing-changed", "third_party/beta/backend/spec/triton/f.py", "enclosing changed",
                backend="beta", expired=Review("old_review_reason", "v3.5.9")),
        Finding("spec-unimplemented", "python/triton/x.py", "no implementation", line=7),
    ]
    gate = GateResult("pytest -q smoke", "end", (
        GateRun("e" * 40, f"{D[:9]} Fix", False, 1, "gate_output_tail_text"),
        GateRun(B, "v3.6.0", True, 0, "")), GateRun("e" * 40, f"{D[:9]} Fix", False, 1, "gate_output_tail_text"),
        False, ("alpha",))
    return build_report(rng, ["alpha", "beta"], findings, commits, UpgradeInfo("sync/v3.6.0", "9" * 40, "markers"),
                        gate=gate, tool_version="0.test")


def _markdown(report: Report) -> str:
    pages = [render_summary(report), *(render_group(report, group) for group in report.groups)]
    return re.sub(r"\\(.)", r"\1", "\n".join(pages))  # read the text, not its escapes


def _html(report: Report) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", render_html(report)))


SECTIONS = {  # what a reader must find, whichever rendering they open
    "range": ["v3.5.0", "v3.6.0", "sync/v3.6.0"],
    "gate": ["pytest -q smoke", "gate_output_tail_text", "first fails at eeeeeeeee"],
    "conflicts and hunks": ["lib/x.cpp", "upgraded_line", "base_line", "flagtree_line", "gone.py", "deleted-upstream"],
    "deleted-upstream next step": ["port the FlagTree change to where upstream moved the code"],
    "conflicted commits": ["ddddddddd", "Fix " + EVIL],
    "conflict resolutions": ["ir.cc", "resolved by hand", "theirs_ir"],
    "findings": ["overlay-conflicting", "merge conflicts in 1 hunk", "new_api()", "trunk_side", "overlay_side"],
    "suppression": ["reviewed_reason_text"],
    "expired suppression": ["old_review_reason", "v3.5.9"],
    "actions": ["merge by hand: the hunks show both sides"],
}


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_every_section_is_in_all_three_renderings(section: str) -> None:
    report = rich_report()
    renderings = {"json": render_json(report), "markdown": _markdown(report), "html": _html(report)}
    renderings["json"] = json.dumps(json.loads(renderings["json"]), ensure_ascii=False)
    for name, rendered in renderings.items():
        for datum in SECTIONS[section]:
            wanted = json.dumps(datum, ensure_ascii=False)[1:-1] if name == "json" else datum
            assert wanted in rendered, f"{section}: {datum!r} missing from the {name} rendering"


def test_verdicts_come_from_everything_in_the_group() -> None:
    report = rich_report()
    verdicts = {group.name: group.verdict for group in report.groups}
    assert verdicts["alpha"] == "blocked"  # a conflict, an error and the failed gate
    assert verdicts["beta"] == "blocked"  # the deleted-upstream conflict
    shared = next(group for group in report.groups if group.name == "shared-trunk")
    assert shared.counts["resolved"] == 1 and shared.counts["conflicts"] == 0
    assert shared.verdict == "clean"  # a manual resolution and an info finding block nothing
    assert not report.releasable and report.exit_status == 1


def test_a_failed_gate_blocks_the_group_it_blames() -> None:
    rng = Range(Rev("v1", A), Rev("v2", B), Rev("main", C))
    failed = GateRun(D, "x", False, 1, "")
    gate = GateResult("make", "end", (failed,), failed, False, ("alpha",))
    report = build_report(rng, ["alpha", "beta"], [], gate=gate, upgrade=UpgradeInfo("b", D, "markers"))
    assert {group.name: group.verdict for group in report.groups} == {"alpha": "blocked", "beta": "clean"}
    assert report.exit_status == 1


def test_port_work_is_counted_apart_from_warnings_and_still_asks_for_a_person() -> None:
    """Drift a backend must take over (a stale overlay, a guarded default upstream changed) builds and loads as it
    is: it is no warning of a break, but the group needs review and the exit status says so."""
    rng = Range(Rev("v1", A), Rev("v2", B), Rev("main", C))
    ported = [Finding("overlay-conflicting", "third_party/alpha/backend/spec/triton/x.py", "merge conflicts",
                      backend="alpha"),
              Finding("guard-default-changed", "third_party/alpha/backend/spec/include/flagtree_spec.h",
                      "FLAGTREE_SPEC_f: guarded trunk default f changed", backend="alpha")]
    report = build_report(rng, ["alpha", "beta"], ported, upgrade=UpgradeInfo("b", D, "markers"))
    alpha = next(group for group in report.groups if group.name == "alpha")
    assert {f.severity for f in alpha.findings} == {"port"}
    assert alpha.counts["port"] == 2 and alpha.counts["warning"] == 0 and alpha.verdict == "needs-review"
    assert report.exit_status == 1
    assert "| [alpha](alpha.md) | backend | needs-review | 0 | 0 | 0 | 2 | 0 |" in render_summary(report)
    page = render_group(report, alpha)
    assert "## To port (2)" in page and "## Findings to act on" not in page
    assert PORT_LEGEND in page and SEVERITY_LEGEND in render_summary(report)  # what port means, where it is read
    jsonschema.validate(to_document(report), schema())


def test_severity_comes_from_the_catalogue() -> None:
    finding = Finding("overlay-orphan", "p", "m")
    assert finding.severity == "error" and finding.next_step.startswith("move the overlay")
    assert Finding("overlay-orphan", "p", "m", action="custom").next_step == "custom"
    with pytest.raises(KeyError, match="not in sync/model/kinds.py"):
        Finding("no-such-kind", "p", "m")


def test_json_validates_against_the_shipped_schema() -> None:
    jsonschema.validate(to_document(rich_report()), schema())
    rng = Range(Rev("v1", A), Rev("v2", B), Rev("main", C))
    drift = build_report(rng, ["alpha"], [Finding("overlay-orphan", "p", "m", backend="alpha")],
                         drift=DriftInfo("(replayed in memory)"))
    jsonschema.validate(to_document(drift), schema())


def test_untrusted_text_never_becomes_html_in_markdown() -> None:
    report = rich_report()
    renderer = MarkdownIt("commonmark")
    for name, text in report_files(report).items():
        if name.endswith(".md"):
            rendered = renderer.render(text)
            assert "<img" not in rendered, name
    assert "<img" not in render_html(report).replace("&lt;img", "")


@pytest.mark.parametrize("value", ["plain", "a`b", "``x``", "`start", "pipe | pipe", "two\nlines"])
def test_code_spans_hold_any_text(value: str) -> None:
    rendered = MarkdownIt("commonmark").renderInline(code(value))
    inner = re.fullmatch(r"<code>(.*)</code>", rendered, re.DOTALL)
    assert inner is not None
    assert html.unescape(inner[1]).replace("\\|", "|") == " ".join(value.splitlines())


def test_group_pages_cannot_clash_with_report_files() -> None:
    assert page_name("alpha") == "alpha.md"
    names = {page_name(name) for name in ["summary", "index", "report", "kinds", "../x", "a\nb", ".hidden"]}
    assert not names & {"summary.md", "index.md", "report.md", "kinds.md"}
    assert all("/" not in name and "\n" not in name and not name.startswith(".") for name in names)
    assert len(names) == 7


def test_kind_links_resolve_inside_the_report_directory() -> None:
    """Every kind link of summary.md and the group pages points at an anchor of the report's own kinds.md, and
    index.html's at its own rendered kinds section (issue 48.8: not raw Markdown), so the links work wherever
    the report directory is opened."""
    files = report_files(rich_report())
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', files["kinds.md"]))
    links = [link for name, text in files.items() if name.endswith(".md") and name != "kinds.md"
             for link in re.findall(r'(?:\]\(|href=")([^)"#]*#kind-[^)"]+)', text)]
    assert links and all(link.split("#")[0] == "kinds.md" and link.split("#")[1] in anchors for link in links), links
    page = files["index.html"]
    in_page = re.findall(r'href="#(kind-[^"]+)"', page)
    assert in_page and "kinds.md" not in page and all(f'id="{anchor}"' in page for anchor in in_page)


def test_a_conflict_resolved_by_a_person_asks_for_nothing_more() -> None:
    report = rich_report()
    group = {group.name: group for group in report.groups}
    page, html_text = render_group(report, group["shared-trunk"]), render_html(report)
    resolved = page[page.index("### `ir.cc`"):]
    assert "Next step: nothing: a person resolved it" in resolved
    assert "(empty: the file did not have these lines)" in resolved  # an empty base says so
    assert "Next step: resolve the hunks" in render_group(report, group["alpha"])  # still open: still asked
    assert html_text.count("next step:</em> nothing: a person resolved it") == 1


def test_a_finding_is_one_line_even_when_it_quotes_code_over_several() -> None:
    """Text output is one line a finding: a signature quoted across lines is joined."""
    finding = Finding("call-signature", "a.py", "its parameters changed: (a, b) -> (a: int,\n           b: str)\r\n end")
    assert finding.message == "its parameters changed: (a, b) -> (a: int, b: str) end"


def test_a_findings_diff_stays_one_code_block_inside_its_list_item() -> None:
    """A multi-line diff under a finding (a list item) renders as one code block holding every line."""
    diff = "diff --git a/t.py b/t.py\nindex 1..2 100644\n--- a/t.py\n+++ b/t.py\n@@ -1,2 +1,2 @@\n-old()\n+new()\n # kept\n"
    report = build_report(Range(Rev("v3.5.0", A), Rev("v3.6.0", B), Rev("main", C)), ["alpha"],
                          [Finding("overlay-auto-mergeable", "third_party/alpha/backend/spec/triton/t.py", "clean merge",
                                   backend="alpha", related_path="python/triton/t.py", diff=diff)],
                          (), None, drift=DriftInfo("(replayed in memory)"))
    page = render_group(report, next(group for group in report.groups if group.name == "alpha"))
    blocks = [token.content for token in MarkdownIt("commonmark").parse(page) if token.type == "fence"]
    assert blocks == [diff]


def _page_with_hunk(text: str) -> str:
    conflict = Conflict(D, "Fix", "lib/x.cpp", "content", "markers", ("alpha",), (Hunk(3, text, "", text),))
    finding = Finding("overlay-conflicting", "third_party/alpha/backend/spec/triton/t.py", "merge conflicts",
                      backend="alpha", diff=text, details={"hunks": [{"line": 2, "ours": text, "base": text,
                                                                      "theirs": text}]})
    report = build_report(Range(Rev("v3.5.0", A), Rev("v3.6.0", B), Rev("main", C)), ["alpha"], [finding],
                          (ReplayedCommit(D, "Fix", "e" * 40, (conflict,)),), UpgradeInfo("sync/v3.6.0", "9" * 40, "markers"))
    return render_group(report, next(group for group in report.groups if group.name == "alpha"))


def test_a_hunk_with_lone_crs_and_backticks_stays_inside_its_fence() -> None:
    """CommonMark ends a line at a lone CR: a hunk of "\\r```\\r<img ...>" must not close the fence (issue 31.15).
    The hostile page has the structure (headings, links, fences) of the same page with a harmless hunk."""
    hostile = "x = 1\r```\r<img src=x onerror=alert(1)>\r[link](http://evil.example)\r# heading\r````` more\r\n"
    tokens = MarkdownIt("commonmark").parse(_page_with_hunk(hostile))
    plain = MarkdownIt("commonmark").parse(_page_with_hunk("x = 1\n"))
    inline = [child for token in tokens for child in token.children or []]
    plain_inline = [child for token in plain for child in token.children or []]
    assert not [t for t in tokens + inline if t.type in ("html_block", "html_inline")]
    assert [t.attrs["href"] for t in inline if t.type == "link_open"] == \
        [t.attrs["href"] for t in plain_inline if t.type == "link_open"]
    assert [t.markup for t in tokens if t.type == "heading_open"] == [t.markup for t in plain if t.type == "heading_open"]
    blocks = [t.content for t in tokens if t.type == "fence"]
    assert len(blocks) == len([t for t in plain if t.type == "fence"]) >= 1
    assert all("<img src=x onerror=alert(1)>\n[link]" in block for block in blocks)


def _triage_report(forges=None) -> Report:
    from sync.model import build_report
    from sync.model.report import Forges
    long = "upstream renamed the builder " + "and its overloads " * 20 + "Xyzzy_end_word"
    findings = [Finding("overlay-in-sync", f"third_party/quiet/backend/spec/triton/m{n}.py", "nothing", "",
                        backend="quiet") for n in range(50)]
    findings += [Finding("symbol-removed", "third_party/loud/lib/a.cpp", long, "port it", line=3, backend="loud",
                         details={"commits": ["371b6445f Rename CTAEncoding (#8850)"], "prs": ["8850"]})]
    return build_report(Range(Rev("v3.5.0", A), Rev("v3.6.0", B), Rev("main", C)), ["loud", "quiet"], findings,
                        drift=DriftInfo("(replayed in memory)"), forges=forges or Forges())


def test_the_html_bar_leaves_info_out_and_texts_expand_instead_of_being_cut() -> None:
    """Issue 48.8: a backend of 0 errors and 50 info findings drew the longest bar; a long error was cut
    mid-word with no way to read the rest."""
    page = render_html(_triage_report())
    quiet = page.split('id="group-quiet"')[1].split("</h2>")[0]
    assert "<rect x=" not in quiet  # nothing drawn: info asks nothing of anyone
    assert 'aria-label="0 errors and open conflicts, 0 warnings"' in quiet
    errors = page.split('<section id="errors">')[1].split("</section>")[0]
    assert '<details class="more"><summary>' in errors and "Xyzzy_end_word" in errors
    summary = errors.split("<summary>")[1].split("</summary>")[0]
    assert summary.endswith("…") and summary[:-1].split()[-1] in ("builder", "and", "its", "overloads")  # a whole word


def test_html_links_commits_and_prs_to_the_forge_the_remotes_name() -> None:
    from sync.model.build import forges_of
    forges = forges_of({"origin": "git@github.com:flagos-ai/FlagTree.git",
                        "upstream": "https://github.com/triton-lang/triton.git"})
    page = render_html(_triage_report(forges))
    assert 'href="https://github.com/triton-lang/triton/pull/8850"' in page
    assert 'href="https://github.com/triton-lang/triton/commit/371b6445f"' in page
    assert "https://" not in render_html(_triage_report(forges_of({"origin": "/srv/git/flagtree.git"})))
    gitlab = forges_of({"upstream": "ssh://git@gitlab.example.org:2222/mirrors/triton.git"}).upstream
    assert gitlab is not None and gitlab.pull("7") == "https://gitlab.example.org/mirrors/triton/-/merge_requests/7"
