"""Issue 33: a pybind11 name upstream removed, read by FlagTree Python, is a symbol-removed error."""
from __future__ import annotations

from sync.drift.analyses.bindings import binding_findings, registered
from tests.upstream_fixture import context_of

OLD_CC = ('#include <pybind11/pybind11.h>\nvoid init(py::module &m) {\n  ADD_PASS_WRAPPER_0("add_old_pass", createOld);\n'
          '  m.def("keep_me", [](int a) { return a; })\n   .def("create_old_load", [](int a) { return a; });\n}\n')
NEW_CC = ('#include <pybind11/pybind11.h>\nvoid init(py::module &m) {\n'
          '  m.def("keep_me", [](int a) { return a; });\n}\n')
USE = "def lower(pm, passes, b):\n    passes.ttir.add_old_pass(pm)\n    b.keep_me(1)\n    return b.create_old_load(2)\n"


def test_registered_names() -> None:
    assert registered(OLD_CC) == {"add_old_pass", "keep_me", "create_old_load"}
    # a pass file that only uses the wrapper macros (pybind11 included through its own header) registers too
    assert registered('#include "passes.h"\nvoid init(M &m) {\n  ADD_PASS_WRAPPER_0("add_x", createX);\n}\n') == {"add_x"}


def test_fires_on_removed_bindings_and_not_where_python_or_the_backend_defines_them(tmp_path) -> None:
    old = {"python/src/passes.cc": OLD_CC}
    new = {"python/src/passes.cc": NEW_CC}
    fork = {**old, "third_party/a/backend/compiler.py": USE,
            "third_party/b/backend/compiler.py": USE,  # b registers add_old_pass in its own C++
            "third_party/b/python/src/own.cc": OLD_CC.replace('.def("create_old_load"', '.def("other"'),
            "python/triton/tools/x.py": "def create_old_load(a):\n    return a\n",  # a Python def: ambiguous
            "third_party/a/python/test/stub.py": "def add_old_pass(pm):\n    pass\n"}  # a test's stub is not
    found = {(f.backend, f.details["declaration"], tuple(f.details["sites"]))
             for f in binding_findings(context_of(tmp_path, old, new, fork))}
    assert {(name, sites) for _, name, sites in found} == {
        ("add_old_pass", ("third_party/a/backend/compiler.py:2",))}


def test_a_python_mirror_upstream_removed_with_the_binding_resolves_nothing(tmp_path) -> None:
    """The interpreter's builder mirrors the bindings: at the old tag it defines create_old_load too. Upstream
    removes both; the fork still holds the old mirror only because it is upstream's old file, which the upgrade
    replaces. FlagTree's own def of the name (on its added lines) still resolves the use."""
    mirror = "class Builder:\n    def create_old_load(self, a):\n        return a\n"
    old = {"python/src/ir.cc": OLD_CC, "python/triton/runtime/interpreter.py": mirror}
    new = {"python/src/ir.cc": NEW_CC, "python/triton/runtime/interpreter.py": "class Builder:\n    pass\n"}
    fork = {**old, "python/triton/language/semantic.py": USE}
    found = [(f.details["declaration"], f.details["sites"]) for f in binding_findings(context_of(tmp_path, old, new, fork))]
    assert ("create_old_load", ["python/triton/language/semantic.py:4"]) in found
    own = {**fork, "python/triton/runtime/interpreter.py": mirror + "    def extra(self):\n        pass\n"
           "def create_old_load(a):\n    return a\n"}  # FlagTree adds a def of its own
    found = [f.details["declaration"] for f in binding_findings(context_of(tmp_path / "own", old, new, own))]
    assert "create_old_load" not in found


def test_a_backends_own_python_def_resolves_only_that_backends_uses(tmp_path) -> None:
    """A backend that carries its own copy of the package (its interpreter still mirrors the binding) resolves
    its own uses there; trunk's package cannot reach that copy, so trunk's use is still a break."""
    mirror = "class Builder:\n    def create_old_load(self, a):\n        return a\n"
    old = {"python/src/ir.cc": OLD_CC}
    new = {"python/src/ir.cc": NEW_CC}
    fork = {**old, "python/triton/language/semantic.py": USE,
            "third_party/m/python/triton/language/semantic.py": USE,
            "third_party/m/python/triton/runtime/interpreter.py": mirror}
    found = {f.details["declaration"]: f.details["sites"] for f in binding_findings(context_of(tmp_path, old, new, fork))}
    assert found["create_old_load"] == ["python/triton/language/semantic.py:4"]


