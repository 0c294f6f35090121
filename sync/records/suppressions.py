"""Reviewed findings: a backend's checked-in suppressions.toml, each entry valid for one trunk version.

An entry names a finding (kind, path, and a subject where one file holds several findings of a kind:
the macro, function, key, callee or CMake entry it is about), the upstream tag it was reviewed for,
a reason, and what it expires on: the blob of the trunk counterpart at that tag, so that the entry
holds only while the counterpart at the new tag is still that blob; or, for a finding with no trunk
file at the new tag (a macro no trunk code tests, a call site in a file upstream deleted), the tree
of that tag, so that the entry holds for that upstream release only. When it expires the finding
counts again. Suppressed findings stay in the report with their reason.

A finding per upstream change (symbol-removed, call-signature, op-verifier-changed: details.sites, path:line,
its own place first) is reviewed when every file among its sites has an entry of its kind and subject (or
none): `suppress` writes one entry per such file, and the entries of the per-site findings it replaced (one
per call, each with its own callee spelling, details.callees) still count, so a site added in another file
opens it again. A finding folded from several declarations (details.declarations) is reviewed when each
declaration is, as its own finding was: the entries written for those findings still count.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

import tomlkit

from sync.errors import SyncError
from sync.git import GitTree
from sync.model import Finding, Review
from sync.records.tomlfiles import OID, Table, Text, load_toml, work_tree_path, write_in_work_tree
from sync.facts.trees import FileTree, read_text
from sync.facts.layout import backend_spec_dir, is_third_party

NEW_FILE_HEADER = "Findings reviewed by the backend maintainer; see flagtree-sync suppress --help."
TRUNK_HEADER = ("Findings of no backend (shared-trunk) reviewed by FlagTree's maintainers; "
                "see flagtree-sync suppress --help.")
# Reviews of findings no backend owns (shared-trunk): a warning that asks for a check must have somewhere to be
# recorded once checked, or drift can never exit 0 (issue 48). Beside check's baseline.
TRUNK_SUPPRESSIONS = ".flagtree-sync/suppressions.toml"


def suppressions_path(backend: str) -> str:
    return f"{backend_spec_dir(backend)}/suppressions.toml"


def review_file(finding: Finding) -> str:
    """Where a finding's review lives: its backend's suppressions.toml, or the trunk one for no backend."""
    return suppressions_path(finding.backend) if finding.backend else TRUNK_SUPPRESSIONS


# Which detail of a finding tells it from the other findings of its kind in the same file.
# "op" (op-verifier-changed) and "declaration" (call-signature, symbol kinds) come last: an entry written with
# an earlier one still names the same finding.
SUBJECT_DETAILS = ("macro", "function", "key", "callee", "entry", "op", "declaration")


def subject_of(finding: Finding) -> str:
    for name in SUBJECT_DETAILS:
        value = finding.details.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


@dataclass(frozen=True)
class Suppression:
    kind: str
    path: str
    reviewed_for: str
    trunk: str  # the trunk counterpart whose blob the entry expires on; "" when it expires on upstream_tree
    trunk_blob: str
    reason: str
    subject: str = ""  # which finding of the kind on path: its macro, function, key, callee or entry
    upstream_tree: str = ""  # the tree of the tag it was reviewed for, when there is no trunk counterpart there

    @property
    def key(self) -> tuple[str, str, str]:
        return self.kind, self.path, self.subject

    def written(self) -> dict[str, str]:
        """The entry as written: empty optional fields are left out."""
        return {name: getattr(self, name) for name in FIELDS if getattr(self, name) or name not in OPTIONAL}

    def table(self) -> tomlkit.items.Table:
        entry = tomlkit.table()
        for name, value in self.written().items():
            entry[name] = value
        return entry

    def holds_at(self, new: GitTree) -> bool:
        """Whether upstream is still as reviewed: the counterpart's blob, or the whole tag's tree."""
        if self.trunk:
            current = new.blob_id(self.trunk)
            return current is not None and str(current) == self.trunk_blob
        return str(new.tree.id) == self.upstream_tree


FIELDS = ("kind", "path", "subject", "reviewed_for", "trunk", "trunk_blob", "upstream_tree", "reason")  # as written
assert set(FIELDS) == {f.name for f in fields(Suppression)}
OPTIONAL = ("subject", "trunk", "trunk_blob", "upstream_tree")
_HEX = Text(pattern=OID, meaning="40 hex digits", required=False)
SCHEMA = Table(arrays={"suppress": Table(fields={
    name: _HEX if name in ("trunk_blob", "upstream_tree") else Text(required=name not in OPTIONAL)
    for name in FIELDS})})


def parse_suppressions(text: str, where: str) -> list[Suppression]:
    """Every entry, checked against the schema: a bad file is a TomlFileError naming its line."""
    document = load_toml(text, where, SCHEMA)
    entries = document.data.get("suppress", [])
    for number, entry in enumerate(entries):
        missing = [name for name in ("trunk", "trunk_blob") if name not in entry]
        if missing and "upstream_tree" not in entry:  # what it expires on: a trunk blob, or the tag's tree
            raise document.error(f"[[suppress]] entry {number + 1}: lacks {' and '.join(missing)}"
                                 + (" (or upstream_tree)" if len(missing) == 2 else ""), "suppress", number)
    return [Suppression(**{name: entry.get(name, "") for name in FIELDS}) for entry in entries]


def append_suppression(existing: str | None, entry: Suppression, header: str = NEW_FILE_HEADER) -> str:
    """existing (a reviewed file, comments and order kept) with entry added at the end."""
    document = tomlkit.parse(existing) if existing else tomlkit.document()
    if not existing:
        document.add(tomlkit.comment(header))
        document.add(tomlkit.nl())
    entries = document.get("suppress")
    if isinstance(entries, tomlkit.items.AoT):
        if entries:
            entries[-1].add(tomlkit.nl())  # a blank line between the last reviewed entry and the new one
        entries.append(entry.table())
    elif isinstance(entries, tomlkit.items.Array):  # written by hand as suppress = [{...}, ...]
        entries.append(entry.written())
    else:
        entries = tomlkit.aot()
        entries.append(entry.table())
        document.append("suppress", entries)
    return tomlkit.dumps(document)


def load_suppressions(tree: FileTree, backends: list[str],
                      trunk: bool = False) -> dict[tuple[str, str, str], Suppression]:
    """The entries of the backends' files; with trunk, of the trunk file alone (findings of no backend)."""
    table = {}
    for path in [TRUNK_SUPPRESSIONS] if trunk else [suppressions_path(backend) for backend in backends]:
        text = read_text(tree, path)
        if text:
            for entry in parse_suppressions(text, path):
                table[entry.key] = entry
    return table


