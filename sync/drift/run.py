"""Run every registered drift analysis over one FlagTree branch between two upstream tags."""
from __future__ import annotations

import re
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, ContextManager, Protocol, Sequence

from sync.drift import result_cache
from sync.support.cache import using
from sync.errors import SyncError
from sync.git import Commit, GitError, GitTree, Oid, Repository, Tree
from sync.git.readlog import made_value
from sync.support.parselimit import parse_limit
from sync.git.repo import commit_of, commit_range, fact_cache, has_object, is_ancestor, tree_of, upstream_in_range
from sync.git.store import scratch_repository
from sync.support.progress import Progress, Silent
from sync.model import Finding, MergedOverlay, Range, Rev
from sync.facts.filekinds import PARSED_SUFFIXES
from sync.facts.layout import is_third_party

if TYPE_CHECKING:  # the analyzers are imported when an analysis runs: a cached result needs none of them
    from sync.drift.analysis_cache import AnalysisCache
    from sync.drift.ahead import Ahead
    from sync.drift.registry import Analyzer
    from sync.drift.context import DriftContext
    from sync.facts.owners import OwnerIndex

REUSED_PHASE = "analyses reused from the cache"


class Owners(Protocol):
    """Who owns each path of the fork (an OwnerIndex, or one built on first use after a cached result)."""

    @property
    def backends(self) -> list[str]: ...

    def owners(self, path: str, summary: str = "", flagtree_side: Sequence[str] = ()) -> list[str]: ...


@dataclass
class DriftResult:
    owners: Owners
    findings: list[Finding] = field(default_factory=list)
    merged: list[MergedOverlay] = field(default_factory=list)


class ReusedResult(DriftResult):
    """A cached result: the merged overlays come back as (path, bytes) pairs."""

    def __init__(self, owners: Owners, findings: list[Finding], merged: list[tuple[str, bytes]]) -> None:
        super().__init__(owners, findings, [MergedOverlay(path, data) for path, data in merged])


class ReusedOwners:
    """The fork's OwnerIndex for a cached result, built (from the fork, as the analysis built it) only
    when a path's owners are asked: drift needs the backends alone, which the entry holds."""

    def __init__(self, backends: list[str], build: Callable[[], "OwnerIndex"]) -> None:
        self.backends = backends
        self._build = build
        self._index: OwnerIndex | None = None

    def owners(self, path: str, summary: str = "", flagtree_side: Sequence[str] = ()) -> list[str]:
        if self._index is None:
            self._index = self._build()
        return self._index.owners(path, summary, flagtree_side)


def replayed_tree(repo: Repository, rng: Range, user_repo: Repository | None = None) -> Tree:
    """The FlagTree delta replayed onto the new tag, in memory; conflicts keep the FlagTree side.

    The merged blobs and trees are written into repo: pass a scratch repository to keep a store clean.
    An upgrade of the same range in user_repo (its state, or the branch it made) gives a head start."""
    from sync.replay.commits import Replayer
    replayer = Replayer(repo, "theirs", rng.onto.short)
    commits = commit_range(repo, commit_of(repo, rng.old.oid), commit_of(repo, rng.source.oid))
    done, tree = reusable_replay(user_repo or repo, repo, rng, commits)
    # left out, as the upgrade leaves them out; only asked for when an upgrade's branch did not cover the range
    upstream = upstream_in_range(repo, commit_of(repo, rng.old.oid), commit_of(repo, rng.onto.oid),
                                 commit_of(repo, rng.source.oid)) if done < len(commits) else {}
    for oid in commits[done:]:
        if oid in upstream:
            continue
        picked = replayer.pick_tree(commit_of(repo, oid), tree).tree
        assert picked is not None  # the "theirs" policy always settles a conflict
        tree = tree_of(repo, picked)
    return tree


_PICKED_FROM = re.compile(r"\(cherry picked from commit ([0-9a-f]{40})\)")


