"""Classify each overlay file (Python and C++) against its trunk counterpart at the two tags."""
from __future__ import annotations

from sync.model import Finding, MergedOverlay
from sync.model.kinds import kind_of
from sync.facts.layout import SpecFile, package_init
from sync.git import ConflictHunk, Oid, Repository, blob_patch, merge_blobs
from sync.git.merge import conflict_hunks, holds_conflict
from sync.facts.cmakebuilt import unbuilt
from sync.facts.filekinds import COMPILED
from sync.facts.trees import read_text
from sync.drift.context import DriftContext
from sync.drift.outcome import Found
from sync.facts.roles import OVERLAY, PACKAGE_COPY, RENAMED_COPY, SETUP_COPY, Classified, contained_in, shadows_trunk
from sync.facts.pyfacts import normalized_statements, parse_module_facts
from sync.facts.pyblobs import parses



def upstream_diff(repo: Repository, old: Oid | None, new: Oid | None, old_path: str,
                  new_path: str) -> tuple[str, str]:
    """Unified diff of a trunk file between the tags and a one-line summary of its hunks."""
    patch = blob_patch(repo, old, new, old_path, new_path)
    ranges = ", ".join(f"{start}-{start + max(length - 1, 0)}" for start, length in patch.hunks)
    return patch.text, (f"upstream changed {len(patch.hunks)} hunk(s) at old lines {ranges} "
                        f"(+{patch.added}/-{patch.removed})")


def _upgrade_convention(hunk: ConflictHunk) -> dict[str, object]:
    """Report hunks as the replay does: ours = upgraded trunk, theirs = the FlagTree side (the overlay)."""
    return {"line": hunk.line, "ours": hunk.theirs, "base": hunk.base, "theirs": hunk.ours}


def _hijack_lost(context: DriftContext, classified: Classified) -> str | None:
    """Why the package that makes this an overlay no longer does, if it does not."""
    if classified.role != OVERLAY or classified.hijacked is None:
        return None
    package = classified.hijacked
    init = package_init(package)
    if not context.upstream_new.exists(init):
        return f"package {package or 'python/triton'} no longer exists upstream ({init} deleted)"
    if context.target_hooks is not None and package not in context.target_hooks.hijacked:
        facts = context.module_facts(context.target, init) if context.target else None
        if facts is not None and facts.error:
            return None  # a conflicted __init__.py is reported by the upgrade, not guessed at here
        return f"{init} no longer calls spec_path on the upgraded tree"
    return None


