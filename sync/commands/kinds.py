"""`kinds`: print the catalogue of finding kinds (text, JSON or the Markdown of docs/KINDS.md)."""
from __future__ import annotations

import json

import click

from ..kinds import CATALOGUE, FAMILIES


def kinds_json() -> str:
    return json.dumps([{"id": kind.id, "family": kind.family, "severity": kind.severity, "confidence": kind.confidence,
                        "code": kind.code, "meaning": kind.meaning, "action": kind.action, "doc": kind.doc_url}
                       for kind in CATALOGUE], indent=2) + "\n"


def kinds_text() -> str:
    return "".join(f"{kind.code or '-':6} {kind.id:32} {kind.family:9} {kind.severity:8} {kind.meaning}\n"
                   for kind in CATALOGUE)


def kinds_markdown() -> str:
    """docs/KINDS.md: one heading per kind, the anchors that reports link to."""
    lines = ["# Finding kinds", "", "Generated from `sync/kinds.py` by `flagtree-sync kinds --format markdown`; "
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


def run_kinds(output_format: str) -> int:
    render = {"text": kinds_text, "json": kinds_json, "markdown": kinds_markdown}[output_format]
    click.echo(render(), nl=False)
    return 0
