"""Provenance: which upstream blob each overlay and spec module was derived from (provenance.toml).

With a manifest, drift merges and diffs from the recorded base instead of assuming the old tag,
so the report shows exactly the upstream hunks the overlay missed. `flagtree-sync provenance`
writes the manifest; `check` verifies it still names existing files.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

import tomlkit

from sync.git import ConflictHunk, GitTree, Oid, Repository, as_oid, has_object, merge_blobs
from sync.git.merge import MergeFavor, holds_conflict
from sync.facts.layout import SpecFile, backend_spec_dir, copy_files, spec_files
from sync.records.tomlfiles import OID, Table, Text, load_toml, write_in_work_tree
from sync.facts.trees import FileTree, read_text

MANIFEST_SCHEMA = Table(arrays={"file": Table(fields={
    "path": Text(), "trunk": Text(), "tag": Text(), "blob": Text(pattern=OID, meaning="40 hex digits")})})
HEADER = ("Where each file of this backend came from: the trunk counterpart and its blob at the tag.",
          "Written by `flagtree-sync provenance` and `drift --apply`; drift merges from these bases.")


def manifest_path(backend: str) -> str:
    return f"{backend_spec_dir(backend)}/provenance.toml"


@dataclass(frozen=True)
class Derivation:
    path: str  # the backend file
    trunk: str  # its trunk counterpart
    tag: str  # the upstream tag it was derived from
    blob: str  # the counterpart's blob at that tag

    def table(self) -> tomlkit.items.Table:
        entry = tomlkit.table()
        for key in ("path", "trunk", "tag", "blob"):
            entry[key] = getattr(self, key)
        return entry


def parse_manifest(text: str, where: str) -> dict[str, Derivation]:
    """The manifest's entries by backend path; a file that breaks the schema is a TomlFileError."""
    entries = load_toml(text, where, MANIFEST_SCHEMA).data.get("file", [])
    return {entry["path"]: Derivation(entry["path"], entry["trunk"], entry["tag"], entry["blob"])
            for entry in entries}


def render_manifest(entries: list[Derivation]) -> str:
    document = tomlkit.document()
    for line in HEADER:
        document.add(tomlkit.comment(line))
    document.add(tomlkit.nl())
    files = tomlkit.aot()
    for entry in entries:
        files.append(entry.table())
    document.append("file", files)
    return tomlkit.dumps(document)


def load_manifest(tree: FileTree, backend: str) -> dict[str, Derivation] | None:
    text = read_text(tree, manifest_path(backend))
    if text is None:
        return None
    return parse_manifest(text, manifest_path(backend))


def backend_files(tree: FileTree, backends: set[str] | None = None) -> list[SpecFile]:
    """Every file by which a backend stands in for trunk, whatever its route: its spec tree, and the files its
    setup helper copies over trunk or ships as the triton package (drift merges each from the same record)."""
    found = {spec_file.path: spec_file for spec_file in spec_files(tree, backends)}
    for copy in copy_files(tree, backends):
        found.setdefault(copy.path, copy)
    return list(found.values())


def derived_files(tree: GitTree, backend: str) -> list[SpecFile]:
    """Backend files whose trunk counterpart the tree has: overlays, C++ and TableGen copies, setup-helper and
    package copies, and same-named spec modules (a trunk file gone from the tree would make the entry stale:
    check's FT015)."""
    return [spec_file for spec_file in backend_files(tree, {backend})
            if spec_file.trunk_path and tree.exists(spec_file.trunk_path) and records_base(tree, spec_file)]


def records_base(tree: FileTree, spec_file: SpecFile) -> bool:
    """Whether provenance.toml keeps this file's base: the files drift 3-way merges from there. A C++ file of a
    per-function spec library is no copy of its trunk namesake (a merge with it means nothing): only C++ files
    that copy their trunk file (roles.copies_trunk_lines) and TableGen files are."""
    from sync.facts.roles import copies_trunk_lines  # the classifier drift uses; imported late (it is heavy)
    if spec_file.rel.endswith("__init__.py"):
        return False
    if spec_file.is_cpp:
        return copies_trunk_lines(tree, spec_file)
    return spec_file.is_python or spec_file.is_tablegen


