"""build-generated-dependency: upstream includes that make a library FlagTree builds differently need TableGen
output it does not reach through DEPENDS/LINK_LIBS."""
from __future__ import annotations

from sync.drift.analyses.builddeps import generated_dependency_findings, generated_files, library_targets
from tests.upstream_fixture import context_of

LIB_A = "add_triton_library(TritonA\n  A.cpp\n  A2.cpp\n\n  DEPENDS\n  TritonATableGen\n\n  LINK_LIBS PUBLIC\n  MLIRIR\n)\n"
INCLUDE_B = ("set(LLVM_TARGET_DEFINITIONS B.td)\nmlir_tablegen(Types.h.inc -gen-typedef-decls)\n"
             "add_public_tablegen_target(TritonBTableGen)\n\n"
             "set(LLVM_TARGET_DEFINITIONS BAttr.td)\nmlir_tablegen(Attr.h.inc -gen-attrdef-decls)\n"
             "add_public_tablegen_target(TritonBAttrIncGen)\n")
OLD = {"lib/A/CMakeLists.txt": LIB_A, "lib/A/A.cpp": '#include "A/A.h"\nint a;\n', "lib/A/A2.cpp": "int a2;\n",
       "include/A/A.h": "int h;\n", "include/B/CMakeLists.txt": INCLUDE_B,
       "include/B/Types.h": '#include "B/Attr.h"\n#include "B/Types.h.inc"\n', "include/B/Attr.h": '#include "B/Attr.h.inc"\n',
       "lib/B/CMakeLists.txt": "add_triton_library(TritonBIR\n  B.cpp\n  DEPENDS\n  TritonBTableGen\n  TritonBAttrIncGen\n)\n",
       "lib/B/B.cpp": '#include "B/Types.h"\n'}
NEW = {**OLD, "lib/A/A.cpp": '#include "A/A.h"\n#include "B/Types.h"\nint a;\n'}
FORK = {**OLD, "lib/A/A2.cpp": "int a2;\nint flagtree_a2;\n"}


def test_facts_targets_and_generated_files() -> None:
    (target,) = library_targets("lib/A/CMakeLists.txt", LIB_A)
    assert target.sources == ("lib/A/A.cpp", "lib/A/A2.cpp") and target.depends == {"TritonATableGen", "MLIRIR"}
    assert generated_files("include/B/CMakeLists.txt", INCLUDE_B) == {
        "include/B/Types.h.inc": "TritonBTableGen", "include/B/Attr.h.inc": "TritonBAttrIncGen"}


def test_fires_when_an_upstream_include_needs_undeclared_tablegen_output(tmp_path) -> None:
    (finding,) = generated_dependency_findings(context_of(tmp_path, OLD, NEW, FORK))
    assert finding.kind == "build-generated-dependency" and finding.path == "lib/A/CMakeLists.txt"
    assert finding.details["missing"] == ["TritonBAttrIncGen", "TritonBTableGen"]  # Attr.h.inc through Attr.h
    assert finding.details["flagtree_files"] == ["lib/A/A2.cpp"] and finding.related_path == "lib/A/A.cpp"
    assert '+#include "B/Types.h"' in finding.diff and finding.severity == "info"  # a race upstream's graph has too (docs/accuracy.md)


def test_silent_when_flagtree_does_not_touch_the_target(tmp_path) -> None:
    fork = {**OLD, "lib/B/B.cpp": '#include "B/Types.h"\nint flagtree_b;\n'}
    assert generated_dependency_findings(context_of(tmp_path, OLD, NEW, fork)) == []


def test_silent_when_a_link_library_already_orders_the_tablegen_targets(tmp_path) -> None:
    linked = LIB_A.replace("  MLIRIR\n", "  MLIRIR\n  TritonBIR\n")
    old, new = {**OLD, "lib/A/CMakeLists.txt": linked}, {**NEW, "lib/A/CMakeLists.txt": linked}
    assert generated_dependency_findings(context_of(tmp_path, old, new, {**FORK, "lib/A/CMakeLists.txt": linked})) == []


def test_silent_when_an_unchanged_include_already_needs_it_or_flagtree_declared_it(tmp_path) -> None:
    # The new include reaches only Attr.h.inc, which the kept include B/Attr.h already needed.
    old = {**OLD, "lib/A/A.cpp": '#include "B/Attr.h"\nint a;\n', "include/B/AttrUtil.h": '#include "B/Attr.h"\n'}
    new = {**old, "lib/A/A.cpp": '#include "B/Attr.h"\n#include "B/AttrUtil.h"\nint a;\n'}
    assert generated_dependency_findings(context_of(tmp_path / "kept", old, new, {**old, "lib/A/A2.cpp": FORK["lib/A/A2.cpp"]})) == []
    declared = {**FORK, "lib/A/CMakeLists.txt": LIB_A.replace("  TritonATableGen\n",
                                                            "  TritonATableGen\n  TritonBTableGen\n  TritonBAttrIncGen\n")}
    assert generated_dependency_findings(context_of(tmp_path / "declared", OLD, NEW, declared)) == []
