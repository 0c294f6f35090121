"""The native FlagTree core (lib/): built with CMake, Ninja and pybind11, specialized by a backend's C++."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sync.builder.package import build_native
from sync.errors import SyncError

REPO = Path(__file__).resolve().parents[1]
TOOLS = {name: shutil.which(name) for name in ("c++", "cmake", "ninja", "nm")}
pytestmark = pytest.mark.skipif(None in TOOLS.values(),
                                reason=f"no {', '.join(n for n, t in TOOLS.items() if t is None)}: cannot build C++")


PROBE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("libflagtree", sys.argv[1])
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
print(json.dumps({"backend": core.backend, "has_spec_header": core.has_spec_header, "guards": core.guards(),
                  "salt": core.cache_salt(sys.argv[2], "abc")}))
"""


def built(tmp_path: Path, backend: str | None, repo_root: Path = REPO) -> dict:
    """What the module built for backend says about itself (loaded in a fresh interpreter: one process
    cannot load two extension modules of the same name)."""
    package = tmp_path / "triton"
    package.mkdir()
    (package / "FLAGTREE_SPEC.json").write_text('{"native": null}')
    module = build_native(repo_root, package, backend)
    assert module is not None and module.parent == package / "_C"
    assert '"module": "_C/libflagtree' in (package / "FLAGTREE_SPEC.json").read_text()
    done = subprocess.run([sys.executable, "-c", PROBE, str(module), backend or ""], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_trunk_build_compiles_the_guarded_defaults(tmp_path: Path) -> None:
    core = built(tmp_path, None)
    assert core == {"backend": "", "has_spec_header": False, "guards": [["FLAGTREE_SPEC_cache_salt", False]],
                    "salt": "flagtree-trunk-abc"}


def test_demo_backend_header_and_sources_replace_the_guarded_function(tmp_path: Path) -> None:
    core = built(tmp_path, "demo")  # its build time against the budget: bench/native_build.py
    assert core == {"backend": "demo", "has_spec_header": True, "guards": [["FLAGTREE_SPEC_cache_salt", True]],
                    "salt": "flagtree-demo-abc-demo-toolchain-1"}


def test_a_guard_macro_without_its_replacement_fails_the_build_naming_both(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "lib", repo / "lib")
    spec = repo / "third_party" / "broken" / "backend" / "spec"
    shutil.copytree(REPO / "third_party" / "demo" / "backend" / "spec" / "include", spec / "include")
    (spec / "lib").mkdir()  # the header says cache_salt is replaced; no source defines it
    with pytest.raises(SyncError) as raised:
        built(tmp_path, "broken", repo)
    message = str(raised.value)
    assert "flagtree_spec.h defines FLAGTREE_SPEC_cache_salt" in message
    assert f"no source in {spec / 'lib'} defines flagtree::cache_salt" in message