def test_a_backends_own_module_binding_reaches_only_that_backend_and_trunk(tmp_path) -> None:
    """Issue 33, the 3.3 -> 3.4 move: upstream removed amd's add_decompose_unsupported_conversions; iluvatar's
    compiler calls iluvatar's own module's pass of that name (`iluvatar.passes...`), never amd's."""
    old = {"third_party/amd/python/triton_amd.cc": OLD_CC}
    new = {"third_party/amd/python/triton_amd.cc": NEW_CC}
    fork = {**old, "third_party/amd/backend/compiler.py": USE, "third_party/iluvatar/backend/compiler.py": USE,
            "python/triton/compiler/x.py": USE}
    found = {site for f in binding_findings(context_of(tmp_path, old, new, fork))
             if f.details["declaration"] == "add_old_pass" for site in f.details["sites"]}
    # amd's own use is left to amd's C++, which still registers the name in the fork (the rule above)
    assert found == {"python/triton/compiler/x.py:2"}


def test_a_standard_library_attribute_is_no_binding(tmp_path) -> None:
    """Issue 33, the 3.5.x -> 3.7 move: `weakref.finalize(...)` was taken for the removed `finalize` binding."""
    old = {"python/src/ir.cc": OLD_CC.replace('"keep_me"', '"finalize"')}
    new = {"python/src/ir.cc": NEW_CC}
    use = ("import weakref\nfrom os import path as p\n\n"
           "def run(obj, mod):\n    weakref.finalize(obj, print)\n    p.finalize(1)\n    mod.finalize()\n")
    fork = {**old, "python/triton/runtime/libentry.py": use}
    found = {f.details["declaration"]: f.details["sites"] for f in binding_findings(context_of(tmp_path, old, new, fork))}
    assert found == {"finalize": ["python/triton/runtime/libentry.py:7"]}


def test_a_backends_python_mirror_in_trunks_package_reaches_its_own_bindings(tmp_path) -> None:
    """Issue 33, the 3.5.x -> 3.7 move: ascend's spec Python lives in python/triton/spec/ascend/ and ascend
    builds its own python/src/ir.cc, which still binds the names upstream's ir.cc dropped."""
    old = {"python/src/ir.cc": OLD_CC}
    new = {"python/src/ir.cc": NEW_CC}
    fork = {**old, "python/triton/spec/m/compiler/compiler.py": USE,
            "python/triton/spec/n/compiler/compiler.py": USE,
            "third_party/m/python/src/ir.cc": OLD_CC}
    found = {site for f in binding_findings(context_of(tmp_path, old, new, fork)) for site in f.details["sites"]}
    assert found == {"python/triton/spec/n/compiler/compiler.py:2", "python/triton/spec/n/compiler/compiler.py:4"}


def test_a_backend_whose_build_compiles_no_extension_claims_nothing(tmp_path) -> None:
    """The 3.2 line's setup.py sets `ext_modules = []` for cambricon, which ships a prebuilt libtriton: what that
    library registers is not in the tree, so its semantic.py's binding calls claim nothing (3.2 -> 3.4)."""
    old = {"python/src/passes.cc": OLD_CC, "python/setup_tools/utils/tools.py":
           'import os\nflagtree_backend = os.environ.get("FLAGTREE_BACKEND", "")\n',
           "python/setup.py": ('from setup_tools import utils as helper\next_modules = [Extension("triton")]\n'
                               'if helper.flagtree_backend == "c":\n    ext_modules = []\n')}
    new = {"python/src/passes.cc": NEW_CC}
    fork = {**old, "third_party/a/backend/compiler.py": USE, "third_party/c/backend/compiler.py": USE}
    found = {(f.backend, tuple(f.details["sites"])) for f in binding_findings(context_of(tmp_path, old, new, fork))}
    assert {sites for _, sites in found} == {("third_party/a/backend/compiler.py:2",),
                                             ("third_party/a/backend/compiler.py:4",)}
