"""call-signature: FlagTree calls to builders/functions whose parameters changed, resolved by scope."""
from __future__ import annotations

from sync.drift.analyses.callsigs import call_signature_findings
from tests.upstream_fixture import context_of, context_with_history, sites_of

TD_OLD = ('def X_FooAttr : AttrDef<X_Dialect, "Foo"> {\n  let parameters = (ins "unsigned":$blockM, '
          '"bool":$unpacked);\n}\n\ndef X_BarType : TypeDef<X_Dialect, "Bar"> {\n  let parameters = (ins '
          '"Type":$elementType, "bool":$alloc);\n}\n')
TD_NEW = ('def X_FooAttr : AttrDef<X_Dialect, "Foo"> {\n  let parameters = (ins "unsigned":$blockM, '
          '"unsigned":$colStride);\n}\n\ndef X_BarType : TypeDef<X_Dialect, "Bar"> {\n  let parameters = (ins '
          '"Type":$elementType);\n}\n')
SEMANTIC_OLD = "def make(base, shape):\n    return base\n"
SEMANTIC_NEW = "def make(base, shape, *, padding):\n    return base\n"
BINDING = ('#include "triton/Dialect/X/IR/Dialect.h"\nvoid init(py::class_<B> &m) {\n'
           '  m.def("make_foo", [](B &self) { return x::FooAttr::get(ctx, 1, true); })\n'
           '   .def("make_other", [](B &self) { return 0; });\n}\n')


def _context(tmp_path, fork):
    old = {"include/triton/Dialect/X/IR/Attrs.td": TD_OLD, "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n",
           "include/triton/Dialect/Y/IR/Other.h": "#pragma once\n", "python/triton/semantic.py": SEMANTIC_OLD}
    new = {**old, "include/triton/Dialect/X/IR/Attrs.td": TD_NEW, "python/triton/semantic.py": SEMANTIC_NEW}
    return context_of(tmp_path, old, new, fork)


def test_fires_on_changed_builders_python_signatures_and_pybind_chains(tmp_path) -> None:
    fork = {"lib/Use.cpp": '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n'
                           "  auto a = x::FooAttr::get(ctx, 4, true);\n  auto t = x::BarType::get(ctx, ty, false);\n}\n",
            "third_party/tle/binding.cc": BINDING,
            "python/triton/tle.py": "from triton.semantic import make\n\n\ndef g(b, builder):\n"
                                    "    builder.make_foo()\n    builder.make_other()\n    return make(b, [1])\n"}
    findings = call_signature_findings(_context(tmp_path, fork))
    found = {(f.path, f.line, f.details["resolved_by"]) for f in findings}
    assert found == {("lib/Use.cpp", 3, "includes"), ("lib/Use.cpp", 4, "includes"),
                     ("third_party/tle/binding.cc", 3, "includes"),
                     ("python/triton/tle.py", 5, "pybind binding"), ("python/triton/tle.py", 7, "import")}
    # the Python call fits its binding; the break is in the binding's body (binding.cc:3): a look, not a warning
    (caller,) = [f for f in findings if f.details["resolved_by"] == "pybind binding"]
    assert (caller.kind, caller.severity) == ("binding-caller-review", "info")


def test_a_builder_call_no_new_overload_takes_is_an_error_and_a_renamed_parameter_a_warning(tmp_path) -> None:
    """Issue 33 (3.7 move): TensorDescType::get(ctx, blockType) fits no builder after #9851, so enflame's test does
    not compile; a call whose count still fits, with a parameter renamed in meaning, builds and may mean else."""
    fork = {"lib/Use.cpp": '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n'
                           "  auto a = x::FooAttr::get(ctx, 4, true);\n  auto t = x::BarType::get(ctx, ty, false);\n"
                           "  auto u = x::BarType::get(ctx, ty, true);\n}\n"}
    found = {(f.kind, f.severity, f.line, tuple(f.details["sites"])) for f in call_signature_findings(_context(tmp_path, fork))}
    assert found == {("call-signature", "warning", 3, ("lib/Use.cpp:3",)),
                     ("call-no-overload", "error", 4, ("lib/Use.cpp:4", "lib/Use.cpp:5"))}
    (broken,) = [f for f in call_signature_findings(_context(tmp_path, fork)) if f.kind == "call-no-overload"]
    assert "no overload at the new tag" in broken.message and "(will not build as is)" in broken.message


def test_a_pybind_caller_of_a_body_broken_only_by_a_type_change_is_listed_not_reported(tmp_path) -> None:
    """Seen on the record upgrade (tle): the v3.6 fix rebuilt the CTA layout value in the binding's body and
    left the Python callers alone, while the renamed parameter (unpacked -> colStride) changed them too."""
    old = {"include/triton/Dialect/X/IR/Attrs.td": RETYPED_OLD, "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n"}
    new = {**old, "include/triton/Dialect/X/IR/Attrs.td": RETYPED_NEW}
    binding = ('#include "triton/Dialect/X/IR/Dialect.h"\nvoid init(py::class_<B> &m) {\n'
               '  m.def("make_foo", [](B &self) {\n    auto lay = x::OldLayoutAttr::get(ctx);\n'
               '    return x::FooAttr::get(ctx, 1, lay); });\n}\n')
    fork = {**old, "third_party/tle/binding.cc": binding,
            "python/triton/tle.py": "def g(builder):\n    return builder.make_foo()\n"}
    (finding,) = call_signature_findings(context_of(tmp_path, old, new, fork))
    assert (finding.path, finding.line) == ("third_party/tle/binding.cc", 5)
    assert finding.details["python_callers"] == {"make_foo": ["python/triton/tle.py:2"]}
    assert "pybind method make_foo" in finding.message and "need no change" in finding.message


