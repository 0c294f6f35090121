"""binding-missing-names: the 3.2 hint-manager line onto 3.5.1. 3.5's knobs.py imports getenv from
triton._C.libtriton; ascend builds its own libtriton from its python/src/, which registers no getenv, so importing
trunk fails on ascend."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.drift_helpers import drift_of, fork_world, upgraded_world

MAIN = "PYBIND11_MODULE(libtriton, m) {{\n  m.def({name}, &run);\n}}\n"


@pytest.mark.parametrize("own_main, reported", [
    (MAIN.format(name='"other"'), True),
    (MAIN.format(name='"getenv"'), False),  # the copy registers it
    ("void init_acme(py::module &m) {\n  m.def(\"other\", &run);\n}\n", False),  # no library of its own
], ids=["copy-lacks-it", "copy-registers-it", "trunk-library"])
def test_a_backends_own_binding_library_lacking_a_name_trunk_now_imports(tmp_path: Path, own_main: str,
                                                                         reported: bool) -> None:
    old = {"python/src/main.cc": MAIN.format(name='"version"'), "python/triton/__init__.py": "",
           "python/triton/knobs.py": "X = 1\n"}
    new = {**old, "python/src/main.cc": MAIN.format(name='"getenv"'),
           "python/triton/knobs.py": "from triton._C.libtriton import getenv\n\nX = getenv('X')\n"}
    fork = {"third_party/acme/backend/compiler.py": "Y = 1\n", "third_party/acme/python/src/main.cc": own_main}
    repo = upgraded_world(tmp_path, old, fork, new, "[RUNTIME] Read knobs through getenv (#7841)")
    found = [(f.path, f.line, f.severity, f.details["names"], f.related_path)
             for f in drift_of(fork_world(repo), "v1", "v2", "main", target="sync/v2").findings
             if f.kind == "binding-missing-names"]
    expected = [("third_party/acme/python/src/main.cc", 1, "error", ["getenv"], "python/triton/knobs.py")]
    assert found == (expected if reported else [])
