"""Specialization outside the seed's hooks (issue 34): a setup helper's copies, a package mapped to a backend's copy,
a copy of a trunk file under another name. Each with a small fork that uses it and one that does not; describe
names the mechanism, check reports it, drift merges every copy with its trunk file."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sync.facts.callsites import index_trunk_hooks
from sync.facts.copies import MIN_LINES, NEAR
from sync.check.policy import check_tree
from sync.facts.roles import classified_files
from sync.drift.run import analyse_drift
from sync.git import open_repo
from sync.jobs.describe import describe_tree
from sync.jobs.revs import resolve_range
from sync.facts.layout import backend_names, copy_files
from sync.facts.trees import DiskTree
from tests.test_check import write_tree
from tests.test_symbols import commit

HELPER = "python/setup_tools/utils/b.py"
OWN_HEADER = "third_party/b/include/triton/Dialect/Own.h"  # b builds its own copy of trunk's headers
# A trunk module long enough that sameness of content cannot be chance (at least MIN_LINES non-blank lines).
SEMANTIC = "".join(f"def op_{n}(x, y):\n    return x * {n} + y\n\n\n" for n in range(8))
SEMANTIC_NEW = SEMANTIC.replace("return x * 3 + y", "return x * 3 - y")
TRUNK_FILES = {"python/triton/__init__.py": "", "python/triton/language/__init__.py": "",
               "python/triton/language/semantic.py": SEMANTIC, "python/triton/language/core.py": "x = 1\n"}
COPY_HELPER = """import shutil
from pathlib import Path


def install_extension(*args, **kwargs):
    python_dir = Path(__file__).parent.parent.parent
    source = python_dir / "../third_party/b/python/triton"
    shutil.copy(source / "language/semantic.py", python_dir / "triton" / "language/semantic.py")
"""
PACKAGE_HELPER = """ROOT = "third_party/b/python"


def get_package_dir():
    return {"": ROOT}