def test_near_miss_out_of_scope_local_names_and_fitting_calls(tmp_path) -> None:
    fork = {"lib/Other.cpp": '#include "triton/Dialect/Y/IR/Other.h"\nvoid f() {\n'
                             "  auto a = y::FooAttr::get(ctx, 4, true);\n  int unpacked = 1;\n}\n",  # no X header
            "python/triton/tle.py": "from triton.semantic import make\n\n\ndef g(b):\n"
                                    "    return make(b, [1], padding=0)\n"}  # fits the new signature
    assert call_signature_findings(_context(tmp_path, fork)) == []


def test_a_backend_that_keeps_its_own_copy_of_the_dialect_headers_is_out_of_scope(tmp_path) -> None:
    # Backend own builds against third_party/own/include/triton/Dialect/X/IR/ (its copy of the .td still has
    # the old parameters); backend plain has an include tree too, but no copy of X's directory.
    call = '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n  auto a = x::FooAttr::get(ctx, 4, true);\n}\n'
    fork = {"third_party/own/include/triton/Dialect/X/IR/Attrs.td": TD_OLD,
            "third_party/own/include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n",
            "third_party/own/lib/Use.cpp": call,
            "third_party/plain/include/plain/Thing.h": "#pragma once\n",
            "third_party/plain/lib/Use.cpp": call}
    found = {(f.path, f.line) for f in call_signature_findings(_context(tmp_path, fork))}
    assert found == {("third_party/plain/lib/Use.cpp", 3)}


RETYPED_OLD = ('def X_FooAttr : AttrDef<X_Dialect, "Foo"> {\n  let parameters = (ins "unsigned":$blockM, '
               '"OldLayoutAttr":$layout);\n}\n')
RETYPED_NEW = RETYPED_OLD.replace('"OldLayoutAttr":$layout', '"NewLayoutAttr":$layout')


def test_a_parameter_that_only_changed_type_breaks_only_calls_that_spell_the_old_type(tmp_path) -> None:
    # Upstream renamed the parameter's type and everything that returns it: a value FlagTree gets from a
    # getter or through `auto` moves along; only an argument written or declared with the old type breaks.
    old = {"include/triton/Dialect/X/IR/Attrs.td": RETYPED_OLD, "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n"}
    new = {**old, "include/triton/Dialect/X/IR/Attrs.td": RETYPED_NEW}
    body = ("  auto a = x::FooAttr::get(ctx, 4, enc.getLayout());\n"          # 3: a getter's value: fits
            "  auto b = x::FooAttr::get(ctx, 4, x::OldLayoutAttr::get(ctx));\n"  # 4: written with the old type
            "  x::OldLayoutAttr mine = x::OldLayoutAttr::get(ctx);\n"
            "  auto c = x::FooAttr::get(ctx, 4, mine);\n"                       # 6: declared with it (line 5)
            "  auto made = OldLayoutAttr::get(ctx);\n"
            "  auto d = x::FooAttr::get(ctx, 4, made);\n"                       # 8: assigned from it (line 7)
            "  auto got = getLayout(enc);\n"
            "  auto e = x::FooAttr::get(ctx, 4, got);\n")                       # 10: type unknown: fits
    fork = {**old, "lib/Use.cpp": '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n' + body + "}\n"}
    (finding,) = call_signature_findings(context_of(tmp_path, old, new, fork))  # one upstream change
    assert [line for _, line in sites_of([finding])] == [4, 6, 8]
    found = {int(site.rpartition(":")[2]): why for site, why in finding.details["reasons"].items()}
    assert "declared as one at line 5" in found[6] and "declared as one at line 7" in found[8]
    assert "written as a OldLayoutAttr" in found[4] and '"NewLayoutAttr"' in finding.diff


def test_a_backend_that_ships_its_own_copy_of_the_module_calls_that_copy(tmp_path) -> None:
    """Seen on FlagTree main: cambricon, xpu, mthreads, hcu and metax ship python/triton/language/core.py
    under third_party/<b>/python/ (their build installs that tree as the triton package), so their
    libdevice calls of extern_elementwise(..., _builder=...) meet their own copy, not upstream's."""
    call = "from triton.semantic import make\n\n\ndef g(b):\n    return make(b, [1])\n"
    fork = {"third_party/own/python/triton/semantic.py": SEMANTIC_OLD, "third_party/own/python/triton/lib.py": call,
            "third_party/plain/python/triton/lib.py": call, "python/triton/use.py": call}
    found = {(f.path, f.line) for f in call_signature_findings(_context(tmp_path, fork))}
    assert found == {("third_party/plain/python/triton/lib.py", 5), ("python/triton/use.py", 5)}


