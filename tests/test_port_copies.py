"""Issue 50 (rule merged-copy): port merges upstream's change into the copies that track a trunk file (under another
name, or in the backend's own package) where the 3-way merge is clean, one commit per backend, recorded as
drift --apply records an overlay merge; a conflicting merge stays a finding, and a setup copy is left to --apply."""
from __future__ import annotations

import subprocess
from pathlib import Path

from sync.drift.run import analyse_drift
from sync.git import GitTree, open_repo
from sync.jobs.port import PortOptions, PortResult, read_branch_text, run_port
from sync.jobs.revs import resolve_range, resolve_rev
from sync.records.provenance import load_manifest, manifest_path, write_manifest
from tests.test_mechanisms import COPY_HELPER, OURS, PACKAGE_HELPER, SEMANTIC, SEMANTIC_NEW, TRUNK_FILES
from tests.test_symbols import commit

RENAMED = "third_party/b/backend/ops.py"  # b's copy of semantic.py under another name: merges cleanly
PACKAGED = "third_party/c/python/triton/language/semantic.py"  # c ships it in its own triton package
CONFLICTING = "third_party/d/backend/ops.py"  # d changed the very line upstream changed
SETUP = "third_party/e/python/triton/language/semantic.py"  # e's setup helper copies it over trunk: an overlay
OWN = "third_party/f/backend/ops.py"  # f carries its own tree; its one copy merges cleanly: merged
OWN_CLEAN = "third_party/g/backend/ops.py"  # g carries its own tree: this copy merges cleanly...
OWN_CONFLICTING = "third_party/g/backend/ops2.py"  # ...and this one conflicts: neither is merged
SPLIT = "third_party/h/backend/ops.py"  # merges cleanly, but h's core.py beside it is no copy and upstream changed
MERGED = OURS.replace("return x * 3 + y", "return x * 3 - y")
CONFLICTS = SEMANTIC.replace("return x * 3 + y", "return x * 3 * y")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def _world(tmp_path: Path) -> Path:
    """old and new tags (new changes semantic.py); FlagTree's four backends on old; sync/new: new with them."""
    _git(tmp_path, "init", "-q", "-b", "up")
    commit(tmp_path, TRUNK_FILES, "old")
    _git(tmp_path, "tag", "old")
    commit(tmp_path, {"python/triton/language/semantic.py": SEMANTIC_NEW, "python/triton/language/core.py": "x = 2\n"},
           "Change op_3 (#7)")
    _git(tmp_path, "tag", "new")
    _git(tmp_path, "checkout", "-q", "-b", "flagtree", "old")
    commit(tmp_path, {RENAMED: OURS, PACKAGED: OURS, "python/setup_tools/utils/c.py": PACKAGE_HELPER.replace("/b/", "/c/"),
                      CONFLICTING: CONFLICTS, OWN: OURS, "third_party/f/include/triton/Own.h": "#pragma once\n",
                      OWN_CLEAN: OURS, OWN_CONFLICTING: CONFLICTS, "third_party/g/include/triton/Own.h": "#pragma once\n",
                      SPLIT: OURS, "third_party/h/backend/core.py": "x = 1  # h's own\n",
                      SETUP: OURS, "python/setup_tools/utils/e.py": COPY_HELPER.replace("/b/", "/e/")}, "FlagTree")
    _git(tmp_path, "checkout", "-q", "-b", "sync/new", "new")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@e", "cherry-pick", "flagtree")
    _git(tmp_path, "checkout", "-q", "flagtree")
    return tmp_path


def _port(repo: Path, dry_run: bool = False) -> PortResult:
    return run_port(str(repo), old="old", onto="new", source="flagtree",
                    options=PortOptions(target="sync/new", dry_run=dry_run))


def _kinds(repo: Path) -> dict[str, str]:
    pygit = open_repo(str(repo))
    result = analyse_drift(pygit, resolve_range(pygit, "old", "new", "flagtree"), resolve_rev(pygit, "sync/new"))
    return {f.path: f.kind for f in result.findings if f.path in (RENAMED, PACKAGED, CONFLICTING, SETUP, OWN, OWN_CLEAN,
                                                                 OWN_CONFLICTING, SPLIT)}