@dataclass(frozen=True)
class Recorded:
    manifest: Path
    count: int  # entries written; 0: the manifest already said this and is committed
    unmerged: tuple[str, ...]  # files left at their old base: the tag's change is not in them yet
    checked: bool  # whether each file's old base was known, so that unmerged could be told
    redundant: tuple[str, ...] = ()  # of unmerged, those identical to their old base: nothing of FlagTree's to keep
    marked: tuple[str, ...] = ()  # of unmerged, those holding committed conflict markers: no base is true of them
    nothing: bool = False  # the backend has no file with a trunk counterpart: nothing to record, nothing written
    uncommitted: tuple[str, ...] = ()  # of unmerged, those changed in the work tree but not committed


def write_manifest(repo: Repository, work_tree: Path, branch: GitTree, backend: str, tag: str,
                   tag_tree: GitTree, old_tree: GitTree | None) -> Recorded:
    """Record TAG's blob as the base of each file that holds TAG's change. A file's current base is its entry
    in the manifest, else its trunk counterpart in old_tree. A file whose 3-way merge from that base onto TAG is
    clean but differs from it does not hold the change: recording TAG would hide that change from drift for
    good, so it keeps its old entry (or none) and is named."""
    previous = load_manifest(branch, backend) or {}

    def old_base(spec_file: SpecFile) -> Oid | None:
        entry = previous.get(spec_file.path)
        if entry is not None and has_object(repo, entry.blob):
            return as_oid(entry.blob)
        return old_tree.blob_id(spec_file.trunk_path or "") if old_tree is not None else None

    entries, unmerged, redundant, marked = [], [], [], []

    def keep_old_base(spec_file: SpecFile) -> None:
        """A file left at its old base keeps it on record: its previous entry, else the old tag's blob, so that
        the manifest names every file (check's FT016) and drift merges from the base it would use anyway."""
        if spec_file.path in previous:
            entries.append(previous[spec_file.path])
        elif old_tree is not None and (old_blob := old_tree.blob_id(spec_file.trunk_path or "")) is not None:
            entries.append(Derivation(spec_file.path, spec_file.trunk_path or "", old_tree.label, str(old_blob)))

    for spec_file in derived_files(branch, backend):
        blob = tag_tree.blob_id(spec_file.trunk_path or "")
        if blob is None:  # no counterpart at the tag: its base stays the old one
            keep_old_base(spec_file)
            continue
        base = old_base(spec_file)
        data = branch.read(spec_file.path)
        if data is not None and holds_conflict(data):  # whatever merged cleanly beside it (issue 47.6)
            marked.append(spec_file.path)
            unmerged.append(spec_file.path)
            keep_old_base(spec_file)
            continue
        if _misses_change(repo, branch, spec_file, base, blob):
            unmerged.append(spec_file.path)
            if branch.blob_id(spec_file.path) == base:  # a plain copy of its old base: deleting it is the fix
                redundant.append(spec_file.path)
            keep_old_base(spec_file)
            continue
        entries.append(Derivation(spec_file.path, spec_file.trunk_path or "", tag, str(blob)))
    checked = old_tree is not None or bool(previous)
    target = work_tree / manifest_path(backend)
    if not unmerged and not any(entry.tag == tag for entry in entries):  # nothing to record is no error (48.4)
        return Recorded(target, 0, (), checked, nothing=True)
    if not any(entry.tag == tag for entry in entries):  # nothing holds the tag's change: nothing new to record
        return Recorded(target, 0, tuple(unmerged), checked, tuple(redundant), tuple(marked))
    text = render_manifest(entries)
    committed = read_text(branch, manifest_path(backend))
    if committed == text and target.is_file() and not target.is_symlink() and target.read_text(encoding="utf-8") == text:
        # already recorded and committed: nothing written
        return Recorded(target, 0, tuple(unmerged), checked, tuple(redundant), tuple(marked))
    return Recorded(write_in_work_tree(work_tree, manifest_path(backend), text),
                    sum(1 for entry in entries if entry.tag == tag), tuple(unmerged), checked, tuple(redundant),
                    tuple(marked))


