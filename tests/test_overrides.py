"""override-signature: a FlagTree class overriding a trunk method whose parameters upstream changed (issue 33)."""
from __future__ import annotations

from pathlib import Path

from sync.drift.analyses.overrides import override_findings
from sync.facts.pymodules import absolute as _absolute
from tests.upstream_fixture import context_of

BASE_OLD = ("class BaseBackend:\n    def add_stages(self, stages, options):\n        raise NotImplementedError\n\n"
            "    def pack(self, x):\n        return x\n")
BASE_NEW = ("class BaseBackend:\n    def add_stages(self, stages, options, language):\n        raise NotImplementedError\n\n"
            "    def pack(self, x):\n        return x\n")
CALLER = "def compile(backend, stages, options, language):\n    backend.add_stages(stages, options{})\n"
OLD = {"python/triton/backends/compiler.py": BASE_OLD,
       "python/triton/backends/__init__.py": "from .compiler import BaseBackend\n",
       "python/triton/compiler/compiler.py": CALLER.format("")}
NEW = {**OLD, "python/triton/backends/compiler.py": BASE_NEW, "python/triton/compiler/compiler.py": CALLER.format(", language")}


def _backend(imports: str, base: str, params: str) -> str:
    return f"{imports}\n\n\nclass Mine({base}):\n    def add_stages(self, {params}):\n        pass\n"


def test_an_override_with_the_old_parameters_of_a_changed_trunk_method_is_reported(tmp_path) -> None:
    direct = "from triton.backends.compiler import BaseBackend"
    fork = {**OLD,
            "third_party/a/backend/compiler.py": _backend(direct, "BaseBackend", "stages, options"),  # old: fires
            "third_party/b/backend/compiler.py": _backend(direct, "BaseBackend", "stages, options, language"),
            "third_party/c/backend/compiler.py": _backend("from triton.backends import BaseBackend", "BaseBackend",
                                                          "stages, options"),  # through the package's re-export
            "third_party/d/backend/compiler.py": _backend(direct, "object", "stages, options"),  # not a subclass
            "third_party/e/backend/compiler.py": _backend("from .base import BaseBackend", "BaseBackend",
                                                          "stages, options"),  # the backend's own base class
            "third_party/f/backend/compiler.py": _backend("import triton.backends.compiler as tbc", "tbc.BaseBackend",
                                                          "stages, options"),
            "third_party/g/backend/compiler.py": _backend(direct, "BaseBackend", "*args")}  # takes anything
    findings = override_findings(context_of(tmp_path, OLD, NEW, fork))
    # language is required now: an override without it takes the argument neither by position nor by name
    assert {(f.kind, f.severity, f.path, f.line) for f in findings} == {
        ("override-missing-argument", "error", f"third_party/{b}/backend/compiler.py", 5) for b in "acf"}
    first = next(f for f in findings if f.path.startswith("third_party/a/"))
    assert "(self, stages, options) -> (self, stages, options, language)" in first.message
    assert ("the override cannot take language, which trunk's calls of it (python/triton/compiler/compiler.py) pass: "
            "each call raises TypeError") in first.message
    assert first.details["cannot_take"] == ["language"]
    assert first.details["declaration"] == "triton.backends.compiler.BaseBackend.add_stages"
    assert "+def add_stages(self, stages, options, language):" in (first.diff or "")  # dedented source


def test_an_override_that_may_still_fit_the_new_calls_is_a_warning(tmp_path) -> None:
    """A parameter renamed in place fits a call that passes it by position, and one with a default added may
    be left out: neither must raise, so neither is an error. A keyword-only one is passed by name alone."""
    renamed = BASE_NEW.replace("options, language", "opts")
    defaulted = BASE_NEW.replace("language", "language=None")
    keyword_only = BASE_NEW.replace("options, language", "options, *, language")
    fork = {**OLD, "third_party/a/backend/compiler.py": _backend("from triton.backends.compiler import BaseBackend",
                                                                 "BaseBackend", "stages, options")}
    kinds = [{f.kind for f in override_findings(context_of(tmp_path / str(number), OLD,
                                                           {**NEW, "python/triton/backends/compiler.py": base}, fork))}
             for number, base in enumerate((renamed, defaulted, keyword_only))]
    assert kinds == [{"override-signature"}, {"override-signature"}, {"override-missing-argument"}]