"""
OURS = SEMANTIC.replace("return x * 0 + y", "return y")  # the backend's change: trunk's file less one multiplication


def files_of(tmp_path: Path, files: dict[str, str]) -> DiskTree:
    return DiskTree(write_tree(tmp_path, {**TRUNK_FILES, **files}))


def roles(tree: DiskTree) -> dict[str, tuple[str, str | None]]:
    return {item.file.path: (item.role, item.file.trunk_path) for item in classified_files(tree, index_trunk_hooks(tree))}


def test_a_setup_helpers_copy_call_is_an_overlay_of_its_destination(tmp_path: Path) -> None:
    tree = files_of(tmp_path, {HELPER: COPY_HELPER, "third_party/b/python/triton/language/semantic.py": OURS})
    assert roles(tree)["third_party/b/python/triton/language/semantic.py"] == \
        ("setup-copy", "python/triton/language/semantic.py")
    assert backend_names(tree) == ["b"]
    described = describe_tree(tree)["backends"]["b"]
    assert described["mechanisms"] == ["setup-copy"]
    assert described["copies"] == {"third_party/b/python/triton/language/semantic.py": "python/triton/language/semantic.py"}
    found = [f for f in check_tree(tree) if f.code == "FT022"]
    assert [(f.path, f.backend, f.severity) for f in found] == [(HELPER, "b", "warning")]
    assert "spec_path" in found[0].next_step


@pytest.mark.parametrize("helper", [
    # a build output, not in the tree: nothing to drift
    'import shutil\n\ndef install_extension():\n    shutil.copy("build/libtriton.so", "python/triton/_C/libtriton.so")\n',
    # a path from a function's result: never guessed at
    'import shutil\nfrom build_helpers import get_cmake_dir\n\n\ndef install_extension():\n'
    '    shutil.copy(get_cmake_dir() / "semantic.py", "python/triton/language/semantic.py")\n',
    # a name bound twice: not one literal path
    'import shutil\nSRC = "third_party/b/python/triton/language/semantic.py"\nSRC = "elsewhere.py"\n\n\n'
    'def install_extension():\n    shutil.copy(SRC, "python/triton/language/semantic.py")\n',
    # copies that land outside trunk's package
    'import shutil\n\ndef install_extension():\n    shutil.copy("third_party/b/python/triton/language/semantic.py", '
    '"third_party/b/backend/semantic.py")\n',
], ids=["build-output", "computed", "rebound", "outside-trunk"])
def test_copies_the_helper_does_not_make_over_trunk_are_not_setup_copies(tmp_path: Path, helper: str) -> None:
    tree = files_of(tmp_path, {HELPER: helper, "third_party/b/python/triton/language/semantic.py": OURS})
    assert copy_files(tree) == []
    assert not [f for f in check_tree(tree) if f.code in ("FT022", "FT023")]


def test_copytree_copies_every_file_below_the_source(tmp_path: Path) -> None:
    helper = ('import shutil, os\n\ndef install_extension():\n    src = os.path.join("third_party", "b", "python", '
              '"triton", "language")\n    shutil.copytree(src, "python/triton/language", dirs_exist_ok=True)\n')
    tree = files_of(tmp_path, {HELPER: helper, "third_party/b/python/triton/language/semantic.py": OURS,
                               "third_party/b/python/triton/language/extra_ops.py": "def extra():\n    pass\n"})
    found = roles(tree)
    assert found["third_party/b/python/triton/language/semantic.py"][0] == "setup-copy"
    assert found["third_party/b/python/triton/language/extra_ops.py"][0] == "new-module"


def test_a_package_mapped_to_a_backends_tree_makes_each_file_an_overlay(tmp_path: Path) -> None:
    tree = files_of(tmp_path, {HELPER: PACKAGE_HELPER, "third_party/b/python/triton/language/semantic.py": OURS,
                               "third_party/b/python/triton/language/core.py": "x = 1\n",
                               "third_party/b/python/triton/language/mine.py": "y = 2\n",
                               "third_party/b/python/test/test_it.py": "def test():\n    pass\n"})
    found = roles(tree)
    assert found["third_party/b/python/triton/language/semantic.py"] == \
        ("package-copy", "python/triton/language/semantic.py")
    assert found["third_party/b/python/triton/language/core.py"][0] == "package-copy"  # unchanged, but shipped
    assert found["third_party/b/python/triton/language/mine.py"][0] == "new-module"
    assert "third_party/b/python/test/test_it.py" not in found  # not in the triton package
    assert describe_tree(tree)["backends"]["b"]["mechanisms"] == ["package-copy"]
    found_check = [f for f in check_tree(tree) if f.code == "FT023"]
    assert len(found_check) == 1 and "3 file(s), 2 of them in place of a trunk file" in found_check[0].message


def test_a_package_dir_for_another_package_is_no_copy_of_triton(tmp_path: Path) -> None:
    helper = 'def get_package_dir():\n    return {"proton": "third_party/b/proton"}\n'
    tree = files_of(tmp_path, {HELPER: helper, "third_party/b/proton/semantic.py": "z = 1\n"})
    assert copy_files(tree) == [] and backend_names(tree) == []


def test_a_backend_file_with_a_trunk_files_content_is_a_copy_of_it(tmp_path: Path) -> None:
    spec = "third_party/b/backend/spec/triton/language/b/semantic_b.py"
    tree = files_of(tmp_path, {"python/triton/language/__init__.py": "from triton.flagtree_spec import spec_path\n"
                                                                      "spec_path(__path__)\n",
                               spec: SEMANTIC, "third_party/b/backend/ops.py": OURS})
    found = roles(tree)
    assert found[spec] == ("renamed-copy", "python/triton/language/semantic.py")
    assert found["third_party/b/backend/ops.py"] == ("renamed-copy", "python/triton/language/semantic.py")
    by_path = {f.path: f for f in check_tree(tree) if f.code == "FT024"}
    assert set(by_path) == {spec, "third_party/b/backend/ops.py"}
    assert by_path[spec].message.startswith("identical to python/triton/language/semantic.py")
    assert by_path[spec].related_path == "python/triton/language/semantic.py"


@pytest.mark.parametrize("text", [
    "\n".join(SEMANTIC.splitlines()[: (MIN_LINES - 1) // 2 * 4]) + "\n",  # identical lines, under the size floor
    "".join(f"def op_{n}(x, y):\n    return x ** {n} % y\n\n\n" for n in range(8)),  # the same names, other code
    SEMANTIC[: len(SEMANTIC) // 2] + "".join(f"def other_{n}(a):\n    return a - {n}\n\n\n" for n in range(5)),
], ids=["under-floor", "same-names", "half"])
def test_similar_names_or_a_share_under_the_threshold_are_no_copy(tmp_path: Path, text: str) -> None:
    tree = files_of(tmp_path, {"third_party/b/backend/semantic.py": text})
    assert "third_party/b/backend/semantic.py" not in roles(tree)
    assert not [f for f in check_tree(tree) if f.code == "FT024"]


def test_the_threshold_is_a_share_of_the_larger_file(tmp_path: Path) -> None:
    """A copy with a tail of its own stays a copy while the tail is under 1 - NEAR of the whole."""
    lines = sum(1 for line in SEMANTIC.splitlines() if line.strip())
    tail_ok = "".join(f"extra_{n} = {n}\n" for n in range(int(lines * (1 / NEAR - 1))))
    tail_long = "".join(f"extra_{n} = {n}\n" for n in range(int(lines * (1 / NEAR - 1)) + 2))
    assert roles(files_of(tmp_path / "a", {"third_party/b/x.py": SEMANTIC + tail_ok}))["third_party/b/x.py"][0] \
        == "renamed-copy"
    assert "third_party/b/x.py" not in roles(files_of(tmp_path / "b", {"third_party/b/x.py": SEMANTIC + tail_long}))


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def _fork(tmp_path: Path, backend_files: dict[str, str]) -> Path:
    """Upstream old and new tags (new changes semantic.py); FlagTree on old adds the backend's files."""
    subprocess.run(["git", "init", "-q", "-b", "up", str(tmp_path)], check=True)
    upstream = {**TRUNK_FILES, "third_party/amd/backend/driver.py": SEMANTIC.replace("op_", "drv_")}
    commit(tmp_path, upstream, "old")
    _git(tmp_path, "tag", "old")
    commit(tmp_path, {"python/triton/language/semantic.py": SEMANTIC_NEW,
                      "third_party/amd/backend/driver.py": SEMANTIC_NEW.replace("op_", "drv_")}, "new")
    _git(tmp_path, "tag", "new")
    _git(tmp_path, "checkout", "-q", "-b", "flagtree", "old")
    commit(tmp_path, backend_files, "FlagTree")
    return tmp_path