def reusable_replay(user_repo: Repository, repo: Repository, rng: Range, commits: list[Oid]) -> tuple[int, Tree]:
    """(commits already replayed, the tree after them) from the upgrade of the same range.

    Only what is known to equal drift's own replay counts: commits up to the first conflict (drift
    keeps the FlagTree side, an upgrade may have written markers or a manual resolution), from the
    upgrade's journal or from the commits of its branch, each checked to be exactly the commit the
    replay makes (same source, parent, tree, authorship: an amended commit ends the reuse)."""
    best = (0, commit_of(repo, rng.onto.oid).tree)
    for found in (_from_upgrade_state(user_repo, repo, rng, commits),
                  _from_branch(user_repo, repo, rng, commits)):
        if found is not None and found[0] > best[0]:
            best = found
    return best


def _from_upgrade_state(user_repo: Repository, repo: Repository, rng: Range,
                        commits: list[Oid]) -> tuple[int, Tree] | None:
    from sync.replay.engine import StateStore  # the upgrade engine, only when there is a state to read
    try:
        state = StateStore(user_repo).load()
    except SyncError:
        return None
    if state is None or (state.params.range.old.oid, state.params.range.onto.oid, state.params.range.source.oid) != (
            str(rng.old.oid), str(rng.onto.oid), str(rng.source.oid)) or state.commits != [str(c) for c in commits]:
        return None
    head, done = str(rng.onto.oid), 0
    for result in state.results:
        if result.conflicts and (state.params.policy != "theirs"
                                 or any(conflict.resolution == "manual" for conflict in result.conflicts)):
            break
        head, done = result.result or head, done + 1
    try:
        return done, commit_of(repo, head).tree
    except (GitError, SyncError, KeyError, ValueError):
        return None


def _from_branch(user_repo: Repository, repo: Repository, rng: Range, commits: list[Oid]) -> tuple[int, Tree] | None:
    from sync.git import branch_head
    tip = branch_head(user_repo, f"sync/{rng.onto.ref}")
    if tip is None:
        return None
    chain: list[Commit] = []
    commit = tip
    while commit.id != rng.onto.oid and len(chain) <= len(commits) + 1 and len(commit.parents) == 1:
        chain.append(commit)
        commit = commit.parents[0]
    if commit.id != rng.onto.oid:
        return None  # not a replay onto this tag
    from sync.replay.commits import CONFLICT_TRAILER, Replayer
    replayer = Replayer(repo, "theirs", rng.onto.short)
    head = commit_of(repo, rng.onto.oid)
    done = 0
    upstream: dict[Oid, str] | None = None  # the upgrade left these out unpicked; found only when a gap needs it
    for replayed in reversed(chain):
        match = _PICKED_FROM.search(replayed.message)
        if match is None or CONFLICT_TRAILER in replayed.message:
            break
        source = match[1]
        while done < len(commits) and str(commits[done]) != source:
            gap = commit_of(repo, commits[done])  # skipped by the upgrade: upstream's, or it became empty
            if replayer.pick_tree(gap, head.tree).tree != head.tree.id:
                if upstream is None:
                    upstream = upstream_in_range(repo, commit_of(repo, rng.old.oid), commit_of(repo, rng.onto.oid),
                                                 commit_of(repo, rng.source.oid))
                if gap.id not in upstream:
                    return done, head.tree
            done += 1
        if done == len(commits) or replayer.commit(commit_of(repo, commits[done]), replayed.tree.id, head.id, []) != replayed.id:
            break
        head, done = commit_of(repo, replayed.id), done + 1
    return done, head.tree


def analyse_drift(repo: Repository, rng: Range, target: Rev | None, backends: set[str] | None = None,
                  symbols: bool = False, progress: Progress | None = None, ahead: "Ahead | None" = None) -> DriftResult:
    """Read-only: objects the in-memory replay needs go to a scratch store, never into repo's.

    A result stored for the same inputs (sync/drift/result_cache.py) is reused: nothing is replayed or parsed.
    ahead: what parsing_ahead began for this run (the upgrade begins it before its replay); None: the
    analysis makes its own."""
    progress = progress or Silent()
    backends = set(backends) if backends else None
    parse_limit()  # a bad FLAGTREE_SYNC_PARSE_LIMIT is exit 2 here, not in a worker halfway through
    with using(fact_cache(repo)) as cache:
        key = result_cache.result_key(repo, rng, target, backends, symbols) if cache is not None else None
        found = result_cache.load(cache, key, repo) if cache is not None and key is not None else None
        if found is not None:
            findings, merged, backend_list = found
            progress.phase(REUSED_PHASE)
            return ReusedResult(ReusedOwners(backend_list, lambda: _fork_owners(repo, rng)), findings, merged)
        with scratch_repository(repo) as scratch:
            result, context = _analyse(repo, scratch, rng, target, backends, symbols, progress, ahead)
        if cache is not None and key is not None and _storable(result, context):
            result_cache.store(cache, key, result.findings, result.merged, list(result.owners.backends),
                               _judged_presence(context))
        return result


