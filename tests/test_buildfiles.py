"""build-file: FlagTree CMake entries whose referents upstream removed or renamed; restructured dirs."""
from __future__ import annotations

from sync.drift.analyses.buildfiles import build_file_findings
from tests.upstream_fixture import context_of

OLD = {"lib/A/CMakeLists.txt": "add_triton_library(TritonA\n  A.cpp\n  DEPENDS\n  TritonAIncGen\n)\n",
       "lib/A/A.cpp": "int a;\n", "lib/A/Old.cpp": "int o;\n",
       "include/A/CMakeLists.txt": "add_public_tablegen_target(TritonAIncGen)\n"}
NEW = {"lib/A/CMakeLists.txt": "add_triton_library(TritonA\n  A.cpp\n  B.cpp\n  DEPENDS\n  TritonATableGen\n)\n",
       "lib/A/A.cpp": "int a;\n", "lib/A/B.cpp": "int b;\n",
       "include/A/CMakeLists.txt": "add_public_tablegen_target(TritonATableGen)\n"}


def test_fires_on_removed_source_and_target_and_restructured_dir(tmp_path) -> None:
    fork = {**OLD, "lib/A/CMakeLists.txt": "add_triton_library(TritonA\n  A.cpp\n  Old.cpp\n  DEPENDS\n"
                                           "  TritonAIncGen\n  MyFlagTreeGen\n)\nadd_dependencies(FlagTreeA TritonAIncGen)\n", "lib/A/Mine.cpp": "int m;\n"}
    context = context_of(tmp_path, OLD, NEW, fork, removed_upstream=("lib/A/Old.cpp",))
    found = {(f.kind, f.path, f.details.get("entry")) for f in build_file_findings(context)}
    assert found == {("build-file", "lib/A/CMakeLists.txt", "Old.cpp"),
                     ("build-file", "lib/A/CMakeLists.txt", "TritonAIncGen"),
                     ("build-restructured", "lib/A/CMakeLists.txt", None)}


def test_near_miss_entries_that_still_exist(tmp_path) -> None:
    fork = {**OLD, "lib/A/CMakeLists.txt": OLD["lib/A/CMakeLists.txt"].replace("  A.cpp\n", "  A.cpp\n  A.cpp\n")}
    context = context_of(tmp_path, OLD, {**NEW, "include/A/CMakeLists.txt": OLD["include/A/CMakeLists.txt"]
                                         + "add_public_tablegen_target(TritonATableGen)\n"}, fork,
                         removed_upstream=("lib/A/Old.cpp",))
    assert build_file_findings(context) == []
