"""A trunk file belongs to every group whose code is on its FlagTree side (issue 34): the backend whose hook it
calls (at any depth below a spec_path package), the feature or backend whose gate it holds, the groups
pyproject.toml maps it or its commit's tag to; CI files are a group of their own."""
from __future__ import annotations

from pathlib import Path

import pytest

from sync.facts.owners import CORE, SHARED, OwnerIndex
from sync.model.build import group_kind
from sync.model.report import CORE_KIND
from sync.facts.trees import DiskTree
from sync.support.schema import TomlFileError
from tests.test_check import write_tree

HOOK = "from triton.flagtree_spec import spec_path\n\nspec_path(__path__)\n"
BASE = {"python/triton/__init__.py": "", "python/triton/flagtree_spec.py": "def spec_path(p): ...\n",
        "third_party/tle/lib/Ops.cpp": "int tle();\n", "third_party/b/backend/compiler.py": "X = 1\n"}


def owners(tmp_path: Path, files: dict[str, str], path: str, summary: str = "",
           flagtree_side: tuple[str, ...] | list[str] = ()) -> list[str]:
    return OwnerIndex(DiskTree(write_tree(tmp_path, {**BASE, **files}))).owners(path, summary, flagtree_side)


def test_spec_path_serves_the_backend_files_below_its_package(tmp_path: Path) -> None:
    gluon = "python/triton/experimental/gluon/__init__.py"
    files = {gluon: HOOK, "third_party/b/backend/spec/triton/experimental/gluon/b/arch.py": "Y = 2\n"}
    assert owners(tmp_path, files, gluon) == ["b"]


def test_spec_path_does_not_serve_files_of_another_package(tmp_path: Path) -> None:
    gluon = "python/triton/experimental/gluon/__init__.py"
    files = {gluon: HOOK, "third_party/b/backend/spec/triton/language/arch.py": "Y = 2\n"}
    assert owners(tmp_path, files, gluon) == [SHARED]


def test_a_gate_macro_names_its_feature(tmp_path: Path) -> None:
    membar = "lib/Analysis/Membar.cpp"
    gated = "void f() {\n#ifdef __TLE__\n  tle();\n#endif\n}\n"
    assert owners(tmp_path / "a", {membar: gated}, membar) == ["tle"]
    assert owners(tmp_path / "b", {membar: gated.replace("#ifdef __TLE__", "#if defined(__TLE__) && X")}, membar) \
        == ["tle"]


def test_no_gate_or_a_macro_of_no_group_leaves_shared_trunk(tmp_path: Path) -> None:
    membar = "lib/Analysis/Membar.cpp"
    assert owners(tmp_path / "a", {membar: "void f() {}\n// __TLE__ is mentioned, not tested\n"}, membar) == [SHARED]
    assert owners(tmp_path / "b", {membar: "#ifdef __CUDA_ARCH__\nint x;\n#endif\n"}, membar) == [SHARED]


def test_a_backend_selection_in_trunk_names_the_backend(tmp_path: Path) -> None:
    path = "python/triton/runtime/jit.py"
    code = "from triton._flagtree_backend import FLAGTREE_BACKEND\nif FLAGTREE_BACKEND == 'b':\n    pass\n"
    assert owners(tmp_path / "a", {path: code}, path) == ["b"]
    assert owners(tmp_path / "b", {path: code.replace("'b'", "'nobody'")}, path) == [SHARED]


def test_ci_workflows_are_their_own_group_and_configurable(tmp_path: Path) -> None:
    assert owners(tmp_path / "a", {}, ".github/workflows/build.yml") == ["ci"]
    assert owners(tmp_path / "b", {}, ".github/CODEOWNERS") == [CORE]
    config = '[tool.flagtree-sync]\nowners = { infra = [".github/*"] }\n'
    assert owners(tmp_path / "c", {"pyproject.toml": config}, ".github/CODEOWNERS") == ["infra"]
    assert group_kind("ci") == CORE_KIND


def test_configured_paths_and_commit_tags_add_their_group(tmp_path: Path) -> None:
    config = ('[tool.flagtree-sync]\nowners = { tle = ["python/triton/experimental/tle/*"] }\n'
              'commit_tags = { "[TLE]" = "tle" }\n')
    files = {"pyproject.toml": config}
    assert owners(tmp_path, files, "python/triton/experimental/tle/language/core.py") == ["tle"]
    assert owners(tmp_path, files, "lib/Analysis/Alias.cpp", "[TLE] Add local pointers") == ["tle"]
    assert owners(tmp_path, files, "lib/Analysis/Alias.cpp", "[BACKEND] Fix a pass") == [SHARED]


def test_a_subject_tag_that_names_a_group_adds_it_without_configuration(tmp_path: Path) -> None:
    """Seen on triton_v3.5.x onto the 3.7 branch point: a conflict in semantic.py from a "[TLE][DOC] ..." commit
    was filed under ascend alone (which overlays the file), where TLE's maintainers would not look."""
    files = {"third_party/tle/CMakeLists.txt": "add_subdirectory(dialect)\n"}
    assert owners(tmp_path, files, "lib/Analysis/Alias.cpp", "[TLE][DOC] Add local pointers") == ["tle"]
    assert owners(tmp_path, files, "lib/Analysis/Alias.cpp", "[BACKEND] Fix a pass") == [SHARED]
    assert owners(tmp_path, files, "lib/Analysis/Alias.cpp", "Tle without brackets") == [SHARED]