def test_a_backends_python_reaches_only_its_own_or_trunks_pybind_bindings(tmp_path) -> None:
    """Seen on FlagTree main: cambricon's semantic.py calls builder.create_histogram, which only iluvatar's
    ir.cc binds to a broken body; cambricon's build never loads iluvatar's bindings."""
    call = "def g(builder):\n    return builder.make_foo()\n"
    fork = {"third_party/iluvatar/python/src/ir.cc": BINDING, "third_party/iluvatar/python/use.py": call,
            "third_party/cambricon/python/use.py": call, "python/triton/use.py": call}
    found = {(f.path, f.line) for f in call_signature_findings(_context(tmp_path, fork))
             if f.details["resolved_by"] == "pybind binding"}
    assert found == {("third_party/iluvatar/python/use.py", 2), ("python/triton/use.py", 2)}


def test_many_calls_of_one_changed_function_in_a_file_are_one_finding(tmp_path) -> None:
    """Seen on FlagTree main: xpu's libdevice.py calls extern_elementwise(..., _builder=...) 198 times."""
    calls = "".join(f"    make(b, [{n}])\n" for n in range(3)) + "    make(b, [1], padding=0)\n"  # the last one fits
    fork = {"python/triton/lib.py": "from triton.semantic import make\n\n\ndef g(b):\n" + calls}
    (finding,) = call_signature_findings(_context(tmp_path, fork))
    assert (finding.line, finding.details["lines"]) == (5, [5, 6, 7])
    assert "the call no longer fits (and 2 more call(s) here: line(s) 6, 7): each call raises TypeError" \
        in finding.message and finding.kind == "call-no-overload"
    assert finding.details["sites"] == ["python/triton/lib.py:5", "python/triton/lib.py:6", "python/triton/lib.py:7"]


def test_a_parameter_renamed_only_in_spelling_breaks_no_call(tmp_path) -> None:
    """Seen on FlagTree main: BlockedEncodingAttr's sizePerThread__ became sizePerThread; C++ passes arguments by
    position, so no call changes (a rename of meaning, unpacked -> colStride, is still reported above)."""
    old_td = TD_OLD.replace('"unsigned":$blockM', '"unsigned":$block_m__')
    old = {"include/triton/Dialect/X/IR/Attrs.td": old_td, "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n"}
    new = {**old, "include/triton/Dialect/X/IR/Attrs.td": TD_OLD.replace('"unsigned":$blockM', '"unsigned":$blockM')}
    fork = {**old, "lib/Use.cpp": '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n'
                                  "  auto a = x::FooAttr::get(ctx, 4, true);\n}\n"}
    assert call_signature_findings(context_of(tmp_path, old, new, fork)) == []


SPELLINGS = ["x::FooAttr::get(ctx, 1)", "FooAttr :: getChecked(e, ctx)", "FooAttr::\n      get(ctx)",
             "ns::FooAttr::create(b, loc, v)", "b.create<x::FooAttr>(loc, v)", "r.replaceOpWithNewOp< FooAttr >(op, v)",
             "b.createOrFold<\n  ::x::FooAttr>(loc)", "ns::p->FooAttr->get(ctx)", "ns::a.FooAttr.create(b, loc)"]


def test_every_builder_call_the_parser_reads_passes_the_cheap_text_test() -> None:
    """The text test before the parse may only skip files where _parse_calls finds no call of the name."""
    from sync.facts.cppcalls import _builder_spellings, _parse_calls
    for spelling in SPELLINGS:
        text = f"void f() {{\n  auto v = {spelling};\n}}\n"
        callees = {call.callee for call in _parse_calls(text)}
        assert callees == {"FooAttr"}, (spelling, callees)
        assert "FooAttr" in _builder_spellings(text), spelling


def test_a_file_that_names_a_changed_builder_only_as_a_type_is_not_parsed(tmp_path, monkeypatch) -> None:
    from sync.drift.analyses import callsigs
    parsed: list[str] = []
    monkeypatch.setattr(callsigs, "builder_calls", lambda text: parsed.append(text) or [])
    fork = {"lib/Use.cpp": '#include "triton/Dialect/X/IR/Dialect.h"\n'
                           "bool f(Attribute a) {\n  return isa<x::FooAttr>(a) || cast<FooAttr>(a).getBlockM();\n}\n",
            "lib/Call.cpp": '#include "triton/Dialect/X/IR/Dialect.h"\nvoid g() {\n  x::FooAttr::get(ctx, 4, true);\n}\n'}
    call_signature_findings(_context(tmp_path, fork))
    assert len(parsed) == 1 and "FooAttr::get" in parsed[0]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_TOKENS = ["FooAttr", "x", "ns", "b", "get", "getChecked", "create", "createOrFold", "replaceOpWithNewOp", "::", ".",
           "->", "<", ">", "(", ")", ",", " ", "\n", "auto v = ", ";"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=24))
