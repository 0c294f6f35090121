"""A static HTML page of a Report, a triage page: no server, no network assets, one small inline script.

Errors and open conflicts come first; per group, what is open comes first in one compact table (what, kind,
file, action); resolved conflicts, reviewed and info findings are folded below it. The script only filters
(by group, severity and kind; also from the address, e.g. index.html#severity=error&group=alpha): without it
everything shows. Diffs and conflict sides are cut at the Markdown pages' lengths, and folded: the whole text
is in report.json. A text cut short expands in place. Kind links go to the kinds section of the page; commits
and pull requests link to the forge the repository's remotes name (GitHub, GitLab), when one does.
"""
from __future__ import annotations

from html import escape

from sync.model.kinds import BY_ID, kind_of
from sync.model import (FileConflict, Finding, GateResult, Group, Hunk, Report, open_errors, unnamed_findings,
                        upstream_changes)
from sync.model.report import Forge, Forges
from sync.report.markdown import (PR_TAIL, MAX_DIFF_LINES, MAX_SIDE_LINES, capped, conflicted_heading, counted,
                                  cut_note, folded_declarations, open_findings, page_name,
                                  range_line, shared_note, short_message, shown_errors, shown_hunks, totals,
                                  unnamed_sentence)

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1rem 1.5rem;color:#222}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;
vertical-align:top}th{background:#f3f3f3}table.open td:first-child{white-space:nowrap}
td code{overflow-wrap:anywhere}.msg{color:#444;font-size:.92em}
.blocked{color:#b00020}.needs-review{color:#a05a00}.clean{color:#1b7e2a}
pre{background:#f6f6f6;padding:.5rem;overflow:auto;max-height:28rem}details{margin:.3rem 0 .5rem 1rem}
summary{cursor:pointer}.cut{color:#555;font-style:italic}
.error,.conflict{color:#b00020;font-weight:600}.warning{color:#a05a00;font-weight:600}.port{color:#6a4c93}.info{color:#555}
.reviewed{color:#1b7e2a}
.add{color:#116329;background:#e6ffec;display:block}.del{color:#82071e;background:#ffebe9;display:block}
.hunk{color:#0550ae;display:block}section{border-top:1px solid #ddd;margin-top:1.5rem}
h2 svg{margin-left:.6rem;vertical-align:middle}.scroll{overflow-x:auto}
td.kind code,td.group{white-space:nowrap}
[hidden]{display:none!important}#filters{margin:.5rem 0}#filters label{margin-right:1rem}
details.more{display:inline;margin:0}details.more[open] summary{display:none}
@media (max-width:900px){body{margin:.5rem}td,th{padding:.2rem .3rem}
#groups td:nth-child(2),#groups th:nth-child(2){display:none}#groups svg.bar{width:80px}#groups{font-size:.88em}}
"""
_BAR_WIDTH, _BAR_HEIGHT = 140, 10
_BAR_COLOURS = (("errors and open conflicts", "#b00020"), ("warnings", "#e08a00"))  # info asks nothing: not drawn


def _message(value: str) -> str:
    """A message, cut at a word's end when long, the whole of it a click away (never cut with no way back)."""
    short = short_message(value)
    if short == value:
        return escape(value)
    return f'<details class="more"><summary>{escape(short)}</summary>{escape(value)}</details>'


def _link(url: str | None, label: str) -> str:
    """label (already HTML) linked to url, a forge address built here from a checked remote (never raw text)."""
    return f'<a href="{escape(url)}">{label}</a>' if url else label


def _commit_link(forge: Forge | None, commit_id: str, shown: int = 9) -> str:
    full = commit_id if len(commit_id) == 40 else None  # a short id may be ambiguous on the forge: shown plain
    return _link(forge.commit(full) if forge and full else None, f"<code>{escape(commit_id[:shown])}</code>")


def _upstream_links(forges: Forges, prs: list[str], commits: list[str]) -> str:
    """A finding's upstream change: each PR and the first commit, linked to upstream's forge."""
    forge = forges.upstream
    linked = [_link(forge.pull(pr) if forge and pr.isdigit() else None, f"#{escape(pr)}") for pr in prs]
    if commits:
        short, _, subject = commits[0].partition(" ")
        more = f" (and {counted(len(commits) - 1, 'more commit')})" if len(commits) > 1 else ""
        url = forge.commit(short) if forge and len(short) >= 7 and all(c in "0123456789abcdef" for c in short) \
            else None  # the forge resolves a short id of upstream's history
        title = PR_TAIL.sub("", subject) if prs else subject
        linked.append(_link(url, f"<code>{escape(short)}</code>") + f" {escape(title)}{more}")
    return ", ".join(linked)


def _pre(value: str) -> str:
    return f"<pre>{escape(value)}</pre>"


def _cut(left_out: int, where: str, what: str = "lines") -> str:
    return f'<p class="cut">{escape(cut_note(left_out, where, what))}</p>' if left_out else ""


def _capped_pre(value: str, where: str) -> str:
    shown, left_out = capped(value, MAX_SIDE_LINES)
    return _pre(shown) + _cut(left_out, where)


def _diff(value: str, where: str = "under groups[].findings[].diff") -> str:
    """A unified diff with added, removed and hunk-header lines coloured, cut at MAX_DIFF_LINES."""
    shown, left_out = capped(value, MAX_DIFF_LINES)
    rows = []
    for line in shown.splitlines():
        css = "hunk" if line.startswith("@@") else "add" if line.startswith("+") and not line.startswith("+++") \
            else "del" if line.startswith("-") and not line.startswith("---") else ""
        rows.append(f'<span class="{css}">{escape(line)}</span>' if css else escape(line))
    return '<pre class="diff">' + "\n".join(rows) + "</pre>" + _cut(left_out, where)


def _hunk(title: str, hunk: Hunk, where: str) -> str:
    return (f"<details><summary>{escape(title)}</summary><p>upgraded side</p>{_capped_pre(hunk.ours, where)}"
            f"<p>base</p>{_capped_pre(hunk.base, where)}<p>FlagTree side</p>{_capped_pre(hunk.theirs, where)}"
            "</details>")


def _bar_counts(group: Group) -> tuple[int, int]:
    """errors (open conflicts block as errors do) and warnings: what the group's bar draws. Info is left out: a
    backend of 0 errors and many info findings looked worst (issue 48.8)."""
    counts = group.counts
    return counts["error"] + counts["conflicts"], counts["warning"]


def _bar(group: Group, most: int) -> str:
    """A small stacked bar, inline SVG (no script, no network), on one scale for every group."""
    values = _bar_counts(group)
    label = ", ".join(f"{value} {name}" for value, (name, _) in zip(values, _BAR_COLOURS))
    rects = [f'<rect width="{_BAR_WIDTH}" height="{_BAR_HEIGHT}" fill="#eef3ee"></rect>']
    x = 0.0
    for value, (name, colour) in zip(values, _BAR_COLOURS):
        if value:
            width = max(2.0, round(_BAR_WIDTH * value / max(most, 1), 1))
            rects.append(f'<rect x="{x}" width="{width}" height="{_BAR_HEIGHT}" fill="{colour}">'
                         f"<title>{value} {name}</title></rect>")
            x += width
    return (f'<svg class="bar" width="{_BAR_WIDTH}" height="{_BAR_HEIGHT}" viewBox="0 0 {_BAR_WIDTH} {_BAR_HEIGHT}" '
            f'preserveAspectRatio="none" role="img" aria-label="{label}">'
            + "".join(rects) + "</svg>")


def _range(report: Report) -> str:
    return f"<p>{range_line(report, lambda value: f'<code>{escape(value)}</code>')}</p>"


def _table(report: Report) -> list[str]:
    most = max((sum(_bar_counts(group)) for group in report.groups), default=0)
    parts = ['<div class="scroll"><table id="groups"><tr><th>group</th><th>kind</th><th>verdict</th>'
             "<th>errors / warnings</th>"
             "<th>conflicts</th><th>errors</th><th>warnings</th><th>port</th><th>info</th><th>reviewed</th><th>resolved</th></tr>"]
    for group in report.groups:
        counts = group.counts
        parts.append(f'<tr><td class="group"><a href="#group-{escape(group.name)}">{escape(group.name)}</a> '
                     f'(<a href="{escape(page_name(group.name))}">md</a>)</td>'
                     f'<td>{group.kind}</td><td class="{group.verdict}">{group.verdict}</td><td>{_bar(group, most)}</td>'
                     f'<td>{counts["conflicts"]}</td><td>{counts["error"]}</td><td>{counts["warning"]}</td>'
                     f'<td>{counts["port"]}</td><td>{counts["info"]}</td><td>{counts["suppressed"]}</td><td>{counts["resolved"]}</td></tr>')
    if len(report.groups) > 1:
        total = totals(report)
        parts.append('<tr id="total"><td>total (each conflict once)</td><td></td><td></td><td></td>'
                     + "".join(f"<td>{total[key]}</td>" for key in
                               ("conflicts", "error", "warning", "port", "info", "suppressed", "resolved")) + "</tr>")
    note = shared_note(report, lambda value: f"<code>{escape(value)}</code>")
    return parts + ["</table></div>"] + ([f'<p id="shared-files">{note}</p>'] if note else [])


def _group_link(name: str) -> str:
    return f'<a href="#group-{escape(name)}">{escape(name)}</a>'


def _details_list(finding: Finding, name: str) -> list[str]:
    value = finding.details.get(name)
    return [str(item) for item in value] if isinstance(value, list) else []


def _errors(report: Report) -> list[str]:
    """Every open error, per group in the table's order; MAX_ERRORS_PER_GROUP each, the rest on the group."""
    listed = open_errors(report)
    parts = [f'<section id="errors"><h2>Errors ({sum(len(errors) for _, errors in listed)})</h2>']
    if not listed:
        return parts + ["<p>None.</p></section>"]
    for group, errors in listed:
        shown, left_out = shown_errors(errors)
        parts.append(f'<p data-group="{escape(group.name)}"><strong>{_group_link(group.name)}</strong> '
                     f"({len(errors)}):</p><ul>")
        for finding in shown:
            change = _upstream_links(report.forges, _details_list(finding, "prs"), _details_list(finding, "commits"))
            parts.append(f'<li {_data(group.name, "error", finding.kind)}>{_kind_link(finding.kind)} '
                         f"<code>{escape(finding.location())}</code>"
                         + (f" (upstream {change})" if change else "")
                         + f": {_message(finding.message)}</li>")
        if left_out:
            parts.append(f"<li>and {left_out} more on {_group_link(group.name)}</li>")
        parts.append("</ul>")
    return parts + ["</section>"]


def _changes(report: Report) -> list[str]:
    """One row per upstream change across groups: read its PR once, fix every group's sites."""
    changes = upstream_changes(report)
    parts = [f'<section id="upstream-changes"><h2>Upstream changes behind open findings ({len(changes)})</h2>']
    if not changes:
        unnamed = f" {escape(unnamed_sentence(report))}" if unnamed_findings(report) else ""
        return parts + [f"<p>None.{unnamed}</p></section>"]
    parts.append('<div class="scroll"><table id="changes"><tr><th>upstream change</th><th>worst</th><th>kinds</th>'
                 "<th>groups</th><th>sites</th></tr>")
    for change in changes:
        label = _upstream_links(report.forges, [pr.lstrip("#") for pr in change.prs], list(change.commits))
        groups = ", ".join(f"{_group_link(share.name)} ({counted(share.findings, 'finding')}, "
                           f"{counted(share.sites, 'site')})" for share in change.groups)
        data = _data(" ".join(share.name for share in change.groups), change.severity, " ".join(change.kinds))
        parts.append(f'<tr {data}><td>{label}</td><td class="{change.severity}">{change.severity}</td>'
                     f'<td class="kind">{", ".join(_kind_link(kind) for kind in change.kinds)}</td>'
                     f"<td>{groups}</td><td>{change.sites}</td></tr>")
    return parts + ["</table></div>", f"<p>{escape(unnamed_sentence(report))}</p></section>"]


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


def _data(groups: str, severity: str, kinds: str) -> str:
    """What the filters read: space-separated group names, severities and kinds."""
    return f'data-group="{escape(groups)}" data-severity="{escape(severity)}" data-kind="{escape(kinds)}"'


def _conflicted(report: Report) -> list[str]:
    parts = [f'<section id="conflicted"><h2>{escape(conflicted_heading(report))}</h2>']
    if not report.conflicted_files:
        return parts + ["<p>None.</p></section>"]
    for opened, title in ((True, "Open (resolve these)"), (False, "Resolved by hand")):
        listed = [item for item in report.files_in_conflict if item.open is opened]
        if not listed:
            continue
        commits = len({c.commit for item in listed for c in item.conflicts})
        parts.append(f"<details{' open' if opened else ''}><summary>{title}: {len(listed)} file(s) in {commits} "
                     "commit(s)</summary><ul>")
        for item in listed:  # a file once, with its commits (issue 48.1)
            data = _data(" ".join(item.owners), "conflict" if opened else "resolved", " ".join(item.kinds))
            parts.append(f"<li {data}><code>{escape(item.path)}</code> ({escape(', '.join(item.kinds))}; "
                         f"{escape(item.state)}) owned by "
                         + ", ".join(f"<code>{escape(owner)}</code>" for owner in item.owners) + "; commits: "
                         + "; ".join(f"{_commit_link(report.forges.fork, c.commit)} {escape(c.summary)}"
                                     for c in item.conflicts)
                         + (f". <em>next step:</em> {escape(item.next_step)}" if opened and len(item.conflicts) > 1
                            else "") + "</li>")
        parts.append("</ul></details>")
    return parts + ["</section>"]


def _conflict(item: FileConflict, forges: Forges = Forges()) -> list[str]:
    parts = [f"<h4>conflict: <code>{escape(item.path)}</code> ({escape(', '.join(item.kinds))}; "
             f"{escape(item.state)})</h4>",
             "<ul>" + "".join(f"<li>commit {_commit_link(forges.fork, c.commit)} {escape(c.summary)} "
                              f"({escape(c.state)})"
                              + (f"; the file was <code>{escape(c.base_path)}</code> before" if c.base_path else "")
                              + "</li>" for c in item.conflicts) + "</ul>",
             f"<p><em>next step:</em> {escape(item.next_step)}.</p>"]
    return parts + [_conflict_hunks(item)]


def _conflict_hunks(item: FileConflict) -> str:
    """The file's hunks as the branch holds them (else as its last commit left them), said whose they are."""
    where = "under summary.files[].hunks"
    hunks, left_out = shown_hunks(item.hunks)
    note = f"<p><em>{escape(item.hunks_note)}</em></p>" if item.hunks_note else ""
    return note + "".join(_hunk(f"hunk {number} at line {hunk.line}", hunk, where)
                   for number, hunk in enumerate(hunks, start=1)) + _cut(left_out, where, "hunks")


def _kind_link(kind: str) -> str:
    """To the kind's entry in this page's kinds section (rendered, wherever the page is opened)."""
    return f'<a href="#{escape(kind_of(kind).anchor)}"><code>{escape(kind)}</code></a>'


def _notes(finding: Finding) -> str:
    """What a finding says beyond its message: review, trunk file, the diff and hunks (folded)."""
    parts = []
    if finding.suppressed:
        parts.append(f"<br><em>(reviewed for {escape(finding.suppressed.reviewed_for)}: "
                     f"{escape(finding.suppressed.reason)})</em>")
    if finding.expired:
        parts.append(f"<br><em>review for {escape(finding.expired.reviewed_for)} expired "
                     f"({escape(finding.expired.reason)}): the trunk counterpart changed again</em>")
    if finding.related_path:
        parts.append(f"<br><em>trunk:</em> <code>{escape(finding.related_path)}</code>")
    parts.append(_declarations(finding))
    if finding.diff:
        parts.append(f"<details><summary>upstream change</summary>{_diff(finding.diff)}</details>")
    where = "under groups[].findings[].details.hunks"
    hunks, left_out = shown_hunks(finding.details.get("hunks", []))
    for number, raw in enumerate(hunks, start=1):
        parts.append(_hunk(f"merge conflict {number}", Hunk(**raw), where))
    return "".join(parts) + _cut(left_out, where, "hunks")


def _declarations(finding: Finding) -> str:
    """A finding folded from several declarations: each with its sites, folded."""
    shown, left_out = folded_declarations(finding)
    if not shown:
        return ""
    sites = finding.details.get("sites")
    items = "".join(f"<li><code>{escape(declaration)}</code> ({count}): "
                    + ", ".join(f"<code>{escape(site)}</code>" for site in first)
                    + (f" and {count - len(first)} more" if count > len(first) else "") + "</li>"
                    for declaration, count, first in shown)
    return (f"<details><summary>{len(shown) + left_out} declarations, "
            f"{len(sites) if isinstance(sites, list) else '?'} site(s)</summary><ul>{items}</ul>"
            f"{_cut(left_out, 'under groups[].findings[].details.declarations', 'declarations')}</details>")


def _open_rows(group: Group, forges: Forges, report: Report) -> list[str]:
    rows = []
    for item in report.by_file(group.open_conflicts):  # a file once, with its commits
        conflict = item.last
        hunks = (f"<details><summary>{len(item.hunks)} hunk(s)</summary>{_conflict_hunks(item)}</details>"
                 if item.hunks else "")
        commits = "; ".join(f"commit {_commit_link(forges.fork, c.commit)} {escape(c.summary)}"
                            + (f"; the file was <code>{escape(c.base_path)}</code> before" if c.base_path else "")
                            for c in item.conflicts)
        rows.append(f'<tr {_data(group.name, "conflict", conflict.kind)}><td class="conflict">conflict</td>'
                    f'<td class="kind">{_kind_link(conflict.kind)}</td>'
                    f"<td><code>{escape(item.path)}</code><div class=\"msg\">{commits}</div>{hunks}</td>"
                    f"<td>{escape(item.next_step)}</td></tr>")
    for finding in open_findings(group):
        change = _upstream_links(forges, _details_list(finding, "prs"), _details_list(finding, "commits"))
        rows.append(f'<tr {_data(group.name, finding.severity, finding.kind)}><td class="{finding.severity}">'
                    f'{finding.severity}</td><td class="kind">{_kind_link(finding.kind)}</td>'
                    f"<td><code>{escape(finding.location())}</code><div class=\"msg\">{_message(finding.message)}"
                    + (f"<br><em>upstream:</em> {change}" if change else "")
                    + f"{_notes(finding)}</div></td><td>{escape(finding.next_step)}</td></tr>")
    return rows


def _finding(group: str, finding: Finding) -> str:
    """A folded finding (reviewed or info): one line, its notes after it."""
    severity = "reviewed" if finding.suppressed else finding.severity  # reviewed: no longer a warning
    return (f'<li {_data(group, severity, finding.kind)}><span class="{severity}">{severity}</span> '
            f"{_kind_link(finding.kind)} <code>{escape(finding.location())}</code>: {_message(finding.message)}"
            f"{_notes(finding)}</li>")


def _folded(title: str, count: int, body: str, css: str) -> list[str]:
    """A section folded away: what needs no action now."""
    if not count:
        return []
    return [f'<details class="{css}"><summary>{escape(title)} ({count})</summary>{body}</details>']


def _group(report: Report, group: Group, most: int) -> list[str]:
    parts = [f'<section id="group-{escape(group.name)}" data-group="{escape(group.name)}"><h2>{escape(group.name)} '
             f'<span class="{group.verdict}">({group.verdict})</span>{_bar(group, most)}</h2>']
    if group.gate_failed and report.gate is not None:
        parts.append(f'<p class="blocked"><strong>Test gate:</strong> <code>{escape(report.gate.command)}</code> '
                     f"{escape(report.gate.verdict())}; the failing commit changed this group's code.</p>")
    rows = _open_rows(group, report.forges, report)
    if rows:
        parts += [f"<h3>Open ({len(rows)})</h3>", '<div class="scroll"><table class="open"><tr><th>what</th>'
                  "<th>kind</th><th>file</th><th>action</th></tr>", *rows, "</table></div>"]
    resolved = "".join("".join(_conflict(item, report.forges)) for item in report.by_file(group.resolutions))
    parts += _folded("Resolved conflicts", len(group.resolutions), resolved, "resolved")
    for title, css, chosen in (("Reviewed", "reviewed", [f for f in group.findings if f.suppressed]),
                               ("Info", "info", [f for f in group.findings if f.severity == "info"
                                                 and not f.suppressed])):
        parts += _folded(title, len(chosen), "<ul>" + "".join(_finding(group.name, f) for f in chosen) + "</ul>", css)
    if not group.conflicts and not group.findings and not group.gate_failed:
        parts.append("<p>Nothing to do.</p>")
    return parts + ["</section>"]


def render_html(report: Report) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>FlagTree upgrade report</title>", f"<style>{_STYLE}</style></head><body>",
             "<h1>FlagTree upgrade report</h1>", _range(report)]
    if not report.releasable:
        parts.append('<p class="blocked" id="not-releasable"><strong>Not releasable:</strong> '
                     f"{escape('; '.join(report.not_releasable_because))}.</p>")
    parts += _table(report)
    parts += _filters(report)
    parts += _errors(report)
    if report.upgrade is not None or report.commits:  # open conflicts next to the errors: they block as errors do
        parts += _conflicted(report)
    parts += _changes(report)
    if report.gate is not None:
        parts += _gate(report.gate)
    if report.drift is not None and report.drift.applied_commit:
        parts.append(f"<p>Applied the clean overlay merges as <code>{report.drift.applied_commit[:9]}</code>.</p>")
    most = max((sum(_bar_counts(group)) for group in report.groups), default=0)
    for group in report.groups:
        parts += _group(report, group, most)
    parts += _kinds(report)
    parts.append(f"<script>{_SCRIPT}</script></body></html>")
    return "\n".join(parts) + "\n"


_SEVERITIES = ("conflict", "error", "warning", "port", "info", "reviewed", "resolved")
# Filters what carries data-kind (and the group sections); reads and writes the address's #group=..&severity=..
_SCRIPT = """(function(){var f=document.getElementById('filters');if(!f)return;f.hidden=false;
function has(list,value){return !value||(' '+(list||'')+' ').indexOf(' '+value+' ')>=0;}
function apply(){var g=f.group.value,s=f.severity.value,k=f.kind.value;
document.querySelectorAll('[data-kind]').forEach(function(e){
var a=function(n){return e.getAttribute('data-'+n);};
e.hidden=!(has(a('group'),g)&&has(a('severity'),s)&&has(a('kind'),k));});
document.querySelectorAll('section[data-group]').forEach(function(e){e.hidden=!!g&&e.getAttribute('data-group')!==g;});
var h=['group','severity','kind'].filter(function(n){return f[n].value;}).map(function(n){
return n+'='+encodeURIComponent(f[n].value);}).join('&');
if(h||location.hash)history.replaceState(null,'',h?'#'+h:location.pathname);}
location.hash.replace(/^#/,'').split('&').forEach(function(p){var kv=p.split('=');
if(f[kv[0]]&&kv[1]!==undefined){f[kv[0]].value=decodeURIComponent(kv[1]);}});
f.addEventListener('change',apply);apply();})();"""


def _kinds_used(report: Report) -> list[str]:
    found = {finding.kind for finding in report.findings}
    found |= {conflict.kind for commit in report.commits for conflict in commit.conflicts}
    return sorted(found)


def _filters(report: Report) -> list[str]:
    """The filter form: hidden until the script runs (without it, everything shows and no form is dead)."""
    def select(name: str, values: list[str], label: str) -> str:
        options = "".join(f'<option value="{escape(value)}">{escape(value)}</option>' for value in values)
        return f'<label>{label} <select name="{name}"><option value="">all</option>{options}</select></label>'
    return ['<form id="filters" hidden>', select("group", [group.name for group in report.groups], "group"),
            select("severity", list(_SEVERITIES), "severity"), select("kind", _kinds_used(report), "kind"), "</form>"]


def _kinds(report: Report) -> list[str]:
    """Every kind this report names, rendered: what the kind links point to."""
    parts = ['<section id="kinds"><h2>Finding kinds in this report</h2><dl>']
    for kind in _kinds_used(report):
        spec = BY_ID.get(kind)
        if spec is None:
            continue
        parts.append(f'<dt id="{escape(spec.anchor)}"><code>{escape(spec.id)}</code>'
                     + (f" ({escape(spec.code)})" if spec.code else "") + f" {escape(spec.severity)}</dt>"
                     f"<dd>{escape(spec.meaning)}" + (f"<br><em>what to do:</em> {escape(spec.action)}" if spec.action
                                                     else "") + "</dd>")
    return parts + ["</dl></section>"]
