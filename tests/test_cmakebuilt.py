"""Whether CMake compiles a file: only what the tree says plainly is left out counts as not built."""
from __future__ import annotations

from pathlib import Path

from sync.facts.cmakebuilt import unbuilt
from tests.test_declindex import tree_of

BIN = "third_party/t/bin/"


def _unbuilt(tmp_path: Path, cmake: str, path: str = BIN + "tool-layout.cpp") -> bool:
    return unbuilt(tree_of(tmp_path, {BIN + "CMakeLists.txt": cmake, path: "int main() {}\n"}), path)


def test_a_file_named_only_in_a_commented_out_target_is_not_built(tmp_path: Path) -> None:
    """Issue 33, the 3.5.x -> 3.7 move: tsingmicro's bin/CMakeLists.txt comments out the tool's executable."""
    assert _unbuilt(tmp_path / "one", "# add_llvm_executable(tool-layout tool-layout.cpp PARTIAL_SOURCES_INTENDED)\n")
    listed = "#add_triton_library(Tools\n#  other.cpp\n#  tool-layout.cpp\n#)\n"  # a commented-out list of sources
    assert _unbuilt(tmp_path / "list", listed)


def test_a_commented_out_target_may_keep_its_blank_lines(tmp_path: Path) -> None:
    """The 3.3.x -> 3.4.0 move: tsingmicro's `# add_llvm_executable(tsingmicro-llvm-opt` / `#   ...cpp` / a blank
    line / `#   PARTIAL_SOURCES_INTENDED` / `#   )`: still one commented-out command, so the file is not built."""
    kept = "# add_llvm_executable(tool-layout\n#   tool-layout.cpp\n\n#   PARTIAL_SOURCES_INTENDED\n#   )\n"
    assert _unbuilt(tmp_path / "blank", kept)
    broken = "# add_llvm_executable(tool-layout\nset(X 1)\n#   tool-layout.cpp\n#   )\n"  # code between: a remark
    assert not _unbuilt(tmp_path / "code", broken)


def test_a_file_an_active_line_a_remark_or_a_glob_may_build_counts_as_built(tmp_path: Path) -> None:
    active = "# add_llvm_executable(tool-layout tool-layout.cpp)\nadd_llvm_executable(tool-layout tool-layout.cpp)\n"
    assert not _unbuilt(tmp_path / "active", active)
    assert not _unbuilt(tmp_path / "remark", "# tool-layout.cpp is built by the parent\nadd_subdirectory(x)\n")
    globbed = "file(GLOB SOURCES *.cpp)\n# add_llvm_executable(tool-layout tool-layout.cpp)\n"
    assert not _unbuilt(tmp_path / "glob", globbed)
    assert not _unbuilt(tmp_path / "unnamed", "add_llvm_executable(other other.cpp)\n")
    # another file whose name ends the same is another file
    assert not _unbuilt(tmp_path / "suffix", "# add_llvm_executable(x my-tool-layout.cpp)\n")


def test_a_directory_a_bracket_comment_adds_is_not_built(tmp_path: Path) -> None:
    """The line-based reader took `add_subdirectory(Old)` inside `#[[ ... ]]` for an active line: the tree reads it
    as the comment it is, and a multi-line target a bracket comment holds as commented out."""
    files = {"lib/CMakeLists.txt": "#[[\nadd_subdirectory(Old)\n]]\nadd_subdirectory(New)\n",
             "lib/Old/a.cpp": "int a;\n", "lib/New/b.cpp": "int b;\n"}
    tree = tree_of(tmp_path / "dir", files)
    assert unbuilt(tree, "lib/Old/a.cpp") and not unbuilt(tree, "lib/New/b.cpp")
    bracketed = "#[==[\nadd_llvm_executable(tool-layout\n  tool-layout.cpp)\n]==]\n"
    assert _unbuilt(tmp_path / "target", bracketed)


def test_a_commented_name_inside_an_active_quoted_argument_is_active(tmp_path: Path) -> None:
    """A `#` inside a quoted argument starts no comment; a `)` inside one ends no command."""
    quoted = 'add_llvm_executable(tool-layout "tool-layout.cpp" # the tool\n  "x)")\n'
    assert not _unbuilt(tmp_path / "quoted", quoted)
    both = '# add_subdirectory(x)\nmessage("a ) b")\nadd_subdirectory(x)\n'
    assert not unbuilt(tree_of(tmp_path / "both", {"CMakeLists.txt": both, "x/a.cpp": "int a;\n"}), "x/a.cpp")