def test_the_builder_spellings_hold_every_callee_the_parser_reads(tokens: list[str]) -> None:
    from sync.facts.cppcalls import _builder_spellings, _parse_calls
    text = "void f() {\n  " + "".join(tokens) + ";\n}\n"
    # Only identifiers name a record: an empty callee (`X.::get`) or error recovery's text (`auto v =`) never does.
    named = {call.callee for call in _parse_calls(text) if call.callee.isidentifier()}
    assert named <= _builder_spellings(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS + ["getX", "creates", "/* c */", "// c\n", "f", "[", "]", "'>'"]), max_size=24))
def test_the_builder_query_drops_only_calls_that_are_no_builder_call(tokens: list[str]) -> None:
    """The query's native filter keeps every call the reading of all calls would take, arguments alike."""
    from sync.facts.cppcalls import ALL_CALLS, _parse_calls
    text = "void f() {\n  " + "".join(tokens) + ";\n}\n"
    assert _parse_calls(text) == _parse_calls(text, ALL_CALLS)


def test_the_builder_query_keeps_every_spelling_of_a_builder_call() -> None:
    from sync.facts.cppcalls import ALL_CALLS, _parse_calls
    for spelling in SPELLINGS:
        text = f"void f() {{\n  auto v = {spelling};\n  g(h(1), v.getX());\n}}\n"
        assert _parse_calls(text) == _parse_calls(text, ALL_CALLS) != [], spelling


def test_a_call_qualified_by_another_namespace_is_another_declaration(tmp_path) -> None:
    # Issue 33: `create<mlir::triton::gcu::LoadOp>` is the backend's own op, not upstream's tt.load.
    dialect = 'def X_Dialect : Dialect {\n  let name = "x";\n  let cppNamespace = "::mlir::x";\n}\n'
    old = {"include/triton/Dialect/X/IR/Attrs.td": TD_OLD, "include/triton/Dialect/X/IR/XDialect.td": dialect,
           "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n"}
    new = {**old, "include/triton/Dialect/X/IR/Attrs.td": TD_NEW}
    head = '#include "triton/Dialect/X/IR/Dialect.h"\nnamespace xx = mlir::x;\nvoid f() {\n'
    fork = {"lib/Own.cpp": head + "  auto a = mlir::gcu::FooAttr::get(ctx, 4, true);\n}\n",
            "lib/Up.cpp": head + "  auto a = xx::FooAttr::get(ctx, 4, true);\n  auto b = mlir::x::FooAttr::get(ctx, 4, true);\n}\n"}
    found = sites_of(call_signature_findings(context_of(tmp_path, old, new, fork)))
    assert found == [("lib/Up.cpp", 4), ("lib/Up.cpp", 5)]


UPSTREAM_MOVE = [("[Dialect] Give FooAttr a colStride (#8850)", {"include/triton/Dialect/X/IR/Attrs.td": TD_NEW}),
                 ("[Docs] Unrelated (#8851)", {"docs/x.md": "x\n"})]
FOO_CALL = ('#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n  int n = 0;\n'
            '  auto a = x::FooAttr::get(ctx, 4, true);\n}\n')


def test_calls_of_one_changed_builder_are_one_finding_with_every_site_its_commit_and_pr(tmp_path) -> None:
    """Issue 33: on the 3.7 move one upstream rename (#8850) was ~70 call-signature warnings, one per call."""
    old = {"include/triton/Dialect/X/IR/Attrs.td": TD_OLD, "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n"}
    fork = {**old, "lib/A.cpp": FOO_CALL, "lib/B.cpp": FOO_CALL.replace("  int n = 0;\n", "")}
    (finding,) = call_signature_findings(context_with_history(tmp_path, old, UPSTREAM_MOVE, fork))
    assert (finding.path, finding.line) == ("lib/A.cpp", 4)  # the first site: suppressions and SARIF key on it
    assert finding.details["sites"] == ["lib/A.cpp:4", "lib/B.cpp:3"]
    assert finding.details["declaration"] == "attr FooAttr" and finding.details["callee"].startswith("x::FooAttr")
    assert finding.details["prs"] == ["8850"] and len(finding.details["commits"]) == 1
    assert finding.details["commits"][0].endswith("[Dialect] Give FooAttr a colStride (#8850)")
    assert "2 site(s) of this upstream change in 2 file(s): lib/A.cpp:4, lib/B.cpp:3" in finding.message
    assert "(#8850)" in finding.message and "#8851" not in finding.message


