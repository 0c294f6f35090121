"""A Python attribute of a trunk class whose name left upstream's whole tree (the 3.2 -> 3.3 move: ascend's overlay
of jit.py reads `backend.compute_spec_key`, which #5512 removed from BaseBackend) is attribute-removed; a module's
attribute, a name the new tag still spells and a name FlagTree binds on its own class claim nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from sync.drift.analyses.pymembers import _bindings, _read_outside_conflicts
from sync.facts.trees import DiskTree
from tests.drift_helpers import drift_of, fork_world, upgraded_world

BASE_V1 = ("class BaseBackend:\n    def spec_key(self, arg):\n        return arg\n\n"
           "    def unpack(self, data):\n        return data\n\n    def keep(self):\n        return 1\n")
BASE_V2 = "class BaseBackend:\n    def keep(self):\n        return 1\n"
RUNTIME_V2 = "X = 2\n"  # v2 spells unpack nowhere either
ALPHA = ("import struct\n\n\ndef launch(backend, data, arg):\n"
         "    key = backend.spec_key(arg)\n"  # 5: gone from the whole tree
         "    size = struct.unpack('<I', data)\n"  # 6: the struct module's, not BaseBackend's
         "    own = backend.mine()\n"  # 7: never trunk's
         "    return key, size, own, backend.keep()\n")  # 8: still declared, so spelled
BETA = ("class BetaBackend:\n    def spec_key(self, arg):\n        return arg\n\n\n"
        "def launch(backend, arg):\n    return backend.spec_key(arg)\n")  # beta binds spec_key on its own class


PATCH = "def patch(backend):\n    backend.spec_key = lambda arg: arg\n"  # binds it on an object
BINDING = 'void init(py::class_<Backend> &c) {\n  c.def("spec_key", &Backend::specKey);\n}\n'  # registers it from C++


def _world(tmp_path: Path, extra: dict[str, str]) -> Path:
    old = {"python/triton/backends/compiler.py": BASE_V1, "python/triton/runtime/cache.py": "X = 1\n"}
    new = {"python/triton/backends/compiler.py": BASE_V2, "python/triton/runtime/cache.py": RUNTIME_V2}
    return upgraded_world(tmp_path, old, {"third_party/alpha/backend/launch.py": ALPHA, **extra}, new,
                          "[BACKEND] Drop spec keys from the backend (#512)")


def _removed(repo: Path) -> dict[str | None, dict]:
    findings = drift_of(fork_world(repo), "v1", "v2", "main", target="sync/v2", symbols=True).findings
    return {f.backend: {"details": f.details, "severity": f.severity, "line": f.line} for f in findings
            if f.kind == "attribute-removed"}


def test_an_attribute_whose_name_left_the_tree_is_an_error_at_its_site(tmp_path: Path) -> None:
    found = _removed(_world(tmp_path, {}))
    assert set(found) == {"alpha"}
    alpha = found["alpha"]
    assert alpha["severity"] == "error" and alpha["line"] == 5
    assert alpha["details"]["declaration"] == "BaseBackend.spec_key"
    assert alpha["details"]["sites"] == ["third_party/alpha/backend/launch.py:5"]  # not unpack, mine or keep
    assert alpha["details"]["commits"][0].endswith("Drop spec keys from the backend (#512)")


@pytest.mark.parametrize("extra", [{"third_party/alpha/backend/own.py": BETA},
                                   {"python/triton/runtime/patch.py": PATCH},
                                   {"third_party/alpha/python/src/ir.cc": BINDING}],
                         ids=["own-class", "trunk-object", "own-binding"])
def test_a_binding_the_reading_process_loads_may_provide_the_name(tmp_path: Path, extra: dict[str, str]) -> None:
    assert _removed(_world(tmp_path, extra)) == {}  # alpha's class or binding, or trunk's `backend.spec_key = ...`


def test_another_backends_binding_provides_nothing(tmp_path: Path) -> None:
    """A backend's Python runs with no other backend's: beta's class binds spec_key for beta's reads alone."""
    found = _removed(_world(tmp_path, {"third_party/beta/backend/launch.py": BETA}))
    assert set(found) == {"alpha"}


def test_a_read_only_a_conflict_block_holds_is_the_conflicts() -> None:
    """A read inside a committed conflict is an error as the conflict already; outside one it is the finding's."""
    conflicted = ("def launch(backend):\n<<<<<<< v2 (upgraded)\n    return 1\n=======\n"
                  "    return backend.spec_key(1)\n>>>>>>> a1 (FlagTree)\n")
    assert not _read_outside_conflicts(conflicted, "spec_key")
    assert _read_outside_conflicts(conflicted + "key = backend.spec_key\n", "spec_key")


def test_a_file_that_does_not_parse_binds_what_an_indented_line_defines(tmp_path: Path) -> None:
    """A conflicted module has no declarations to read: an indented def or assignment of the name may be a
    member, a module-level def is not."""
    (tmp_path / "python/triton/language").mkdir(parents=True)
    (tmp_path / "python/triton/language/semantic.py").write_text(
        "class Semantic:\n<<<<<<< v2 (upgraded)\n    pass\n=======\n    def spec_key(self):\n        return 1\n"
        ">>>>>>> a1 (FlagTree)\n")
    (tmp_path / "python/triton/runtime").mkdir(parents=True)
    (tmp_path / "python/triton/runtime/jit.py").write_text("def mine_key():\n    return 1\n<<<<<<<\n")
    found = _bindings(DiskTree(tmp_path), {"spec_key", "mine_key"})
    assert found == {"spec_key": {""}}
