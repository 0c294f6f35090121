"""C++ copies of trunk files under spec/lib, compiled by the backend's own CMake library in trunk's place (as a
real FlagTree backend builds dozens of them): drift never advises deleting one, a stale one is merged like any
overlay, `drift --apply` records the base it merged to, and `provenance` does not record the new tag for a copy
nobody merged."""
from __future__ import annotations

import subprocess
from pathlib import Path

from sync.drift.run import analyse_drift
from sync.git import as_oid, merge_blobs, open_repo
from sync.jobs.revs import resolve_range, resolve_rev
from sync.records.provenance import load_manifest, manifest_path
from sync.facts.trees import DiskTree
from tests.conftest import invoke
from tests.test_symbols import commit

SPEC = "third_party/b/backend/spec/lib/Pass/"
SKELETON = {"python/triton/__init__.py": "", "third_party/b/backend/__init__.py": "",
            "third_party/b/backend/spec/triton/__init__.py": "",
            "third_party/b/backend/spec/lib/CMakeLists.txt": "add_triton_library(B_Pass Pass/Stale.cpp Pass/Same.cpp "
                                                            "Pass/Realigned.cpp Pass/Untouched.cpp)\n"}
STALE_OLD = "void stale() {\n  first();\n  second();\n}\n"
STALE_NEW = "void stale() {\n  first();\n  second(true);\n}\n"
SAME_OLD = "int same() {\n  return 1;\n}\n"
SAME_NEW = "int same() {\n  return 2;\n}\n"
# Found by searching random edits: the merge of these three is clean, but merging its result again from the
# same base conflicts, because git aligns the base-to-merge diff differently from the base-to-trunk one.
REALIGNED_OLD = "}\n{\na();\n}\na();\n{\n{\na();\n"
REALIGNED_OURS = "w();\n{\na();\na();\n{\n{\na();\n"
REALIGNED_NEW = "}\n{\n}\na();\n}\na();\n{\ny();\n{\na();\n"
# Upstream changes lines 2 and 9; the backend changed line 9 its own way: one conflict, one clean hunk.
UNTOUCHED_OLD = "".join(f"  step{n}();\n" for n in range(1, 11))
UNTOUCHED_NEW = UNTOUCHED_OLD.replace("step2()", "step2(ctx)").replace("step9()", "step9(ctx)")
UNTOUCHED_OURS = UNTOUCHED_OLD.replace("step9()", "backendStep9()")
UNTOUCHED_HAND = UNTOUCHED_OLD.replace("step2()", "step2(ctx)").replace("step9()", "backendStep9(ctx)")

# A per-function spec library under the trunk file's path: one replaced function, no copy of the file.
HEAD = '#include "Pass.h"\n\n\nnamespace pass {\n'
LIBRARY_OLD = HEAD + "".join(f"void pass{n}() {{\n  run({n});\n}}\n\n" for n in range(1, 9)) + "}\n"
LIBRARY_NEW = '#include "Context.h"\n' + LIBRARY_OLD.replace("run(2)", "run(2, ctx)")
LIBRARY_OURS = HEAD + "void pass5() {\n  backendRun(5);\n}\n" + "}\n"
# A spec module whose trunk namesake upstream deleted (and the upgraded branch no longer has).
GONE = "python/triton/ops/gone.py"
SPEC_GONE = "third_party/b/backend/spec/triton/ops/gone.py"

TRUNK = {"lib/Pass/Library.cpp": LIBRARY_OLD, GONE: "def gone():\n    return 1\n", "lib/Pass/Stale.cpp": STALE_OLD, "lib/Pass/Same.cpp": SAME_OLD, "lib/Pass/Realigned.cpp": REALIGNED_OLD,
         "lib/Pass/Untouched.cpp": UNTOUCHED_OLD}
UPSTREAM_CHANGE = {"lib/Pass/Library.cpp": LIBRARY_NEW, "lib/Pass/Stale.cpp": STALE_NEW, "lib/Pass/Same.cpp": SAME_NEW,
                   "lib/Pass/Realigned.cpp": REALIGNED_NEW, "lib/Pass/Untouched.cpp": UNTOUCHED_NEW}
