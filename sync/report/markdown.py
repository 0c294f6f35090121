"""Markdown renderings of the report document: the release summary and one page per group."""
from __future__ import annotations

from typing import Any


def _range_line(document: dict[str, Any]) -> str:
    upgrade = document.get("upgrade")
    if upgrade:
        return (f"Replayed `{upgrade['from']['ref']}..{upgrade['source']['ref']}` ({upgrade['commits']} commits, "
                f"{upgrade['empty']} already upstream) onto `{upgrade['onto']['ref']}` as branch "
                f"`{upgrade['branch']}` (policy `{upgrade['policy']}`).")
    drift = document.get("drift", {})
    return f"Drift of `{drift.get('branch', '?')}` from `{drift.get('from', '?')}` to `{drift.get('onto', '?')}`."


def render_summary(document: dict[str, Any]) -> str:
    lines = ["# FlagTree upgrade summary", "", _range_line(document), ""]
    upgrade = document.get("upgrade")
    if upgrade and not upgrade["releasable"]:
        lines += ["**Not releasable:** conflicts were committed with markers; resolve them before release.", ""]
    lines += ["| group | kind | verdict | conflicts | errors | warnings | info | reviewed |",
              "|---|---|---|---:|---:|---:|---:|---:|"]
    for group in document["groups"]:
        counts = group["counts"]
        lines.append(f"| [{group['name']}]({group['name']}.md) | {group['kind']} | {group['verdict']} | "
                     f"{counts['conflicts']} | {counts['error']} | {counts['warning']} | {counts['info']} | "
                     f"{counts['suppressed']} |")
    gate = document.get("gate")
    if gate:
        verdict = "passed" if gate["passed"] else (
            "fails on the new tag itself" if gate["baseline_failed"]
            else f"first fails at `{gate['first_failure']['commit'][:9]}` ({gate['first_failure']['label']})")
        lines += [f"Test gate `{gate['command']}` (at {gate['at']}): {verdict}.", ""]
    files = document["summary"]["conflicted_files"]
    lines += ["", f"Conflicted files ({len(files)}): " + (", ".join(f"`{f}`" for f in files) or "none"), ""]
    return "\n".join(lines)


def _fence(text: str, language: str = "") -> list[str]:
    fence = "````" if "```" in text else "```"
    return [f"{fence}{language}", text.rstrip("\n"), fence]


def _hunk_lines(hunk: dict[str, Any]) -> list[str]:
    return ["Upgraded side:", *_fence(hunk["ours"]), "Base:", *_fence(hunk["base"]),
            "FlagTree side:", *_fence(hunk["theirs"])]


def render_group(document: dict[str, Any], group: dict[str, Any]) -> str:
    lines = [f"# {group['name']}: {group['verdict']}", "", _range_line(document), ""]
    if group["conflicts"]:
        lines += ["## Conflicts while replaying", ""]
        for conflict in group["conflicts"]:
            lines.append(f"### `{conflict['path']}` ({conflict['kind']}, resolved: {conflict['resolution']})")
            lines += ["", f"Commit `{conflict['commit'][:9]}` {conflict['summary']}", ""]
            for number, hunk in enumerate(conflict["hunks"], start=1):
                lines += [f"Hunk {number} at line {hunk['line']}:", "", *_hunk_lines(hunk), ""]
    if group["findings"]:
        lines += ["## Drift findings", ""]
        for finding in group["findings"]:
            where = f"{finding['path']}:{finding['line']}" if finding.get("line") else finding["path"]
            reviewed = finding.get("suppressed")
            mark = f" (reviewed for {reviewed['reviewed_for']}: {reviewed['reason']})" if reviewed else ""
            lines.append(f"- **{finding['severity']}** `{finding['kind']}` `{where}`: {finding['message']}{mark}")
            expired = finding.get("details", {}).get("suppression_expired")
            if expired:
                lines.append(f"  - review for {expired['reviewed_for']} expired: the trunk counterpart changed again")
            if finding.get("action"):
                lines.append(f"  - action: {finding['action']}")
            if finding.get("diff"):
                lines += ["", "Upstream change:", "", *_fence(finding["diff"], "diff"), ""]
            for number, hunk in enumerate(finding.get("details", {}).get("hunks", []), start=1):
                lines += [f"Merge conflict {number}:", *_hunk_lines(hunk), ""]
    if not group["conflicts"] and not group["findings"]:
        lines.append("Nothing to do.")
    return "\n".join(lines) + "\n"
