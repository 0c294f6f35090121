"""Write a Report as summary.md, <group>.md, report.json, index.html and kinds.md, atomically."""
from __future__ import annotations

from pathlib import Path

from sync.support.atomic import REPORT_MARKER, publish_directory
from sync.model import Report
from sync.report.catalogue import REPORT_PAGE, kinds_markdown
from sync.report.document import render_json
from sync.report.html import render_html
from sync.report.markdown import page_name, render_group, render_summary


def report_files(report: Report) -> dict[str, str]:
    files = {"summary.md": render_summary(report), "index.html": render_html(report), REPORT_MARKER: render_json(report),
             REPORT_PAGE: kinds_markdown()}
    for group in report.groups:
        files[page_name(group.name)] = render_group(report, group)
    return files


def write_report(out: Path, report: Report) -> None:
    publish_directory(out, report_files(report))