def classify_overlay(context: DriftContext, classified: Classified, merged: list[MergedOverlay]) -> Finding | None:
    spec_file = classified.file
    trunk_path = spec_file.trunk_path
    assert trunk_path is not None
    repo, new = context.repo, context.upstream_new
    base_id, base = context.recorded_base(spec_file)
    if base_id is None:
        return None  # a module the backend adds: nothing upstream to drift from
    overlay_tree = context.backend_files
    ours_id = overlay_tree.blob_id(spec_file.path)
    if ours_id is None:
        return None  # deleted on the upgraded branch: that was the fix, nothing is left to drift

    route = _route(classified)

    def finding(kind: str, message: str, action: str, related: str | None = trunk_path,
                diff: str | None = None, **details: object) -> Finding:
        if kind == "overlay-redundant" and classified.role == SETUP_COPY:
            action = f"{action}; drop its copy call in {spec_file.via}"
        if kind in _COPY_KINDS and _forked(classified):
            kind = _COPY_KINDS[kind] if spec_file.backend in context.own_trunk_backends else _STALE_COPY
            action = kind_of(kind).action
        if kind in _DRIFT_KINDS and spec_file.path.endswith(COMPILED) and unbuilt(context.backend_files, spec_file.path):
            # a directory above it is added only in comments: the build never compiles it, whatever upstream did
            kind, action = _UNBUILT, kind_of(_UNBUILT).action
            message = f"not built (a CMakeLists.txt above it names it or its directory only in a comment); {message}"
        return Finding(kind, spec_file.path, f"{route}: {message}" if route else message, action,
                       backend=spec_file.backend, related_path=related, diff=diff,
                       details={"base": base, **details, **({"mechanism": classified.role} if route else {})})

    blocks = _conflict_blocks(overlay_tree.read(spec_file.path))
    if blocks:  # a marked file is never "in sync", whatever its recorded base says (issue 47.6)
        return finding("overlay-marked", f"holds {blocks} committed conflict block(s)",
                       kind_of("overlay-marked").action)
    lost = _hijack_lost(context, classified)
    if lost:
        return finding("hijack-lost", f"overlay is no longer loaded: {lost}",
                       "move the overlay to a hijacked package or into a spec function")
    new_path = context.new_path(trunk_path)
    if new_path is None:
        return finding("overlay-orphan", f"trunk counterpart {trunk_path} was deleted upstream",
                       "delete the overlay or port its change to where the code went")
    if new_path != trunk_path:
        diff, _ = upstream_diff(repo, base_id, new.blob_id(new_path), trunk_path, new_path)
        return finding("overlay-orphan", f"trunk counterpart {trunk_path} was renamed to {new_path}",
                       f"move the overlay to the mirror of {new_path} and re-merge", related=new_path,
                       diff=diff, renamed_to=new_path)
    theirs_id = new.blob_id(trunk_path)
    ours_text, new_text = read_text(overlay_tree, spec_file.path) or "", read_text(new, trunk_path) or ""
    # Deleting the overlay loads the trunk FlagTree ships (the upgraded branch's), not upstream's: "redundant"
    # holds only against that. An overlay equal to upstream's file where FlagTree's trunk differs keeps the
    # backend off FlagTree's own trunk lines on purpose.
    shipped_text, where = _shipped_trunk(context, trunk_path, new_text)
    deletable = _deletable(classified)
    if ours_text == shipped_text and not deletable:
        # A C++ or TableGen copy is named by the backend's build, which compiles it in trunk's place: deleting
        # it breaks that build, and nothing here is out of date.
        return finding("overlay-in-sync", f"identical to {trunk_path} {where}; {_why_kept(classified)}, so it "
                       "stays (dropping it takes a build change too)", "")
    if ours_text == shipped_text:
        return finding("overlay-redundant", f"identical to {trunk_path} {where}",
                       "delete the overlay: trunk now does the same")
    how = contained_in(ours_text, shipped_text) if deletable else None
    if how is not None and not _leaves_out_flagtree_statements(ours_text, shipped_text, new_text):
        return finding("overlay-redundant", f"{how} {trunk_path} {where}",
                       "delete the overlay: trunk now contains it")
    if ours_text == new_text:
        return finding("overlay-in-sync", f"identical to {trunk_path} at the new tag, where the upgraded trunk has "
                       "FlagTree's own changes: the overlay keeps this backend off them (deleting it would not)", "")
    if deletable and ours_id == base_id and base_id != theirs_id and shipped_text == new_text:
        # Its merge can only give trunk at the new tag, which loads anyway once it is gone. (A C++ copy at its
        # base is stale instead: the build compiles it, so it must take the merge, trunk's new file.)
        return finding("overlay-redundant", f"identical to {trunk_path} at its base ({base.get('tag')}): no change "
                       "of the backend's to keep, and trunk at the new tag is what loads in its place",
                       "delete the overlay: trunk does the same")
    if base_id == theirs_id:
        return finding("overlay-in-sync", "trunk counterpart unchanged since the overlay's base", "")
    if deletable and ours_text == read_text(context.fork, trunk_path):
        # What loaded in its place on the FlagTree branch was the same file: the backend has no change of its own
        # to carry, and without it the upgraded trunk (FlagTree's trunk moved onto the new tag) loads instead.
        return finding("overlay-redundant", f"identical to {trunk_path} on the FlagTree branch "
                       f"({context.range.source.ref if context.range else context.fork.label}): no change of the backend's to keep, and the upgraded trunk is what "
                       "loads in its place", "delete the overlay: trunk does the same")
    diff, summary = upstream_diff(repo, base_id, theirs_id, trunk_path, trunk_path)
    outcome = merge_blobs(repo, spec_file.path, base_id, ours_id, theirs_id,
                          (f"{trunk_path} (old tag)", f"{spec_file.backend} overlay", f"{trunk_path} (new tag)"))
    if outcome.clean and outcome.data == overlay_tree.read(spec_file.path):
        return finding("overlay-in-sync", f"{summary}; the overlay already holds that change (the 3-way merge "
                       "leaves it as it is)", "", diff=diff)
    if outcome.clean:
        if not _forked(classified):  # --apply writes overlays only: a forked copy takes upstream's change by hand
            merged.append(MergedOverlay(spec_file.path, outcome.data))
        return finding("overlay-auto-mergeable", f"{summary}; the 3-way merge is clean",
                       "apply the merged file (drift --apply) and review", diff=diff)
    return finding("overlay-conflicting", f"{summary}; the 3-way merge conflicts in "
                   f"{len(outcome.hunks)} hunk(s)", "merge by hand: the hunks show both sides",
                   diff=diff, hunks=[_upgrade_convention(hunk) for hunk in outcome.hunks])


