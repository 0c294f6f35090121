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


def test_a_backends_cmake_names_trunk_files_from_the_root_or_by_their_objects(tmp_path) -> None:
    """Issue 33, the 3.5.x -> 3.7 move: enflame's triton_gcu300.cmake links objects of a build of the repository
    (`${bin}/lib/.../CMakeFiles/T.dir/X.cpp.o`), some of whose sources upstream deleted. Its own relative entries
    name its own files, and an object of a file the repository never had (LLVM's) names nothing of trunk's."""
    cmake = ("set(OBJS\n  ${triton_${arch}_bin}/lib/A/CMakeFiles/TritonA.dir/Old.cpp.o\n"
             "  ${triton_${arch}_bin}/lib/A/CMakeFiles/TritonA.dir/A.cpp.o\n"
             "  ${LLVM_BINARY_DIR}/lib/Support/CMakeFiles/LLVMSupport.dir/Old.cpp.o\n"
             "  ${PROJECT_SOURCE_DIR}/lib/A/Old.cpp\n  Old.cpp\n  TritonAIncGen\n)\n")
    fork = {**OLD, "third_party/g/cmake/objects.cmake": cmake, "third_party/g/cmake/Old.cpp": "int g;\n",
            "third_party/g/cmake/build.cmake": BUILD_OF.format(source="${CMAKE_SOURCE_DIR}")}
    context = context_of(tmp_path, OLD, NEW, fork, removed_upstream=("lib/A/Old.cpp",))
    found = [(f.details.get("sites"), f.related_path) for f in build_file_findings(context) if f.kind == "build-file"]
    # one finding for the file, with both lines that name it; trunk's target, which the backend names, another
    assert found == [(["third_party/g/cmake/objects.cmake:2", "third_party/g/cmake/objects.cmake:5"], "lib/A/Old.cpp"),
                     (["third_party/g/cmake/objects.cmake:7"], None)]


# How enflame builds a Triton tree by hand (triton_gcu.cmake): its source a set() variable, its build another.
BUILD_OF = ('set(triton_${{arch}}_src "{source}")\nset(triton_${{arch}}_bin "${{CMAKE_CURRENT_BINARY_DIR}}/bin")\n'
            "add_custom_target(triton_${{arch}} COMMAND cmake -S ${{triton_${{arch}}_src}} -B ${{triton_${{arch}}_bin}} -G Ninja\n"
            "  COMMAND cmake --build ${{triton_${{arch}}_bin}})\n")


def test_objects_of_a_build_of_another_source_tree_name_no_trunk_file(tmp_path) -> None:
    """Seen on triton_v3.3.x onto 3.5.1: enflame's triton_gcu300.cmake names objects of a build of its own copy of
    Triton (`cmake -S ${CMAKE_CURRENT_LIST_DIR}/../include/triton`), whose sources upstream cannot delete; 12
    build-file errors were false. The same objects from a build of the root are trunk's (the test above); a build
    whose source is not known names nothing."""
    objects = "set(OBJS\n  ${triton_${arch}_bin}/lib/A/CMakeFiles/TritonA.dir/Old.cpp.o\n)\n"
    for name, source in (("own-copy", "${CMAKE_CURRENT_LIST_DIR}/../include/triton"),
                         ("unknown", "$ENV{TRITON_SRC}"), ("root", "${PROJECT_SOURCE_DIR}")):
        fork = {**OLD, "third_party/g/cmake/objects.cmake": objects,
                "third_party/g/cmake/build.cmake": BUILD_OF.format(source=source)}
        context = context_of(tmp_path / name, OLD, NEW, fork, removed_upstream=("lib/A/Old.cpp",))
        found = [f.related_path for f in build_file_findings(context) if f.kind == "build-file"]
        assert found == (["lib/A/Old.cpp"] if name == "root" else []), (name, found)


def test_a_backends_cmake_linking_a_trunk_target_upstream_removed(tmp_path) -> None:
    """Issue 45, class 1: every target a FlagTree CMake file links or depends on resolves to one the new build
    defines (triton_v3.3.x -> 3.4.0: tsingmicro's tools link TritonTestDialectTritonGPU, which upstream dropped).
    A target of the backend's own with a trunk target's name is the backend's."""
    cmake = ("add_llvm_executable(g-opt g-opt.cpp)\ntarget_link_libraries(g-opt PRIVATE\n  TritonA\n  TritonAIncGen\n"
             "  GOwn\n)\nadd_library(GOwn Own.cpp)\n")
    new = {**NEW, "lib/A/CMakeLists.txt": NEW["lib/A/CMakeLists.txt"] + "add_triton_library(GOld X.cpp)\n"}
    old = {**OLD, "lib/A/CMakeLists.txt": OLD["lib/A/CMakeLists.txt"] + "add_triton_library(GOwn X.cpp)\n"}
    fork = {**old, "third_party/g/bin/CMakeLists.txt": cmake}
    context = context_of(tmp_path, old, new, fork, removed_upstream=("lib/A/Old.cpp",))
    found = {(f.path, f.line, f.details["entry"]) for f in build_file_findings(context) if f.kind == "build-file"}
    assert found == {("third_party/g/bin/CMakeLists.txt", 4, "TritonAIncGen")}


def test_a_quoted_argument_is_one_word_not_the_words_it_holds(tmp_path) -> None:
    """CMake never splits a quoted argument: `option(X "Build the TritonAIncGen step" OFF)` names no target
    (the 3.3 -> 3.2 hints backport: "Proton" of an option's description read as a target); a quoted name
    alone is still a name."""
    fork = {**OLD, "CMakeLists.txt": 'option(TRITON_BUILD_A "Build the TritonAIncGen step" OFF)\n'
                                     'add_dependencies(FlagTreeA "TritonAIncGen")\n'}
    context = context_of(tmp_path, OLD, NEW, fork, removed_upstream=("lib/A/Old.cpp",))
    found = {(f.path, f.line, f.details["entry"]) for f in build_file_findings(context) if f.kind == "build-file"}
    assert found == {("CMakeLists.txt", 2, "TritonAIncGen")}
