"""Each analysis's result on an upgraded branch, kept in the fact cache's directory (kind "analysis-result")
with what it read of the branch, and reused while the branch gives the same answers (issue 46: `status` after
one fix ran every analysis again, about git's own time on the 3.7 move, though most read nothing the fix
changed).

The key holds every input of the drift but the branch's tree (result_cache.run_inputs) and the analysis's
name. The entry holds the analysis's findings, merged overlays and skipped files, and its read log of the
branch (git/readlog.py): each path's blob and mode (or absent), whether it listed the tree, whether it used the
tree whole (then the tree's id). A later run reuses the entry when the branch answers every one of those
questions the same; one entry per key, the last run's. Provenance blobs whose presence the run judged are kept
and checked as the whole result's cache does. FLAGTREE_SYNC_RESULT_CACHE=off turns it off with that cache."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from sync.drift.outcome import Found
from sync.drift.result_cache import decode_findings, decode_merged, encode_findings, encode_merged
from sync.git import GitTree, Repository
from sync.git.readlog import ReadLog, logging_reads, replay
from sync.git.repo import has_object
from sync.facts.parsing import pass_skips, recording_skips, running_analysis
from sync.model import Finding, MergedOverlay
from sync.support.cache import FactCache

KIND = "analysis-result"
VERSION = 1
Skipped = dict[tuple[str, str], str]


@dataclass
class Kept:
    """A reused result: what the analysis found, the files it left out, and what it read of the branch."""
    found: Found
    skipped: Skipped
    reads: ReadLog


class AnalysisCache:
    """The entries of one drift's analyses, judged against its upgraded branch (a watched tree)."""

    def __init__(self, cache: FactCache, repo: Repository, inputs: dict[str, Any], branch: GitTree,
                 presence: Callable[[], dict[str, bool]]) -> None:
        self.cache = cache
        self.repo = repo
        self.inputs = inputs
        self.branch = branch
        self.presence = presence  # the provenance blobs the run judged, asked once it is done
        self._loaded: dict[str, Kept | None] = {}

    def _key(self, name: str) -> str:
        document = dict(self.inputs, analysis=name)
        return hashlib.sha1(json.dumps(document, sort_keys=True).encode("utf-8")).hexdigest()

    def load(self, name: str) -> Kept | None:
        if name not in self._loaded:  # (asked before the run decides what to parse up front, and again in it)
            self._loaded[name] = self._load(name)
        return self._loaded[name]

    def _load(self, name: str) -> Kept | None:
        stored = self.cache.get(KIND, VERSION, self._key(name))
        try:
            if not isinstance(stored, dict):
                return None
            reads = ReadLog.from_json(stored["reads"])
            if not self._same_answers(reads, stored["tree"], stored["listing"]):
                return None
            present = stored["present"]
            if not isinstance(present, dict) or any(has_object(self.repo, blob) != bool(was)
                                                    for blob, was in present.items()):
                return None
            findings = decode_findings(stored["findings"])
            merged = [MergedOverlay(path, data) for path, data in decode_merged(stored["merged"])]
            skipped = {(str(analysis), str(path)): str(reason) for analysis, path, reason in stored["skipped"]}
        except Exception:  # noqa: BLE001 - any entry that does not decode is a miss, never an error
            return None
        return Kept(Found(findings, merged), skipped, reads)

    def _same_answers(self, log: ReadLog, tree: Any, listing: Any) -> bool:
        branch = self.branch
        if log.whole and tree != branch.unnoted_id():
            return False
        if log.listed and listing != branch.listing_digest():
            return False
        return all(branch.entry(path) == entry for path, entry in log.entries.items())

    def store(self, name: str, found: Found, skipped: Skipped, log: ReadLog) -> bool:
        """Keep one analysis's result; False when its findings would not decode back exactly."""
        encoded = encode_findings(found.findings)
        if encoded is None:
            return False
        self.cache.put(KIND, VERSION, self._key(name), {
            "reads": log.to_json(), "tree": self.branch.unnoted_id() if log.whole else None,
            "listing": self.branch.listing_digest() if log.listed else None,
            "present": self.presence(), "findings": encoded, "merged": encode_merged(found.merged),
            "skipped": [[analysis, path, reason] for (analysis, path), reason in sorted(skipped.items())]})
        return True


class Run(Protocol):
    """What kept_piece reads of the run's context (drift/context.py's DriftContext)."""
    @property
    def kept_results(self) -> "AnalysisCache | None": ...

    @property
    def trees(self) -> list[GitTree]: ...


def kept_piece(context: Run, name: str, compute: Callable[[], Iterable[Finding]]) -> list[Finding]:
    """One piece of the running analysis, kept on its own (an analysis of several pieces that share one process's
    parses: a fix that one of them read leaves the others' results standing). Its reads and skips count for the
    whole analysis too, found now or kept."""
    cache = context.kept_results
    if cache is None:
        return list(compute())
    entry = f"{running_analysis()}: {name}"
    kept = cache.load(entry)
    if kept is not None:
        replay(kept.reads)
        pass_skips(kept.skipped)
        return list(kept.found.findings)
    with logging_reads(ReadLog()) as reads, recording_skips() as skips:
        findings = list(compute())
    pass_skips(skips.skipped)
    if not any(tree.missing for tree in context.trees):
        cache.store(entry, Found(findings), skips.skipped, reads)
    return findings
