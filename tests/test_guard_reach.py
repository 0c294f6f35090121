"""Guarded trunk defaults whose removal or replacement the backend's build never meets (issue 33: the
3.4.x -> 3.5.1 move, which the rules were not developed on, had 31 false guard-default-removed errors and 7 false
guard-replacement-missing ones for sunrise). Each rule is a plain fact of C++ and the build, tested on its own."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.drift_helpers import drift_of
from tests.test_real_structures import small_world

B = "third_party/b/backend/spec/"
MACRO = "#define FLAGTREE_SPEC_Impl_cpp\n"
HEADER = "namespace t {\nstruct Layout {\n  int width() const;\n  int depth() const;\n};\nint helper(int a);\n}\n"
TRUNK = ("#ifndef FLAGTREE_SPEC_Impl_cpp\nnamespace t {\nnamespace {\nint local(int a) { return a; }\n}\n"
         "static int quiet(int a) { return local(a); }\nint Layout::width() const { return quiet(1); }\n"
         "int Layout::depth() const { return 2; }\nint helper(int a) { return a; }\n}\n#endif\n")
LIBRARY = ("namespace t {\nint Layout::width() const { return 3; }\nint Layout::depth() const { return 4; }\n"
           "int helper(int a) { return -a; }\n}\n")


def _guard_kinds(tmp_path: Path, upstream: dict[str, str], fork_extra: dict[str, str] | None = None) -> set[tuple[str, str]]:
    base = {"include/t/Layout.h": HEADER, "lib/Impl.cpp": TRUNK.replace("#ifndef FLAGTREE_SPEC_Impl_cpp\n", "")
            .replace("#endif\n", ""), "python/triton/__init__.py": ""}
    fork = {**base, "lib/Impl.cpp": TRUNK, B + "include/flagtree_spec.h": MACRO, B + "lib/Impl.cpp": LIBRARY,
            **(fork_extra or {})}
    tmp_path.mkdir(parents=True, exist_ok=True)
    repo = small_world(tmp_path, base, upstream, fork)
    found = set()
    for finding in drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings:
        if finding.kind in ("guard-default-removed", "guard-replacement-missing"):
            what = finding.message.split(" default ")[-1].split(" at ")[0] if finding.kind == "guard-default-removed" \
                else finding.message.split(" defines no ")[-1]
            found.add((finding.kind, what))
    return found


def test_file_local_helpers_compiled_out_with_their_callers_need_no_replacement(tmp_path: Path) -> None:
    # local (anonymous namespace) and quiet (static) are used only inside the guard: the library need not define them
    assert _guard_kinds(tmp_path, {"README.md": "v2\n"}) == set()


def test_a_removed_member_default_is_an_error_unless_the_backends_own_declarations_keep_it(tmp_path: Path) -> None:
    # upstream drops Layout::depth (header and default) and the file-local helpers; the library still defines depth
    header = HEADER.replace("  int depth() const;\n", "")
    trunk = "namespace t {\nint Layout::width() const { return 1; }\nint helper(int a) { return a; }\n}\n"
    upstream = {"include/t/Layout.h": header, "lib/Impl.cpp": trunk}
    assert _guard_kinds(tmp_path / "plain", upstream) == {("guard-default-removed", "Layout::depth")}
    # a backend that builds its own copy of the declaring header (or TableGen) still declares depth
    own = {"third_party/b/include/t/Layout.h": HEADER}
    assert _guard_kinds(tmp_path / "own", upstream, own) == set()


def test_a_removed_free_default_is_an_error_only_where_trunk_still_has_it(tmp_path: Path) -> None:
    # helper gone from trunk altogether: the library's helper is the backend's own function now
    header = HEADER.replace("int helper(int a);\n", "")
    gone = {"include/t/Layout.h": header,
            "lib/Impl.cpp": "namespace t {\nint Layout::width() const { return 1; }\n"
                            "int Layout::depth() const { return 2; }\n}\n"}
    assert _guard_kinds(tmp_path / "gone", gone) == set()
    # helper moved to another file: the library's definition would clash with trunk's new one
    moved = {**gone, "include/t/Layout.h": HEADER, "lib/Helper.cpp": "namespace t {\nint helper(int a) { return a; }\n}\n"}
    assert _guard_kinds(tmp_path / "moved", moved) == {("guard-default-removed", "helper")}


TD_OLD = ('def T_FooAttr : T_Attr<"Foo", "foo"> {\n  let parameters = (ins "unsigned":$width);\n'
          '  let extraClassDeclaration = [{\n    int depth(int a) const;\n  }];\n}\n')
TD_NEW = TD_OLD.replace("int depth(int a) const;", "int depth(int a, int b) const;\n    int extra() const;")
IMPL_OLD = "namespace t {\nint FooAttr::depth(int a) const { return a; }\n}\n"
IMPL_NEW = ("namespace t {\nint FooAttr::depth(int a, int b) const { return a + b; }\n"
            "int FooAttr::extra() const { return 0; }\n}\n")


def _generated_member_kinds(tmp_path: Path, fork_extra: dict[str, str]) -> set[tuple[str, str]]:
    guarded = lambda text: "#ifndef FLAGTREE_SPEC_Impl_cpp\n" + text + "#endif\n"
    base = {"include/t/Attrs.td": TD_OLD, "lib/Impl.cpp": IMPL_OLD, "python/triton/__init__.py": ""}
    upstream = {"include/t/Attrs.td": TD_NEW, "lib/Impl.cpp": IMPL_NEW}
    fork = {**base, "lib/Impl.cpp": guarded(IMPL_OLD), B + "include/flagtree_spec.h": MACRO,
            B + "lib/Impl.cpp": IMPL_OLD.replace("return a;", "return -a;"), **fork_extra}
    tmp_path.mkdir(parents=True, exist_ok=True)
    repo = small_world(tmp_path, base, upstream, fork)
    return {(finding.kind, finding.message.split(" defines no ")[-1] if "defines no" in finding.message
             else finding.message.split("trunk ")[-1].split("(")[0])
            for finding in drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
            if finding.kind in ("guard-replacement-missing", "guard-signature-mismatch")}


def test_members_of_a_class_the_backend_generates_from_its_own_tablegen_follow_its_record(tmp_path: Path) -> None:
    """Issue 33, the 3.4.x -> 3.5.1 move: sunrise builds its own TritonGPUAttrDefs.td in trunk's place. Trunk's new
    parameters of a generated member and trunk's new members are not what its build declares."""
    assert _generated_member_kinds(tmp_path / "trunk", {}) == {("guard-signature-mismatch", "FooAttr::depth"),
                                                               ("guard-replacement-missing", "FooAttr::extra")}
    assert _generated_member_kinds(tmp_path / "own", {B + "include/t/Attrs.td": TD_OLD}) == set()
    # the backend's own record declares extra too: its replacement is missing
    declares = TD_OLD.replace("int depth(int a) const;", "int depth(int a) const;\n    int extra() const;")
    assert _generated_member_kinds(tmp_path / "declares", {B + "include/t/Attrs.td": declares}) == \
        {("guard-replacement-missing", "FooAttr::extra")}
    # an interface the backend's record lists declares it for the class: its replacement is missing
    interface = 'def T_Extra : AttrInterface<"Extra"> {\n  let methods = [InterfaceMethod<"", "int", "extra">];\n}\n'
    listed = TD_OLD.replace('"foo">', '"foo", [DeclareAttrInterfaceMethods<T_Extra>]>') + interface
    assert _generated_member_kinds(tmp_path / "interface", {B + "include/t/Attrs.td": listed}) == \
        {("guard-replacement-missing", "FooAttr::extra")}
    # an interface the record does not list declares nothing for it (issue 33, the 3.5.x -> 3.7 move: ascend's
    # own TritonOps.td lists no PredicatedOpInterface, which trunk's new LoadOp declares)
    assert _generated_member_kinds(tmp_path / "unlisted", {B + "include/t/Attrs.td": TD_OLD + interface}) == set()


