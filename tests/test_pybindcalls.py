"""Issue 33: a Python call of a pybind11 method whose bound lambda upstream gave another parameter count (the
3.5 -> 3.6 change of pass_manager.run, 625c8cb45) raises TypeError: call-no-overload, an error."""
from __future__ import annotations

from sync.drift.analyses.pybindcalls import bound_methods, pybind_call_findings
from sync.facts.declindex import cpp_declarations
from tests.upstream_fixture import context_of

IR = ('#include <pybind11/pybind11.h>\nvoid init_triton_ir(py::module &&m) {{\n'
      '  py::class_<PassManager>(m, "pass_manager", py::module_local())\n'
      '      .def(py::init<MLIRContext *>())\n'
      '      .def("enable_debug", [](PassManager &self) {{ self.enable(); }})\n'
      '      .def("run", [](PassManager &self, ModuleOp &mod{run}) {{ self.run(mod); }})\n'
      '      .def("named", [](PassManager &self, int level{named}) {{ return level; }}{arg})\n'
      '      .def("dump", [](PassManager &self, int a{dump}) {{ return a; }});\n'
      '  m.def("free", [](int a) {{ return a; }});\n}}\n')
OLD_IR = IR.format(run="", named="", arg="", dump="")
NEW_IR = IR.format(run=", std::string tag", named=", int more", arg=', py::arg("level"), py::arg("more") = 0',
                   dump=", int b")
COMPILER = ("from triton._C.libtriton import ir, passes\n\n\n"
            "def make_ttir(mod):\n    pm = ir.pass_manager(mod.context)\n    pm.enable_debug()\n"
            "    pm.named(1)\n    {call}\n    return mod\n")


def test_the_class_and_lambda_of_each_registration_are_read() -> None:
    methods = bound_methods(NEW_IR)
    assert set(methods) == {("pass_manager", "enable_debug"), ("pass_manager", "run"), ("pass_manager", "named"),
                            ("pass_manager", "dump")}
    (run,) = methods[("pass_manager", "run")]
    assert [param.name for param in run.params or ()] == ["self", "mod", "tag"] and run.line == 6
    (named,) = methods[("pass_manager", "named")]
    assert "keywords" in named.flags  # py::arg: Python may pass it by name or leave it out
    free = next(decl for decl in cpp_declarations(NEW_IR) if decl.name == "free")
    assert free.owner is None and free.kind == "pybind"


def test_a_call_with_the_old_count_fires_and_unsure_ones_do_not(tmp_path) -> None:
    jit = {"python/triton/runtime/jit.py": "class JITFunction:\n    def run(self, *args):\n        pass\n"}
    old = {"python/src/ir.cc": OLD_IR, **jit}  # a Python `run`: the name alone says nothing of the receiver
    new = {"python/src/ir.cc": NEW_IR, **jit}
    fork = {**old,
            "third_party/a/backend/compiler.py": COMPILER.format(call="pm.run(mod)"),  # fires
            "third_party/b/backend/compiler.py": COMPILER.format(call="pm.run(mod, 'ttir')"),  # fixed already
            "third_party/c/backend/compiler.py": COMPILER.format(call="pm.run(mod)"),
            "third_party/c/python/src/ir.cc": OLD_IR,  # c builds its own extension: its own binding
            "third_party/d/backend/compiler.py": COMPILER.format(call="pm.run(mod)\n    pm = other()"),  # reassigned
            "third_party/e/backend/compiler.py": COMPILER.format(call="pm.run(mod)").replace(
                "from triton._C.libtriton import", "from mylib import"),  # not the extension's ir
            "third_party/f/examples/compiler.py": COMPILER.format(call="pm.run(mod)"),  # not built
            "third_party/g/backend/compiler.py": COMPILER.format(call="pm.run(*args)"),
            "third_party/h/backend/compiler.py": COMPILER.format(call="pm.run(mod=mod)"),
            "third_party/i/backend/compiler.py": COMPILER.format(call="pm.run(mod); pm.dump(1)"),  # one line
            "python/triton/compiler/x.py": COMPILER.format(call="pm.run(mod)").replace(
                "from triton._C.libtriton", "from .._C.libtriton")}  # trunk's relative import reaches it
    findings = pybind_call_findings(context_of(tmp_path, old, new, fork))
    assert sorted((f.kind, f.severity, f.path, f.line) for f in findings) == [
        ("call-no-overload", "error", "python/triton/compiler/x.py", 8),
        ("call-no-overload", "error", "third_party/a/backend/compiler.py", 8),
        ("call-no-overload", "error", "third_party/i/backend/compiler.py", 8),
        ("call-no-overload", "error", "third_party/i/backend/compiler.py", 8)]
    assert sorted(f.details["class"] + "." + f.details["declaration"] for f in findings
                  if f.path.startswith("third_party/i/")) == ["pass_manager.dump", "pass_manager.run"]
    first = next(f for f in findings if f.path.startswith("third_party/a/"))
    assert "pass_manager.run: FlagTree calls the pybind method with 1 argument(s)" in first.message
    assert "took (mod) and takes (mod, tag) now" in first.message
    assert first.details["class"] == "pass_manager" and first.details["declaration"] == "run"