def test_one_change_is_one_finding_per_backend_and_python_calls_group_across_files(tmp_path) -> None:
    old = {"include/triton/Dialect/X/IR/Attrs.td": TD_OLD, "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n",
           "python/triton/semantic.py": SEMANTIC_OLD}
    upstream = [("[Frontend] make takes padding (#9668)", {"python/triton/semantic.py": SEMANTIC_NEW}), *UPSTREAM_MOVE]
    python = "from triton.semantic import make\n\n\ndef g(b):\n    return make(b, [1])\n"
    fork = {**old, "third_party/b/backend/compiler.py": "x = 1\n", "third_party/b/lib/A.cpp": FOO_CALL,
            "third_party/c/backend/compiler.py": "x = 1\n", "third_party/c/lib/A.cpp": FOO_CALL,
            "third_party/c/lib/B.cpp": FOO_CALL, "python/triton/one.py": python, "python/triton/two.py": python}
    found = call_signature_findings(context_with_history(tmp_path, old, upstream, fork))
    by_site = {tuple(f.details["sites"]): f for f in found}
    assert set(by_site) == {("python/triton/one.py:5", "python/triton/two.py:5"), ("third_party/b/lib/A.cpp:4",),
                            ("third_party/c/lib/A.cpp:4", "third_party/c/lib/B.cpp:4")}
    assert by_site[("python/triton/one.py:5", "python/triton/two.py:5")].details["prs"] == ["9668"]
    assert {f.details["prs"][0] for f in found if f.details["resolved_by"] == "includes"} == {"8850"}
    assert {f.backend for f in found if f.details["resolved_by"] == "includes"} == {"b", "c"}


def test_a_backend_that_builds_its_own_tablegen_overlay_calls_its_builders(tmp_path) -> None:
    """The 3.2 -> 3.3 move: ascend builds its own copy of TritonOps.td (a spec-tree TableGen overlay), so its
    ir.cc's create<DotScaledOp> with the old 7 arguments still fits the builder its build generates."""
    call = '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n  auto t = x::BarType::get(ctx, ty, false);\n}\n'
    fork = {"third_party/own/backend/spec/include/triton/Dialect/X/IR/Attrs.td": TD_OLD,
            "third_party/own/lib/Use.cpp": call, "third_party/plain/lib/Use.cpp": call}
    found = {f.path for f in call_signature_findings(_context(tmp_path, fork))}
    assert found == {"third_party/plain/lib/Use.cpp"}


OPS_OLD = ('def X_MakeOp : X_Op<"make"> {\n  let arguments = (ins X_Ptr:$base, Variadic<I32>:$shape, Variadic<I64>:$strides);\n'
           '  let results = (outs X_Desc:$result);\n  let builders = [\n    OpBuilder<(ins "Value":$base, '
           '"ValueRange":$shape, "ValueRange":$strides, "ArrayRef<int32_t>":$block, "bool":$isSigned)>\n  ];\n}\n')
OPS_NEW = OPS_OLD.replace("Variadic<I64>:$strides);", 'Variadic<I64>:$strides, DefaultValuedAttr<X_PadAttr, "0">:$padding);') \
    .replace('"bool":$isSigned)>', '"bool":$isSigned, "x::Padding":$padding)>')
LOCATION_BUILDER = ("#pragma once\nclass TritonOpBuilder {\npublic:\n  template <typename OpTy, typename... Args> "
                    "OpTy create(Args &&...args) {\n    auto loc = getLastLoc();\n"
                    "    return builder->create<OpTy>(loc, std::forward<Args>(args)...);\n  }\n};\n")


def _binding(receiver: str) -> str:
    return ('#include "ir.h"\n#include "triton/Dialect/X/IR/Dialect.h"\nvoid init(py::class_<B> &m) {\n'
            f'  m.def("make", []({receiver} &self, Value &base, std::vector<Value> &shape, std::vector<Value> &strides,\n'
            "                   std::vector<int32_t> &block, bool isSigned) {\n"
            "    return self.create<x::MakeOp>(base, shape, strides, block, isSigned);\n  });\n}\n")


def _make_op_findings(tmp_path, receiver: str, fork_td: str | None = None) -> set[tuple[str, int]]:
    old = {"include/triton/Dialect/X/IR/Ops.td": OPS_OLD, "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n",
           "python/src/ir.h": LOCATION_BUILDER}
    new = {**old, "include/triton/Dialect/X/IR/Ops.td": OPS_NEW}
    fork = {"third_party/b/python/src/ir.h": LOCATION_BUILDER, "third_party/b/python/src/ir.cc": _binding(receiver),
            **({"include/triton/Dialect/X/IR/Ops.td": fork_td} if fork_td else {})}
    return {(f.kind, f.line) for f in call_signature_findings(context_of(tmp_path, old, new, fork))
            if f.path.endswith("ir.cc")}


def test_a_builder_that_supplies_the_location_passes_every_argument_to_the_op(tmp_path) -> None:
    """Issue 33, the 3.4.x -> 3.5.1 move: sunrise's ir.cc calls self.create<MakeTensorDescOp>(base, shape, strides,
    block, isSigned) on a TritonOpBuilder, whose create supplies the Location: five builder arguments, which only
    the builder 3.5 gave a required padding took. Passing the Value base where ODS's typed builder takes its result
    Type fits that one neither: it will not build."""
    assert _make_op_findings(tmp_path / "triton", "TritonOpBuilder") == {("call-no-overload", 6)}
    # on a plain OpBuilder the first argument would be the Location: four arguments, which the typed builder takes
    assert _make_op_findings(tmp_path / "plain", "OpBuilder") == set()


def test_a_record_flagtree_edited_itself_is_judged_by_argument_count_alone(tmp_path) -> None:
    """Seen on the 3.7 move (tle's flagtree_hints on tt.load): the upgraded record is FlagTree's merge with
    upstream's, whose builders the tags' records do not tell; no claim that no overload takes the call."""
    edited = OPS_OLD.replace("Variadic<I64>:$strides);", 'Variadic<I64>:$strides, StrAttr:$hints);')
    assert _make_op_findings(tmp_path, "TritonOpBuilder", edited) == {("call-signature", 6)}