def parsing_ahead(repo: Repository, rng: Range) -> "ContextManager[Ahead]":
    """Begin the analysis's up-front parse in worker processes, for the caller to replay meanwhile; the Ahead
    it gives (the run's Python facts, and the parse begun) goes to analyse_drift."""
    from sync.drift.registry import python_facts
    from sync.drift.ahead import parsing_ahead as begun
    return begun(repo, rng, python_facts())


def _fork_owners(repo: Repository, rng: Range) -> "OwnerIndex":
    """The owner index the analysis builds (DriftContext.owners reads the fork tree only)."""
    from sync.drift.context import DriftContext
    fork = GitTree.of_commit(repo, rng.source.oid, f"fork:{rng.source.ref}")
    return DriftContext(repo, fork, fork, fork, None).owners


def _storable(result: DriftResult, context: "DriftContext") -> bool:
    """A result that met a missing object may read differently once it is fetched: never stored."""
    return not any(tree.missing for tree in context.trees) \
        and not any(finding.kind == "target-unavailable" for finding in result.findings)


def _judged_presence(context: "DriftContext") -> dict[str, bool]:
    """Blobs whose presence in the store the analyses judged: the provenance entries (recorded_base)."""
    manifests = made_value(context, "manifests") or {}  # made only where an analysis asked
    return {entry.blob: has_object(context.repo, entry.blob)
            for manifest in manifests.values() if manifest for entry in manifest.values()}


def _analyse(repo: Repository, scratch: Repository, rng: Range, target_rev: Rev | None, backends: set[str] | None,
             symbols: bool, progress: Progress, ahead: "Ahead | None") -> tuple[DriftResult, "DriftContext"]:
    with ExitStack() as stack:  # a parse begun before the replay lives until the analysis takes it
        return _analysed(repo, scratch, rng, target_rev, backends, symbols, progress, stack, ahead)


_PARSED_SUFFIXES = PARSED_SUFFIXES  # facts.filekinds: what the parsers read


def _over_the_parse_limit(context: "DriftContext") -> list[Finding]:
    """An analysis-skipped finding for each parsed file the analyses may read (one the fork, the new tag or
    the target has other than the old tag, or a backend's) that is over the parse limit."""
    from sync.support.parselimit import ENV, TOKEN_BYTES, too_many_tokens
    limit = parse_limit()
    if limit is None:
        return []
    sizes: dict[str, int] = {}
    tokens: dict[str, int] = {}  # under the limit in bytes, over it in tokens (parselimit.TOKEN_BYTES)
    old = context.upstream_old
    for tree in [tree for tree in (context.fork, context.upstream_new, context.target) if tree is not None]:
        for path in tree.paths():
            blob = tree.blob_id(path)
            if path in sizes or blob is None or not path.endswith(_PARSED_SUFFIXES):
                continue
            if blob == old.blob_id(path) and not is_third_party(path):
                continue  # the same at both ends: no analysis parses it
            try:
                size = tree.repo.odb.read_header(blob)[1]  # the target's may be in the scratch store
            except (KeyError, GitError):  # missing from a partial clone: the analyses say so themselves
                continue
            if size > limit:
                sizes[path] = size
            elif size > limit // TOKEN_BYTES and path not in tokens:
                count = too_many_tokens(tree.read(path) or b"")
                if count is not None:
                    tokens[path] = count
    return [Finding("analysis-skipped", path, f"parsing analyses: {path} was left out: {size} bytes is over the "
                    f"parse limit of {limit} bytes (raise it with {ENV}); merges and diffs still read it")
            for path, size in sorted(sizes.items())] + \
        [Finding("analysis-skipped", path, f"parsing analyses: {path} was left out: its {count} tokens are over the "
                 f"parse limit's {limit // TOKEN_BYTES} (one per {TOKEN_BYTES} bytes of {limit}: parsers' memory "
                 f"follows the tokens; raise it with {ENV}); merges and diffs still read it")
         for path, count in sorted(tokens.items()) if path not in sizes]