def test_port_merges_each_backends_clean_copies_in_one_commit_and_leaves_a_conflict(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    assert _kinds(repo) == {RENAMED: "copy-stale", PACKAGED: "copy-stale", CONFLICTING: "copy-stale",
                            SETUP: "overlay-auto-mergeable", OWN: "copy-mergeable", OWN_CLEAN: "copy-mergeable",
                            OWN_CONFLICTING: "copy-conflicting", SPLIT: "copy-stale"}
    before = _git(repo, "rev-parse", "sync/new").strip()
    result = _port(repo)
    log = _git(repo, "log", "--format=%s", f"{before}..sync/new").splitlines()
    assert log == ["port: merge upstream into f's copies (1 file)", "port: merge upstream into c's copies (1 file)",
                   "port: merge upstream into b's copies (1 file)"]
    pygit = open_repo(str(repo))
    assert read_branch_text(pygit, "sync/new", RENAMED) == MERGED
    assert read_branch_text(pygit, "sync/new", PACKAGED) == MERGED
    assert read_branch_text(pygit, "sync/new", SETUP) == OURS  # drift --apply's, not port's
    assert "Rule: merged-copy" in _git(repo, "log", "-1", "--format=%b", "sync/new")
    left = {path: why for copy in result.copies for path, why in copy.left}
    assert "conflicts in 1 hunk(s)" in left[CONFLICTING] and result.left_any
    assert read_branch_text(pygit, "sync/new", CONFLICTING) == CONFLICTS
    # g's own tree cannot move to the new tag as one: its clean copy stays too, with the reason
    assert read_branch_text(pygit, "sync/new", OWN) == MERGED and read_branch_text(pygit, "sync/new", OWN_CLEAN) == OURS
    # h's copy would take upstream's change without the part of it in core.py beside it
    assert read_branch_text(pygit, "sync/new", SPLIT) == OURS and "split upstream's change" in left[SPLIT]
    assert "mix two upstream versions" in left["1 copy of g's own tree (copy-mergeable)"]
    # the next drift agrees that both copies hold upstream's change; the conflicting one stays a finding
    assert _kinds(repo) == {RENAMED: "overlay-in-sync", PACKAGED: "overlay-in-sync", CONFLICTING: "copy-stale",
                            SETUP: "overlay-auto-mergeable", OWN: "overlay-in-sync", OWN_CLEAN: "copy-mergeable",
                            OWN_CONFLICTING: "copy-conflicting", SPLIT: "copy-stale"}


def test_a_merged_package_copy_is_recorded_as_drift_apply_records_it_and_provenance_agrees(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    _port(repo)
    pygit = open_repo(str(repo))
    branch = GitTree.of_commit(pygit, pygit.revparse_single("sync/new").id, "sync/new")
    new = GitTree.of_commit(pygit, pygit.revparse_single("new").id, "new")
    entry = (load_manifest(branch, "c") or {})[PACKAGED]
    assert (entry.tag, entry.blob) == ("new", str(new.blob_id("python/triton/language/semantic.py")))
    old = GitTree.of_commit(pygit, pygit.revparse_single("old").id, "old")
    recorded = write_manifest(pygit, tmp_path / "wt", branch, "c", "new", new, old)
    assert recorded.unmerged == ()  # provenance finds the merged copy holds the tag's change
    assert recorded.manifest.read_text(encoding="utf-8") == read_branch_text(pygit, "sync/new", manifest_path("c"))


def test_a_dry_run_prints_the_merge_and_writes_nothing(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    before = _git(repo, "for-each-ref")
    result = _port(repo, dry_run=True)
    patch = "".join(copy.patch for copy in result.copies)
    assert f"+++ b/{RENAMED}" in patch and "+    return x * 3 - y" in patch and CONFLICTING not in patch
    assert _git(repo, "for-each-ref") == before


def test_a_merge_whose_gate_fails_stays_off_the_branch(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    before = _git(repo, "rev-parse", "sync/new").strip()
    result = run_port(str(repo), old="old", onto="new", source="flagtree",
                      options=PortOptions(target="sync/new", gate="exit 3"))
    assert _git(repo, "rev-parse", "sync/new").strip() == before
    assert [copy.backend for copy in result.copies if copy.gate is not None and not copy.gate.passed] == ["b", "c", "f"]
    assert result.left_any and not any(copy.committed for copy in result.copies)