def test_location_builders_are_read_from_either_spelling_of_the_forwarding_create() -> None:
    from sync.facts.cppcalls import location_builders
    static_form = LOCATION_BUILDER.replace("builder->create<OpTy>(loc,", "OpTy::create(*builder, loc,")
    assert location_builders(LOCATION_BUILDER) == location_builders(static_form) == {"TritonOpBuilder"}
    assert location_builders(LOCATION_BUILDER.replace("(loc, std::forward", "(std::forward")) == set()


def test_an_operands_type_constraint_is_the_value_its_generated_builder_takes() -> None:
    """Issue 33, the 3.5.x -> 3.7 move: the custom builder's `"Value":$other` became the generated builder's
    `Optional<TT_Type>:$other`, which takes a Value too: no retyped argument."""
    from sync.drift.analyses.callsigs import builder_type
    assert builder_type('"Value"') == builder_type("Optional<TT_Type>") == builder_type("TT_PtrLike") == "Value"
    assert builder_type("Variadic<TT_Type>") == "ValueRange"
    assert builder_type('CArg<"bool", "false">') == "bool" and builder_type('"::mlir::Type"') == "::mlir::Type"
    # attributes, properties and named parameter kinds keep their own spelling
    assert builder_type("DefaultValuedAttr<TT_CacheModifierAttr, \"::mlir::triton::CacheModifier::NONE\">") \
        .startswith("DefaultValuedAttr<")
    assert builder_type("DefaultValuedParameter<\"unsigned\", \"1\">") == "unsigned"
    assert builder_type("ArrayRefParameter<\"unsigned\">") == "ArrayRef<unsigned>"
    assert builder_type("TTNG_CGALayoutRankTwoParam") == "TTNG_CGALayoutRankTwoParam"


def test_a_number_passed_where_the_builder_now_takes_an_attribute_fits_no_overload(tmp_path) -> None:
    """Issue 33 (3.5.x -> 3.7 move): TensorMemoryEncodingAttr::get took (blockM, blockN, unpacked, CTASplitM,
    CTASplitN) and takes (blockM, blockN, colStride, CGALayout, twoCTAs = false): tle's five-argument call fits the
    new arity, but no number converts to the CGAEncodingAttr now in its fourth place. Where the old place took a
    type class (not a number), the argument's type is unknown: a warning, as before."""
    old = ('def X_FooAttr : AttrDef<X_Dialect, "Foo"> {\n  let parameters = (ins "unsigned":$blockM, "bool":$unpacked,'
           ' "unsigned":$split, "unsigned":$other);\n}\n')
    new = ('def X_FooAttr : AttrDef<X_Dialect, "Foo"> {\n  let parameters = (ins "unsigned":$blockM, '
           '"unsigned":$colStride, "x::LayoutAttr":$layout, DefaultValuedParameter<"bool", "false">:$twoCTAs);\n}\n')
    kept = old.replace('"unsigned":$split', '"x::OldAttr":$split')
    # the kind may be a parameter def of the same file that names the C++ class (TTNG_CGALayoutRankTwoParam)
    named = ('def X_LayoutParam : AttrOrTypeParameter<"::x::LayoutAttr", "a layout"> {\n  let printer = [{ p }];\n}\n'
             + new.replace('"x::LayoutAttr":$layout', 'X_LayoutParam:$layout'))
    header = {"include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n"}
    use = {"lib/Use.cpp": '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n'
                          "  auto a = x::FooAttr::get(ctx, 4, true, 2, 2);\n}\n"}
    found = {}
    for name, before, after in (("number", old, new), ("class", kept, new), ("named", old, named)):
        files = {**header, "include/triton/Dialect/X/IR/Attrs.td": before}
        context = context_of(tmp_path / name, files, {**files, "include/triton/Dialect/X/IR/Attrs.td": after},
                             {**files, **use})
        findings = call_signature_findings(context)
        found[name] = [(f.kind, f.severity) for f in findings]
        if name == "named":
            assert "argument 4 goes to ::x::LayoutAttr layout, which no number converts to" in findings[0].message
    assert found == {"number": [("call-no-overload", "error")], "class": [("call-signature", "warning")],
                     "named": [("call-no-overload", "error")]}