def _on_the_branch(context: "DriftContext") -> "Callable[[Analyzer, list[Finding]], list[Finding]] | None":
    """Moves each analyzer's findings from the tree it read to the upgraded branch (the one the user edits)."""
    from sync.drift.branchlines import FORK, NEW, BranchPlaces
    if context.target is None:
        return None
    # its own, not context.edited_site's: a diff that one caches inside an analysis is in that analysis's read log
    places = BranchPlaces({FORK: context.fork, NEW: context.upstream_new}, context.target, context.renames)
    return lambda analyzer, findings: [places.finding(analyzer.lines, finding) for finding in findings]


def _keep_results(repo: Repository, rng: Range, target_rev: Rev | None, backends: set[str] | None, symbols: bool,
                  context: "DriftContext") -> "AnalysisCache | None":
    """Set context.kept_results: each analysis's result kept on the branch by an earlier run
    (drift/analysis_cache.py); None for an in-memory replay (the whole result's key holds its every input) or
    without the fact cache."""
    from sync.drift.analysis_cache import AnalysisCache
    from sync.support.cache import active
    cache = active()
    if target_rev is None or context.target is None or cache is None:
        return None
    inputs = result_cache.run_inputs(repo, rng, target_rev, backends, symbols)
    if inputs is None:
        return None
    context.target.watched = True  # it notes what each analysis asks it
    context.kept_results = AnalysisCache(cache, repo, inputs, context.target, lambda: _judged_presence(context))
    return context.kept_results


def _analysed(repo: Repository, scratch: Repository, rng: Range, target_rev: Rev | None, backends: set[str] | None,
              symbols: bool, progress: Progress, stack: ExitStack,
              ahead: "Ahead | None") -> tuple[DriftResult, "DriftContext"]:
    from sync.drift.ahead import Ahead
    from sync.drift.context import DriftContext
    from sync.drift.parallel import run_analyses
    from sync.drift.perchange import into_errors, one_per_upstream_change
    from sync.facts.parsing import recording_skips
    from sync.facts.pyblobs import reading
    from sync.drift.registry import ANALYZERS, python_facts
    from sync.facts.layout import backend_names, require_backends
    from sync.records.suppressions import apply_suppressions
    fork = GitTree.of_commit(repo, rng.source.oid, f"fork:{rng.source.ref}")
    known = backend_names(fork)
    if backends:
        require_backends(fork, backends)
    early: list[Finding] = []
    target: GitTree | None = None
    if target_rev is None:
        progress.phase("replaying the delta in memory")
        try:
            if symbols and ahead is None:  # the up-front parse's workers start now and parse while this replays
                ahead = stack.enter_context(parsing_ahead(repo, rng))
            target = GitTree(scratch, replayed_tree(scratch, rng, repo), "target:in-memory")
        except GitError as exc:  # e.g. a blob missing from a partial clone
            early.append(Finding("target-unavailable", ".", f"the delta could not be replayed in memory ({exc}); "
                                 "hooks and guards were judged from the upstream tags alone"))
    else:
        target = GitTree.of_commit(repo, target_rev.oid, f"target:{target_rev.ref}")
    context = DriftContext(repo, GitTree.of_commit(repo, rng.old.oid, f"old:{rng.old.ref}"),
                           GitTree.of_commit(repo, rng.onto.oid, f"new:{rng.onto.ref}"), fork, target,
                           sorted(backends or known), filtered=bool(backends), range=rng,
                           fork_based_on_old=is_ancestor(repo, rng.old.oid, rng.source.oid),
                           target_is_branch=target_rev is not None)
    findings = list(early)
    ahead = ahead or Ahead(python_facts())
    stack.enter_context(reading(ahead.facts))  # the Python facts of this run, in its analyses and their workers
    analyzers = [analyzer for analyzer in ANALYZERS if symbols or not analyzer.on_request]
    kept = _keep_results(repo, rng, target_rev, backends, symbols, context)
    if any(analyzer.on_request and (kept is None or kept.load(analyzer.name) is None) for analyzer in analyzers) \
            and context.fork_based_on_old:  # some analysis of the fork's Python runs
        context.prefetch_fork_python(ahead)
    progress.phase("analyses", len(analyzers))
    placed = _on_the_branch(context) if target_rev is not None else None
    with recording_skips() as skips:
        analysed = run_analyses(analyzers, context, progress, skips, context.prefetched_bytes, context.trees, placed)
    findings.extend(analysed.findings)
    findings.extend(Finding("analysis-skipped", path, f"{analysis}: {path} was left out: {reason}")
                    for (analysis, path), reason in sorted(skips.skipped.items()))
    findings.extend(_over_the_parse_limit(context))
    findings = into_errors(one_per_upstream_change(findings))  # one change, one finding; a warning an error tells
    findings = _in_imported_modules(context, findings)
    progress.advance("", len(analyzers))
    if backends:
        findings = [f for f in findings if f.backend is None or f.backend in backends]
    findings = apply_suppressions(findings, fork, context.upstream_new, known)
    _forget_parses(ahead)
    return DriftResult(context.owners, findings, analysed.merged), context