def test_what_an_override_cannot_take_counts_positions_names_and_catch_alls() -> None:
    from sync.drift.analyses.overrides import cannot_take
    from sync.facts.declindex import Decl, Param
    override = lambda *params: Decl("def", "f", "C", 1, params=tuple(Param(name, "", False, kind) for name, kind in params))
    required = (("self", "positional", 0), ("x", "positional", 1), ("lang", "positional", 2))
    assert cannot_take(required, override(("self", "positional"), ("x", "positional"))) == ["lang"]
    assert cannot_take(required, override(("self", "positional"), ("x", "positional"), ("y", "positional"))) == []
    assert cannot_take(required, override(("self", "positional"), ("x", "positional"), ("kw", "varkw"))) == []
    assert cannot_take(required, override(("self", "positional"), ("rest", "vararg"))) == []
    assert cannot_take((("self", "positional", 0), ("lang", "keyword-only", 1)),
                       override(("self", "positional"), ("lang", "positional"))) == []


def test_an_unchanged_method_or_an_override_upstream_owns_is_not_reported(tmp_path) -> None:
    # pack did not change; upstream's own subclass (a file FlagTree did not add lines to) merges with upstream
    mine = {"third_party/a/backend/compiler.py": "from triton.backends.compiler import BaseBackend\n\n\n"
                                                        "class Mine(BaseBackend):\n    def pack(self, x):\n"
                                                        "        return x\n"}
    upstream_owned = {"third_party/nvidia/backend/compiler.py": _backend(
        "from triton.backends.compiler import BaseBackend", "BaseBackend", "stages, options")}
    old = {**OLD, **upstream_owned}
    assert override_findings(context_of(tmp_path, old, {**NEW, **upstream_owned},
                                        {**old, **mine})) == []


def test_relative_targets_are_made_absolute_from_the_importing_package() -> None:
    assert _absolute(".compiler.BaseBackend", "triton.backends") == "triton.backends.compiler.BaseBackend"
    assert _absolute("..runtime.jit.JITFunction", "triton.language") == "triton.runtime.jit.JITFunction"
    assert _absolute("triton.x.Y", "triton") == "triton.x.Y"


def test_upstreams_own_implementations_changing_alike_stand_for_a_base_that_kept_its_parameters(tmp_path) -> None:
    """The 3.3 -> 3.4 move: BaseBackend.add_stages still read (stages, options) at 3.4.0, while nvidia's and
    amd's gained `language`, which trunk's compiler passes; aipu kept the old parameters."""
    upstream = lambda params: _backend("from triton.backends.compiler import BaseBackend", "BaseBackend", params)
    old = {**OLD, "third_party/nvidia/backend/compiler.py": upstream("stages, options"),
           "third_party/amd/backend/compiler.py": upstream("stages, options")}
    new = {**old, "third_party/nvidia/backend/compiler.py": upstream("stages, options, language"),
           "third_party/amd/backend/compiler.py": upstream("stages, options, language"),
           "python/triton/compiler/compiler.py": CALLER.format(", language")}  # the base kept its parameters
    fork = {**old, "third_party/aipu/backend/compiler.py": upstream("stages, options")}
    (finding,) = override_findings(context_of(tmp_path, old, new, fork))
    assert (finding.path, finding.line) == ("third_party/aipu/backend/compiler.py", 5)
    assert finding.details["implementations"] == ["Mine (third_party/amd/backend/compiler.py)",
                                                  "Mine (third_party/nvidia/backend/compiler.py)"]
    assert "upstream's own implementations of it" in finding.message
    # upstream's subclasses that disagree on the new parameters say nothing about what trunk passes
    split = {**new, "third_party/amd/backend/compiler.py": upstream("stages, options, target")}
    assert override_findings(context_of(tmp_path / "split", old, split, fork)) == []


