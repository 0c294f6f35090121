"""Issue 45, class 4: a callable parameter upstream retyped, still passed FlagTree's old callable (the 3.7 move's
ModuleAxisInfoAnalysis constructor, whose callback now takes a DataFlowSolver, and tle's AxisInfoExt)."""
from __future__ import annotations

from pathlib import Path

from sync.drift.analyses.callbacks import callable_parameters, callback_findings
from sync.facts.declindex import declarations_of
from tests.upstream_fixture import context_of

HEADER = "include/triton/Analysis/AxisInfo.h"
OLD_HEADER = """#include <functional>
namespace mlir::triton {
class AxisInfoVisitorList;
namespace axisinfo {
using CallbackType = std::function<void(AxisInfoVisitorList &)>;
}
class ModuleAxisInfoAnalysis {
public:
  explicit ModuleAxisInfoAnalysis(ModuleOp moduleOp, axisinfo::CallbackType callback = nullptr) {}
};
void walkAll(ModuleOp op, std::function<void(Operation *)> fn);
}
"""
NEW_HEADER = """#include <functional>
namespace mlir::triton {
class AxisInfoVisitorList;
class AxisInfoAnalysis {
public:
  static void loadDefaultAnalysis(DataFlowSolver &solver);
  using LoadCallback = decltype(&AxisInfoAnalysis::loadDefaultAnalysis);
};
class ModuleAxisInfoAnalysis {
public:
  explicit ModuleAxisInfoAnalysis(ModuleOp moduleOp,
                                  AxisInfoAnalysis::LoadCallback loadAnalysis = nullptr) {}
};
void walkAll(ModuleOp op, std::function<void(Operation *)> fn);
}
"""
EXT = "third_party/tle/include/Analysis/AxisInfoExt.h"
TLE = """#include "triton/Analysis/AxisInfo.h"
namespace mlir::triton::tle {
struct AxisInfoExt {
  static void addVisitors(mlir::triton::AxisInfoVisitorList &visitors);
};
class ModuleAxisInfoAnalysis : public mlir::triton::ModuleAxisInfoAnalysis {
public:
  explicit ModuleAxisInfoAnalysis(ModuleOp moduleOp)
      : mlir::triton::ModuleAxisInfoAnalysis(moduleOp, AxisInfoExt::addVisitors) {}
};
void use(ModuleOp op) {
  mlir::triton::ModuleAxisInfoAnalysis direct(op);
  auto made = mlir::triton::ModuleAxisInfoAnalysis(op, [](AxisInfoVisitorList &list) {});
  walkAll(op, [](Operation *inner) {});
}
}
"""


def test_callables_are_read_through_aliases_and_decltype() -> None:
    old, new = declarations_of(HEADER, OLD_HEADER), declarations_of(HEADER, NEW_HEADER)
    assert callable_parameters("CallbackType", old) == ("AxisInfoVisitorList",)
    assert callable_parameters("LoadCallback", new) == ("DataFlowSolver",)
    assert callable_parameters("std::function<void(Operation *, int)>", new) == ("Operation", "int")
    assert callable_parameters("ModuleOp", new) is None


def test_an_old_callable_passed_to_a_retyped_parameter_is_an_error(tmp_path: Path) -> None:
    found = callback_findings(context_of(tmp_path, {HEADER: OLD_HEADER}, {HEADER: NEW_HEADER},
                                         {HEADER: OLD_HEADER, EXT: TLE}))
    assert [(f.kind, f.severity, f.path, f.line) for f in found] == [
        ("call-no-overload", "error", EXT, 9), ("call-no-overload", "error", EXT, 13)]
    assert "AxisInfoExt::addVisitors" in found[0].message and "DataFlowSolver" in found[0].message
    # walkAll's callable did not change; `direct(op)` passes no callable


def test_no_claim_for_a_callable_that_fits_the_new_type_or_another_class_of_that_name(tmp_path: Path) -> None:
    fits = TLE.replace("mlir::triton::AxisInfoVisitorList &visitors", "DataFlowSolver &solver").replace(
        "[](AxisInfoVisitorList &list) {}", "[](DataFlowSolver &solver) {}")
    other = TLE.replace("mlir::triton::ModuleAxisInfoAnalysis(moduleOp", "other::ModuleAxisInfoAnalysis(moduleOp") \
        .replace("mlir::triton::ModuleAxisInfoAnalysis(op, [", "other::ModuleAxisInfoAnalysis(op, [")
    for name, text in {"fits": fits, "other": other}.items():
        assert callback_findings(context_of(tmp_path / name, {HEADER: OLD_HEADER}, {HEADER: NEW_HEADER},
                                            {HEADER: OLD_HEADER, EXT: text})) == [], name
    # a backend that builds its own copy of trunk compiles against that copy, which upstream did not change
    own = {HEADER: OLD_HEADER, "third_party/hcu/include/triton/Analysis/AxisInfo.h": OLD_HEADER,
           "third_party/hcu/include/Analysis/AxisInfoExt.h": TLE}
    assert callback_findings(context_of(tmp_path / "own", {HEADER: OLD_HEADER}, {HEADER: NEW_HEADER}, own)) == []