COPIES = {SPEC + "Library.cpp": LIBRARY_OURS, SPEC_GONE: "def gone():\n    return 2\n", SPEC + "Stale.cpp": STALE_OLD, SPEC + "Same.cpp": SAME_NEW, SPEC + "Realigned.cpp": REALIGNED_OURS,
          SPEC + "Untouched.cpp": UNTOUCHED_OURS}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _repo(tmp_path: Path) -> Path:
    """Upstream tags old and new; FlagTree on old adds b's copies; `upgraded` (checked out) holds them on new."""
    subprocess.run(["git", "init", "-q", "-b", "up", str(tmp_path)], check=True)
    commit(tmp_path, {**SKELETON, **TRUNK}, "old")
    _git(tmp_path, "tag", "old")
    commit(tmp_path, UPSTREAM_CHANGE, "new", remove=(GONE,))
    _git(tmp_path, "tag", "new")
    _git(tmp_path, "checkout", "-q", "-b", "flagtree", "old")
    commit(tmp_path, COPIES, "b: copies of trunk passes")
    _git(tmp_path, "checkout", "-q", "-b", "upgraded", "new")
    commit(tmp_path, COPIES, "b: copies of trunk passes (replayed)")
    return tmp_path


def _findings(repo_dir: Path) -> dict[str, object]:
    repo = open_repo(str(repo_dir))
    result = analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), resolve_rev(repo, "upgraded"))
    return {finding.path: finding for finding in result.findings if finding.path.startswith(SPEC)}


def test_a_copy_left_at_its_base_is_merged_not_deleted(tmp_path: Path) -> None:
    repo_dir = _repo(tmp_path)
    stale = _findings(repo_dir)[SPEC + "Stale.cpp"]
    assert stale.kind == "overlay-auto-mergeable", stale.message  # was overlay-redundant: "delete the overlay"
    repo = open_repo(str(repo_dir))
    merged = analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), resolve_rev(repo, "upgraded")).merged
    assert {m.path: m.data for m in merged}[SPEC + "Stale.cpp"] == STALE_NEW.encode()


def test_a_copy_identical_to_the_new_trunk_stays(tmp_path: Path) -> None:
    same = _findings(_repo(tmp_path))[SPEC + "Same.cpp"]
    assert same.kind == "overlay-in-sync" and not same.next_step
    assert "the backend's build compiles this copy" in same.message


def test_drift_apply_records_the_base_it_merged_to_so_the_next_drift_agrees(tmp_path: Path) -> None:
    repo_dir = _repo(tmp_path)
    args = ("drift", "--repo", str(repo_dir), "--from", "old", "--onto", "new", "--branch", "flagtree",
            "--target", "upgraded", "--json")
    applied = invoke(*args, "--apply")
    assert applied.exit_code in (0, 1), applied.output
    assert (repo_dir / SPEC / "Realigned.cpp").read_text() != REALIGNED_OURS  # the checkout moved with the commit
    manifest = load_manifest(DiskTree(repo_dir), "b")
    assert manifest is not None
    new_blob = _git(repo_dir, "rev-parse", "new:lib/Pass/Realigned.cpp").strip()
    assert (manifest[SPEC + "Realigned.cpp"].tag, manifest[SPEC + "Realigned.cpp"].blob) == ("new", new_blob)
    # A file --apply did not merge keeps the base drift used for it: trunk at the old tag.
    old_blob = _git(repo_dir, "rev-parse", "old:lib/Pass/Untouched.cpp").strip()
    assert (manifest[SPEC + "Untouched.cpp"].tag, manifest[SPEC + "Untouched.cpp"].blob) == ("old", old_blob)
    repo = open_repo(str(repo_dir))
    blob = lambda rev: as_oid(_git(repo_dir, "rev-parse", rev).strip())
    again = merge_blobs(repo, "Realigned.cpp", blob("old:lib/Pass/Realigned.cpp"),
                        blob(f"upgraded:{SPEC}Realigned.cpp"), blob("new:lib/Pass/Realigned.cpp"), hunks=False)
    assert not again.clean  # the premise: without the recorded base, the next drift would call it conflicting
    # Only files drift merges, and only those whose trunk file the branch still has (else check calls the entry
    # stale, FT015): not the per-function library, not the spec module of a deleted trunk file.
    assert SPEC + "Library.cpp" not in manifest and SPEC_GONE not in manifest
    kinds = {path: finding.kind for path, finding in _findings(repo_dir).items()}
    assert kinds[SPEC + "Realigned.cpp"] == "overlay-in-sync"  # merged again from old, it conflicts
    assert kinds[SPEC + "Stale.cpp"] == "overlay-in-sync"
    assert kinds[SPEC + "Untouched.cpp"] == "overlay-conflicting"