def _misses_change(repo: Repository, branch: GitTree, spec_file: SpecFile, base: Oid | None, theirs: Oid) -> bool:
    """Whether the file lacks some of the change from base to theirs: their merge, with each conflict resolved to
    the file's side, is not the file. A conflict alone cannot tell (a hand merge conflicts with the change it took
    in), but upstream's hunks that merge cleanly around it can: a file that holds the change leaves them as
    they are."""
    ours = branch.blob_id(spec_file.path)
    if base is None or ours is None or base == theirs or ours == theirs:
        return False
    outcome = merge_blobs(repo, spec_file.path, base, ours, theirs, favor=MergeFavor.OURS, hunks=False)
    if outcome.data != branch.read(spec_file.path):
        return True
    # Every hunk of an overlay's may conflict, and a conflict resolved to the file's side is the file: that tells
    # nothing. A conflicting hunk holds upstream's change when the file's side holds what upstream wrote there.
    # A spec module that is no copy of its trunk file conflicts everywhere by nature: the merge says nothing of it.
    from sync.facts.roles import copies_trunk_lines  # the classifier drift uses; imported late (it is heavy)
    if not copies_trunk_lines(branch, spec_file):
        return False
    conflicts = merge_blobs(repo, spec_file.path, base, ours, theirs).hunks
    return not all(_holds_their_change(hunk) for hunk in conflicts)


_TOKEN = re.compile(r"\w+|[^\w\s]")


def _holds_their_change(hunk: ConflictHunk) -> bool:
    """Whether the file's side of a conflict holds upstream's edit of it, token by token (whitespace aside): each
    run of tokens upstream wrote is in it, and each run upstream only deleted (with a token of context) is not."""
    base, ours, theirs = (_TOKEN.findall(text) for text in (hunk.base, hunk.ours, hunk.theirs))
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, base, theirs, autojunk=False).get_opcodes():
        if tag in ("insert", "replace") and not _contains(ours, theirs[j1:j2]):
            return False
        if tag == "delete" and _contains(ours, base[max(i1 - 1, 0):i2 + 1]):
            return False
    return True


def _contains(tokens: list[str], run: list[str]) -> bool:
    return "\0" + "\0".join(run) + "\0" in "\0" + "\0".join(tokens) + "\0"


def applied_manifests(branch: GitTree, applied: set[str], tag: str, tag_tree: GitTree, old: str,
                      old_tree: GitTree) -> dict[str, str]:
    """provenance.toml of each backend `drift --apply` merged files of, as it must read after the merge: an
    applied file's base becomes TAG's blob, since it holds TAG's change now (merged again from the old base, it
    can conflict with its own merge where git aligns the two diffs differently). Every other file keeps the base
    drift used: its entry, else its trunk counterpart at OLD, so that nothing else changes meaning."""
    backends = {spec_file.backend for spec_file in backend_files(branch) if spec_file.path in applied}
    manifests = {}
    for backend in sorted(backends):
        previous = load_manifest(branch, backend) or {}
        entries = []
        for spec_file in derived_files(branch, backend):
            trunk = spec_file.trunk_path or ""
            if spec_file.path not in applied and spec_file.path in previous:
                entries.append(previous[spec_file.path])
                continue
            ref, blob = (tag, tag_tree.blob_id(trunk)) if spec_file.path in applied else (old, old_tree.blob_id(trunk))
            if blob is not None:
                entries.append(Derivation(spec_file.path, trunk, ref, str(blob)))
        manifests[manifest_path(backend)] = render_manifest(entries)
    return manifests
