"""Issue 48: a fix committed on the upgraded branch clears its finding, in drift --target as in status.

Found on the 3.7 move: the branch no longer called a removed pybind method, yet drift kept the error (the
analysis reads FlagTree's lines on the source branch and only moves them to the branch), and a shared-trunk
finding cannot be reviewed either, so drift could never exit 0.
"""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from sync.jobs.drift import DriftOptions, run_drift
from sync.jobs.review import fixed_on_branch
from sync.model import Finding
from tests.conftest import git
from tests.test_bindings import NEW_CC, OLD_CC
from tests.test_symbols import commit

SEMANTIC = "python/triton/language/semantic.py"
USE = "def lower(b):\n    b.keep_me(1)\n    return b.create_old_load(2)\n"


def _world(tmp_path: Path) -> Path:
    """v1 binds create_old_load, FlagTree (main) calls it, v2 removes it; sync/v2 is main replayed onto v2."""
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"python/src/ir.cc": OLD_CC}, "v1")
    git(repo, "tag", "v1")
    commit(repo, {SEMANTIC: USE}, "[FlagTree] lower through the builder")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"python/src/ir.cc": NEW_CC}, "v2")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "-b", "sync/v2", "v2")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "cherry-pick", "main")
    return repo


def _removed(repo: Path) -> list[Finding]:
    """What drift --target sync/v2 reports (its job: the world has no backend for the command to accept)."""
    report = run_drift(str(repo), old="v1", onto="v2", source="main", options=DriftOptions(target="sync/v2"))
    return [finding for finding in report.findings + list(report.notes)
            if finding.kind == "symbol-removed" and finding.details.get("declaration") == "create_old_load"]


def test_a_use_removed_on_the_branch_clears_its_finding(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    assert [f.details["sites"] for f in _removed(repo)] == [[f"{SEMANTIC}:3"]]  # the branch still calls it
    commit(repo, {SEMANTIC: USE.replace("return b.create_old_load(2)", "return b.keep_me(2)")}, "Port the load")
    assert _removed(repo) == []


def test_a_name_still_on_the_branch_keeps_its_finding(tmp_path: Path) -> None:
    """Only the name's absence from every file of the sites clears a finding: a call moved elsewhere in the
    same file is no fix."""
    repo = _world(tmp_path)
    moved = USE.replace("return b.create_old_load(2)", "return 2") + "def again(b):\n    return b.create_old_load(3)\n"
    commit(repo, {SEMANTIC: moved}, "Move the call")
    assert len(_removed(repo)) == 1


def test_a_declaration_named_with_its_kind_is_matched_by_its_last_identifier() -> None:
    """Findings name what FlagTree calls as "op LoadOp" or "TargetInfoBase::barrier": the call on the branch
    reads create<triton::LoadOp> or targetInfo.barrier(...), which still uses it."""
    branch = SimpleNamespace(read=lambda path: {"a.cpp": b"auto v = rewriter.create<triton::LoadOp>(loc, p);\n",
                                                "b.cpp": b"targetInfo.barrier(loc, rewriter);\n"}.get(path))
    for declaration, site in (("op LoadOp", "a.cpp:1"), ("TargetInfoBase::barrier", "b.cpp:1")):
        finding = Finding("call-no-overload", site.split(":")[0], "m", details={"declaration": declaration,
                                                                               "sites": [site]})
        assert not fixed_on_branch(finding, branch), declaration  # type: ignore[arg-type]
    gone = Finding("call-no-overload", "a.cpp", "m", details={"declaration": "op StoreOp", "sites": ["a.cpp:1"]})
    assert fixed_on_branch(gone, branch)  # type: ignore[arg-type]