# A copy under another name, or a file of the backend's own package, replaces nothing of trunk's: it is built or
# imported by its own name, against the backend's own tree when the backend carries one. Upstream's change to the
# file it copies cannot break it; the backend takes the change only if it tracks that file. So its drift is worth
# a look (info), and --apply leaves it (a clean merge can need the rest of upstream's change: a renamed name).
# Issue 33's judged sample of the 3.7 move: 31 of 32 such errors, none a build break, all in backends that build
# their own copies (hcu, metax, mthreads).
_COPY_KINDS = {"overlay-conflicting": "copy-conflicting", "overlay-auto-mergeable": "copy-mergeable",
               "overlay-orphan": "copy-orphan"}  # each with the catalogue's action
# ...unless the backend compiles against trunk's headers (it carries no include/triton/ of its own): then it
# tracks trunk, and a copy of a trunk file upstream changed builds but may behave as the old one did (issue 33:
# both such copies judged on the 3.7 move, enflame's, were true). A warning, with the merge shown.
_STALE_COPY = "copy-stale"
_DRIFT_KINDS = frozenset({"overlay-conflicting", "overlay-auto-mergeable", "overlay-orphan", "overlay-redundant",
                          "copy-stale", "copy-conflicting", "copy-mergeable", "copy-orphan"})
_UNBUILT = "overlay-unbuilt"


def _conflict_blocks(data: bytes | None) -> int:
    return len(conflict_hunks(data.decode("utf-8", errors="replace"))) if data and holds_conflict(data) else 0


def _forked(classified: Classified) -> bool:
    """A copy that goes its own way: under another name, or in the backend's own package (see _COPY_KINDS)."""
    return classified.role in (PACKAGE_COPY, RENAMED_COPY)


def _deletable(classified: Classified) -> bool:
    """Whether deleting the file loads trunk's in its place: true of a Python overlay and of a file a setup helper
    copies over trunk (drop the copy call with it); a C++ copy, a file of a package copy or a copy under another
    name is named by the build or imported by its own name, and must stay."""
    return classified.file.is_python and classified.role not in (PACKAGE_COPY, RENAMED_COPY)


def _why_kept(classified: Classified) -> str:
    if classified.role == PACKAGE_COPY:
        return "the backend's triton package ships this copy"
    if classified.role == RENAMED_COPY:
        return "the backend imports this copy by its own name"
    return "the backend's build compiles this copy in its place"


def _route(classified: Classified) -> str:
    """How a copy that is no spec_path overlay comes to replace or repeat its trunk file ("" for an overlay)."""
    trunk_path, via = classified.file.trunk_path, classified.file.via
    return {SETUP_COPY: f"copied over {trunk_path} by {via}",
            PACKAGE_COPY: f"ships in place of {trunk_path} (package_dir of {via})",
            RENAMED_COPY: f"a copy of {trunk_path} under another name"}.get(classified.role, "")