def _mismatches(tmp_path: Path, upstream_impl: str, library: str) -> list[str]:
    base = {"include/t/Layout.h": HEADER, "lib/Impl.cpp": TRUNK.replace("#ifndef FLAGTREE_SPEC_Impl_cpp\n", "")
            .replace("#endif\n", ""), "python/triton/__init__.py": ""}
    fork = {**base, "lib/Impl.cpp": TRUNK, B + "include/flagtree_spec.h": MACRO, B + "lib/Impl.cpp": library}
    tmp_path.mkdir(parents=True, exist_ok=True)
    repo = small_world(tmp_path, base, {"lib/Impl.cpp": upstream_impl}, fork)
    return [finding.message.split(": trunk ")[-1] for finding in
            drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings if finding.kind == "guard-signature-mismatch"]


def test_a_replacement_that_differs_from_trunk_only_in_its_return_type_does_not_compile(tmp_path: Path) -> None:
    """The 3.4.x -> 3.5.1 move: 3.5 made getAMDArch return std::optional<StringRef> and replaceUsesWithLocalLoad a
    LocalLoadOp; sunrise's replacements keep the old types, which the header's declaration no longer matches."""
    impl = TRUNK.replace("#ifndef FLAGTREE_SPEC_Impl_cpp\n", "").replace("#endif\n", "")
    retyped = impl.replace("int helper(int a) { return a; }", "std::optional<int> helper(int a) { return a; }")
    assert _mismatches(tmp_path / "retyped", retyped, LIBRARY) == [
        "helper(int) returns optional<int> but the replacement in third_party/b/backend/spec/lib/Impl.cpp:4 returns int"]
    # the same type spelled with its namespace, or with specifiers, is no change
    spelled = impl.replace("int helper(int a) { return a; }", "inline ::std::int32_t helper(int a) { return a; }")
    library = LIBRARY.replace("int helper(int a) { return -a; }", "static std::int32_t helper(int a) { return -a; }")
    assert _mismatches(tmp_path / "spelled", spelled, library) == []


