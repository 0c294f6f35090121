"""Issue 33: call-no-overload -- a call of a trunk method that fit the old declaration and fits no new one."""
from __future__ import annotations

from sync.drift.analyses.methodcalls import Arity, call_no_overload_findings, methods
from tests.upstream_fixture import context_of

OLD_H = ("class TargetInfoBase {\npublic:\n  virtual void barrier(Location loc, RewriterBase &r,\n"
         "                       bool isWarpSync = false) const = 0;\n  virtual int lanes(int a) const = 0;\n};\n")
NEW_H = ("class TargetInfoBase {\npublic:\n  virtual void barrier(Location loc, RewriterBase &r,\n"
         "                       AddrSpace targets) const = 0;\n  virtual int lanes(int a, int b = 0) const = 0;\n};\n")
USE = ("#include \"triton/TargetInfoBase.h\"\nvoid f(const TargetInfoBase &targetInfo, Other &other, auto &guess) {\n"
       "  targetInfo.barrier(loc, rewriter);\n"        # 3: fit (default), fits no new overload: fires
       "  targetInfo.barrier(loc, rewriter, space);\n"  # 4: fits the new one
       "  other.barrier(loc, rewriter);\n"             # 5: another class's barrier
       "  guess.barrier(loc, rewriter);\n"             # 6: receiver type unknown (auto): no claim
       "  targetInfo.lanes(1);\n}\n")                   # 7: still fits (a defaulted parameter was added)


def test_arities_read_from_a_header() -> None:
    assert methods(OLD_H)[("TargetInfoBase", "barrier")] == [Arity(2, 3)]
    assert methods(NEW_H)[("TargetInfoBase", "lanes")] == [Arity(1, 2)]


def test_fires_only_on_calls_that_fit_the_old_declaration_and_no_new_one(tmp_path) -> None:
    old = {"include/triton/TargetInfoBase.h": OLD_H}
    new = {"include/triton/TargetInfoBase.h": NEW_H}
    fork = {**old, "third_party/b/lib/Use.cpp": USE,
            "third_party/c/lib/Use.cpp": USE, "third_party/c/include/triton/TargetInfoBase.h": OLD_H,  # own copy
            "lib/Trunk.cpp": USE.replace("rewriter);\n  targetInfo.barrier", "rewriter, space);\n  targetInfo.barrier")}
    found = call_no_overload_findings(context_of(tmp_path, old, new, fork))
    assert [(f.kind, f.severity, f.details["sites"]) for f in found] == [
        ("call-no-overload", "error", ["third_party/b/lib/Use.cpp:3"])]
    assert "TargetInfoBase::barrier" in found[0].message


ENUM_TD = 'def TTG_AddrSpace : I32BitEnumAttr<"AddrSpace", "", [Local, Global]> {\n}\n'
LITERALS = ("#include \"triton/TargetInfoBase.h\"\nvoid f(const TargetInfoBase &targetInfo) {\n"
            "  targetInfo.barrier(loc, rewriter, /*isWarpSync=*/false);\n"  # 3: a bool where an enum is asked: fires
            "  targetInfo.barrier(loc, rewriter, AddrSpace::Local);\n"    # 4: an enumerator: fits
            "  targetInfo.lanes(1, 2);\n}\n")                              # 5: a literal on an int: fits


def test_a_literal_where_the_new_overload_asks_for_an_enum_fits_no_overload(tmp_path) -> None:
    """C++ converts no literal to an enum: `barrier(loc, rewriter, false)` has the right count and still breaks.
    The enum is known from the new tree (an ODS enum attribute here); an unknown type claims nothing."""
    assert [a.types for a in methods(NEW_H)[("TargetInfoBase", "barrier")]] == [("Location", "RewriterBase",
                                                                                   "AddrSpace")]
    old = {"include/triton/TargetInfoBase.h": OLD_H}
    new = {"include/triton/TargetInfoBase.h": NEW_H, "include/triton/Enums.td": ENUM_TD}
    fork = {**old, "lib/Use.cpp": LITERALS}
    found = call_no_overload_findings(context_of(tmp_path, old, new, fork))
    assert [(f.kind, f.details["sites"]) for f in found] == [("call-no-overload", ["lib/Use.cpp:3"])]
    assert "asks for AddrSpace" in found[0].message
    unknown = {**new, "include/triton/Enums.td": ENUM_TD.replace("AddrSpace", "OtherSpace")}
    assert call_no_overload_findings(context_of(tmp_path / "unknown", old, unknown, fork)) == []


TMA_OLD = ("namespace mlir::triton::nvidia_gpu {\n"
           "SmallVector<int64_t> getBlock(Attribute enc, ArrayRef<int64_t> shape, bool packed);\n"
           "inline SmallVector<int64_t> getBlock(MemDescType ty, bool packed) { return {}; }\n"
           "int keep(int a);\n}\n")