def test_a_context_passed_where_every_builder_now_infers_it_fits_no_overload(tmp_path) -> None:
    """Seen on triton_v3.5.x onto the 3.7 branch point: ascend calls TensorDescType::get(ctx, blockTy, isSigned);
    every new builder is a TypeBuilderWithInferredContext taking (shape, elementType, ...), so three arguments fit
    their count and the context fits no first parameter. A builder whose first parameter takes a context, or bool
    (a pointer converts to it), may take the call: a warning, as before."""
    old = ('def X_DescType : TypeDef<X_Dialect, "Desc"> {\n  let parameters = (ins "RankedTensorType":$blockType);\n'
           '  let builders = [\n    TypeBuilder<(ins "RankedTensorType":$blockType, "bool":$isSigned), [{ }]>\n  ];\n}\n')
    inferred = ('def X_DescType : TypeDef<X_Dialect, "Desc"> {\n  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,'
                ' "Type":$elementType);\n  let builders = [\n    TypeBuilderWithInferredContext<(ins '
                '"llvm::ArrayRef<int64_t>":$shape, "Type":$elementType, "bool":$isSigned), [{ }]>\n  ];\n'
                '  let skipDefaultBuilders = 1;\n}\n')
    flag_first = inferred.replace('"llvm::ArrayRef<int64_t>":$shape, "Type":$elementType, "bool":$isSigned',
                                  '"bool":$isSigned, "Type":$elementType, "llvm::ArrayRef<int64_t>":$shape')
    header = {"include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n"}
    use = {"lib/Use.cpp": '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n'
                          "  auto a = x::DescType::get(ctx, blockTy, true);\n}\n"}
    found = {}
    for name, after in (("inferred", inferred), ("bool first", flag_first)):
        files = {**header, "include/triton/Dialect/X/IR/Types.td": old}
        context = context_of(tmp_path / name.replace(" ", "-"), files,
                             {**files, "include/triton/Dialect/X/IR/Types.td": after}, {**files, **use})
        findings = call_signature_findings(context)
        found[name] = [(f.kind, f.severity) for f in findings]
        if name == "inferred":
            assert "argument 1 goes to llvm::ArrayRef<int64_t> shape, which no MLIRContext* converts to" \
                in findings[0].message, findings[0].message
    assert found == {"inferred": [("call-no-overload", "error")], "bool first": [("call-signature", "warning")]}


def test_flagtree_tests_and_tutorials_are_neither_read_nor_reported(tmp_path) -> None:
    """Issues 45/46: a build imports no test, tutorial or pytest module, so a call there breaks no build; the 3.7
    move's first run spent 64% of its fork Python parse on such files. The shipped module's call still counts."""
    call = "from triton.semantic import make\n\n\ndef g(b):\n    return make(b, [1])\n"
    fork = {"python/triton/tle.py": call, "python/test/unit/test_tle.py": call, "python/tutorials/tle/t.py": call,
            "third_party/b/python/test_b.py": call, "third_party/b/examples/run.py": call}
    findings = call_signature_findings(_context(tmp_path, fork))
    assert {site for f in findings for site in f.details["sites"]} == {"python/triton/tle.py:5"}


GONE_OLD = ('def X_OldLayoutAttr : AttrDef<X_Dialect, "OldLayout"> {\n  let parameters = (ins "unsigned":$rank);\n}\n\n'
            'def X_FooAttr : AttrDef<X_Dialect, "Foo"> {\n  let parameters = (ins "unsigned":$blockM, '
            '"OldLayoutAttr":$oldLayout, "bool":$unpacked);\n}\n')
GONE_NEW = ('def X_NewLayoutAttr : AttrDef<X_Dialect, "NewLayout"> {\n  let parameters = (ins "unsigned":$rank);\n}\n\n'
            'def X_FooAttr : AttrDef<X_Dialect, "Foo"> {\n  let parameters = (ins "unsigned":$blockM, '
            '"NewLayoutAttr":$newLayout, "bool":$unpacked);\n}\n')


def test_a_parameter_whose_old_type_upstream_took_away_is_no_finding_of_its_own(tmp_path) -> None:
    """Issue 45 (3.5 -> 3.6 #8770, 3.7 #8850 CTAEncoding -> CGAEncoding): upstream renamed a layout record and
    the builder parameters of that type along (name and type). The call breaks only where the old type is
    spelled, or comes from a declaration the rename took away, and those are reported there (symbol-removed,
    member-removed): a warning at the call would be the same break twice. A parameter that changed meaning
    with types that still exist (unpacked -> colStride) is still a warning."""
    old = {"include/triton/Dialect/X/IR/Attrs.td": GONE_OLD, "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n"}
    new = {**old, "include/triton/Dialect/X/IR/Attrs.td": GONE_NEW}
    body = ("  x::OldLayoutAttr mine = x::OldLayoutAttr::get(ctx, 2);\n"
            "  auto a = x::FooAttr::get(ctx, 4, mine, true);\n"       # 4: the old type only: no finding
            "  auto b = x::FooAttr::get(ctx, 4, enc.getOldLayout(), false);\n")
    fork = {**old, "lib/Use.cpp": '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n' + body + "}\n"}
    assert call_signature_findings(context_of(tmp_path, old, new, fork)) == []
    meaning = {**new, "include/triton/Dialect/X/IR/Attrs.td": GONE_NEW.replace('"bool":$unpacked', '"unsigned":$colStride')}
    (finding,) = call_signature_findings(context_of(tmp_path / "meaning", old, meaning, fork))
    assert (finding.kind, finding.severity) == ("call-signature", "warning") and "colStride" in finding.message


