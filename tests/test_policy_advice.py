"""Check findings whose message and fix must fit the case: FT010 on an empty-string test, FT021 legacy hook
imports, and the key-string-review wording."""
from __future__ import annotations

from pathlib import Path

import pytest

from sync.check.policy import check_tree
from sync.model.kinds import BY_ID
from sync.facts.trees import DiskTree

from tests.test_check import CLEAN, write_tree

CORE = "python/triton/language/core.py"
IMPORT = "from triton._flagtree_backend import FLAGTREE_BACKEND\n"


def _check(tmp_path: Path, files: dict[str, str]):
    return check_tree(DiskTree(write_tree(tmp_path, {**CLEAN, **files})))


@pytest.mark.parametrize("test", ['FLAGTREE_BACKEND == ""', "FLAGTREE_BACKEND != ''", "FLAGTREE_BACKEND is None",
                                  'FLAGTREE_BACKEND in ("", None)', 'backend.FLAGTREE_BACKEND == ""'])
def test_ft010_on_a_test_for_no_backend_says_to_drop_the_test(tmp_path: Path, test: str) -> None:
    found = _check(tmp_path, {CORE: f"{IMPORT}x = 1 if {test} else 2\n"})
    assert [f.code for f in found] == ["FT010"]
    assert found[0].message == f"trunk tests whether a backend is installed: {test}"
    assert "drop the test" in found[0].next_step and "no-op" in found[0].next_step
    assert "backend-specific code" not in found[0].next_step


@pytest.mark.parametrize("test", ['FLAGTREE_BACKEND == "mthreads"', 'FLAGTREE_BACKEND in ("", "hcu")',
                                  "FLAGTREE_BACKEND == name"])
def test_ft010_on_a_named_backend_keeps_the_move_advice(tmp_path: Path, test: str) -> None:
    found = _check(tmp_path, {CORE: f"{IMPORT}name = 'b'\nx = 1 if {test} else 2\n"})
    assert [f.code for f in found] == ["FT010"]
    assert found[0].message == f"trunk selects a backend: {test}"
    assert found[0].next_step == BY_ID["backend-selection-in-trunk"].action


@pytest.mark.parametrize("source, condition", [
    ("if FLAGTREE_BACKEND:\n    x = 1\n", "FLAGTREE_BACKEND"),
    ("while not FLAGTREE_BACKEND:\n    break\n", "not FLAGTREE_BACKEND"),
    ("x = 1 if ready and backend.FLAGTREE_BACKEND else 2\n", "ready and backend.FLAGTREE_BACKEND"),
    ("assert bool(FLAGTREE_BACKEND)\n", "bool(FLAGTREE_BACKEND)"),
    ("x = [n for n in range(3) if not FLAGTREE_BACKEND]\n", "not FLAGTREE_BACKEND"),
])
def test_ft010_on_a_truth_test_of_the_backend(tmp_path: Path, source: str, condition: str) -> None:
    """`if FLAGTREE_BACKEND:` asks the same as `== ""`; it used to pass check because only comparisons counted."""
    found = _check(tmp_path, {CORE: f"{IMPORT}ready = True\n{source}"})
    assert [(f.code, f.message) for f in found] == [
        ("FT010", f"trunk tests whether a backend is installed: {condition}")]
    assert "drop the test" in found[0].next_step


@pytest.mark.parametrize("source", [
    "x = FLAGTREE_BACKEND or 'none'\n",  # a value, not a condition
    "if FLAGTREE_BACKEND_NAME:\n    x = 1\n",  # another name
    "print(FLAGTREE_BACKEND)\n",
])
def test_no_ft010_for_uses_that_test_nothing(tmp_path: Path, source: str) -> None:
    assert [f.code for f in _check(tmp_path, {CORE: f"{IMPORT}{source}"})] == []


def test_a_condition_that_also_compares_is_reported_once_as_the_selection_it_makes(tmp_path: Path) -> None:
    found = _check(tmp_path, {CORE: f'{IMPORT}if FLAGTREE_BACKEND and FLAGTREE_BACKEND == "hcu":\n    x = 1\n'})
    assert [(f.code, f.message) for f in found] == [("FT010", 'trunk selects a backend: FLAGTREE_BACKEND == "hcu"')]


def test_ft021_names_the_legacy_module_once_per_file_at_the_first_import(tmp_path: Path) -> None:
    matmul = ("def a():\n    from triton.runtime.driver import spec\n    return spec('a')\n\n\n"
              "def b():\n    from triton.runtime.driver import spec, spec_func\n    return spec_func('b')\n")
    found = _check(tmp_path, {"python/triton/ops/matmul.py": matmul})
    assert [(f.code, f.path, f.line) for f in found] == [("FT021", "python/triton/ops/matmul.py", 2)]
    assert found[0].message == ("imports spec, spec_func from triton.runtime.driver "
                                "(and 2 more import(s) in this file)")
    assert "triton.flagtree_spec" in found[0].next_step and found[0].severity == "warning"


@pytest.mark.parametrize("source", [
    "from triton.flagtree_spec import spec\n",  # the seed's interface
    "from triton.runtime.driver import driver\n",  # the driver itself, no hook
    "from triton.runtime import driver\nfrom .driver import spec\n",  # relative: some other module's spec
])
def test_ft021_not_for_the_seed_interface_or_other_driver_imports(tmp_path: Path, source: str) -> None:
    assert [f.code for f in _check(tmp_path, {"python/triton/ops/matmul.py": source})] == []


def test_key_string_review_reads_on_its_own() -> None:
    kind = BY_ID["key-string-review"]
    assert not kind.meaning.startswith("as key-string")  # it must not send the reader to another entry first
    assert "container" not in kind.meaning  # the analysis' word; the reader's are dictionary and object
    assert "same kind" in kind.meaning and "cannot tell" in kind.meaning
    assert "diff" in kind.action and "flagtree-sync suppress" in kind.action
