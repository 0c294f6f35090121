"""Provenance: which upstream blob each overlay and spec module was derived from (provenance.toml).

With a manifest, drift merges and diffs from the recorded base instead of assuming the old tag,
so the report shows exactly the upstream hunks the overlay missed. `flagtree-sync provenance`
writes the manifest; `check` verifies it still names existing files.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from .errors import SyncError
from .layout import SpecFile, spec_files
from .git import GitTree, Repository
from .trees import FileTree, read_text


def manifest_path(backend: str) -> str:
    return f"third_party/{backend}/backend/spec/provenance.toml"


@dataclass(frozen=True)
class Derivation:
    path: str  # the backend file
    trunk: str  # its trunk counterpart
    tag: str  # the upstream tag it was derived from
    blob: str  # the counterpart's blob at that tag

    def render(self) -> str:
        return (f'[[file]]\npath = "{self.path}"\ntrunk = "{self.trunk}"\ntag = "{self.tag}"\n'
                f'blob = "{self.blob}"\n')


def load_manifest(tree: FileTree, backend: str) -> dict[str, Derivation] | None:
    text = read_text(tree, manifest_path(backend))
    if text is None:
        return None
    try:
        entries = tomllib.loads(text).get("file", [])
        return {entry["path"]: Derivation(entry["path"], entry["trunk"], entry["tag"], entry["blob"])
                for entry in entries}
    except (tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
        raise SyncError(f"{manifest_path(backend)} is malformed: {exc}") from exc


def derived_files(tree: GitTree, backend: str) -> list[SpecFile]:
    """Backend files with a trunk counterpart: overlays, C++ mirrors and same-named spec modules."""
    return [spec_file for spec_file in spec_files(tree, {backend})
            if spec_file.trunk_path and not spec_file.rel.endswith("__init__.py")
            and (spec_file.is_python or spec_file.is_cpp)]


def write_manifest(repo: Repository, work_tree: Path, branch: GitTree, backend: str, tag: str,
                   tag_tree: GitTree) -> tuple[Path, int]:
    entries = []
    for spec_file in derived_files(branch, backend):
        blob = tag_tree.blob_id(spec_file.trunk_path or "")
        if blob is not None:
            entries.append(Derivation(spec_file.path, spec_file.trunk_path or "", tag, str(blob)))
    if not entries:
        raise SyncError(f"backend {backend} has no file with a trunk counterpart at {tag}")
    target = work_tree / manifest_path(backend)
    target.parent.mkdir(parents=True, exist_ok=True)
    header = ("# Where each file of this backend came from: the trunk counterpart and its blob at the tag.\n"
              "# Written by `flagtree-sync provenance`; drift merges from these bases.\n\n")
    target.write_text(header + "\n".join(entry.render() for entry in entries), encoding="utf-8")
    return target, len(entries)