LOAD_OLD = ('def X_LoadOp : X_Op<"load"> {\n  let arguments = (ins X_Ptr:$ptr, Optional<I1>:$mask, '
            'DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$boundaryCheck, DefaultValuedAttr<X_CacheAttr, "0">:$cache);\n'
            '  let results = (outs X_Type:$result);\n  let builders = [\n    OpBuilder<(ins "Value":$ptr, '
            '"Value":$mask, "x::Cache":$cache)>\n  ];\n}\n')
LOAD_NEW = LOAD_OLD.replace('DefaultValuedAttr<DenseI32ArrayAttr, "{}">:$boundaryCheck, ', '')
LOAD_FORK = LOAD_OLD.replace('"0">:$cache);', '"0">:$cache, DefaultValuedAttr<StrAttr, "">:$hints);') \
    .replace('"x::Cache":$cache)>', '"x::Cache":$cache, CArg<"mlir::StringAttr", "{}">:$hints)>')


def test_a_call_of_a_builder_flagtree_added_is_not_upstream_drift(tmp_path) -> None:
    """Issue 45 (3.7 move): tle calls tt::LoadOp::create(rewriter, loc, src, mask, other, cache, evict, isVolatile,
    rewriter.getStringAttr("")), which fits the builder FlagTree gave its own flagtree_hints parameter. Upstream's
    builders changed (boundaryCheck went), but upstream never had the one the call is of: not upstream drift.
    The same count without FlagTree's parameter is still judged against upstream's builders."""
    old = {"include/triton/Dialect/X/IR/Ops.td": LOAD_OLD, "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n"}
    new = {**old, "include/triton/Dialect/X/IR/Ops.td": LOAD_NEW}
    head = '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f(OpBuilder &b, Location loc) {\n'
    own = head + '  auto l = x::LoadOp::create(b, loc, p, m, c, b.getStringAttr(""));\n}\n'
    upstreams = head + "  auto l = x::LoadOp::create(b, loc, p, m, bc, c);\n}\n"
    fork = {**old, "include/triton/Dialect/X/IR/Ops.td": LOAD_FORK, "lib/Own.cpp": own, "lib/Up.cpp": upstreams}
    found = {(f.path, f.kind) for f in call_signature_findings(context_of(tmp_path, old, new, fork))}
    assert ("lib/Own.cpp", "call-signature") not in found and "lib/Own.cpp" not in {path for path, _ in found}
    assert any(path == "lib/Up.cpp" for path, _ in found)


def test_an_ods_default_builder_gives_no_parameter_a_cpp_default(tmp_path) -> None:
    """Issue 45 class 4 (the 3.5 -> 3.6 move): TensorMemoryEncodingAttr's `unpacked` (bool) became `colStride`
    (unsigned) and a DefaultValuedParameter `twoCTAs` was appended. The default builder ODS generates from
    `parameters` gives no parameter a C++ default (a parameter's default fills the parsed form only), so the old
    five values no longer fit `get`: an error. A custom builder whose `ins` gives the new parameter a default
    (CArg<"bool", "false">) still takes the call, and a call that passes every new parameter is no break."""
    params = ('"unsigned":$blockM, "unsigned":$blockN, {third}, DefaultValuedParameter<"unsigned", "1">:$CTASplitM, '
              'DefaultValuedParameter<"unsigned", "1">:$CTASplitN{more}')
    record = 'def X_TmemAttr : AttrDef<X_Dialect, "Tmem"> {{\n  let parameters = (ins {params});\n{builders}}}\n'
    old = record.format(params=params.format(third='"bool":$unpacked', more=""), builders="")
    new_params = params.format(third='"unsigned":$colStride', more=', DefaultValuedParameter<"bool", "false">:$twoCTAs')
    new = record.format(params=new_params, builders="")
    custom = record.format(params=new_params, builders=(
        '  let builders = [AttrBuilder<(ins "unsigned":$blockM, "unsigned":$blockN, "unsigned":$colStride,\n'
        '    CArg<"unsigned", "1">:$CTASplitM, CArg<"unsigned", "1">:$CTASplitN, CArg<"bool", "false">:$twoCTAs), '
        '[{ return $_get($_ctxt, blockM, blockN, colStride, CTASplitM, CTASplitN, twoCTAs); }]>];\n'))
    header = {"include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n"}
    calls = {"old": "x::TmemAttr::get(ctx, 128, 64, true, 1, 1)", "new": "x::TmemAttr::get(ctx, 128, 64, 1, 1, 1, false)"}
    found = {}
    for name, after in (("default", new), ("custom", custom)):
        for which, call in calls.items():
            files = {**header, "include/triton/Dialect/X/IR/Attrs.td": old}
            use = {"lib/Use.cpp": f'#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {{\n  auto a = {call};\n}}\n'}
            context = context_of(tmp_path / f"{name}-{which}", files,
                                 {**files, "include/triton/Dialect/X/IR/Attrs.td": after}, {**files, **use})
            found[name, which] = sorted((f.kind, f.severity, f.line) for f in call_signature_findings(context))
    assert found["default", "old"] == [("call-no-overload", "error", 3)]
    assert found["default", "new"] == []
    # the custom builder takes the five values: at most the renamed parameter's warning, never an error
    assert all(severity != "error" for _, severity, _ in found["custom", "old"])
    assert found["custom", "new"] == []
