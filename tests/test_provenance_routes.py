"""Every route by which a backend's file stands in for trunk goes through the same record (issue 48.2): a file a
setup helper copies over trunk is merged by `drift --apply`, recorded in provenance.toml with its new base, judged
in sync by the next drift, and recorded by `provenance` like any overlay."""
from __future__ import annotations

import subprocess
from pathlib import Path

from sync.facts.trees import DiskTree
from sync.records.provenance import load_manifest
from tests.conftest import invoke
from tests.test_mechanisms import COPY_HELPER, HELPER, OURS, SEMANTIC_NEW, TRUNK_FILES
from tests.test_symbols import commit

COPY = "third_party/b/python/triton/language/semantic.py"
TRUNK = "python/triton/language/semantic.py"
SKELETON = {"third_party/b/backend/__init__.py": ""}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _repo(root: Path) -> Path:
    """Upstream tags old and new (new changes semantic.py); FlagTree on old copies its own semantic.py over
    trunk's through a setup helper; `upgraded` (checked out) holds the same on new."""
    subprocess.run(["git", "init", "-q", "-b", "up", str(root)], check=True)
    commit(root, TRUNK_FILES, "old")
    _git(root, "tag", "old")
    commit(root, {TRUNK: SEMANTIC_NEW}, "new")
    _git(root, "tag", "new")
    _git(root, "checkout", "-q", "-b", "flagtree", "old")
    commit(root, {**SKELETON, HELPER: COPY_HELPER, COPY: OURS}, "b: its semantic.py over trunk's")
    _git(root, "checkout", "-q", "-b", "upgraded", "new")
    commit(root, {**SKELETON, HELPER: COPY_HELPER, COPY: OURS}, "b: its semantic.py over trunk's (replayed)")
    return root


def _kinds(repo_dir: Path) -> dict[str, str]:
    result = invoke("drift", "--repo", str(repo_dir), "--from", "old", "--onto", "new", "--branch", "flagtree",
                    "--target", "upgraded", "--json")
    import json
    return {f["path"]: f["kind"] for g in json.loads(result.output)["groups"] for f in g["findings"]}


def test_drift_apply_records_a_setup_copys_new_base_and_the_next_drift_agrees(tmp_path: Path) -> None:
    repo_dir = _repo(tmp_path / "repo")
    assert _kinds(repo_dir)[COPY] == "overlay-auto-mergeable"
    applied = invoke("drift", "--repo", str(repo_dir), "--from", "old", "--onto", "new", "--branch", "flagtree",
                     "--target", "upgraded", "--apply")
    assert "committed the merged overlay(s)" in applied.output, applied.output
    manifest = load_manifest(DiskTree(repo_dir), "b")
    assert manifest is not None and COPY in manifest, "drift --apply said it recorded the new base"
    assert (manifest[COPY].tag, manifest[COPY].blob) == ("new", _git(repo_dir, "rev-parse", f"new:{TRUNK}").strip())
    assert _kinds(repo_dir)[COPY] == "overlay-in-sync"
    again = invoke("provenance", "--repo", str(repo_dir), "--tag", "new", "--backend", "b", "--branch", "upgraded")
    assert again.exit_code == 0, again.output


def test_provenance_records_a_setup_copy_merged_by_hand(tmp_path: Path) -> None:
    repo_dir = _repo(tmp_path / "repo")
    (repo_dir / COPY).write_text(OURS.replace("return x * 3 + y", "return x * 3 - y"))
    commit(repo_dir, {}, "b: merge new by hand")
    recorded = invoke("provenance", "--repo", str(repo_dir), "--tag", "new", "--from", "old", "--backend", "b")
    assert recorded.exit_code == 0, recorded.output
    assert (load_manifest(DiskTree(repo_dir), "b") or {})[COPY].tag == "new"