def test_removed_defaults_of_file_local_classes_and_of_overloads_elsewhere_break_nothing(tmp_path: Path) -> None:
    """The 3.4.x -> 3.6.0 move (helper-20): sunrise's replacement keeps CoalescePass's members (a struct its own file
    defines, as trunk's did) and getTmemLoadLayoutSplitLongM (trunk moved it to another file, with other parameters):
    upstream's removal leaves both building."""
    local = "#ifndef FLAGTREE_SPEC_Impl_cpp\nnamespace t {\nstruct Pass {\n  int run(int a);\n};\n" \
            "int Pass::run(int a) { return a; }\n}\n#endif\n"
    base = TRUNK.replace("#ifndef FLAGTREE_SPEC_Impl_cpp\n", "").replace("#endif\n", "")
    gone = {"lib/Impl.cpp": base.replace("int helper(int a) { return a; }\n", "")}
    # helper moved elsewhere with another parameter list: another overload, no clash
    moved = {**gone, "lib/Helper.cpp": "namespace u {\nint helper(long a, int b) { return a; }\n}\n"}
    assert ("guard-default-removed", "helper") not in _guard_kinds(tmp_path / "overload", moved)
    # a member of a class the guarded file itself defines
    upstream = {"lib/Local.cpp": ""}
    extra = {"lib/Local.cpp": local, B + "lib/Local.cpp": "namespace t {\nstruct Pass {\n  int run(int a);\n};\n"
             "int Pass::run(int a) { return -a; }\n}\n"}
    found = _guard_kinds(tmp_path / "local", upstream, extra)
    assert not any(what.endswith("Pass::run") for _, what in found), found


def test_a_class_only_trunks_tablegen_generates_needs_no_replacement_members(tmp_path: Path) -> None:
    """The 3.4.x -> 3.6.0 move: PaddedSharedEncodingAttr is generated by trunk's new TritonGPUAttrDefs.td only;
    sunrise builds its own version of that file, so its build has no such class (the overlay's
    overlay-missing-names is the break), and a member its own record declares by a flag (genVerifyDecl) is
    declared only where the record sets it."""
    new_td = TD_NEW + 'def T_BarAttr : T_Attr<"Bar", "bar"> {\n  let parameters = (ins "unsigned":$n);\n}\n'
    new_impl = IMPL_NEW + "namespace t {\nint BarAttr::size() const { return 1; }\n}\n"
    guarded = lambda text: "#ifndef FLAGTREE_SPEC_Impl_cpp\n" + text + "#endif\n"
    base = {"include/t/Attrs.td": TD_OLD, "lib/Impl.cpp": IMPL_OLD, "python/triton/__init__.py": ""}
    fork = {**base, "lib/Impl.cpp": guarded(IMPL_OLD), B + "include/flagtree_spec.h": MACRO,
            B + "lib/Impl.cpp": IMPL_OLD, B + "include/t/Attrs.td": TD_OLD}
    tmp_path.mkdir(parents=True, exist_ok=True)
    repo = small_world(tmp_path, base, {"include/t/Attrs.td": new_td, "lib/Impl.cpp": new_impl}, fork)
    kinds = {(f.kind, f.message.split(" defines no ")[-1]) for f in
             drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings if f.kind.startswith("guard-")}
    assert not any("BarAttr" in what for _, what in kinds), kinds