@pytest.mark.parametrize("files, path, route, kind", [
    ({HELPER: COPY_HELPER, "third_party/b/python/triton/language/semantic.py": OURS},
     "third_party/b/python/triton/language/semantic.py", "copied over python/triton/language/semantic.py",
     "overlay-auto-mergeable"),
    ({HELPER: PACKAGE_HELPER, "third_party/b/python/triton/language/semantic.py": OURS},
     "third_party/b/python/triton/language/semantic.py", "ships in place of python/triton/language/semantic.py",
     "copy-stale"),
    ({"third_party/b/backend/ops.py": OURS}, "third_party/b/backend/ops.py",
     "a copy of python/triton/language/semantic.py under another name", "copy-stale"),
    ({"third_party/b/backend/ops.py": OURS, OWN_HEADER: "#pragma once\n"}, "third_party/b/backend/ops.py",
     "a copy of python/triton/language/semantic.py under another name", "copy-mergeable"),
], ids=["setup-copy", "package-copy", "renamed-copy", "renamed-copy-own-tree"])
def test_drift_merges_every_copy_with_its_trunk_file(tmp_path: Path, files: dict[str, str], path: str,
                                                     route: str, kind: str) -> None:
    """A setup copy lands in trunk's place: an overlay, merged for --apply. A package copy or a copy under another
    name replaces nothing of trunk's (issue 33): --apply leaves it, though the merge is still shown; it is a
    port work where the backend builds against trunk (copy-stale), info where it carries trunk's headers itself."""
    repo = open_repo(str(_fork(tmp_path, files)))
    result = analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None)
    finding = next(f for f in result.findings if f.path == path)
    assert finding.kind == kind and finding.message.startswith(route)
    assert finding.severity == ("info" if kind == "copy-mergeable" else "port")
    assert finding.backend == "b" and "backend-without-spec" not in {f.kind for f in result.findings if f.backend == "b"}
    merged = {m.path: m.data.decode() for m in result.merged}
    if kind == "overlay-auto-mergeable":
        assert merged[path] == OURS.replace("return x * 3 + y", "return x * 3 - y")
    else:
        assert path not in merged