def test_a_class_two_trunk_sources_register_claims_nothing(tmp_path) -> None:
    old = {"python/src/ir.cc": OLD_IR}
    new = {"python/src/ir.cc": NEW_IR, "python/src/other.cc": OLD_IR.replace("init_triton_ir", "init_other")}
    fork = {**old, "third_party/a/backend/compiler.py": COMPILER.format(call="pm.run(mod)")}
    assert pybind_call_findings(context_of(tmp_path, old, new, fork)) == []


GLUON = ('void init_gluon_ir(py::module &&m) {{\n'
         '  py::class_<GluonOpBuilder>(m, "GluonOpBuilder")\n'
         '      .def("create_ws", [](GluonOpBuilder &self, int types{captures}, int warps) {{ return 1; }});\n}}\n')
TLE = "def warp_specialize(_semantic=None):\n    builder = _semantic.builder\n    return builder.create_ws(1, 2, 3)\n"


def test_a_name_one_registration_carries_is_resolved_where_no_python_def_can_be_meant(tmp_path) -> None:
    """The 3.7 move: GluonOpBuilder.create_warp_specialize lost explicitCaptures; TLE calls it on the builder it
    takes from _semantic, with the old three arguments."""
    old = {"python/src/gluon_ir.cc": GLUON.format(captures=", int captures")}
    new = {"python/src/gluon_ir.cc": GLUON.format(captures="")}
    fork = {**old, "python/triton/experimental/tle/core.py": TLE,  # fires
            "third_party/a/backend/tle.py": TLE,
            "third_party/a/backend/mock.py": "class Mock:\n    def create_ws(self, a, b, c):\n        pass\n",
            "third_party/b/backend/tle.py": TLE.replace("1, 2, 3", "1, 3")}  # fits the new binding
    found = pybind_call_findings(context_of(tmp_path / "one", old, new, fork))
    assert [(f.path, f.line) for f in found] == [("python/triton/experimental/tle/core.py", 3)]
    assert "GluonOpBuilder.create_ws" in found[0].message and "took (types, captures, warps)" in found[0].message
    # a Python def of the name in trunk's package can be what the call means; so can a second registration
    interpreter = {"python/triton/runtime/interpreter.py": "class Builder:\n    def create_ws(self, *a):\n        pass\n"}
    assert pybind_call_findings(context_of(tmp_path / "def", old, {**new, **interpreter}, fork)) == []
    twice = {**new, "python/src/ir.cc": 'void f(py::module &m) {\n  m.def("create_ws", [](int a) { return a; });\n}\n'}
    assert pybind_call_findings(context_of(tmp_path / "twice", old, twice, fork)) == []
    # FlagTree's own C++ registering the name (TLE's triton_tle.cc binds its own create_warp_specialize)
    own = {**fork, "third_party/tle/triton_tle.cc": GLUON.format(captures=", int captures").replace("init_gluon", "tle")}
    assert pybind_call_findings(context_of(tmp_path / "own", old, new, own)) == []


def test_a_backend_whose_build_compiles_no_extension_claims_nothing(tmp_path) -> None:
    """Like removed bindings (tests/test_bindings.py): a backend whose entry script sets `ext_modules = []` ships
    a prebuilt binding library, whose registrations are not in the tree."""
    setup = {"python/setup_tools/utils/tools.py":
             'import os\nflagtree_backend = os.environ.get("FLAGTREE_BACKEND", "")\n',
             "python/setup.py": ('from setup_tools import utils as helper\next_modules = [Extension("triton")]\n'
                                 'if helper.flagtree_backend == "c":\n    ext_modules = []\n')}
    old, new = {"python/src/ir.cc": OLD_IR, **setup}, {"python/src/ir.cc": NEW_IR}
    use = COMPILER.format(call="pm.run(mod)")
    fork = {**old, "third_party/a/backend/compiler.py": use, "third_party/c/backend/compiler.py": use}
    sites = {site for f in pybind_call_findings(context_of(tmp_path, old, new, fork)) for site in f.details["sites"]}
    assert sites == {"third_party/a/backend/compiler.py:8"}