def test_a_cpp_overlay_under_a_directory_the_build_leaves_out_is_info(tmp_path: Path) -> None:
    """The 3.4.x -> 3.6.0 move (helper-20): sunrise's spec/lib/Dialect/Triton/ overlays read overlay-auto-mergeable,
    but spec/lib/Dialect/CMakeLists.txt adds that directory only in a comment: nothing compiles them."""
    trunk = "namespace t {\nint f(int a) { return a; }\n}\n"
    changed = "namespace t {\nint f(int a) { return a + 1; }\n}\n"
    base = {"lib/Dialect/Triton/Fold.cpp": trunk, "lib/Dialect/Gpu/Fold.cpp": trunk, "python/triton/__init__.py": ""}
    ours = trunk.replace("return a;", "return -a;  // the backend's\n  ")
    fork = {**base, B + "include/flagtree_spec.h": "\n", B + "lib/Dialect/CMakeLists.txt":
            "#add_subdirectory(Triton)\nadd_subdirectory(Gpu)\n",
            B + "lib/Dialect/Triton/Fold.cpp": ours, B + "lib/Dialect/Gpu/Fold.cpp": ours}
    repo = small_world(tmp_path, base, {"lib/Dialect/Triton/Fold.cpp": changed, "lib/Dialect/Gpu/Fold.cpp": changed}, fork)
    kinds = {f.path: f.kind for f in drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
             if f.path.endswith("Fold.cpp")}
    assert kinds[B + "lib/Dialect/Triton/Fold.cpp"] == "overlay-unbuilt"
    assert kinds[B + "lib/Dialect/Gpu/Fold.cpp"] != "overlay-unbuilt"