def test_drift_measures_copies_against_upstream_third_party_too(tmp_path: Path) -> None:
    """hcu's backend/driver.py is amd's: a copy under another name of upstream's third_party/amd file."""
    copied = SEMANTIC.replace("op_", "drv_")
    repo = open_repo(str(_fork(tmp_path, {"third_party/b/backend/driver.py": copied})))
    result = analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None)
    finding = next(f for f in result.findings if f.path == "third_party/b/backend/driver.py")
    assert finding.related_path == "third_party/amd/backend/driver.py"
    # unchanged since the base, so it only takes upstream's change; never "delete it": b imports it by its own name
    assert finding.kind == "copy-stale"


def test_a_copy_equal_to_trunk_at_the_new_tag_stays_for_a_package_copy(tmp_path: Path) -> None:
    repo = open_repo(str(_fork(tmp_path, {HELPER: PACKAGE_HELPER,
                                          "third_party/b/python/triton/language/semantic.py": SEMANTIC_NEW})))
    result = analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None)
    finding = next(f for f in result.findings if f.path == "third_party/b/python/triton/language/semantic.py")
    assert finding.kind == "overlay-in-sync" and "triton package ships this copy" in finding.message


def test_a_redundant_setup_copy_says_to_drop_its_copy_call(tmp_path: Path) -> None:
    repo = open_repo(str(_fork(tmp_path, {HELPER: COPY_HELPER,
                                          "third_party/b/python/triton/language/semantic.py": SEMANTIC_NEW})))
    result = analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None)
    finding = next(f for f in result.findings if f.path == "third_party/b/python/triton/language/semantic.py")
    assert finding.kind == "overlay-redundant" and finding.next_step.endswith(f"drop its copy call in {HELPER}")


def test_a_fork_without_these_mechanisms_has_no_copy(tmp_path: Path) -> None:
    repo = open_repo(str(_fork(tmp_path, {"third_party/b/backend/compiler.py": "def compile(src):\n    return src\n"})))
    result = analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None)
    assert not [f for f in result.findings if f.kind.startswith("overlay")]


# A shared setup module that maps every package to the building backend's tree (FlagTree main's setup_helper.py).
SHARED_HELPER = """class CommonUtils:
    @staticmethod
    def skip_package_dir(package):
        return 'backends' in package


    @staticmethod
    def get_package_dir(packages, flagtree_backend):
        root = f"../third_party/{flagtree_backend}/python/"
        return {package: f"{root}{package}" for package in packages if not CommonUtils.skip_package_dir(package)}
"""
SETUP_CALLS = "from setup_tools import setup_helper as helper\npackage_dir = helper.CommonUtils.get_package_dir([], 'b')\n"
B_PACKAGE = {"third_party/b/python/triton/language/semantic.py": OURS,
             "third_party/b/python/triton/backends/b/compiler.py": "X = 1\n"}


