"""`kinds`: print the catalogue of finding kinds (text, JSON or the Markdown of docs/KINDS.md)."""
from __future__ import annotations

import json

import click

from sync.model.kinds import CATALOGUE
from sync.report.catalogue import kinds_markdown


def kinds_json() -> str:
    return json.dumps([{"id": kind.id, "family": kind.family, "severity": kind.severity, "confidence": kind.confidence,
                        "code": kind.code, "meaning": kind.meaning, "action": kind.action, "doc": kind.doc_url}
                       for kind in CATALOGUE], indent=2) + "\n"


def kinds_text() -> str:
    return "".join(f"{kind.code or '-':6} {kind.id:32} {kind.family:9} {kind.severity:8} {kind.meaning}\n"
                   for kind in CATALOGUE)


def run_kinds(*, output_format: str) -> int:
    render = {"text": kinds_text, "json": kinds_json, "markdown": kinds_markdown}[output_format]
    click.echo(render(), nl=False)
    return 0