def test_a_free_default_no_other_file_can_call_needs_no_replacement(tmp_path: Path) -> None:
    """Issue 33, the 3.5.x -> 3.7 move: ascend's guarded Ops.cpp takes the only callers of deduceScaleFactor and
    verifyGatherScatterOp with it. A header's declaration calls nothing, and a same-named lambda elsewhere is
    another name; a file that calls it through a declaration needs it."""
    base = {"include/t/Layout.h": HEADER, "lib/Impl.cpp": TRUNK.replace("#ifndef FLAGTREE_SPEC_Impl_cpp\n", "")
            .replace("#endif\n", ""), "python/triton/__init__.py": ""}
    library = LIBRARY.replace("int helper(int a) { return -a; }\n", "")
    lambda_only = {"lib/Other.cpp": "int g() {\n  auto helper = [](int a) { return a; };\n  return helper(1);\n}\n"}
    called = {"lib/Other.cpp": '#include "t/Layout.h"\nint g() { return t::helper(1); }\n'}
    found = {}
    undeclared = {**base, "include/t/Layout.h": HEADER.replace("int helper(int a);\n", "")}
    # trunk's python/src calls it, but the backend builds its own python/src in its place (ascend's ir.cc)
    bindings = {"python/src/ir.cc": '#include "t/Layout.h"\nint bind() { return t::helper(2); }\n'}
    own_src = {**bindings, "third_party/b/python/src/ir.cc": "int bind() { return 0; }\n"}
    # a member of the same name (`op.helper()`, a record's `int helper();`) and a local lambda are other names
    members = {"lib/Other.cpp": '#include "t/Layout.h"\nint g(Op op) {\n  auto helper = [](int a) { return a; };\n'
                                "  return op.helper() + op->helper() + helper(1);\n}\n",
               "include/t/Ops.td": "def T_Op : Op<\"x\"> {\n  let extraClassDeclaration = [{\n    int helper();\n"
                                   "    static int helper(Value a,\n                      Value b);\n  }];\n}\n"}
    statement = {"lib/Other.cpp": '#include "t/Layout.h"\nusing namespace t;\nvoid g() {\n  helper(1);\n}\n'}
    # the caller's file is one the backend turns off too (its own FLAGTREE_SPEC_* macro): no caller in its build
    guarded_caller = {**called, "lib/Other.cpp": "#ifndef FLAGTREE_SPEC_Other_cpp\n" + called["lib/Other.cpp"] + "#endif\n",
                      B + "include/flagtree_spec.h": MACRO + "#define FLAGTREE_SPEC_Other_cpp\n"}
    reference = {"lib/Other.cpp": '#include "t/Layout.h"\nint (*pick)(int) = t::helper;\n'}  # not called, taken
    # a C++ unit test calls it: a backend's build leaves unittest/ out (TRITON_BUILD_UT is OFF for a backend)
    unit_test = {"unittest/Layout/LayoutTest.cpp": '#include "t/Layout.h"\nint test() { return t::helper(1); }\n'}
    same_file = {"lib/Impl.cpp": TRUNK + "namespace t {\nint later() { return helper(3); }\n}\n"}  # after the guard
    for name, old, extra in (("declared", base, {}), ("lambda", undeclared, lambda_only), ("called", base, called),
                             ("reference", base, reference), ("same file", base, same_file),
                             ("unit test", base, unit_test),
                             ("members", base, members), ("statement", base, statement),
                             ("guarded caller", {**base, **called}, guarded_caller),
                             ("bound", {**base, **bindings}, {}), ("own src", {**base, **bindings}, own_src)):
        fork = {**old, "lib/Impl.cpp": TRUNK, B + "include/flagtree_spec.h": MACRO, B + "lib/Impl.cpp": library,
                **extra}
        (tmp_path / name).mkdir()
        repo = small_world(tmp_path / name, old, {"README.md": "v2\n"}, fork)
        found[name] = sorted(f.message.split(" defines no ")[-1] for f in
                             drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
                             if f.kind == "guard-replacement-missing")
    assert found == {"declared": [], "lambda": [], "called": ["helper"], "reference": ["helper"],
                     "same file": ["helper"], "unit test": [], "members": [], "statement": ["helper"], "guarded caller": [],
                     "bound": ["helper"], "own src": []}


def test_a_default_qualified_by_namespaces_alone_is_a_free_function() -> None:
    """The 3.4.x -> 3.7 move: `Type mlir::triton::getMultiBufferedType(...)` is a free function, declared in a
    header nothing else calls it through; `LoadOp::verify` and `mlir::LLVM::f` may be members: claimed as before."""
    from sync.drift.analyses.cppguards import _free
    from sync.facts.cpp import CppFunction
    function = lambda name: CppFunction(name, 1, 2, "", "")
    assert _free(function("helper")) and _free(function("mlir::triton::getMultiBufferedType"))
    assert _free(function("::mlir::triton::gpu::getSharedLayoutStr"))
    assert not _free(function("LoadOp::verify")) and not _free(function("mlir::LLVM::f"))


def test_a_qualified_replacement_must_match_a_declaration_whoever_calls_it() -> None:
    """helper-20 on 3.4.x -> 3.6.0: sunrise defines `mlir::triton::getBufferViewType(...)` with the old parameters;
    only nvidia (not built) calls the new one, but a qualified definition that matches no declaration does not
    compile. An unqualified one is another overload, which nothing that calls the new one needs."""
    from sync.drift.analyses.cppguards import _replacement_findings
    from sync.facts.cpp import CppFunction, GuardRegion
    from sync.model import Finding
    trunk = [CppFunction("helper", 9, 9, "int helper(int a, int b) { return a + b; }", "int a, int b")]
    finding = lambda kind, message, action, diff=None: Finding(kind, "h", message, action)
    kinds = {}
    for name in ("t::helper", "helper"):
        library = {"helper": [CppFunction(name, 3, 3, f"int {name}(int a) {{ return -a; }}", "int a")]}
        kinds[name] = [f.kind for f in _replacement_findings(
            finding, "FLAGTREE_SPEC_Impl_cpp", GuardRegion("FLAGTREE_SPEC_Impl_cpp", "ifndef", 1, 12), "lib/Impl.cpp",
            trunk, library, frozenset(), lambda macro, name: False, lambda function: None, lambda function: True)]
    assert kinds == {"t::helper": ["guard-signature-mismatch"], "helper": []}
