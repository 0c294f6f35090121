"""TableGen overlays that no longer build with the new tag (issue 33, the 3.2 -> 3.3 and 3.4.x -> 3.5.1 moves):
a class trunk's new .td generates and trunk's C++ uses, which the backend's own version generates nowhere; an
include of a trunk .td upstream deleted."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from sync.drift.analyses.tdoverlays import generated_classes
from tests.drift_helpers import drift_of
from tests.test_real_structures import small_world

B = "third_party/b/backend/spec/"
OPS_OLD = ('include "t/Base.td"\n'
           'def T_LoadOp : T_Op<"load"> {\n  let arguments = (ins $ptr);\n}\n')
OPS_NEW = OPS_OLD + ('def T_GatherOp : T_Op<"gather"> {\n  let arguments = (ins $src);\n}\n'
                     'def T_Kind : I32EnumAttr<"Kind", "", [I32EnumAttrCase<"A", 0>]>;\n')
USE = "#include \"t/Ops.h\"\nvoid f() {\n  GatherOp g;  // a new op\n  auto k = Kind::A;\n}\n"


def _kinds(tmp_path: Path, upstream: dict[str, str], fork_extra: dict[str, str] | None = None,
           base_extra: dict[str, str] | None = None) -> dict[str, list[str]]:
    base = {"include/t/Base.td": "class T_Op;\n", "include/t/Ops.td": OPS_OLD, "lib/Other.cpp": "int x;\n",
            "python/triton/__init__.py": "", **(base_extra or {})}
    fork = {**base, B + "include/t/Ops.td": OPS_OLD, B + "include/flagtree_spec.h": "#define FLAGTREE_SPEC_Use_cpp\n",
            **(fork_extra or {})}
    tmp_path.mkdir(parents=True, exist_ok=True)
    repo = small_world(tmp_path, base, upstream, fork)
    found: dict[str, list[str]] = {}
    for finding in drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings:
        if finding.kind == "overlay-include-removed" or (finding.kind == "overlay-missing-names"
                                                          and finding.path.endswith(".td")):
            found.setdefault(finding.kind, []).extend(finding.details.get("sites") or [finding.details["include"]])
    return found


def test_generated_classes_name_ops_attributes_and_enums() -> None:
    assert generated_classes("include/t/Ops.td", OPS_NEW) == {"LoadOp", "GatherOp", "Kind", "KindAttr"}


def test_a_new_class_trunk_uses_and_the_overlay_lacks_will_not_build(tmp_path: Path) -> None:
    found = _kinds(tmp_path, {"include/t/Ops.td": OPS_NEW, "lib/Use.cpp": USE})
    assert found == {"overlay-missing-names": ["lib/Use.cpp:3", "lib/Use.cpp:4"]}


def test_no_claim_where_the_backend_has_the_class_or_trunk_uses_it_only_in_code_the_backend_turns_off(
        tmp_path: Path) -> None:
    upstream = {"include/t/Ops.td": OPS_NEW, "lib/Use.cpp": USE}
    # the backend's own TableGen (its overlay or another .td of its tree) declares both
    own = {B + "include/t/Ops.td": OPS_NEW}
    assert _kinds(tmp_path / "overlay", upstream, own) == {}
    elsewhere = {"third_party/b/include/b/Extra.td": OPS_NEW.split('include "t/Base.td"\n')[1]}
    assert _kinds(tmp_path / "elsewhere", upstream, elsewhere) == {}
    # trunk's use is inside the backend's own #ifndef: its build compiles the backend's replacement instead
    guarded = {"lib/Use.cpp": "#ifndef FLAGTREE_SPEC_Use_cpp\n" + USE + "#endif\n"}
    assert _kinds(tmp_path / "guarded", {"include/t/Ops.td": OPS_NEW}, base_extra=guarded) == {}
    # a class trunk's old .td already generated is no new break (the backend has lived without it)
    assert _kinds(tmp_path / "before", upstream, base_extra={"include/t/Ops.td": OPS_NEW}) == {}


def test_an_include_of_a_trunk_file_upstream_deleted_stops_tablegen(tmp_path: Path) -> None:
    upstream = {"include/t/Base.td": None}
    assert _kinds(tmp_path / "gone", upstream) == {"overlay-include-removed": ["t/Base.td"]}
    # the backend carries its own file of that name
    own = {B + "include/t/Base.td": "class T_Op;\n"}
    assert _kinds(tmp_path / "own", upstream, own) == {}


def test_a_tablegen_definition_another_trunk_td_now_uses_and_the_overlay_lacks_stops_tablegen(tmp_path: Path) -> None:
    """The 3.4.x -> 3.5.1 move: 3.5's TritonGPUAttrDefs.td defines LocalLoadTrait, which TritonGPUOps.td uses;
    sunrise's 3.4 copy of the AttrDefs file, built in trunk's place, defines no such trait."""
    trait = OPS_OLD + 'def LoadTrait : NativeOpTrait<"LoadTrait">;\n'
    user = 'include "t/Ops.td"\ndef T_ReadOp : T_Op<"read", [LoadTrait]> {\n  let arguments = (ins $ptr);\n}\n'
    upstream = {"include/t/Ops.td": trait, "include/t/Read.td": user}
    assert _kinds(tmp_path / "gone", upstream) == {"overlay-missing-names": ["include/t/Read.td:2"]}
    # the overlay defines it too
    assert _kinds(tmp_path / "own", upstream, {B + "include/t/Ops.td": trait}) == {}


DOT_OLD = OPS_OLD + 'def T_DotOp : T_Op<"dot"> {\n  let arguments = (ins $lhs_type);\n}\n'
DOT_NEW = OPS_OLD + 'def T_DotOp : T_Op<"dot"> {\n  let arguments = (ins $a_elem_type);\n}\n'
DOT_USE = "#include \"t/Ops.h\"\nvoid f(DotOp op) {\n  auto t = op.getAElemType();\n}\n"


def test_an_accessor_trunk_now_generates_for_a_class_the_overlay_keeps_will_not_build(tmp_path: Path) -> None:
    """The 3.2 line onto 3.3: upstream renamed DotScaledOp's `$lhs_type` to `$a_elem_type` and trunk's Ops.cpp
    calls getAElemType(); ascend's TritonOps.td, built in trunk's place, still generates getLhsType()."""
    base = {"include/t/Ops.td": DOT_OLD}
    upstream = {"include/t/Ops.td": DOT_NEW, "lib/Use.cpp": DOT_USE}
    overlay = {B + "include/t/Ops.td": DOT_OLD}
    assert _kinds(tmp_path / "renamed", upstream, overlay, base) == {"overlay-missing-names": ["lib/Use.cpp:3"]}
    # the overlay took the rename over
    assert _kinds(tmp_path / "ported", upstream, {B + "include/t/Ops.td": DOT_NEW}, base) == {}
    # the overlay writes the accessor by hand (extraClassDeclaration)
    by_hand = DOT_OLD.replace("(ins $lhs_type);", "(ins $lhs_type);\n  let extraClassDeclaration = "
                                                   "[{ Type getAElemType() { return getLhsType(); } }];")
    assert _kinds(tmp_path / "by-hand", upstream, {B + "include/t/Ops.td": by_hand}, base) == {}
    # another declaration of upstream's new tree has that name: a use of it need not be the accessor's
    other = {**upstream, "include/t/Other.h": "struct Other {\n  int getAElemType();\n};\n"}
    assert _kinds(tmp_path / "ambiguous", other, overlay, base) == {}
    # the accessor was there at the old tag already: the backend has lived without it
    assert _kinds(tmp_path / "before", upstream, overlay, {"include/t/Ops.td": DOT_NEW}) == {}


T_DIALECT = 'def T_Dialect : Dialect {\n  let cppNamespace = "::t";\n}\n'
G_DIALECT = 'def G_Dialect : Dialect {\n  let cppNamespace = "::t::g";\n}\n'
T_TYPES = 'def T_MemDescType : TypeDef<T_Dialect, "MemDesc"> {\n  let parameters = (ins $shape);\n}\n'
G_TYPES = T_TYPES.replace("T_", "G_")
BOTH_OPEN = ("using namespace t;\nusing namespace t::g;\nvoid f(MemDescType x) {}\nvoid h(g::MemDescType y) {}\n"
             "namespace t {\nnamespace g {\nvoid k(MemDescType z);  // g's own is found first here\n}\n}\n")


def _clashes(tmp_path: Path, use: str, overlay: str = T_TYPES) -> list[str]:
    base = {"include/t/Dialect.td": T_DIALECT, "include/t/Types.td": T_TYPES, "include/g/Dialect.td": G_DIALECT,
            "include/g/Types.td": "// none yet\n", "python/triton/__init__.py": ""}
    upstream = {"include/t/Types.td": "// moved to g\n", "include/g/Types.td": G_TYPES, "lib/Use.cpp": use}
    fork = {**base, B + "include/t/Types.td": overlay, B + "include/flagtree_spec.h": "#define FLAGTREE_SPEC_X\n"}
    tmp_path.mkdir(parents=True, exist_ok=True)
    repo = small_world(tmp_path, base, upstream, fork)
    return [site for finding in drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
            if finding.kind == "overlay-class-clash" for site in finding.details["sites"]]


def test_a_class_upstream_moved_to_another_namespace_and_the_overlay_keeps_is_ambiguous(tmp_path: Path) -> None:
    """The 3.2 line onto 3.3: MemDescType moved from triton's TritonTypes.td to TritonGPUTypes.td
    (triton::gpu); ascend's TritonTypes.td still generates triton::MemDescType, and trunk files that open both
    namespaces name it unqualified."""
    assert _clashes(tmp_path / "both", BOTH_OPEN) == ["lib/Use.cpp:3"]
    # a file that opens one of the namespaces meets one class
    assert _clashes(tmp_path / "one", BOTH_OPEN.replace("using namespace t;\n", "")) == []
    # the overlay took the move over
    assert _clashes(tmp_path / "ported", BOTH_OPEN, overlay="// moved to g\n") == []


def test_a_record_the_overlay_uses_that_upstream_removed_stops_tablegen(tmp_path: Path) -> None:
    """The 3.2 line onto 3.4: ascend's TritonOps.td puts the DotLike trait on its dot ops; upstream folded DotLike
    (TritonInterfaces.td) into DotOpInterface, and trunk's .td files define it nowhere at 3.4."""
    traits_old = 'def DotLike : NativeOpTrait<"DotLike">;\ndef Pure : NativeOpTrait<"Pure">;\n'
    traits_new = 'def Pure : NativeOpTrait<"Pure">;\ndef DotOpInterface : OpInterface<"DotOpInterface">;\n'
    overlay = ('include "t/Traits.td"\n' + OPS_OLD.split('include "t/Base.td"\n')[1]
               + 'def T_DotOp : T_Op<"dot", [DotLike, Pure]> {\n  let arguments = (ins $a);\n}\n')

    def removed(name: str, fork_extra: dict[str, str]) -> list[str]:
        base = {"include/t/Base.td": "class T_Op;\n", "include/t/Ops.td": OPS_OLD, "include/t/Traits.td": traits_old,
                "python/triton/__init__.py": ""}
        fork = {**base, B + "include/t/Ops.td": overlay, B + "include/flagtree_spec.h": "#define FLAGTREE_SPEC_X\n",
                **fork_extra}
        (tmp_path / name).mkdir(parents=True)
        repo = small_world(tmp_path / name, base, {"include/t/Traits.td": traits_new}, fork)
        return [site for finding in drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
                if finding.kind == "symbol-removed" for site in finding.details["sites"]]
    assert removed("gone", {}) == [B + "include/t/Ops.td:5"]
    # the backend defines the trait in a .td of its own
    assert removed("own", {"third_party/b/include/Traits.td": 'def DotLike : NativeOpTrait<"DotLike">;\n'}) == []


def test_a_spec_td_whose_trunk_file_upstream_adds_becomes_its_overlay(tmp_path: Path) -> None:
    """The 3.2 hint-manager line onto 3.5.1: ascend's spec TritonOpInterfaces.td had no trunk counterpart until
    upstream added one; from then on the backend's CMake picks it instead of trunk's new file, and trunk's new
    TableGen uses an interface the new file defines and the spec one lacks. Before upstream adds the file, no
    claim."""
    iface = 'include "t/Base.td"\ndef T_DescriptorIface : OpInterface<"DescriptorIface"> {\n}\n'
    iface_new = iface + 'def T_DotIface : OpInterface<"DotIface"> {\n}\n'
    dot = 'include "t/Ifaces.td"\ndef T_DotOp : T_Op<"dot", [T_DotIface]> {\n}\n'
    spec = {B + "include/t/Ifaces.td": iface}
    added = _kinds(tmp_path / "added", {"include/t/Ifaces.td": iface_new, "include/t/Dot.td": dot}, spec)
    assert added == {"overlay-missing-names": ["include/t/Dot.td:2"]}
    assert _kinds(tmp_path / "not-added", {"include/t/Dot.td": dot}, spec) == {}
