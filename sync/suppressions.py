"""Reviewed findings: a backend's checked-in suppressions.toml, each entry valid for one trunk version.

An entry names a finding (kind, path), the upstream tag it was reviewed for, a reason, and the blob
of the trunk counterpart at that tag. It suppresses the finding only while the counterpart at the
new tag is still that blob: when upstream changes the file again, the entry has expired and the
finding counts again. Suppressed findings stay in the report with their reason.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

from .errors import SyncError
from .model import Finding
from .git import GitTree
from .trees import FileTree, read_text


def suppressions_path(backend: str) -> str:
    return f"third_party/{backend}/backend/spec/suppressions.toml"


@dataclass(frozen=True)
class Suppression:
    kind: str
    path: str
    reviewed_for: str
    trunk: str
    trunk_blob: str
    reason: str

    def render(self) -> str:
        fields = [("kind", self.kind), ("path", self.path), ("reviewed_for", self.reviewed_for),
                  ("trunk", self.trunk), ("trunk_blob", self.trunk_blob), ("reason", self.reason)]
        return "[[suppress]]\n" + "".join(f"{key} = {_quote(value)}\n" for key, value in fields)


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def parse_suppressions(text: str, where: str) -> list[Suppression]:
    try:
        entries = tomllib.loads(text).get("suppress", [])
    except tomllib.TOMLDecodeError as exc:
        raise SyncError(f"{where}: {exc}") from exc
    found = []
    for number, entry in enumerate(entries, start=1):
        try:
            found.append(Suppression(**{key: str(entry[key]) for key in Suppression.__dataclass_fields__}))
        except KeyError as exc:
            raise SyncError(f"{where}: entry {number} lacks {exc.args[0]}") from exc
    return found


def load_suppressions(tree: FileTree, backends: list[str]) -> dict[tuple[str, str], Suppression]:
    table = {}
    for backend in backends:
        path = suppressions_path(backend)
        text = read_text(tree, path)
        if text:
            for entry in parse_suppressions(text, path):
                table[(entry.kind, entry.path)] = entry
    return table


def trunk_counterpart(finding: Finding) -> str:
    return finding.related_path or finding.path


def apply_suppressions(findings: list[Finding], fork: FileTree, new: GitTree, backends: list[str]) -> list[Finding]:
    table = load_suppressions(fork, backends)
    if not table:
        return findings
    out = []
    for finding in findings:
        entry = table.get((finding.kind, finding.path))
        if entry is None:
            out.append(finding)
            continue
        current = new.blob_id(entry.trunk)
        note = {"reason": entry.reason, "reviewed_for": entry.reviewed_for}
        if current is not None and str(current) == entry.trunk_blob:
            out.append(replace(finding, suppressed=note))
        else:  # upstream changed the counterpart again since the review
            out.append(replace(finding, details={**finding.details, "suppression_expired": note}))
    return out


def add_suppression(work_tree: Path, finding: Finding, new: GitTree, reviewed_for: str, reason: str) -> Path:
    """Append an entry for finding to its backend's suppressions.toml in the work tree."""
    if not finding.backend:
        raise SyncError("only backend findings can be suppressed")
    trunk = trunk_counterpart(finding)
    blob = new.blob_id(trunk)
    if blob is None:
        raise SyncError(f"{trunk} does not exist at {reviewed_for}: a suppression needs a trunk file to expire on")
    target = work_tree / suppressions_path(finding.backend)
    existing = target.read_text(encoding="utf-8") if target.exists() else \
        "# Findings reviewed by the backend maintainer; see flagtree-sync suppress --help.\n"
    if (finding.kind, finding.path) in {(e.kind, e.path) for e in parse_suppressions(existing, str(target))}:
        raise SyncError(f"{finding.kind} on {finding.path} is already suppressed in {target}")
    entry = Suppression(finding.kind, finding.path, reviewed_for, trunk, str(blob), reason)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(existing.rstrip("\n") + "\n\n" + entry.render(), encoding="utf-8")
    return target