def site_paths(finding: Finding) -> list[str]:
    """The files a finding stands for: its own, then those of its other sites (a finding per upstream change)."""
    sites = finding.details.get("sites")
    listed = [str(site).rpartition(":")[0] or str(site) for site in sites] if isinstance(sites, list) else []
    return list(dict.fromkeys([finding.path, *listed]))


def _subjects(finding: Finding) -> list[str]:
    """The subjects an entry may name it by: its own, each site's spelling of it, and none."""
    callees = finding.details.get("callees")
    spelled = [str(callee) for callee in callees] if isinstance(callees, list) else []
    return list(dict.fromkeys([subject_of(finding), *spelled, ""]))


def parts_of(finding: Finding) -> list[Finding]:
    """A finding folded from those of several declarations (details.declarations, sync/drift/perchange.py):
    each declaration as the finding it was (its first site's file, its sites, its subjects and trunk file);
    any other finding: itself."""
    parts = finding.details.get("declarations")
    if not isinstance(parts, list) or not parts:
        return [finding]
    out = []
    for part in parts:
        sites = [str(site) for site in part.get("sites") or []]
        path = sites[0].rpartition(":")[0] if sites else finding.path
        out.append(replace(finding, path=path or finding.path, related_path=part.get("related_path"),
                           details={"sites": sites, "callees": list(part.get("subjects") or [])}))
    return out


def subjects_of(finding: Finding) -> list[str]:
    """What `suppress --subject` may name a finding by: its subject, or each folded declaration's."""
    parts = parts_of(finding)
    if parts == [finding]:
        return [subject_of(finding)]
    return list(dict.fromkeys(subject for part in parts for subject in _subjects(part) if subject)) or [""]


def entries_for(table: dict[tuple[str, str, str], Suppression], finding: Finding) -> list[Suppression]:
    """The entries that review finding, its own file's first; one written without a subject covers every
    finding of its kind and path. A finding whose sites span several files needs an entry for each file:
    [] when one has none. A folded finding needs them for each of its declarations, as the finding of that
    declaration did."""
    parts = parts_of(finding)
    if parts != [finding]:
        found = [entries_for(table, part) for part in parts]
        if not all(found):
            return []
        own = [entry for entries in found for entry in entries if entry.path == finding.path]
        return list(dict.fromkeys([*own, *(entry for entries in found for entry in entries)]))
    entries = []
    for path in site_paths(finding):
        entry = next((table[key] for subject in _subjects(finding) if (key := (finding.kind, path, subject)) in table),
                     None)
        if entry is None:
            return []
        entries.append(entry)
    return entries


def entry_for(table: dict[tuple[str, str, str], Suppression], finding: Finding) -> Suppression | None:
    """The entry that reviews finding (its own file's), None when some file among its sites has none."""
    entries = entries_for(table, finding)
    return entries[0] if entries else None


