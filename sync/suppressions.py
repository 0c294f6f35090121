"""Reviewed findings: a backend's checked-in suppressions.toml, each entry valid for one trunk version.

An entry names a finding (kind, path), the upstream tag it was reviewed for, a reason, and the blob
of the trunk counterpart at that tag. It suppresses the finding only while the counterpart at the
new tag is still that blob: when upstream changes the file again, the entry has expired and the
finding counts again. Suppressed findings stay in the report with their reason.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

import tomlkit

from .errors import SyncError
from .git import GitTree
from .model import Finding, Review
from .tomlfiles import OID, Table, Text, load_toml, work_tree_path, write_in_work_tree
from .trees import FileTree, read_text

NEW_FILE_HEADER = "Findings reviewed by the backend maintainer; see flagtree-sync suppress --help."


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

    def table(self) -> tomlkit.items.Table:
        entry = tomlkit.table()
        for name in FIELDS:
            entry[name] = getattr(self, name)
        return entry


FIELDS = tuple(f.name for f in fields(Suppression))
SCHEMA = Table(arrays={"suppress": Table(fields={
    name: Text(pattern=OID, meaning="40 hex digits") if name == "trunk_blob" else Text() for name in FIELDS})})


def parse_suppressions(text: str, where: str) -> list[Suppression]:
    """Every entry, checked against the schema: a bad file is a TomlFileError naming its line."""
    entries = load_toml(text, where, SCHEMA).data.get("suppress", [])
    return [Suppression(**{name: entry[name] for name in FIELDS}) for entry in entries]


def append_suppression(existing: str | None, entry: Suppression) -> str:
    """existing (a reviewed file, comments and order kept) with entry added at the end."""
    document = tomlkit.parse(existing) if existing else tomlkit.document()
    if not existing:
        document.add(tomlkit.comment(NEW_FILE_HEADER))
        document.add(tomlkit.nl())
    entries = document.get("suppress")
    if isinstance(entries, tomlkit.items.AoT):
        if entries:
            entries[-1].add(tomlkit.nl())  # a blank line between the last reviewed entry and the new one
        entries.append(entry.table())
    elif isinstance(entries, tomlkit.items.Array):  # written by hand as suppress = [{...}, ...]
        entries.append({name: getattr(entry, name) for name in FIELDS})
    else:
        entries = tomlkit.aot()
        entries.append(entry.table())
        document.append("suppress", entries)
    return tomlkit.dumps(document)


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
        note = Review(entry.reason, entry.reviewed_for)
        if current is not None and str(current) == entry.trunk_blob:
            out.append(finding.with_review(suppressed=note))
        else:  # upstream changed the counterpart again since the review
            out.append(finding.with_review(expired=note))
    return out


def add_suppression(work_tree: Path, finding: Finding, new: GitTree, reviewed_for: str, reason: str) -> Path:
    """Append an entry for finding to its backend's suppressions.toml in the work tree."""
    if not finding.backend:
        raise SyncError("only backend findings can be suppressed")
    trunk = trunk_counterpart(finding)
    blob = new.blob_id(trunk)
    if blob is None:
        raise SyncError(f"{trunk} does not exist at {reviewed_for}: a suppression needs a trunk file to expire on")
    rel = suppressions_path(finding.backend)
    target = work_tree_path(work_tree, rel)  # refuse a symlink before reading through it
    text = target.read_text(encoding="utf-8", errors="replace") if target.exists() else None
    if text is not None and (finding.kind, finding.path) in {(e.kind, e.path) for e in parse_suppressions(text, rel)}:
        raise SyncError(f"{finding.kind} on {finding.path} is already suppressed in {rel}")
    if not reason.strip():
        raise SyncError("--reason must say why the finding needs no change")
    entry = Suppression(finding.kind, finding.path, reviewed_for, trunk, str(blob), reason)
    updated = append_suppression(text, entry)
    parse_suppressions(updated, rel)  # never write a file the next run would refuse to read
    return write_in_work_tree(work_tree, rel, updated)