def test_a_shared_package_mapping_setup_py_calls_copies_each_backends_package(tmp_path: Path) -> None:
    tree = files_of(tmp_path, {"python/setup.py": SETUP_CALLS, "python/setup_tools/setup_helper.py": SHARED_HELPER,
                               **B_PACKAGE})
    found = roles(tree)
    assert found["third_party/b/python/triton/language/semantic.py"] == \
        ("package-copy", "python/triton/language/semantic.py")
    assert "third_party/b/python/triton/backends/b/compiler.py" not in found  # a package its skip test leaves out
    assert [f.path for f in check_tree(tree) if f.code == "FT023"] == ["python/setup_tools/setup_helper.py"]


@pytest.mark.parametrize("files", [
    {"python/setup.py": "package_dir = {}\n"},  # setup.py never calls the mapping
    {"python/setup.py": SETUP_CALLS, HELPER: "def skip_package_dir(package):\n    return True\n"},  # b opts out
    {"python/setup.py": SETUP_CALLS, HELPER: "def skip_package_dir(package):\n    return package == 'triton'\n"},
], ids=["not-called", "opted-out", "undecided"])
def test_a_shared_package_mapping_that_does_not_apply_copies_nothing(tmp_path: Path, files: dict[str, str]) -> None:
    tree = files_of(tmp_path, {"python/setup_tools/setup_helper.py": SHARED_HELPER, **B_PACKAGE, **files})
    assert copy_files(tree) == []


def test_a_file_upstream_has_at_the_old_tag_is_no_copy_of_the_fork(tmp_path: Path) -> None:
    """Upstream's amd backend may repeat a trunk header; that is upstream's doing, not a FlagTree copy."""
    header = "".join(f"int conversion_{n}(int x);\n" for n in range(12))
    files = {**TRUNK_FILES, "include/Conversion.h": header, "third_party/amd/include/Conversion.h": header}
    upstream = DiskTree(write_tree(tmp_path / "old", files))
    fork = DiskTree(write_tree(tmp_path / "fork", {**files, "third_party/b/include/Conversion.h": header}))
    found = {item.file.path: item.role for item in classified_files(fork, index_trunk_hooks(fork), base=upstream)}
    assert found == {"third_party/b/include/Conversion.h": "renamed-copy"}  # C/C++ counts too; amd's is upstream's


def test_cpp_copies_drift_and_are_never_deleted(tmp_path: Path) -> None:
    header = "".join(f"int op_{n}(int x);\n" for n in range(12))
    subprocess.run(["git", "init", "-q", "-b", "up", str(tmp_path)], check=True)
    commit(tmp_path, {**TRUNK_FILES, "include/Ops.h": header}, "old")
    _git(tmp_path, "tag", "old")
    commit(tmp_path, {"include/Ops.h": header.replace("int op_3(int x);", "int op_3(int x, int y);")}, "new")
    _git(tmp_path, "tag", "new")
    _git(tmp_path, "checkout", "-q", "-b", "flagtree", "old")
    commit(tmp_path, {"third_party/b/include/b/Ops.h": header}, "FlagTree")
    repo = open_repo(str(tmp_path))
    result = analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None)
    finding = next(f for f in result.findings if f.path == "third_party/b/include/b/Ops.h")
    assert finding.kind == "copy-stale" and finding.related_path == "include/Ops.h"


def _world_with_new_import(tmp_path: Path, ours: str) -> Path:
    """Trunk at the new tag imports a new name from semantic.py; the backend's setup copy is `ours`."""
    subprocess.run(["git", "init", "-q", "-b", "up", str(tmp_path)], check=True)
    commit(tmp_path, {**TRUNK_FILES, "python/triton/language/__init__.py": "from .semantic import op_0\n"}, "old")
    _git(tmp_path, "tag", "old")
    commit(tmp_path, {"python/triton/language/semantic.py": SEMANTIC + "def op_new(x):\n    return x\n",
                      "python/triton/language/__init__.py": "from .semantic import op_0, op_new\n"
                                                            "from triton.language.semantic import op_1\n"}, "new")
    _git(tmp_path, "tag", "new")
    _git(tmp_path, "checkout", "-q", "-b", "flagtree", "old")
    commit(tmp_path, {HELPER: COPY_HELPER, "third_party/b/python/triton/language/semantic.py": ours}, "FlagTree")
    return tmp_path