def _in_imported_modules(context: "DriftContext", findings: list[Finding]) -> list[Finding]:
    """The errors and warnings whose every site is in a trunk Python module no build imports (facts/importers)
    become one module-not-imported per module, which names them: what such a module uses breaks no build (the
    SharedMemory line: trunk's triton/language/extra/xpu/libdevice.py, which xpu installs from its own tree and
    setup.py lists for no other backend). A finding with a site elsewhere stays as it is."""
    from sync.facts.importers import importing_builds
    from sync.records.suppressions import site_paths
    judged = [f for f in findings if f.severity in ("error", "warning") and f.path.endswith(".py")]
    paths = {path for f in judged for path in site_paths(f)}
    unimported = {path for path in sorted(paths) if path.endswith(".py") and context.fork.exists(path)
                  and importing_builds(context.fork, context.upstream_old, path) == frozenset()}
    moved = [f for f in judged if set(site_paths(f)) <= unimported]
    if not moved:
        return findings
    gone = {id(f) for f in moved}
    kept = [f for f in findings if id(f) not in gone]
    for path in sorted({f.path for f in moved}):
        here = [f for f in moved if f.path == path]
        kept.append(Finding(
            "module-not-imported", path,
            f"no build imports {path}, so its {len(here)} finding(s) ({', '.join(sorted({f.kind for f in here}))}) "
            "break no build: each backend installs its own copy of the package, lists it only for other backends, "
            "or lacks a libtriton submodule it requires", line=min((f.line for f in here if f.line), default=None),
            details={"findings": [{"kind": f.kind, "line": f.line, "message": f.message} for f in here]}))
    return kept


def _forget_parses(ahead: "Ahead") -> None:
    """The analyses are done: the parser trees, declarations, fork diff and Python facts they kept in memory go
    (the fact cache holds what a later run reads), so that the report is built in the memory they held instead
    of on top of it (issue 46: the report added some 50 MB to the peak of a first run of the 3.7 move)."""
    from sync.facts import cpp, declindex, parsing
    from sync.facts.delta import forget_fork_diffs
    cpp.forget_trees()
    parsing.forget_python_trees()
    declindex.forget()
    forget_fork_diffs()
    ahead.facts.memo.clear()
    _give_back_freed_memory()


def _give_back_freed_memory() -> None:
    """Return the C heap's free pages to the system (glibc's malloc_trim; elsewhere nothing): the parsers' trees
    live there, and once dropped their pages stay resident until trimmed."""
    import ctypes
    import ctypes.util
    name = ctypes.util.find_library("c")
    trim = getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    if trim is not None:
        trim(0)