def _shipped_trunk(context: DriftContext, trunk_path: str, new_text: str) -> tuple[str, str]:
    """The trunk file that loads in the overlay's place, and where it was read: the upgraded branch's when
    there is one (FlagTree's trunk changes included), else upstream's at the new tag."""
    shipped = read_text(context.target, trunk_path) if context.target is not None else None
    if shipped is None or shipped == new_text:
        return new_text, "at the new tag"
    return shipped, "on the upgraded branch"


def _leaves_out_flagtree_statements(ours_text: str, shipped_text: str, new_text: str) -> bool:
    """Whether the overlay lacks a module-level statement FlagTree's trunk has over upstream's file: trunk
    "containing" the overlay then means FlagTree's own code, which deleting the overlay would turn on."""
    if shipped_text == new_text:
        return False
    mine, shipped, upstream = (normalized_statements(text) for text in (ours_text, shipped_text, new_text))
    if mine is None or shipped is None or upstream is None:
        return True  # cannot tell: never advise a deletion on a guess
    return not shipped - upstream <= mine


def overlay_findings(context: DriftContext) -> Found:
    """Every overlay of the selected backends, and their clean merges (for --apply)."""
    merged: list[MergedOverlay] = []
    findings = []
    for classified in context.classified:
        if not context.backend_files.exists(classified.file.path):
            continue  # deleted on the upgraded branch
        data = context.backend_files.read(classified.file.path) or b""
        if is_lfs_pointer(data):
            # whatever it is (its role is judged by content: a C++ overlay by the trunk lines it copies), it is
            # unread; a package no longer loaded is still said
            findings.append(_lfs_pointer(classified.file, len(data)))
            found = classify_overlay(context, classified, merged) if shadows_trunk(classified) else None
            if found is not None and found.kind == "hijack-lost":
                findings.append(found)
            continue
        if not shadows_trunk(classified):
            continue  # spec modules, new modules, C++ spec libraries: not copies of a trunk file
        unusable = _unusable(context, classified.file)
        if unusable is not None:
            findings.append(unusable)
            if unusable.kind == "overlay-symlink":
                continue  # nothing to merge: the link target is not the overlay's text
        found = classify_overlay(context, classified, merged)
        if found is not None:
            findings.append(found)
    return Found(findings, merged)


_LFS_HEADER = b"version https://git-lfs.github.com/spec/"
_LFS_POINTER_LIMIT = 1024  # the LFS specification: a pointer file is under 1024 bytes


def is_lfs_pointer(data: bytes) -> bool:
    """Whether a blob is a Git LFS pointer file (the real content lives in an LFS store, not in git)."""
    return len(data) < _LFS_POINTER_LIMIT and data.startswith(_LFS_HEADER) and b"\noid sha256:" in data


def _lfs_pointer(spec_file: SpecFile, size: int) -> Finding:
    return Finding("overlay-unreadable", spec_file.path, f"committed as a Git LFS pointer ({size} bytes): its content "
                   "is not in the repository and was not analysed", kind_of("overlay-unreadable").action,
                   backend=spec_file.backend)


def _unusable(context: DriftContext, spec_file: SpecFile) -> Finding | None:
    """Overlays the analysis cannot read as source; the others are still classified."""
    path, tree = spec_file.path, context.backend_files
    if tree.is_symlink(path):
        return Finding("overlay-symlink", path, "the overlay is a symbolic link; it was not analysed",
                       "replace the link by the file", backend=spec_file.backend)
    data = tree.read(path) or b""
    if b"\0" in data:
        return Finding("overlay-binary", path, "the overlay is binary; only identity with trunk was checked",
                       "", backend=spec_file.backend)
    if spec_file.is_python:
        text = data.decode("utf-8", errors="replace")
        # the shared parse says most overlays parse; only the others need the full facts, for the reason
        error = None if parses(text) else parse_module_facts(path, text, positions=False).error
        if error:
            return Finding("overlay-unparsable", path, f"the overlay is not valid Python: {error}",
                           "fix the syntax error; it would fail at import", backend=spec_file.backend)
    return None
