"""GitHub Actions workflow commands: one `::error file=...,line=...::` annotation per finding.

The level follows the kind's severity (info is a notice); the title names the rule and the kind, and
the message ends with what to do, both from the kinds catalogue. A reviewed finding is a notice that
says so. Values are escaped as the runner expects, so repository text cannot start a command of its own.
"""
from __future__ import annotations

from typing import Iterable

from sync.model import Finding

COMMANDS = {"error": "error", "warning": "warning", "port": "warning", "info": "notice"}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    command = "notice" if finding.suppressed else COMMANDS[finding.severity]
    title = f"{finding.code} {finding.kind}" if finding.code else finding.kind
    properties = [f"file={_property(finding.path)}"]
    if finding.line:
        properties.append(f"line={finding.line}")
    properties.append(f"title={_property(title)}")
    message = finding.message
    if finding.suppressed:
        message += f" (reviewed: {finding.suppressed.reason})"
    elif finding.next_step:
        message += f" [what to do: {finding.next_step}; {finding.spec.doc_url}]"
    return f"::{command} {','.join(properties)}::{_data(message)}"


def render_github(findings: Iterable[Finding]) -> str:
    return "".join(annotation(finding) + "\n" for finding in findings)
