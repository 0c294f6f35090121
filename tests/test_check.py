"""Every policy rule with a tree that breaks it and one that does not."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sync.check.policy import check_tree
from sync.model.kinds import BY_CODE
from sync.cli import cli
from sync.facts.trees import DiskTree

HOOK = "from triton.flagtree_spec import spec_path\n\nspec_path(__path__)\n"
B = "third_party/b/backend/spec/triton/"
CLEAN = {
    "python/triton/__init__.py": "",
    "python/triton/flagtree_spec.py": "def spec_path(p): ...\n",
    "python/triton/tools/__init__.py": HOOK,
    "python/triton/tools/compile.py": "def main():\n    return 0\n",
    "python/triton/language/__init__.py": "from triton.flagtree_spec import spec\nfrom .core import x\n\n"
                                          'spec("language_extend_globals", globals())\n',
    "python/triton/language/core.py": "x = 1\n",
    B + "__init__.py": "from .language import language_extend_globals\n",
    B + "language/__init__.py": "def language_extend_globals(g):\n    from triton.language.core import x\n",
    B + "tools/compile.py": "def main():\n    return 1\n",
}

# rule id -> files that, added to CLEAN, must raise exactly that rule
VIOLATIONS = {
    "FT001": {"python/triton/backends/__init__.py": HOOK},
    "FT002": {"python/triton/ops/__init__.py": HOOK},
    "FT003": {"python/triton/tools/sub/__init__.py": HOOK},
    "FT004": {"python/triton/experimental/tle/x.py": 'from triton.flagtree_spec import spec\nspec("f")\n'},
    "FT005": {B + "tools/compile.py": "def main():\n    return 0\n"},
    "FT006": {"python/triton/tools/compile.py": "import os\n\n\ndef main():\n    return 0\n",
              B + "tools/compile.py": "def main():\n    return 0\n"},
    "FT007": {B + "tools/__init__.py": "X = 1\n"},
    "FT008": {"python/triton/language/__init__.py": "from triton.flagtree_spec import spec\n\n"
                                                    'spec("language_extend_globals", globals())\nfrom .core import x\n'},
    "FT009": {B + "language/__init__.py": "from .helpers import y\n\n\ndef language_extend_globals(g):\n    pass\n"},
    "FT010": {"python/triton/language/core.py": "from triton._flagtree_backend import FLAGTREE_BACKEND\n"
                                                "x = 2 if FLAGTREE_BACKEND == 'b' else 1\n"},
    "FT011": {B + "flagtree_spec.py": "def spec(name): ...\n"},
    "FT012": {"python/triton/knobs.py": 'from triton.flagtree_spec import spec\nspec("knob")\n'},
    "FT013": {"python/triton/language/core.py": "from triton.flagtree_spec import spec\ndef (:\n"},
    "FT014": {"CMakeLists.txt": "project(x)\n<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n"},
    "FT015": {"third_party/b/backend/spec/provenance.toml": (
        f'[[file]]\npath = "{B}tools/compile.py"\ntrunk = "python/triton/tools/compile.py"\ntag = "v1"\nblob = "{"0" * 40}"\n'
        f'[[file]]\npath = "{B}tools/gone.py"\ntrunk = "python/triton/tools/gone.py"\ntag = "v1"\nblob = "{"0" * 40}"\n')},
    "FT016": {"third_party/b/backend/spec/provenance.toml": "# no entries yet\n"},
    "FT017": {"third_party/b/backend/spec/suppressions.toml": 'suppress = "x"\n'},
    "FT018": {"python/triton/_utils.py": "import os\n\n\ndef cdiv(a, b):\n    return (a + b - 1) // b\n",
              B + "_utils.py": "import os\n\n\ndef cdiv(a, b):\n    return -(-a // b)\n"},
    "FT020": {"third_party/b/backend/spec/python/triton/tools/compile.py": "def main():\n    return 2\n"},
    "FT021": {"python/triton/ops/matmul.py": "def _kernel():\n    from triton.runtime.driver import spec\n"
                                             '    return spec("matmul_kernel")\n'},
    "FT022": {"python/setup_tools/utils/b.py": "import shutil\n\n\ndef install_extension():\n    shutil.copy("
              "'third_party/b/python/triton/tools/compile.py', 'python/triton/tools/compile.py')\n",
              "third_party/b/python/triton/tools/compile.py": "def main():\n    return 2\n"},
    "FT023": {"python/setup_tools/utils/b.py": "def get_package_dir():\n    return {'': 'third_party/b/python'}\n",
              "third_party/b/python/triton/tools/compile.py": "def main():\n    return 2\n"},
    "FT024": {"python/triton/tools/link.py": "".join(f"def link_{n}(a):\n    return a + {n}\n" for n in range(6)),
              "third_party/b/backend/link_b.py": "".join(f"def link_{n}(a):\n    return a + {n}\n" for n in range(6))},
    "FT019": {"python/triton/tools/extra/__init__.py": "",
              B + "tools/extra/helper.py": "def helper():\n    return 1\n"},
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_clean_tree_has_no_findings(tmp_path: Path) -> None:
    assert check_tree(DiskTree(write_tree(tmp_path, CLEAN))) == []


def test_every_rule_has_a_violating_fixture() -> None:
    assert set(VIOLATIONS) == set(BY_CODE)


# No allowed directory has an allowed child, so a hijacked child is also an unlisted one.
ALSO_FIRES = {"FT003": ["FT002"]}

# Real FlagTree structures, each mirrored by a small fixture of ours (see bench/real_trees.toml for the trees).
ROOT_HIJACK = {"python/triton/__init__.py": HOOK, "python/triton/runtime/__init__.py": HOOK,
               "python/triton/runtime/jit.py": "def jit(fn):\n    return fn\n"}


def test_root_hijack_is_forbidden_and_pairs_with_every_hijacked_child(tmp_path: Path) -> None:
    findings = check_tree(DiskTree(write_tree(tmp_path, {**CLEAN, **ROOT_HIJACK})))
    assert [(f.code, f.path) for f in findings if f.code == "FT001"] == [("FT001", "python/triton/__init__.py")]
    pairs = sorted(f.path for f in findings if f.code == "FT003")
    assert pairs == ["python/triton/runtime/__init__.py", "python/triton/tools/__init__.py"]
    assert all(f.related_path == "python/triton/__init__.py" for f in findings if f.code == "FT003")


@pytest.mark.parametrize("name, remedy", [("knobs.py", "directly in trunk"), ("_internal_testing.py", "directly in trunk"),
                                          ("testing.py", "spec/spec_func")])
def test_root_level_copies_are_errors_naming_the_seed_remedy(tmp_path: Path, name: str, remedy: str) -> None:
    trunk = "import os\n\nLIMIT = 3\n\n\ndef helper():\n    return LIMIT\n"
    files = {**CLEAN, f"python/triton/{name}": trunk, B + name: trunk.replace("LIMIT = 3", "LIMIT = 4")}
    found = [f for f in check_tree(DiskTree(write_tree(tmp_path, files))) if f.path == B + name]
    assert [f.code for f in found] == ["FT018"] and remedy in found[0].next_step and found[0].severity == "error"


def test_a_root_module_of_new_spec_functions_is_legal(tmp_path: Path) -> None:
    files = {**CLEAN, "python/triton/_utils.py": "import os\n\n\ndef cdiv(a, b):\n    return (a + b - 1) // b\n",
             B + "_utils.py": "def apply_with_path(fn, path):\n    return fn(path)\n",
             B + "__init__.py": "from .language import language_extend_globals\nfrom ._utils import apply_with_path\n"}
    assert check_tree(DiskTree(write_tree(tmp_path, files))) == []


def test_new_sub_package_below_a_hijacked_package_may_use_relative_imports(tmp_path: Path) -> None:
    files = {**CLEAN, B + "tools/gen/__init__.py": "from . import emit\n", B + "tools/gen/emit.py":
             "from .. import compile\n\n\ndef emit():\n    return compile\n",
             B + "tools/deep/er/than.py": "from . import x\n"}
    assert check_tree(DiskTree(write_tree(tmp_path, files))) == []


def test_spec_tree_under_python_triton_spec_is_the_same_backend(tmp_path: Path) -> None:
    """The layout of the ascend branches: python/triton/spec/<b>/ mirrors python/triton."""
    moved = {key.replace(B, "python/triton/spec/b/"): value for key, value in CLEAN.items()}
    findings = check_tree(DiskTree(write_tree(tmp_path, moved)))
    assert findings == []
    again = check_tree(DiskTree(write_tree(tmp_path / "x", {**moved, "python/triton/spec/b/tools/compile.py":
                                                              CLEAN["python/triton/tools/compile.py"]})))
    assert [(f.code, f.backend) for f in again] == [("FT005", "b")]


@pytest.mark.parametrize("code", sorted(VIOLATIONS))
def test_rule_fires_on_its_violation_only(tmp_path: Path, code: str) -> None:
    findings = check_tree(DiskTree(write_tree(tmp_path, {**CLEAN, **VIOLATIONS[code]})))
    assert sorted(f.code for f in findings) == sorted([code, *ALSO_FIRES.get(code, [])])
    finding = next(f for f in findings if f.code == code)
    assert finding.severity == BY_CODE[code].severity and finding.next_step and finding.path


def test_finding_lines_point_at_the_call(tmp_path: Path) -> None:
    findings = check_tree(DiskTree(write_tree(tmp_path, {**CLEAN, **VIOLATIONS["FT008"]})))
    assert findings[0].line == 3


def test_cli_exit_status_and_json(tmp_path: Path) -> None:
    runner = CliRunner()
    clean = write_tree(tmp_path / "clean", CLEAN)
    assert runner.invoke(cli, ["check", str(clean)]).exit_code == 0
    bad = write_tree(tmp_path / "bad", {**CLEAN, **VIOLATIONS["FT001"], **VIOLATIONS["FT002"]})
    result = runner.invoke(cli, ["check", str(bad), "--format", "json"])
    assert result.exit_code == 1
    document = json.loads(result.output)
    assert document["schema"] == "flagtree-sync/check/1"
    assert {f["code"] for f in document["findings"]} == {"FT001", "FT002"}
    warn_only = write_tree(tmp_path / "warn", {**CLEAN, **VIOLATIONS["FT002"]})
    assert runner.invoke(cli, ["check", str(warn_only)]).exit_code == 0


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "missing", "is not a directory"),
    (lambda p: p, "has no python/triton/"),
])
def test_cli_unusable_input(tmp_path: Path, make, message: str) -> None:
    result = CliRunner().invoke(cli, ["check", str(make(tmp_path))])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_unknown_backend_is_unusable_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", str(write_tree(tmp_path, CLEAN)), "--backend", "nope"])
    assert result.exit_code == 2 and "nope" in result.output


def test_demo_fork_only_warns_about_the_unlisted_ops_package(world) -> None:
    findings = check_tree(DiskTree(world.fork))
    assert [(f.code, f.path) for f in findings] == [("FT002", "python/triton/ops/__init__.py")]


def test_conflict_markers_can_be_allowed_for_fixtures(tmp_path: Path) -> None:
    files = {**CLEAN, "tests/fixtures/conflicted.py": "<<<<<<< a\nx\n=======\ny\n>>>>>>> b\n"}
    tree = DiskTree(write_tree(tmp_path, files))
    assert [f.code for f in check_tree(tree)] == ["FT014"]
    assert check_tree(tree, allow_markers=("tests/fixtures/*",)) == []
    result = CliRunner().invoke(cli, ["check", str(tmp_path), "--allow-markers", "tests/fixtures/*"])
    assert result.exit_code == 0


def test_an_upgrade_with_markers_fails_check(world) -> None:
    import subprocess
    CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "-q"])
    subprocess.run(["git", "-C", str(world.fork), "checkout", "-q", "sync/v3.6.0"], check=True)
    result = CliRunner().invoke(cli, ["check", str(world.fork)])
    assert result.exit_code == 1
    assert "CMakeLists.txt:3: FT014 error: 1 unresolved conflict(s)" in result.output


def test_an_overlay_that_is_trunk_with_lines_deleted_is_contained_in_it() -> None:
    from sync.facts.roles import contained_in
    trunk = "import os\nx = 1\nif x:\n    y = 2\nelse:\n    y = 3\nprint(y)\n"
    assert contained_in("import os\nif x:\n    y = 2\nprint(y)\n", trunk) in ("every statement is",
                                                                           "only 3 line(s) deleted from")
    # the if statement lost its else branch: a statement trunk does not have, but only deleted lines
    assert contained_in("import os\nx = 1\nif x:\n    y = 2\nprint(y)\n", trunk) == "only 2 line(s) deleted from"
    assert contained_in("if x:\n    y = 4\nelse:\n    y = 3\n", trunk) is None  # a changed line
    assert contained_in("else:\n    y = 3\nif x:\n", trunk) is None  # reordered: not deletions only