def test_provenance_keeps_the_old_base_of_a_conflicting_copy_nobody_merged(tmp_path: Path) -> None:
    repo_dir = _repo(tmp_path)
    args = ("provenance", "--repo", str(repo_dir), "--tag", "new", "--from", "old", "--backend", "b")
    left = invoke(*args)
    assert left.exit_code == 1 and SPEC + "Untouched.cpp" in left.output.split("left at their old base:")[1]
    assert "Library.cpp" not in left.output  # a spec library is no copy: merging trunk's file into it means nothing
    # on record with the old base it is left at (issue 48: check then agrees with provenance), not the new one
    assert (load_manifest(DiskTree(repo_dir), "b") or {})[SPEC + "Untouched.cpp"].tag == "old"
    # Merged by hand: upstream's clean hunk taken, the conflicting line resolved the backend's way.
    (repo_dir / SPEC / "Untouched.cpp").write_text(UNTOUCHED_HAND)
    for path, text in {"Stale.cpp": STALE_NEW, "Realigned.cpp": REALIGNED_NEW}.items():
        (repo_dir / SPEC / path).write_text(text)
    commit(repo_dir, {}, "b: merge 'new' by hand")
    (repo_dir / manifest_path("b")).unlink(missing_ok=True)
    recorded = invoke(*args)
    assert recorded.exit_code == 0, recorded.output
    entry = (load_manifest(DiskTree(repo_dir), "b") or {})[SPEC + "Untouched.cpp"]
    assert entry.tag == "new"


UNTOUCHED_MARKED = UNTOUCHED_OLD.replace("step2()", "step2(ctx)").replace(
    "  step9();\n", "<<<<<<< b\n  backendStep9();\n=======\n  step9(ctx);\n>>>>>>> new\n")


def test_a_copy_holding_a_committed_conflict_block_is_never_recorded_nor_in_sync(tmp_path: Path) -> None:
    """Issue 47.6: the clean hunk merged, the conflicting one committed with its markers. provenance leaves the
    file at its old base and says why (exit 1); drift never calls it in sync, even with the new tag recorded."""
    repo_dir = _repo(tmp_path)
    (repo_dir / SPEC / "Untouched.cpp").write_text(UNTOUCHED_MARKED)
    commit(repo_dir, {}, "b: merge 'new', one conflict left")
    args = ("provenance", "--repo", str(repo_dir), "--tag", "new", "--from", "old", "--backend", "b")
    left = invoke(*args)
    assert left.exit_code == 1, left.output
    assert SPEC + "Untouched.cpp" in left.output and "conflict markers" in left.output
    # on record with the old base it is left at (issue 48: check then agrees with provenance), not the new one
    assert (load_manifest(DiskTree(repo_dir), "b") or {})[SPEC + "Untouched.cpp"].tag == "old"
    # A manifest that names the new tag anyway (written by hand, or by an older release): still not in sync.
    new_blob = _git(repo_dir, "rev-parse", "new:lib/Pass/Untouched.cpp").strip()
    (repo_dir / manifest_path("b")).write_text(
        f'[[file]]\npath = "{SPEC}Untouched.cpp"\ntrunk = "lib/Pass/Untouched.cpp"\ntag = "new"\nblob = "{new_blob}"\n')
    commit(repo_dir, {}, "b: record new")
    marked = _findings(repo_dir)[SPEC + "Untouched.cpp"]
    assert marked.kind == "overlay-marked" and marked.severity == "error", (marked.kind, marked.message)