def test_a_method_the_base_does_not_declare_or_a_caller_the_backend_ships_itself_claims_nothing(tmp_path) -> None:
    """The 3.3 -> 3.4 move: nvidia's make_ttir gained a parameter, but BaseBackend declares no make_ttir (nvidia's
    own add_stages calls it); iluvatar, mthreads and xpu ship their own python/triton/compiler/compiler.py, which
    still calls add_stages the old way."""
    extra = lambda params: ("from triton.backends.compiler import BaseBackend\n\n\nclass Mine(BaseBackend):\n"
                            f"    def make_ttir(self, {params}):\n        pass\n")
    old = {**OLD, "third_party/nvidia/backend/compiler.py": extra("mod, opt")}
    new = {**NEW, "third_party/nvidia/backend/compiler.py": extra("mod, opt, capability")}
    fork = {**old, "third_party/a/backend/compiler.py": extra("mod, opt"),
            "third_party/own/backend/compiler.py": _backend("from triton.backends.compiler import BaseBackend",
                                                            "BaseBackend", "stages, options"),
            "third_party/own/python/triton/compiler/compiler.py": CALLER.format("")}
    assert override_findings(context_of(tmp_path, old, new, fork)) == []



def test_a_caller_a_spec_overlay_replaces_claims_nothing(tmp_path) -> None:
    """3.2 -> 3.4: trunk's compiler.py passes add_stages a third argument, but ascend loads its spec overlay of
    compiler.py in trunk's place, which calls its add_stages with two."""
    override = _backend("from triton.backends.compiler import BaseBackend", "BaseBackend", "stages, options")
    hook = {"python/triton/flagtree_spec.py": "def spec_path(p): ...\n",
            "python/triton/compiler/__init__.py": "from triton.flagtree_spec import spec_path\n\nspec_path(__path__)\n"}
    fork = {**OLD, **hook, "third_party/sp/backend/compiler.py": override,
            "third_party/sp/backend/spec/triton/compiler/compiler.py": CALLER.format(""),
            "third_party/plain/backend/compiler.py": override}
    old, new = {**OLD, **hook}, {**NEW, **hook}
    assert [f.path for f in override_findings(context_of(tmp_path, old, new, fork))] == [
        "third_party/plain/backend/compiler.py"]


DRIVER_OLD = ("from abc import ABCMeta, abstractmethod\n\n\nclass DriverBase(metaclass=ABCMeta):\n\n"
              "    @abstractmethod\n    def get_current_target(self):\n        pass\n\n\n"
              "class GPUDriver(DriverBase):\n\n    def __init__(self):\n        pass\n")
DRIVER_NEW = DRIVER_OLD.replace("    @abstractmethod\n    def get_current_target(self):\n        pass\n",
                                "    @abstractmethod\n    def get_current_target(self):\n        pass\n\n"
                                "    @abstractmethod\n    def map_python_to_cpp_type(self, ty):\n        pass\n")


def test_a_flagtree_driver_lacking_an_abstract_method_upstream_added_cannot_be_created(tmp_path: Path) -> None:
    """The 3.4.x -> 3.6.0 move (helper-20): 355dc4726 made DriverBase.map_python_to_cpp_type abstract; tsingmicro's
    TXDADriver(GPUDriver) defines none, so creating it raises TypeError. One that defines it, one whose backend ships
    its own driver module, and an abstract class of FlagTree's own claim nothing."""
    from sync.drift.analyses.abstracts import abstract_findings
    old = {"python/triton/backends/driver.py": DRIVER_OLD, "python/triton/backends/__init__.py": ""}
    new = {**old, "python/triton/backends/driver.py": DRIVER_NEW}
    driver = ("from triton.backends.driver import GPUDriver\n\n\nclass TXDADriver(GPUDriver):\n\n"
              "    def get_current_target(self):\n        return 1\n")
    fork = {"third_party/a/backend/driver.py": driver,
            "third_party/b/backend/driver.py": driver + "\n    def map_python_to_cpp_type(self, ty):\n        return ty\n",
            "third_party/c/backend/driver.py": driver, "third_party/c/python/triton/backends/driver.py": DRIVER_OLD,
            "third_party/d/backend/driver.py": driver.replace("    def get_current_target(self):",
                                                              "    @abstractmethod\n    def launch(self):\n        pass\n\n"
                                                              "    def get_current_target(self):")}
    found = [(f.path, f.line, f.details["methods"]) for f in abstract_findings(context_of(tmp_path, old, new, fork))]
    assert found == [("third_party/a/backend/driver.py", 4, ["map_python_to_cpp_type"])]