TMA_NEW = ("namespace mlir::triton::nvidia_gpu {\nenum class TMAMode { Tiled, Im2Col };\n"
           "SmallVector<int64_t> getBlock(Attribute enc, ArrayRef<int64_t> shape, bool packed, TMAMode mode);\n"
           "inline SmallVector<int64_t> getBlock(MemDescType ty, bool packed, TMAMode mode) { return {}; }\n"
           "int keep(int a, int b = 0);\n}\n")
FREE_USE = ("#include \"triton/TMA.h\"\nnamespace ttng = mlir::triton::nvidia_gpu;\nvoid f() {\n"
            "  auto a = ttng::getBlock(enc, shape, /*packed=*/true);\n"   # 4: a literal on TMAMode, or 4 wanted
            "  auto b = triton::nvidia_gpu::getBlock(ty, false);\n"      # 5: 2 arguments fit no new overload
            "  auto c = ttng::getBlock(ty, false, ttng::TMAMode::Tiled);\n"  # 6: fits
            "  auto d = other::getBlock(ty, false);\n"                   # 7: another namespace's
            "  getBlock(ty, false);\n"                                   # 8: unqualified, outside: not resolved
            "  keep(1);\n"                                              # 9: still fits
            "}\nnamespace mlir::triton::nvidia_gpu {\nvoid g() { getBlock(ty, false); }\n}\n")  # 12: resolved inside


def test_a_free_function_call_that_fits_no_new_overload_is_an_error(tmp_path) -> None:
    """The 3.4.x -> 3.7 move: every nvidia_gpu::getTMABlockShape overload gained a TMAMode parameter, and sunrise's
    spec calls it with the old arguments. Named through the namespace (an alias too) or from inside it; another
    namespace's function of the name, an unqualified call from outside, and a backend that declares the name
    itself claim nothing."""
    from sync.drift.analyses.methodcalls import functions
    assert functions(TMA_NEW)[("mlir::triton::nvidia_gpu", "getBlock")] == [Arity(4, 4), Arity(3, 3)]
    old = {"include/triton/TMA.h": TMA_OLD, "lib/Trunk.cpp": FREE_USE}
    new = {"include/triton/TMA.h": TMA_NEW, "lib/Trunk.cpp": FREE_USE}
    fork = {**old, "third_party/b/lib/Use.cpp": FREE_USE, "third_party/c/lib/Use.cpp": FREE_USE,
            "third_party/c/include/own.h": "namespace c {\nvoid getBlock(int a, int b);\n}\n"}
    found = call_no_overload_findings(context_of(tmp_path, old, new, fork))
    assert [(f.kind, f.severity, f.backend, f.details["sites"]) for f in found] == [
        ("call-no-overload", "error", "b", ["third_party/b/lib/Use.cpp:4", "third_party/b/lib/Use.cpp:5",
                                            "third_party/b/lib/Use.cpp:12"])]
    assert "mlir::triton::nvidia_gpu::getBlock" in found[0].message and found[0].details["namespace"] \
        == "mlir::triton::nvidia_gpu"
    # another trunk namespace declaring getBlock: an unqualified call may reach its overloads (ADL)
    other = {**new, "include/triton/Gpu.h": "namespace mlir::triton::gpu {\nint getBlock(int a, int b);\n}\n"}
    found = call_no_overload_findings(context_of(tmp_path / "other", old, other, fork))
    assert [f.details["sites"] for f in found] == [["third_party/b/lib/Use.cpp:4", "third_party/b/lib/Use.cpp:5"]]
    # an overload FlagTree adds to the trunk header takes the old calls
    kept = {**fork, "include/triton/TMA.h": TMA_OLD.replace("int keep", "SmallVector<int64_t> getBlock(Value v, "
                                                               "bool packed);\nint keep")}
    assert [f.details["sites"] for f in call_no_overload_findings(context_of(tmp_path / "kept", old, new, kept))] \
        == [["third_party/b/lib/Use.cpp:4"]]


def test_a_free_function_reached_through_using_namespace_or_with_template_arguments(tmp_path) -> None:
    """`using namespace` makes an unqualified call mean the namespace's function (when no other trunk namespace
    declares the name); `ns::f<T>(...)` and `::ns::f(...)` name it too. A file that declares its own function of
    the name, or a backend that declares one, claims nothing (one of its overloads may take the call)."""
    use = ("#include \"triton/TMA.h\"\nusing namespace mlir::triton::nvidia_gpu;\nvoid f() {\n"
           "  getBlock(ty, false);\n"                                      # 4: through the using-directive
           "  ::mlir::triton::nvidia_gpu::getBlock<int>(ty, true);\n"      # 5: global qualifier, template arguments
           "}\n")
    old = {"include/triton/TMA.h": TMA_OLD}
    new = {"include/triton/TMA.h": TMA_NEW}
    fork = {**old, "third_party/b/lib/Use.cpp": use,
            "third_party/d/lib/Use.cpp": use.replace("void f() {", "int getBlock(int a, bool b);\nvoid f() {")}
    found = call_no_overload_findings(context_of(tmp_path, old, new, fork))
    assert [(f.backend, f.details["sites"]) for f in found] == [
        ("b", ["third_party/b/lib/Use.cpp:4", "third_party/b/lib/Use.cpp:5"])]
