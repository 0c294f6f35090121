"""build-target-unconfigured: a link the build of one backend makes to a target only a directory it does not add
defines (issue 45, class 1; the 3.4.x -> 3.5.1 move's proton dialect linking the nvidia and amd targets)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from sync.drift.analyses.buildconfigs import unconfigured_target_findings
from sync.drift.context import DriftContext
from sync.facts.buildconfigs import configurations
from sync.facts.cmakebuilt import commands, configured
from sync.git import GitTree
from tests.test_symbols import commit

ROOT = ("set(TRITON_CODEGEN_BACKENDS \"\" CACHE STRING \"codegen backends\")\n"
        "add_subdirectory(lib)\n"
        "if(TRITON_BUILD_PYTHON_MODULE)\n"
        "  foreach(B ${TRITON_CODEGEN_BACKENDS})\n    add_subdirectory(third_party/${B})\n  endforeach()\n"
        "endif()\n"
        "# every build adds the profiler\n"
        "add_subdirectory(third_party/prof)\n")
UPSTREAM_SETUP = ('backends = ["gpu"]\n'
                  'args = ["-DTRITON_BUILD_PYTHON_MODULE=ON",\n'
                  '        "-DTRITON_CODEGEN_BACKENDS=" + ";".join([b for b in backends])]\n')
FORK_SETUP = ('import os\n'
              'flagtree_backend = os.getenv("FLAGTREE_BACKEND", "")\n'
              'default_backends = ["gpu"]\n'
              'if flagtree_backend:\n'
              '    backends = [flagtree_backend]\n'
              'else:\n'
              '    backends = default_backends\n'
              'args = ["-DTRITON_BUILD_PYTHON_MODULE=ON",\n'
              '        "-DTRITON_CODEGEN_BACKENDS=" + ";".join([b for b in backends if not b.startswith("/")])]\n')
OLD = {"CMakeLists.txt": ROOT, "setup.py": UPSTREAM_SETUP,
       "lib/CMakeLists.txt": "add_library(Core core.cpp)\n",
       "third_party/gpu/backend/compiler.py": "x = 1\n",
       "third_party/gpu/CMakeLists.txt": "add_triton_library(GpuToLLVM gpu.cpp\n  LINK_LIBS PUBLIC Core)\n"
                                         "add_triton_library(GpuLegacy legacy.cpp)\n",
       "third_party/prof/CMakeLists.txt": "add_triton_library(ProfToLLVM prof.cpp\n  LINK_LIBS PUBLIC\n  Core\n"
                                          "  GpuLegacy\n)\n"}
FORK_FILES = {"setup.py": FORK_SETUP, "third_party/acme/backend/compiler.py": "y = 1\n",
              "third_party/acme/CMakeLists.txt": "add_triton_library(AcmeToLLVM acme.cpp LINK_LIBS Core)\n"}


def context_with_branch(tmp_path: Path, old: dict[str, str], new: dict[str, str], fork_files: dict[str, str],
                        branch_files: dict[str, str] | None = None) -> DriftContext:
    """Old and new tag, the fork (old plus its files), and the upgraded branch (new plus the same files, or
    branch_files)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    old_id = commit(tmp_path, old, "old")
    fork_id = commit(tmp_path, fork_files, "flagtree")
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", old_id], check=True)
    new_id = commit(tmp_path, new, "new")
    branch_id = commit(tmp_path, fork_files if branch_files is None else branch_files, "flagtree on new")
    repo = pygit2.Repository(str(tmp_path))
    tree = lambda sha, label: GitTree(repo, repo[sha].tree, label)
    return DriftContext(repo, tree(old_id, "old"), tree(new_id, "new"), tree(fork_id, "fork"),
                        tree(branch_id, "branch"))


def test_an_upstream_library_linking_a_target_of_a_backend_directory_one_build_leaves_out(tmp_path) -> None:
    """Upstream's profiler, which every build adds, starts linking GpuToLLVM, defined only in third_party/gpu:
    the fork's build of backend acme adds third_party/acme instead, so CMake stops there. Core (defined in every
    configuration) and GpuLegacy (already unresolved for acme at the old tag) are no finding."""
    context = context_with_branch(tmp_path, OLD, NEW_LINK, FORK_FILES)
    found = [(f.kind, f.path, f.line, f.details["entry"], f.details["configurations"], f.details["sites"])
             for f in unconfigured_target_findings(context)]
    assert found == [("build-target-unconfigured", "third_party/prof/CMakeLists.txt", 5, "GpuToLLVM", ["acme"],
                      ["third_party/prof/CMakeLists.txt:5", "setup.py:5"])]


NEW_LINK = {**OLD, "third_party/prof/CMakeLists.txt": "add_triton_library(ProfToLLVM prof.cpp\n  LINK_LIBS PUBLIC\n"
                                                      "  Core\n  GpuLegacy\n  GpuToLLVM\n)\n"}


