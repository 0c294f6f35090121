"""generated-output-clash (issue 45, class 3, a header clash): the 3.2 -> 3.4 move merged FlagTree's
`if(EXISTS ${BACKEND_SPEC_TD})` block that generates OpInterfaces.h.inc from a backend's .td cleanly beside 3.4's
own unconditional rule for the same output; CMake refuses a second custom rule for one output."""
from __future__ import annotations

from pathlib import Path

import pytest

from sync.facts.cmake import generated_rules
from tests.drift_helpers import drift_of, fork_world, upgraded_world

CMAKE = "include/x/IR/CMakeLists.txt"
OLD = ("project(x)\n\nset(LLVM_TARGET_DEFINITIONS Ops.td)\nmlir_tablegen(Ops.h.inc -gen-op-decls)\n"
       "add_public_tablegen_target(XTableGen)\n")
NEW = OLD.replace("project(x)\n\n", "project(x)\n\nset(LLVM_TARGET_DEFINITIONS Iface.td)\n"
                  "mlir_tablegen(Iface.h.inc -gen-op-interface-decls)\n\n")


def _fork(output: str) -> str:
    return OLD.replace("add_public", f"if(EXISTS ${{SPEC_TD}})\n  set(LLVM_TARGET_DEFINITIONS ${{SPEC_TD}})\n"
                                     f"  mlir_tablegen({output} -gen-op-interface-decls)\nendif()\nadd_public")


@pytest.mark.parametrize("output, clashes", [("Iface.h.inc", True), ("Spec.h.inc", False)],
                         ids=["same-output", "another-output"])
def test_two_rules_for_one_output_stop_cmake(tmp_path: Path, output: str, clashes: bool) -> None:
    repo = upgraded_world(tmp_path, {CMAKE: OLD, "include/x/IR/Ops.td": "def A;\n"}, {CMAKE: _fork(output)},
                          {CMAKE: NEW, "include/x/IR/Iface.td": "def B;\n"}, "[BUILD] Generate the interfaces (#5194)")
    findings = [f for f in drift_of(fork_world(repo), "v1", "v2", "main", target="sync/v2", symbols=True).findings
                if f.kind == "generated-output-clash"]
    if not clashes:
        assert findings == []
        return
    assert [(f.path, f.line, f.severity, f.details["outputs"]) for f in findings] == [
        (CMAKE, 10, "error", ["Iface.h.inc"])]
    assert f"{CMAKE}:4" in findings[0].details["sites"]  # upstream's rule, where the branch has it


def test_rules_in_different_branches_of_one_if_or_in_a_body_not_run_here() -> None:
    text = ("if(A)\n  mlir_tablegen(X.h.inc)\nelseif(B)\n  mlir_tablegen(X.h.inc)\nelse()\n  mlir_tablegen(Y.h.inc)\n"
            "endif()\nif(C)\n  mlir_tablegen(Y.h.inc)\nendif()\nfunction(f)\n  mlir_tablegen(Z.h.inc)\nendfunction()\n"
            "add_custom_command(OUTPUT a.h ${B}/b.h COMMAND gen DEPENDS x.py)\n")
    rules = generated_rules(text)
    assert [(rule.output, rule.line) for rule in rules] == [("X.h.inc", 2), ("X.h.inc", 4), ("Y.h.inc", 6),
                                                             ("Y.h.inc", 9), ("a.h", 14)]
    assert rules[0].excludes(rules[1]) and rules[2].excludes(rules[0])
    assert not rules[2].excludes(rules[3])  # else of one if, then another if: both may run
