"""Write a Report as summary.md, <group>.md, report.json, index.html and kinds.md, atomically."""
from __future__ import annotations

from pathlib import Path

from sync.support.atomic import REPORT_MARKER, publish_directory
from sync.support.terminal import printable_lines
from sync.model import Report
from sync.report.catalogue import REPORT_PAGE, kinds_markdown
from sync.report.document import render_json
from sync.report.html import render_html
from sync.report.markdown import page_name, render_group, render_summary


def report_files(report: Report) -> dict[str, str]:
    """Every file's text with its control characters escaped (issue 47.12): `cat summary.md` must not retitle a
    terminal or plant a link from a commit subject. Inside report.json's strings the escape is JSON's own, so
    the document keeps the same text."""
    files = {"summary.md": render_summary(report), "index.html": render_html(report), REPORT_MARKER: render_json(report),
             REPORT_PAGE: kinds_markdown()}
    for group in report.groups:
        files[page_name(group.name)] = render_group(report, group)
    return {name: printable_lines(text) for name, text in files.items()}


def write_report(out: Path, report: Report) -> None:
    publish_directory(out, report_files(report))