def test_a_root_cmake_file_in_conflict_is_no_build_to_judge(tmp_path) -> None:
    """The same new link, on a branch whose root CMakeLists.txt holds a conflict's markers (the 3.7 move's): both
    sides read one after the other are no build, so that configuration is not judged."""
    conflicted = ("<<<<<<< new-tag (upgraded)\nset(TRITON_BUILD_PYTHON_MODULE OFF)\n=======\n"
                  ">>>>>>> abc (FlagTree)\n" + ROOT)
    context = context_with_branch(tmp_path, OLD, NEW_LINK, FORK_FILES, {**FORK_FILES, "CMakeLists.txt": conflicted})
    assert unconfigured_target_findings(context) == []


def test_a_target_every_configuration_defines_is_no_finding(tmp_path) -> None:
    """The same new link, where upstream moved GpuToLLVM's definition into lib/, which every build adds; and a
    link under a condition the tree does not decide (a platform) is not one the build certainly makes."""
    new = {**OLD, "lib/CMakeLists.txt": "add_library(Core core.cpp)\nadd_triton_library(GpuToLLVM gpu.cpp)\n",
           "third_party/gpu/CMakeLists.txt": "add_triton_library(GpuLegacy legacy.cpp)\n"
                                             "add_triton_library(GpuOnly only.cpp)\n",
           "third_party/prof/CMakeLists.txt": "add_triton_library(ProfToLLVM prof.cpp\n  LINK_LIBS PUBLIC\n  Core\n"
                                              "  GpuLegacy\n  GpuToLLVM\n)\nif(WIN32)\n"
                                              "  target_link_libraries(ProfToLLVM GpuOnly)\nendif()\n"}
    context = context_with_branch(tmp_path, OLD, new, FORK_FILES)
    assert unconfigured_target_findings(context) == []


def test_configurations_follow_the_entry_scripts_choice_per_backend(tmp_path) -> None:
    context = context_with_branch(tmp_path, OLD, {**OLD, "README.md": "new\n"}, FORK_FILES)
    assert context.target is not None
    chosen = {c.backend: (c.cache["TRITON_CODEGEN_BACKENDS"], c.chosen_at)
              for c in configurations(context.target, context.upstream_new)}
    assert chosen == {"": ("gpu", "setup.py:7"), "acme": ("acme", "setup.py:5")}


def test_configured_reads_conditions_three_valued(tmp_path) -> None:
    """A definition under an unknown condition may be made; a link there is not certainly made; an else branch
    after a true condition is not taken; escaped quotes and bracket comments read as CMake reads them."""
    text = ('add_definitions(-DX=\\"${B}\\")\n#[[ add_library(Commented c.cpp) ]]\n'
            'if(B STREQUAL "acme")\n  add_library(A a.cpp)\nelseif(WIN32)\n  add_library(W w.cpp)\nelse()\n'
            '  add_library(E e.cpp)\nendif()\nif(APPLE)\n  add_library(M m.cpp)\n'
            '  target_link_libraries(A PRIVATE M)\nendif()\ntarget_link_libraries(A PRIVATE\n  Z)\n')
    assert [c.name for c in commands(text)] == ["add_definitions", "if", "add_library", "elseif", "add_library",
                                                "else", "add_library", "endif", "if", "add_library",
                                                "target_link_libraries", "endif", "target_link_libraries"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    sha = commit(tmp_path, {"CMakeLists.txt": text}, "t")
    repo = pygit2.Repository(str(tmp_path))
    made = configured(GitTree(repo, repo[sha].tree, "t"), {"B": "acme"}, {})
    assert made.defined == {"A", "M"}
    assert [(link.owner, link.name, link.line) for link in made.links] == [("A", "Z", 15)]


def test_a_parenthesis_glued_to_not_opens_a_group(tmp_path) -> None:
    """`NOT("${X}" STREQUAL "")` (CUTLASS's CMake on the 3.x lines): the hand reader glued `NOT("${X}"` into one
    legacy word and left the condition unknown; CMake, and the tree, read NOT, a group, a quoted argument."""
    text = ('if(NOT("${B}" STREQUAL "acme"))\n  add_library(Other o.cpp)\nendif()\n'
            'if(NOT ("${B}" STREQUAL "other") AND B)\n  add_library(A a.cpp)\nendif()\n')
    assert [(a.text, a.quoted) for a in commands(text)[0].args] == [
        ("NOT", False), ("(", False), ("${B}", True), ("STREQUAL", False), ("acme", True), (")", False)]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    sha = commit(tmp_path, {"CMakeLists.txt": text}, "t")
    repo = pygit2.Repository(str(tmp_path))
    assert configured(GitTree(repo, repo[sha].tree, "t"), {"B": "acme"}, {}).defined == {"A"}