def test_an_overlay_lacking_a_name_trunk_now_imports_from_it_will_not_import(tmp_path: Path) -> None:
    """Issue 33: metax's copy of core.py lacked names trunk's 3.7 __init__.py imports from it."""
    repo = open_repo(str(_world_with_new_import(tmp_path / "lacks", OURS)))
    found = [f for f in analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None).findings
             if f.kind == "overlay-missing-names"]
    assert [(f.path, f.severity, f.details["names"]) for f in found] == [
        ("third_party/b/python/triton/language/semantic.py", "error", ["op_new"])]  # the copy defines op_1
    assert found[0].related_path == "python/triton/language/__init__.py"
    for ours in (OURS + "def op_new(x):\n    return x\n",  # defines it
                 OURS + "from other import *\n",  # may define anything: no claim
                 OURS + "try:\n    from fast import op_new\nexcept ImportError:\n    op_new = None\n"):
        repo = open_repo(str(_world_with_new_import(tmp_path / str(len(ours)), ours)))
        assert not [f for f in analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None).findings
                    if f.kind == "overlay-missing-names"]


def test_a_conflicted_importer_is_read_on_its_upgraded_side(tmp_path: Path) -> None:
    """The 3.2 hint-manager line onto 3.5.1: FlagTree's and upstream's changes to compiler/__init__.py conflict on
    the upgraded branch, and the conflict hid its new import of get_cache_key from ascend's overlay of compiler.py.
    The importer is read on its upgraded side."""
    from sync.jobs.revs import resolve_rev
    from sync.jobs.upgrade import UpgradeOptions, run_upgrade
    root = _world_with_new_import(tmp_path, OURS)
    commit(root, {"python/triton/language/__init__.py": "from .semantic import op_0  # FlagTree: hints\n"},
           "FlagTree edits the importer")
    run_upgrade(str(root), old="old", onto="new", source_branch="flagtree", options=UpgradeOptions())
    branch = subprocess.run(["git", "-C", str(root), "show", "sync/new:python/triton/language/__init__.py"],
                            check=True, capture_output=True, text=True).stdout
    assert "<<<<<<<" in branch
    repo = open_repo(str(root))
    found = [f.details["names"] for f in analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"),
                                                       resolve_rev(repo, "sync/new")).findings
             if f.kind == "overlay-missing-names"]
    assert found == [["op_new"]]


def test_an_importer_the_backend_replaces_too_does_not_count(tmp_path: Path) -> None:
    """ascend's case: trunk's new autotuner.py imports a new error class from errors.py, but ascend's overlay of
    autotuner.py loads in its place, so ascend's errors.py need not define it."""
    subprocess.run(["git", "init", "-q", "-b", "up", str(tmp_path)], check=True)
    hook = "from triton.flagtree_spec import spec_path\nspec_path(__path__)\n"
    trunk = {**TRUNK_FILES, "python/triton/flagtree_spec.py": "def spec_path(path):\n    pass\n",
             "python/triton/runtime/__init__.py": hook, "python/triton/runtime/errors.py": "class A(Exception):\n    pass\n",
             "python/triton/runtime/autotuner.py": "from .errors import A\n"}
    commit(tmp_path, trunk, "old")
    _git(tmp_path, "tag", "old")
    commit(tmp_path, {"python/triton/runtime/errors.py": "class A(Exception):\n    pass\n\n\nclass B(A):\n    pass\n",
                      "python/triton/runtime/autotuner.py": "from .errors import A, B\n"}, "new")
    _git(tmp_path, "tag", "new")
    _git(tmp_path, "checkout", "-q", "-b", "flagtree", "old")
    spec = "third_party/b/backend/spec/triton/runtime/"
    backend = {spec + "errors.py": "class A(Exception):\n    code = 1\n", "third_party/b/backend/__init__.py": ""}
    commit(tmp_path, backend, "FlagTree")
    repo = open_repo(str(tmp_path))
    missing = lambda: [f.details["names"] for f in analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"),
                                                                 None).findings if f.kind == "overlay-missing-names"]
    assert missing() == [["B"]]
    commit(tmp_path, {spec + "autotuner.py": "from .errors import A\n"}, "b replaces the importer too")
    assert missing() == []