def test_a_driver_already_abstract_at_the_old_tag_says_so(tmp_path: Path) -> None:
    """Seen on triton_v3.4.x onto 3.6.0 and triton_v3.2.x onto 3.3.0: iluvatar's and xpu's drivers lacked an
    abstract method at the old tag already; the finding still names the new one, and says the class did not run
    before the move either."""
    from sync.drift.analyses.abstracts import abstract_findings
    old = {"python/triton/backends/driver.py": DRIVER_OLD, "python/triton/backends/__init__.py": ""}
    new = {**old, "python/triton/backends/driver.py": DRIVER_NEW}
    lacking = "from triton.backends.driver import GPUDriver\n\n\nclass OldDriver(GPUDriver):\n    pass\n"
    fork = {"third_party/a/backend/driver.py": lacking, "third_party/a/backend/__init__.py": "from . import driver\n"}
    found = abstract_findings(context_of(tmp_path, old, new, fork))
    assert [(f.details["methods"], f.details.get("abstract_at_old")) for f in found] == [
        (["map_python_to_cpp_type"], ["get_current_target"])]
    assert "abstract at the old tag already (it defines no get_current_target)" in found[0].message


def test_a_backend_module_nothing_names_is_never_imported_and_claims_nothing(tmp_path: Path) -> None:
    """The 3.4.x -> 3.6.0 move: tsingmicro's backend/cpu_driver.py lacks the new abstract method too, but no file
    names cpu_driver, so nothing imports it and nothing creates its class. Trunk's backend discovery names every
    backend's `driver`; a sibling's import names cpu_helper; a trunk module is claimed whoever names it."""
    from sync.drift.analyses.abstracts import abstract_findings
    discovery = "import importlib\n\n\ndef load(name):\n    return importlib.import_module(f'{name}.driver')\n"
    old = {"python/triton/backends/driver.py": DRIVER_OLD, "python/triton/backends/__init__.py": discovery}
    new = {**old, "python/triton/backends/driver.py": DRIVER_NEW}
    driver = ("from triton.backends.driver import GPUDriver\n\n\nclass TXDADriver(GPUDriver):\n\n"
              "    def get_current_target(self):\n        return 1\n")
    fork = {**old, "third_party/t/backend/driver.py": driver, "third_party/t/backend/cpu_driver.py": driver,
            "third_party/u/backend/driver.py": "from .cpu_helper import TXDADriver\n",
            "third_party/u/backend/cpu_helper.py": driver, "python/triton/runtime/extra_driver.py": driver,
            # an alias of another module, spelled like a third one: no import of it
            "third_party/v/backend/compiler.py": "import triton.backends.v.driver as v_tools\n\nv_tools.run()\n",
            "third_party/v/backend/v_tools.py": driver,
            "third_party/w/backend/compiler.py": "from triton.backends.w import (\n    x,\n    w_tools,\n)\n",
            "third_party/w/backend/w_tools.py": driver}
    found = sorted(f.path for f in abstract_findings(context_of(tmp_path, old, new, fork)))
    assert found == ["python/triton/runtime/extra_driver.py", "third_party/t/backend/driver.py",
                     "third_party/u/backend/cpu_helper.py", "third_party/w/backend/w_tools.py"]


def test_a_backends_vendored_copy_of_trunk_claims_nothing(tmp_path: Path) -> None:
    """The 3.3.x -> 3.5.1 move (helper-21): enflame vendors a whole Triton tree under include/triton/ (its drivers,
    tests, lib/), built against itself; its classes there are not FlagTree's lines an upgrade breaks."""
    from sync.drift.analyses.abstracts import abstract_findings
    old = {"python/triton/backends/driver.py": DRIVER_OLD, "python/triton/backends/__init__.py": ""}
    new = {**old, "python/triton/backends/driver.py": DRIVER_NEW}
    driver = ("from triton.backends.driver import GPUDriver\n\n\nclass CudaDriver(GPUDriver):\n\n"
              "    def get_current_target(self):\n        return 1\n")
    fork = {"third_party/e/include/triton/third_party/nvidia/backend/driver.py": driver,
            "third_party/e/backend/driver.py": driver}
    found = [f.path for f in abstract_findings(context_of(tmp_path, old, new, fork))]
    assert found == ["third_party/e/backend/driver.py"]
