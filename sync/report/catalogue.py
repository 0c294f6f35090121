"""The catalogue of finding kinds as Markdown: docs/KINDS.md, and kinds.md in every report directory
(the page the reports' kind links point to, so that they work wherever the report is opened)."""
from __future__ import annotations

from sync.model.kinds import CATALOGUE, FAMILIES

REPORT_PAGE = "kinds.md"


def kinds_markdown() -> str:
    """docs/KINDS.md: one heading per kind, the anchors that reports link to."""
    lines = ["# Finding kinds", "", "Generated from `sync/model/kinds.py` by `flagtree-sync kinds --format markdown`; "
             "a test fails when this file is stale.", ""]
    for family in FAMILIES:
        members = [kind for kind in CATALOGUE if kind.family == family]
        if not members:
            continue
        lines += [f"## {family}", ""]
        for kind in members:
            lines += [f'<a id="{kind.anchor}"></a>', f"### `{kind.id}`" + (f" ({kind.code})" if kind.code else ""), "",
                      f"- severity: {kind.severity}; confidence: {kind.confidence}", f"- meaning: {kind.meaning}"]
            if kind.action:
                lines.append(f"- what to do: {kind.action}")
            lines.append("")
    return "\n".join(lines)


def report_link(anchor: str) -> str:
    """A kind's link from a page of the report directory."""
    return f"{REPORT_PAGE}#{anchor}"