def _package_findings(tmp_path: Path, setup: str, backend_extra: dict[str, str] | None = None) -> list[list[str]]:
    """Upstream's new tag adds the package triton.experimental.gluon; FlagTree maps every package to b's tree."""
    subprocess.run(["git", "init", "-q", "-b", "up", str(tmp_path)], check=True)
    commit(tmp_path, TRUNK_FILES, "old")
    _git(tmp_path, "tag", "old")
    commit(tmp_path, {"python/triton/experimental/__init__.py": "", "python/triton/experimental/gluon/__init__.py": "",
                      "python/triton/backends/new/__init__.py": ""}, "new")
    _git(tmp_path, "tag", "new")
    _git(tmp_path, "checkout", "-q", "-b", "flagtree", "old")
    commit(tmp_path, {"python/setup.py": setup, "python/setup_tools/setup_helper.py": SHARED_HELPER, **B_PACKAGE,
                      **(backend_extra or {})}, "FlagTree")
    repo = open_repo(str(tmp_path))
    return [f.details["packages"] for f in analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None).findings
            if f.kind == "package-dir-missing"]


def test_a_package_upstream_adds_needs_a_directory_in_a_backend_that_ships_every_package(tmp_path: Path) -> None:
    """The 3.4.x -> 3.5.1 move: 3.5 adds gluon's amd packages, which setup.py finds (find_packages) and the package
    mapping sends to sunrise's tree, which has no such directories: setuptools stops. A package the mapping leaves
    to trunk (`backends` here) needs none."""
    found = SETUP_CALLS + "packages = find_packages(where='python')\n"
    assert _package_findings(tmp_path / "missing", found) == [["triton.experimental", "triton.experimental.gluon"]]
    has = {"third_party/b/python/triton/experimental/__init__.py": "",
           "third_party/b/python/triton/experimental/gluon/__init__.py": ""}
    assert _package_findings(tmp_path / "present", found, has) == []
    # a setup script that lists its packages itself never installs upstream's new one
    assert _package_findings(tmp_path / "listed", SETUP_CALLS + "packages = ['triton', 'triton/language']\n") == []


def test_copies_measured_once_are_read_back_from_the_fact_cache(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Which backend files copy a trunk file is kept by the two trees' ids: a second run (status after upgrade)
    indexes no trunk file and finds the same copies."""
    from sync.facts import roles as roles_module
    built: list[object] = []
    real = roles_module.TrunkIndex
    monkeypatch.setattr(roles_module, "TrunkIndex", lambda *args, **kwargs: built.append(args) or real(*args, **kwargs))
    monkeypatch.setenv("FLAGTREE_SYNC_CACHE", "on")
    monkeypatch.setenv("FLAGTREE_SYNC_RESULT_CACHE", "off")
    repo = open_repo(str(_fork(tmp_path, {"third_party/b/backend/driver.py": SEMANTIC.replace("op_", "drv_")})))
    runs = [analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None) for _ in range(2)]
    first, second = ([(f.kind, f.path, f.related_path) for f in run.findings] for run in runs)
    assert len(built) == 1 and first == second and ("copy-stale", "third_party/b/backend/driver.py",
                                                    "third_party/amd/backend/driver.py") in first
