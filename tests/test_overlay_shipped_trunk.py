"""An overlay is redundant only against the trunk file that loads in its place: the upgraded branch's, with
FlagTree's own trunk changes, not upstream's at the new tag (a user deleting the overlay on our advice would
otherwise turn FlagTree's trunk lines on for that backend)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sync.drift.run import analyse_drift
from sync.git import open_repo
from sync.jobs.revs import resolve_range, resolve_rev
from tests.test_symbols import commit

HOOK = "from triton.flagtree_spec import spec_path\n\nspec_path(__path__)\n"
JIT_OLD = "def run(x):\n    return x\n\n\ndef launch(x):\n    return run(x)\n"
JIT_NEW = "def run(x):\n    return x\n\n\ndef launch(x, grid=None):\n    return run(x)\n"
FLAGTREE_DEF = "\n\ndef hint_trigger():\n    return True\n"
TRUNK = "python/triton/runtime/jit.py"
OVERLAY = "third_party/b/backend/spec/triton/runtime/jit.py"
BASE = {"python/triton/__init__.py": "", "python/triton/runtime/__init__.py": HOOK,
        "third_party/b/backend/__init__.py": "", "third_party/b/backend/spec/triton/__init__.py": ""}


def _repo(tmp_path: Path, flagtree_change) -> Path:
    """Upstream old/new tags; FlagTree on old changes trunk jit.py (`flagtree_change` of upstream's text) and adds
    an overlay of b equal to upstream's old jit.py; the upgraded branch on new holds both, the overlay merged to
    upstream's new file."""
    subprocess.run(["git", "init", "-q", "-b", "up", str(tmp_path)], check=True)
    git = lambda *args: subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)
    commit(tmp_path, {**BASE, TRUNK: JIT_OLD}, "old")
    git("tag", "old")
    commit(tmp_path, {TRUNK: JIT_NEW}, "new")
    git("tag", "new")
    git("checkout", "-q", "-b", "flagtree", "old")
    commit(tmp_path, {TRUNK: flagtree_change(JIT_OLD), OVERLAY: JIT_OLD}, "FlagTree")
    git("checkout", "-q", "-b", "upgraded", "new")
    commit(tmp_path, {TRUNK: flagtree_change(JIT_NEW), OVERLAY: JIT_NEW}, "FlagTree, upgraded")
    return tmp_path


def _overlay_finding(repo_dir: Path):
    repo = open_repo(str(repo_dir))
    result = analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), resolve_rev(repo, "upgraded"))
    return next(f for f in result.findings if f.path == OVERLAY)


# FlagTree's trunk adds a statement of its own (trunk holds every statement of the overlay), or a line in a
# function (the overlay is trunk less that line): either way the overlay keeps the backend off FlagTree's code.
@pytest.mark.parametrize("flagtree_change", [
    lambda text: text + FLAGTREE_DEF,
    lambda text: text.replace("    return run(x)", "    hint_trigger()\n    return run(x)"),
], ids=["statement", "line"])
def test_an_overlay_that_keeps_a_backend_off_flagtrees_trunk_lines_is_not_redundant(tmp_path: Path,
                                                                                   flagtree_change) -> None:
    finding = _overlay_finding(_repo(tmp_path, flagtree_change))
    assert finding.kind == "overlay-in-sync"
    assert "FlagTree's own changes" in finding.message and not finding.next_step


def test_an_overlay_equal_to_the_trunk_that_ships_is_redundant(tmp_path: Path) -> None:
    finding = _overlay_finding(_repo(tmp_path, lambda text: text))
    assert finding.kind == "overlay-redundant"
    assert finding.message == f"identical to {TRUNK} at the new tag"
    # Issue 45: nothing breaks where a copy equals what trunk ships; deleting it is a clean-up, not a
    # change the upgrade needs (judged weak on the 3.7 move): a look, not a warning.
    assert finding.severity == "info"


def _in_memory_finding(repo_dir: Path):
    repo = open_repo(str(repo_dir))
    result = analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None)
    return next(f for f in result.findings if f.path == OVERLAY)


def test_an_overlay_equal_to_its_base_is_redundant_when_trunk_has_nothing_of_flagtrees(tmp_path: Path) -> None:
    """Its 3-way merge can only give upstream's new file, which loads anyway without it (seen on FlagTree:
    reported auto-mergeable, then redundant once --apply had merged it)."""
    finding = _in_memory_finding(_repo(tmp_path, lambda text: text))
    assert finding.kind == "overlay-redundant" and "at its base (old)" in finding.message


def test_an_overlay_equal_to_its_base_that_keeps_flagtree_lines_out_is_merged(tmp_path: Path) -> None:
    finding = _in_memory_finding(_repo(tmp_path, lambda text: text + FLAGTREE_DEF))
    assert finding.kind == "overlay-auto-mergeable"


def test_an_overlay_identical_to_flagtrees_own_trunk_is_redundant_whatever_the_upgrade_left_in_trunk(
        tmp_path: Path) -> None:
    """Seen on a real branch: the replay left conflict markers in trunk jit.py, the overlay is FlagTree's own trunk
    jit.py (check calls it identical to trunk), and drift offered to merge it instead."""
    _repo(tmp_path, lambda text: text)
    marked = JIT_NEW + "<<<<<<< new\n=======\n>>>>>>> FlagTree\n"
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", "upgraded"], check=True)
    commit(tmp_path, {TRUNK: marked, OVERLAY: JIT_OLD}, "the replay as it came out")
    finding = _overlay_finding(tmp_path)
    assert finding.kind == "overlay-redundant", finding.message
    assert "on the FlagTree branch (flagtree)" in finding.message


@pytest.mark.parametrize("name", ["testing.py", "knobs.py"])
def test_a_root_level_copy_is_merged_when_python_triton_itself_is_hijacked(tmp_path: Path, name: str) -> None:
    """Illegal (check: FT018), but with python/triton hijacked Python loads it in trunk's place, so it drifts like
    any overlay; seen on a real branch with upstream's +39/-11 to testing.py and no finding at all. knobs.py, which
    the seed specializes in trunk directly, is no different once the root is hijacked."""
    testing_old = "import os\n\n\ndef bench(fn):\n    return fn()\n\n\ndef other():\n    return 1\n"
    testing_new = testing_old.replace("return 1", "return 2")
    copy = testing_old.replace("import os", "import os  # backend")
    subprocess.run(["git", "init", "-q", "-b", "up", str(tmp_path)], check=True)
    git = lambda *args: subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)
    commit(tmp_path, {**BASE, "python/triton/__init__.py": HOOK, f"python/triton/{name}": testing_old}, "old")
    git("tag", "old")
    commit(tmp_path, {f"python/triton/{name}": testing_new}, "new")
    git("tag", "new")
    git("checkout", "-q", "-b", "flagtree", "old")
    commit(tmp_path, {f"third_party/b/backend/spec/triton/{name}": copy}, "FlagTree")
    repo = open_repo(str(tmp_path))
    result = analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None)
    found = [f for f in result.findings if f.path == f"third_party/b/backend/spec/triton/{name}"]
    assert [f.kind for f in found] == ["overlay-auto-mergeable"]
    assert result.merged[0].data.decode() == testing_new.replace("import os", "import os  # backend")
