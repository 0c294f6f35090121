"""check's baseline: the findings a tree had when it was recorded, so that only new ones fail (as linters do).

A baseline entry is rule + path + a stable subject of the finding: the text of the line it points at (stripped),
else the file it relates to, else nothing; never its message, which a release may reword (issue 48.5: a
reworded message turned 224 old findings "new"). Line numbers are in neither, so an entry still matches after
lines above it moved; an edit of the flagged line itself, or a finding of another rule or file, is new. A key
that occurs n times matches at most n findings. Baselines of schema 1 (keyed by a fingerprint of the message)
are still read; --write-baseline writes schema 2.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from sync.support.atomic import write_text_atomic
from sync.support.terminal import printable_lines
from sync.errors import SyncError
from sync.model import Finding, Review

SCHEMA = "flagtree-sync/check-baseline/2"
SCHEMA_V1 = "flagtree-sync/check-baseline/1"  # keyed by a fingerprint of the message: still read
DEFAULT = Path(".flagtree-sync") / "check-baseline.json"  # read from PATH when present
_NUMBER = re.compile(r"\d+")
_MAX_LINE_FILE = 32 * 1024 * 1024  # a larger file's line text is left out of its fingerprint

Key = tuple[str, str, str]  # rule, path, subject (schema 1: fingerprint)


@dataclass(frozen=True)
class Baseline:
    schema: str
    keys: Counter[Key]


@dataclass(frozen=True)
class Applied:
    findings: tuple[Finding, ...]  # the ones in the baseline marked as reviewed by it
    known: int  # how many findings the baseline matched
    stale: int  # entries no finding matched any more (fixed): rewrite the baseline to drop them


def rule_of(finding: Finding) -> str:
    return finding.code or finding.kind


def _line_text(root: Path, finding: Finding) -> str:
    """The flagged line's text, stripped; "" when there is no line or no readable file inside root."""
    if not finding.line:
        return ""
    try:
        path = (root / finding.path).resolve()
        if not path.is_relative_to(root.resolve()) or not path.is_file() or path.stat().st_size > _MAX_LINE_FILE:
            return ""
        lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""


def subject(root: Path, finding: Finding) -> str:
    """What the finding is about, stable across rewordings: its line's text, else its related file."""
    return _line_text(root, finding) or finding.related_path or ""


def fingerprint(root: Path, finding: Finding) -> str:
    """Schema 1's key: the message with every number left out, and the line's text."""
    text = "\0".join((rule_of(finding), finding.path, _NUMBER.sub("#", finding.message), _line_text(root, finding)))
    return hashlib.sha256(text.encode("utf-8", errors="surrogateescape")).hexdigest()[:20]


def key(root: Path, finding: Finding, schema: str = SCHEMA) -> Key:
    third = fingerprint(root, finding) if schema == SCHEMA_V1 else subject(root, finding)
    return rule_of(finding), finding.path, third


def render_baseline(root: Path, findings: Iterable[Finding]) -> str:
    """The message is kept for a reader only: it is no part of the key."""
    entries = sorted(({"rule": rule_of(f), "path": f.path, "subject": subject(root, f), "message": f.message}
                      for f in findings), key=lambda e: (e["rule"], e["path"], e["subject"], e["message"]))
    return json.dumps({"schema": SCHEMA, "findings": entries}, indent=2, ensure_ascii=False) + "\n"


def write_baseline(file: Path, root: Path, findings: Iterable[Finding]) -> None:
    if file.is_symlink():  # never write through a planted link
        raise SyncError(f"{file} is a symbolic link: refusing to write the baseline through it")
    write_text_atomic(file, printable_lines(render_baseline(root, findings)))  # JSON's own escapes: same text


def load_baseline(file: Path) -> Baseline:
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SyncError(f"no check baseline at {file} (write one with check --write-baseline {file})") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SyncError(f"{file}: not a readable check baseline: {exc}") from None
    entries = document.get("findings") if isinstance(document, dict) else None
    schema = document.get("schema") if isinstance(document, dict) else None
    if schema not in (SCHEMA, SCHEMA_V1) or not isinstance(entries, list):
        raise SyncError(f"{file}: not a check baseline (expected schema {SCHEMA} and a findings list)")
    third = "fingerprint" if schema == SCHEMA_V1 else "subject"
    keys = Counter(_entry_key(file, number, entry, third) for number, entry in enumerate(entries))
    return Baseline(str(schema), keys)


def _entry_key(file: Path, number: int, entry: Any, third: str) -> Key:
    fields = [entry.get(name) if isinstance(entry, dict) else None for name in ("rule", "path", third)]
    strings = [value for value in fields if isinstance(value, str)]
    if len(strings) != 3 or not strings[0] or not strings[1] or (third == "fingerprint" and not strings[2]):
        raise SyncError(f"{file}: findings[{number}] needs the strings rule, path and {third}")
    return strings[0], strings[1], strings[2]


def apply_baseline(root: Path, findings: Iterable[Finding], known: Baseline, source: str) -> Applied:
    """Each finding the baseline holds becomes reviewed (it no longer fails check); the rest stay as they are."""
    left = Counter(known.keys)
    marked = []
    matched = 0
    for finding in findings:
        found = key(root, finding, known.schema)
        if left[found] > 0 and finding.suppressed is None:
            left[found] -= 1
            matched += 1
            finding = finding.with_review(Review("in the check baseline: it was there before", source))
        marked.append(finding)
    return Applied(tuple(marked), matched, sum(left.values()))
