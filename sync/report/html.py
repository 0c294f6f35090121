"""A static HTML page of a Report: no server, no network assets, hunks and diffs folded in <details>."""
from __future__ import annotations

from html import escape

from .catalogue import report_link
from ..model import Conflict, Finding, GateResult, Hunk, Report
from .markdown import conflicted_heading, conflicts_by_state, page_name, range_line, shared_note, totals

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;max-width:72rem;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
.blocked{color:#b00020}.needs-review{color:#a05a00}.clean{color:#1b7e2a}
pre{background:#f6f6f6;padding:.5rem;overflow:auto}details{margin:.3rem 0 .8rem 1rem}
.error{color:#b00020}.warning{color:#a05a00}.info{color:#555}
.add{color:#116329;background:#e6ffec;display:block}.del{color:#82071e;background:#ffebe9;display:block}
.hunk{color:#0550ae;display:block}section{border-top:1px solid #ddd;margin-top:1.5rem}
"""


def _pre(value: str) -> str:
    return f"<pre>{escape(value)}</pre>"


def _diff(value: str) -> str:
    """A unified diff with added, removed and hunk-header lines coloured."""
    rows = []
    for line in value.splitlines():
        css = "hunk" if line.startswith("@@") else "add" if line.startswith("+") and not line.startswith("+++") \
            else "del" if line.startswith("-") and not line.startswith("---") else ""
        rows.append(f'<span class="{css}">{escape(line)}</span>' if css else escape(line))
    return '<pre class="diff">' + "\n".join(rows) + "</pre>"


def _hunk(title: str, hunk: Hunk) -> str:
    return (f"<details><summary>{escape(title)}</summary><p>upgraded side</p>{_pre(hunk.ours)}"
            f"<p>base</p>{_pre(hunk.base)}<p>FlagTree side</p>{_pre(hunk.theirs)}</details>")


def _range(report: Report) -> str:
    return f"<p>{range_line(report, lambda value: f'<code>{escape(value)}</code>')}</p>"


def _table(report: Report) -> list[str]:
    parts = ['<table id="groups"><tr><th>group</th><th>kind</th><th>verdict</th><th>conflicts</th><th>errors</th>'
             "<th>warnings</th><th>info</th><th>reviewed</th><th>resolved</th></tr>"]
    for group in report.groups:
        counts = group.counts
        parts.append(f'<tr><td><a href="#group-{escape(group.name)}">{escape(group.name)}</a> '
                     f'(<a href="{escape(page_name(group.name))}">md</a>)</td>'
                     f'<td>{group.kind}</td><td class="{group.verdict}">{group.verdict}</td>'
                     f'<td>{counts["conflicts"]}</td><td>{counts["error"]}</td><td>{counts["warning"]}</td>'
                     f'<td>{counts["info"]}</td><td>{counts["suppressed"]}</td><td>{counts["resolved"]}</td></tr>')
    if len(report.groups) > 1:
        total = totals(report)
        parts.append('<tr id="total"><td>total (each conflict once)</td><td></td><td></td>'
                     + "".join(f"<td>{total[key]}</td>" for key in
                               ("conflicts", "error", "warning", "info", "suppressed", "resolved")) + "</tr>")
    note = shared_note(report, lambda value: f"<code>{escape(value)}</code>")
    return parts + ["</table>"] + ([f'<p id="shared-files">{note}</p>'] if note else [])


def _gate(gate: GateResult) -> list[str]:
    parts = ['<section id="gate"><h2>Test gate</h2>',
             f'<p>Command <code>{escape(gate.command)}</code> (at {escape(gate.at)}): '
             f'<span class="{"clean" if gate.passed else "blocked"}">{escape(gate.verdict())}</span>.</p>']
    if gate.blamed_groups:
        parts.append("<p>Groups whose code the first failing commit changed: "
                     + ", ".join(f"<code>{escape(name)}</code>" for name in gate.blamed_groups) + ".</p>")
    parts.append("<ul>")
    for run in gate.runs:
        parts.append(f"<li><code>{run.commit[:9]}</code> {escape(run.label)}: "
                     f'<span class="{"clean" if run.passed else "error"}">{"passed" if run.passed else "failed"}'
                     f"</span> (exit status {run.status})"
                     + (f"<details><summary>output (tail)</summary>{_pre(run.output)}</details>" if run.output
                        and not run.passed else "") + "</li>")
    return parts + ["</ul></section>"]


def _conflicted(report: Report) -> list[str]:
    parts = [f'<section id="conflicted"><h2>{escape(conflicted_heading(report))}</h2>']
    if not report.conflicted_files:
        return parts + ["<p>None.</p></section>"]
    for resolved, title in ((False, "Open (resolve these)"), (True, "Resolved by hand")):
        listed = conflicts_by_state(report, resolved)
        if not listed:
            continue
        parts.append(f"<h3>{title}</h3><ul>")
        for commit, conflicts in listed:
            parts.append(f"<li>commit <code>{commit.source[:9]}</code> {escape(commit.summary)}<ul>")
            for conflict in conflicts:
                parts.append(f"<li><code>{escape(conflict.path)}</code> ({escape(conflict.kind)}, "
                             f"{escape(conflict.resolution)}) owned by "
                             + ", ".join(f"<code>{escape(owner)}</code>" for owner in conflict.owners) + "</li>")
            parts.append("</ul></li>")
        parts.append("</ul>")
    return parts + ["</section>"]


def _conflict(conflict: Conflict) -> list[str]:
    parts = [f"<h4>conflict: <code>{escape(conflict.path)}</code> ({escape(conflict.kind)}, resolved: "
             f"{escape(conflict.resolution)})</h4>",
             f"<p>commit <code>{conflict.commit[:9]}</code> {escape(conflict.summary)}"
             + (f"; the file was <code>{escape(conflict.base_path)}</code> before" if conflict.base_path else "")
             + "</p>", f"<p><em>next step:</em> {escape(conflict.next_step)}.</p>"]
    for number, hunk in enumerate(conflict.hunks, start=1):
        parts.append(_hunk(f"hunk {number} at line {hunk.line}", hunk))
    return parts


def _finding(finding: Finding) -> list[str]:
    parts = [f'<li><span class="{finding.severity}">{finding.severity}</span> '
             f'<a href="{escape(report_link(finding.spec.anchor))}"><code>{escape(finding.kind)}</code></a> '
             f"<code>{escape(finding.location())}</code>: {escape(finding.message)}"]
    if finding.suppressed:
        parts.append(f" <em>(reviewed for {escape(finding.suppressed.reviewed_for)}: "
                     f"{escape(finding.suppressed.reason)})</em>")
    if finding.expired:
        parts.append(f"<br><em>review for {escape(finding.expired.reviewed_for)} expired "
                     f"({escape(finding.expired.reason)}): the trunk counterpart changed again</em>")
    if finding.related_path:
        parts.append(f"<br><em>trunk:</em> <code>{escape(finding.related_path)}</code>")
    if finding.next_step:
        parts.append(f"<br><em>action:</em> {escape(finding.next_step)}")
    if finding.diff:
        parts.append(f"<details><summary>upstream change</summary>{_diff(finding.diff)}</details>")
    for number, raw in enumerate(finding.details.get("hunks", []), start=1):
        parts.append(_hunk(f"merge conflict {number}", Hunk(**raw)))
    return parts + ["</li>"]


def render_html(report: Report) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>FlagTree upgrade report</title>", f"<style>{_STYLE}</style></head><body>",
             "<h1>FlagTree upgrade report</h1>", _range(report)]
    if not report.releasable:
        parts.append('<p class="blocked" id="not-releasable"><strong>Not releasable:</strong> '
                     f"{escape('; '.join(report.not_releasable_because))}.</p>")
    parts += _table(report)
    if report.gate is not None:
        parts += _gate(report.gate)
    if report.upgrade is not None:
        parts += _conflicted(report)
    if report.drift is not None and report.drift.applied_commit:
        parts.append(f"<p>Applied the clean overlay merges as <code>{report.drift.applied_commit[:9]}</code>.</p>")
    for group in report.groups:
        parts.append(f'<section id="group-{escape(group.name)}"><h2>{escape(group.name)} '
                     f'<span class="{group.verdict}">({group.verdict})</span></h2>')
        if group.gate_failed and report.gate is not None:
            parts.append(f'<p class="blocked"><strong>Test gate:</strong> <code>{escape(report.gate.command)}</code> '
                         f"{escape(report.gate.verdict())}; the failing commit changed this group's code.</p>")
        if group.open_conflicts:
            parts.append("<h3>Conflicts while replaying</h3>")
            for conflict in group.open_conflicts:
                parts += _conflict(conflict)
        if group.resolutions:
            parts.append("<h3>Conflict resolutions</h3>")
            for conflict in group.resolutions:
                parts += _conflict(conflict)
        if group.findings:
            parts.append(f"<h3>Findings ({len(group.findings)})</h3><ul>")
            for finding in group.findings:
                parts += _finding(finding)
            parts.append("</ul>")
        if not group.conflicts and not group.findings and not group.gate_failed:
            parts.append("<p>Nothing to do.</p>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
