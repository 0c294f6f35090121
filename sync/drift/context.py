"""Everything a drift analysis reads, loaded once: the four trees, upstream renames, hook indexes."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from sync.support.cache import memoized
from sync.facts.layout import SpecFile, backend_dir, own_trunk_backends, third_party_owner
from sync.model import Range
from sync.records.provenance import Derivation, load_manifest
from sync.drift.branchlines import FORK, NEW, BranchPlaces
from sync.git import GitTree, Oid, Repository, as_oid, has_object, renames
from sync.git.readlog import logged_once
from sync.facts.trees import read_text
from sync.facts.backends import BackendExports, backend_exports
from sync.facts.callsites import TrunkHooks, index_trunk_hooks
from sync.drift.ahead import Ahead, settle
from sync.facts.delta import fork_python_texts
from sync.facts.pyblobs import prefetch
from sync.facts.owners import OwnerIndex
from sync.facts.roles import RENAMED_COPY, WHOLE_FILE_ROLES, Classified, classified_files
from sync.facts.pyfacts import function_table, parse_module_facts, stored_function_facts
from sync.facts.pysource import FunctionFacts, ModuleFacts

if TYPE_CHECKING:
    from sync.drift.analysis_cache import AnalysisCache


def cached_function_table(text: str) -> dict[str, FunctionFacts] | None:
    """pyfacts.function_table through the fact cache: every def's parameters and where it sits in the
    text (its signature, body and source are cut from the text when asked), keyed by blob id."""
    stored = memoized("function-table", 2, text, _function_entries, encode=lambda found: found,
                      decode=lambda found: found)
    if stored is None:
        return None
    return {str(name): stored_function_facts(text, str(name), 0, params, span) for name, params, span in stored}


def _function_entries(text: str) -> list[list] | None:
    table = function_table(text)
    if table is None:
        return None
    return [[name, [[p.name, p.kind, p.has_default] for p in facts.params],
             facts._span.to_json() if facts._span is not None else None] for name, facts in table.items()]


@dataclass
class DriftContext:
    repo: Repository
    upstream_old: GitTree  # trunk at the old upstream tag
    upstream_new: GitTree  # trunk at the new upstream tag
    fork: GitTree  # the FlagTree branch, based on the old tag
    target: GitTree | None  # the FlagTree delta replayed onto the new tag, when known
    backends: list[str] = field(default_factory=list)
    filtered: bool = False  # True when backends is a selection, not every backend of the branch
    range: Range | None = None  # the revisions as the user named them (labels in findings)
    fork_based_on_old: bool = True  # False: OLD is not an ancestor of the branch
    prefetched_bytes: int = 0  # fork Python parsed up front (prefetch_fork_python): sizes the parallel run
    kept_results: "AnalysisCache | None" = None  # each analysis's result kept on the branch (analysis_cache.py)
    target_is_branch: bool = False  # the target is the upgraded branch the user edits, not an in-memory replay
    _facts: dict[tuple[str, str], ModuleFacts] = field(default_factory=dict)
    _tables: dict[tuple[str, str], dict[str, FunctionFacts] | None] = field(default_factory=dict)

    @property
    def trees(self) -> list[GitTree]:
        """The trees the analyses read: both tags, the fork, and the upgraded target when known."""
        return [tree for tree in (self.upstream_old, self.upstream_new, self.fork, self.target) if tree is not None]

    @cached_property
    def renames(self) -> dict[str, str]:
        """Upstream renames old path -> new path, by git's similarity detection (shared with symbols)."""
        return renames(self.upstream_old, self.upstream_new)

    @property
    def branch(self) -> GitTree:
        """The upgraded tree when known (the branch, or the delta replayed in memory), else the new tag."""
        return self.target if self.target is not None else self.upstream_new

    def branch_path(self, path: str) -> str:
        """Where a file of the FlagTree branch sits in `branch`: its own path, or upstream's new name for a file
        upstream renamed (the replay follows renames)."""
        return path if self.branch.exists(path) else self.renames.get(path, path)

    def edited_site(self, site: str) -> str:
        """A path:line read on the FlagTree branch, where the user finds it: on the upgraded branch when that is
        the target (as drift/branchlines.py moves whole findings), else as it is."""
        if not self.target_is_branch or self.target is None:
            return site
        return self._branch_places.site(FORK, site)

    @cached_property
    def _branch_places(self) -> BranchPlaces:
        assert self.target is not None
        return BranchPlaces({FORK: self.fork, NEW: self.upstream_new}, self.target, self.renames)

    def new_path(self, old_path: str) -> str | None:
        """Where an upstream file lives at the new tag: same path, renamed path, or None (deleted)."""
        if self.upstream_new.exists(old_path):
            return old_path
        return self.renames.get(old_path)

    @cached_property
    def fork_hooks(self) -> TrunkHooks:
        return index_trunk_hooks(self.fork)

    @cached_property
    def owners(self) -> OwnerIndex:
        """Who owns each path of the fork; shares the fork's hook index and every backend's exports."""
        return OwnerIndex(self.fork, self.fork_hooks, self.all_exports)

    @cached_property
    def classified(self) -> list[Classified]:
        """Every spec file of the selected backends with its role: the classifier check uses too."""
        return classified_files(self.fork, self.fork_hooks, set(self.backends) if self.filtered else None,
                                self.upstream_old)

    @cached_property
    def replaced_by_backend(self) -> frozenset[tuple[str, str]]:
        """(backend, trunk path) of each trunk file a backend builds or loads its own version of (an overlay of
        Python, TableGen or C++, a setup or package copy): what that backend's code means by the trunk file."""
        return frozenset(self._replacements)

    @cached_property
    def _replacements(self) -> dict[tuple[str, str], str]:
        return {(item.file.backend, item.trunk_path): item.file.path for item in self.classified
                if item.trunk_path and (item.role in WHOLE_FILE_ROLES - {RENAMED_COPY})}

    def serving_file(self, backend: str, trunk_path: str) -> str | None:
        """The file a backend's build loads in place of a trunk module: its overlay or setup copy, else its own
        python tree's copy (own_copy); None where it loads trunk's."""
        replaced = self._replacements.get((backend, trunk_path))
        if replaced is not None:
            return replaced
        own = f"{backend_dir(backend)}/{trunk_path}"
        return own if self.fork.exists(own) else None

    def own_copy(self, path: str, module_path: str) -> bool:
        """Whether a backend's file imports its backend's own copy of a trunk module: FlagTree's setup builds the
        triton package of backend b from third_party/<b>/python/ when b ships one, so `triton.x.y` is
        third_party/<b>/python/triton/x/y.py for b's files whenever that file exists; an overlay or a setup copy
        of the module loads in its place too."""
        backend = third_party_owner(path)
        return backend is not None and (self.fork.exists(f"{backend_dir(backend)}/{module_path}")
                                        or (backend, module_path) in self.replaced_by_backend)  # an overlay, a copy

    @logged_once
    def target_hooks(self) -> TrunkHooks | None:
        return index_trunk_hooks(self.target) if self.target is not None else None

    @cached_property
    def all_exports(self) -> dict[str, BackendExports]:
        """Every backend's exports, parsed once (owners need all of them, analyses the selected ones)."""
        from sync.facts.layout import backend_names
        return {backend: backend_exports(self.fork, backend) for backend in backend_names(self.fork)}

    @cached_property
    def exports(self) -> dict[str, BackendExports]:
        return {backend: self.all_exports[backend] for backend in self.backends if backend in self.all_exports}

    @cached_property
    def own_trunk_backends(self) -> set[str]:
        """The backends that build their own copy of trunk (layout.own_trunk_backends), on the FlagTree branch."""
        return own_trunk_backends(self.fork)

    @property
    def backend_files(self) -> GitTree:
        """Where the backends' own files are judged: the upgraded branch when one was given (fixes, merges and
        a provenance.toml recorded there count), else the FlagTree branch. An in-memory replay lives in a
        scratch store and holds the FlagTree branch's backend files unchanged, so the fork is read then."""
        target = self.target
        return target if target is not None and target.repo is self.repo else self.fork

    @logged_once
    def manifests(self) -> dict[str, dict[str, Derivation] | None]:
        return {backend: load_manifest(self.backend_files, backend) for backend in self.backends}

    def recorded_base(self, spec_file: SpecFile) -> tuple[Oid | None, dict[str, str]]:
        """The 3-way merge base of a backend file: its provenance entry, else the old tag (said so)."""
        manifest = self.manifests.get(spec_file.backend)
        entry = manifest.get(spec_file.path) if manifest else None
        if entry is not None and has_object(self.repo, entry.blob):
            return as_oid(entry.blob), {"source": "provenance", "tag": entry.tag, "blob": entry.blob}
        why = "no provenance manifest" if manifest is None else "not in the provenance manifest"
        blob = self.upstream_old.blob_id(spec_file.trunk_path or "")
        tag = self.range.old.ref if self.range is not None else self.upstream_old.label
        return blob, {"source": f"old tag ({why})", "tag": tag}

    def function_table(self, tree: GitTree, path: str) -> dict[str, FunctionFacts] | None:
        """Definitions of a file in one of the trees; None when absent or unparsable.

        Memoized per (tree, path): a call-signature run asks for the same upstream module once per call."""
        key = (tree.label, path)
        tree.exists(path)  # (a watched tree notes the path: its table is kept for the analyses after this one)
        if key not in self._tables:
            text = read_text(tree, path)
            self._tables[key] = cached_function_table(text) if text is not None else None
        return self._tables[key]

    def module_facts(self, tree: GitTree, path: str) -> ModuleFacts | None:
        """Parsed facts (without line numbers) of a file in one of the trees; None when absent."""
        key = (tree.label, path)
        tree.exists(path)  # (as function_table)
        if key not in self._facts:
            text = read_text(tree, path)
            if text is None:
                return None
            self._facts[key] = parse_module_facts(path, text, positions=False)
        return self._facts[key]

    def prefetch_fork_python(self, ahead: Ahead | None = None) -> None:
        """Parse, once and across cores, the fork's Python files with FlagTree-added lines: the files the
        call-signature and key-string analyses read (their facts then come from memory or the cache).
        ahead: the run's parse begun before the replay (drift/ahead.py), whose findings are taken first."""
        settle(ahead)
        texts = fork_python_texts(self.upstream_old, self.fork)
        self.prefetched_bytes = sum(map(len, texts))
        prefetch(texts)
