"""A static HTML page of the report: no server, no network assets, diffs folded in <details>."""
from __future__ import annotations

from html import escape
from typing import Any

from .markdown import _range_line

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
.blocked{color:#b00020}.needs-review{color:#a05a00}.clean{color:#1b7e2a}
pre{background:#f6f6f6;padding:.5rem;overflow:auto}details{margin:.3rem 0 .8rem 1rem}
.error{color:#b00020}.warning{color:#a05a00}.info{color:#555}
"""


def _pre(text: str) -> str:
    return f"<pre>{escape(text)}</pre>"


def _hunk(title: str, hunk: dict[str, Any]) -> str:
    return (f"<details><summary>{escape(title)}</summary><p>upgraded side</p>{_pre(hunk['ours'])}"
            f"<p>base</p>{_pre(hunk['base'])}<p>FlagTree side</p>{_pre(hunk['theirs'])}</details>")


def render_html(document: dict[str, Any]) -> str:
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             "<title>FlagTree upgrade report</title>", f"<style>{_STYLE}</style></head><body>",
             "<h1>FlagTree upgrade report</h1>", f"<p>{escape(_range_line(document).replace('`', ''))}</p>"]
    upgrade = document.get("upgrade")
    if upgrade and not upgrade["releasable"]:
        parts.append('<p class="blocked"><strong>Not releasable:</strong> conflict markers were committed.</p>')
    parts.append("<table><tr><th>group</th><th>kind</th><th>verdict</th><th>conflicts</th><th>errors</th>"
                 "<th>warnings</th><th>info</th><th>reviewed</th></tr>")
    for group in document["groups"]:
        counts = group["counts"]
        parts.append(f'<tr><td><a href="#{escape(group["name"])}">{escape(group["name"])}</a></td>'
                     f'<td>{group["kind"]}</td><td class="{group["verdict"]}">{group["verdict"]}</td>'
                     f'<td>{counts["conflicts"]}</td><td>{counts["error"]}</td><td>{counts["warning"]}</td>'
                     f'<td>{counts["info"]}</td><td>{counts["suppressed"]}</td></tr>')
    parts.append("</table>")
    for group in document["groups"]:
        parts.append(f'<section id="{escape(group["name"])}"><h2>{escape(group["name"])} '
                     f'<span class="{group["verdict"]}">({group["verdict"]})</span></h2>')
        for conflict in group["conflicts"]:
            parts.append(f"<h3>conflict: {escape(conflict['path'])} ({escape(conflict['kind'])})</h3>"
                         f"<p>commit {escape(conflict['commit'][:9])} {escape(conflict['summary'])}</p>")
            for number, hunk in enumerate(conflict["hunks"], start=1):
                parts.append(_hunk(f"hunk {number} at line {hunk['line']}", hunk))
        if group["findings"]:
            parts.append("<ul>")
            for finding in group["findings"]:
                where = f"{finding['path']}:{finding['line']}" if finding.get("line") else finding["path"]
                parts.append(f'<li><span class="{finding["severity"]}">{finding["severity"]}</span> '
                             f"<code>{escape(finding['kind'])}</code> <code>{escape(where)}</code>: "
                             f"{escape(finding['message'])}"
                             + (f" <em>(reviewed for {escape(finding['suppressed']['reviewed_for'])}: "
                                f"{escape(finding['suppressed']['reason'])})</em>" if finding.get("suppressed") else "")
                             + (f"<br><em>action:</em> {escape(finding['action'])}" if finding.get("action") else ""))
                if finding.get("diff"):
                    parts.append(f"<details><summary>upstream diff</summary>{_pre(finding['diff'])}</details>")
                for number, hunk in enumerate(finding.get("details", {}).get("hunks", []), start=1):
                    parts.append(_hunk(f"merge conflict {number}", hunk))
                parts.append("</li>")
            parts.append("</ul>")
        if not group["conflicts"] and not group["findings"]:
            parts.append("<p>Nothing to do.</p>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