def trunk_counterpart(finding: Finding) -> str:
    return finding.related_path or finding.path


def apply_suppressions(findings: list[Finding], fork: FileTree, new: GitTree, backends: list[str]) -> list[Finding]:
    """Mark the reviewed findings; the reviews of every backend a finding belongs to are read, spec tree or
    not (`suppress` writes third_party/<b>/backend/spec/suppressions.toml for any of them)."""
    table = load_suppressions(fork, sorted(set(backends) | {finding.backend for finding in findings if finding.backend}))
    trunk_table = load_suppressions(fork, [], trunk=True)
    if not table and not trunk_table:
        return findings
    out = []
    for finding in findings:
        entries = entries_for(table if finding.backend else trunk_table, finding)
        if not entries:
            out.append(finding)
            continue
        expired = next((entry for entry in entries if not entry.holds_at(new)), None)
        if expired is None:
            out.append(finding.with_review(suppressed=Review(entries[0].reason, entries[0].reviewed_for)))
        else:  # upstream changed the counterpart (or moved to another release) since the review
            out.append(finding.with_review(expired=Review(expired.reason, expired.reviewed_for)))
    return out


def add_suppression(work_tree: Path, finding: Finding, new: GitTree, reviewed_for: str, reason: str,
                    only_subject: str | None = None) -> Path:
    """Append an entry for finding to its backend's suppressions.toml in the work tree."""
    rel = _backend_file(finding)
    target = work_tree_path(work_tree, rel)  # refuse a symlink before reading through it
    text = target.read_text(encoding="utf-8", errors="replace") if target.exists() else None
    return write_in_work_tree(work_tree, rel, with_suppression(text, finding, new, reviewed_for, reason, only_subject))


def added_suppression(branch: GitTree, finding: Finding, new: GitTree, reviewed_for: str,
                      reason: str, only_subject: str | None = None) -> tuple[str, str]:
    """(path, text): the backend's suppressions.toml of a branch's tree with an entry for finding appended,
    for a commit made in memory. A symlink committed there is refused, as in a work tree."""
    rel = _backend_file(finding)
    parts = rel.split("/")
    for end in range(1, len(parts) + 1):  # the file or a directory on the way
        if branch.is_symlink("/".join(parts[:end])):
            raise SyncError(f"{'/'.join(parts[:end])} is a symlink on {branch.label}: refusing to write {rel} "
                            "through it")
    data = branch.read(rel)
    text = data.decode("utf-8", errors="replace") if data is not None else None
    return rel, with_suppression(text, finding, new, reviewed_for, reason, only_subject)


def _backend_file(finding: Finding) -> str:
    return review_file(finding)


def with_suppression(text: str | None, finding: Finding, new: GitTree, reviewed_for: str, reason: str,
                     only_subject: str | None = None) -> str:
    """text (the finding's review file, None: none yet) with an entry for finding appended; with
    only_subject, for the declarations of a folded finding that subject names alone (the reason is about it)."""
    rel = review_file(finding)
    subject = subject_of(finding)
    table = {e.key: e for e in parse_suppressions(text, rel)} if text is not None else {}
    if entry_for(table, finding) is not None:
        raise SyncError(f"{finding.kind} on {finding.path}{f' ({subject})' if subject else ''} is already "
                        f"suppressed in {rel}")
    if not reason.strip():
        raise SyncError("--reason must say why the finding needs no change")
    updated = text
    written: set[tuple[str, str, str]] = set()
    # a finding per upstream change: an entry for each file among its sites that has none yet (a folded
    # finding: for each of its declarations, with that declaration's subject and trunk file)
    parts = parts_of(finding)
    if only_subject is not None and parts != [finding]:
        parts = [part for part in parts if only_subject in _subjects(part)] or parts
    for part in parts:
        part_subject = subject if part is finding else next((s for s in _subjects(part) if s), "")
        trunk = trunk_counterpart(part)
        blob = new.blob_id(trunk) if not is_third_party(trunk) else None
        for path in site_paths(part):
            if entry_for(table, replace(part, path=path, details={**part.details, "sites": []})) is not None \
                    or (finding.kind, path, part_subject) in written:
                continue
            written.add((finding.kind, path, part_subject))
            if blob is not None:
                entry = Suppression(finding.kind, path, reviewed_for, trunk, str(blob), reason, part_subject)
            else:  # no trunk file at the new tag to expire on: the review holds for this upstream release only
                entry = Suppression(finding.kind, path, reviewed_for, "", "", reason, part_subject, str(new.tree.id))
            updated = append_suppression(updated, entry, NEW_FILE_HEADER if finding.backend else TRUNK_HEADER)
    assert updated is not None
    parse_suppressions(updated, rel)  # never write a file the next run would refuse to read
    return updated