def test_only_the_names_a_backend_test_compares_with_count(tmp_path: Path) -> None:
    path = "python/triton/experimental/gluon/__init__.py"
    code = ('from triton._flagtree_backend import FLAGTREE_BACKEND\n'
            '__all__ = ["jit", "b" if FLAGTREE_BACKEND == "b" else "amd"]\n')
    files = {"third_party/amd/backend/driver.py": "X = 1\n", path: code}
    assert owners(tmp_path / "a", files, path) == ["b"]  # "amd" is an exported module name, not a selection
    cmake = 'if(FLAGTREE_BACKEND MATCHES "^(b|tle)$")\nendif()\nif(FLAGTREE_BACKEND IN_LIST X)\nendif()\n'
    assert owners(tmp_path / "b", {"lib/CMakeLists.txt": cmake}, "lib/CMakeLists.txt") == ["b", CORE, "tle"]
    tuple_test = "if FLAGTREE_BACKEND in ('tle', 'nobody'):\n    pass\n"
    assert owners(tmp_path / "c", {"python/triton/x.py": tuple_test}, "python/triton/x.py") == ["tle"]


def test_a_pyproject_without_our_table_leaves_the_defaults(tmp_path: Path) -> None:
    for index, text in enumerate(['tool = 1\n', '[tool.black]\nline-length = 120\n', '[project]\nname = "x"\n']):
        assert owners(tmp_path / str(index), {"pyproject.toml": text}, ".github/workflows/a.yml") == ["ci"]


@pytest.mark.parametrize("text, line, problem", [
    ('[tool]\nflagtree-sync = "x"\n', 1, "[tool.flagtree-sync] must be a table, not a string"),
    ('[tool.flagtree-sync\n', 1, "Expected ']' at the end of a table declaration"),
    ('[tool.flagtree-sync]\nowner = { tle = ["lib/*"] }\n', 2,
     "[tool.flagtree-sync] unknown key 'owner' (known: spec_roots, owners, commit_tags)"),
    ('[tool.flagtree-sync]\nspec_roots = ["x/{backend}"]\n\n[tool.flagtree-sync.owners]\ntle = "lib/*"\n', 4,
     "[tool.flagtree-sync] owners.tle must be an array of strings, not a string"),
    ('[tool.flagtree-sync]\nspec_roots = ["x/{backend}/py", "/abs/{backend}"]\n', 2,
     '[tool.flagtree-sync] spec_roots[1] must be a path below the repository root holding "{backend}" once, '
     'e.g. "x/{backend}/py", not \'/abs/{backend}\''),
    ('[tool.flagtree-sync]\ncommit_tags = { "[TLE]" = 1 }\n', 2,
     '[tool.flagtree-sync] commit_tags."[TLE]" must be a string, not an integer'),
])
def test_a_malformed_table_of_ours_is_an_error_naming_file_key_and_what_was_expected(
        tmp_path: Path, text: str, line: int, problem: str) -> None:
    """Issue 49.5: such an entry was dropped in silence, and the defaults changed the report without a word."""
    with pytest.raises(TomlFileError) as raised:
        owners(tmp_path, {"pyproject.toml": text}, ".github/workflows/a.yml")
    assert raised.value.where == f"pyproject.toml ({tmp_path})"
    assert (raised.value.line, raised.value.problem) == (line, problem)
    assert raised.value.exit_code == 2


CMAKE = ('if(FLAGTREE_BACKEND STREQUAL "b")\n  add_definitions(-D__B__)\nendif()\n'
         'add_library(core core.cpp)\n')
GATED = "void f() {\n  common();\n#ifdef __TLE__\n  tle_hook();\n  more();\n#endif\n  tail();\n}\n"


def test_given_the_flagtree_side_only_gates_around_or_in_it_count(tmp_path: Path) -> None:
    files = {"CMakeLists.txt": CMAKE, "lib/Analysis/Membar.cpp": GATED}
    # the conflict touches the shared line only: b's selection elsewhere in the file does not make it b's
    assert owners(tmp_path, files, "CMakeLists.txt", flagtree_side=["add_library(core core.cpp)"]) == [CORE]
    assert owners(tmp_path, files, "CMakeLists.txt", flagtree_side=['if(FLAGTREE_BACKEND STREQUAL "b")']) == ["b", CORE]
    assert owners(tmp_path, files, "lib/Analysis/Membar.cpp", flagtree_side=["  tle_hook();", "  more();"]) == ["tle"]
    assert owners(tmp_path, files, "lib/Analysis/Membar.cpp", flagtree_side=["  tail();"]) == [SHARED]
    assert owners(tmp_path, files, "lib/Analysis/Membar.cpp") == ["tle"]  # no side given: the file's gates
