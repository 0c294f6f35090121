"""Write the report document as summary.md, <group>.md, report.json and index.html, atomically."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..atomic import REPORT_MARKER, publish_directory
from .html import render_html
from .markdown import render_group, render_summary


def report_files(document: dict[str, Any]) -> dict[str, str]:
    files = {"summary.md": render_summary(document), "index.html": render_html(document),
             REPORT_MARKER: json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n"}
    for group in document["groups"]:
        files[f"{group['name']}.md"] = render_group(document, group)
    return files


def write_report(out: Path, document: dict[str, Any]) -> None:
    publish_directory(out, report_files(document))
