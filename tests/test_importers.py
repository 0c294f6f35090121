"""A trunk module only some builds can import (facts/importers): FlagTree's TLE package re-raises when libtriton
lacks its `tle` submodule, and the root CMake adds TLE's C++ only for ascend, whose overlay of triton/language/core.py
keeps the names upstream removed. The 3.2 -> 3.4 move reported three such uses as errors (3.2 -> 3.3 one): no build
meets those removals."""
from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from sync.facts.importers import importing_builds, required_submodules
from sync.git.trees import GitTree
from tests.drift_helpers import drift_of, fork_world, upgraded_world

ROOT_OLD = 'set(FLAGTREE_BACKEND "$ENV{FLAGTREE_BACKEND}")\nadd_subdirectory(lib)\n'
ROOT_FORK = ROOT_OLD + 'if(FLAGTREE_BACKEND STREQUAL "acme")\n  add_subdirectory(third_party/ext)\nendif()\n'
ROOT_EVERY_BUILD = ROOT_OLD + "add_subdirectory(third_party/ext)\n"
SETUP = ('backends = ["nvidia"]\n'
         'args = ["-DTRITON_BUILD_PYTHON_MODULE=ON", "-DTRITON_CODEGEN_BACKENDS=" + ";".join(backends)]\n')
CORE_OLD = "def _gone(x):\n    return x\n\n\ndef keep(x):\n    return x\n"
CORE_NEW = "def keep(x):\n    return x\n"
CORE_METHOD = "class Semantic:\n    def _gone(self, x):\n        return x\n"  # a method now: the call raises
INIT_REQUIRES = "try:\n    from triton._C.libtriton import ext\nexcept ImportError:\n    raise RuntimeError('no ext')\n"
INIT_FALLS_BACK = "try:\n    from triton._C.libtriton import ext\nexcept ImportError:\n    ext = None\n"
LANG = "import triton.language.core as tl\n\n\ndef twice(x):\n    return tl._gone(tl._gone(x))\n"
USE = "python/triton/experimental/ext/lang.py"


def _world(tmp_path: Path, root: str = ROOT_FORK, init: str = INIT_REQUIRES, acme_core: str = CORE_OLD,
           core_new: str = CORE_NEW) -> Path:
    old = {"CMakeLists.txt": ROOT_OLD, "lib/CMakeLists.txt": "add_library(core core.cc)\n",
           "lib/core.cc": "int core() { return 0; }\n", "python/setup.py": SETUP,
           "python/src/ir.cc": "void init_triton_ir(py::module &&m) {}\n",
           "python/triton/__init__.py": "", "python/triton/language/__init__.py": "",
           "python/triton/language/core.py": CORE_OLD}
    fork = {"CMakeLists.txt": root, "third_party/ext/CMakeLists.txt": "add_library(ext ext_ir.cc)\n",
            "third_party/ext/ext_ir.cc": "void init_triton_ext(py::module &&m) {}\n",
            "third_party/acme/backend/compiler.py": "X = 1\n", "third_party/beta/backend/compiler.py": "Y = 1\n",
            "third_party/acme/python/triton/language/core.py": acme_core,
            "python/triton/experimental/__init__.py": "", "python/triton/experimental/ext/__init__.py": init,
            USE: LANG}
    return upgraded_world(tmp_path, old, fork, {**old, "python/triton/language/core.py": core_new},
                          "[FRONTEND] Drop _gone (#700)")


def _reported(repo: Path) -> list[str]:
    findings = drift_of(fork_world(repo), "v1", "v2", "main", target="sync/v2", symbols=True).findings
    return sorted(f"{f.kind} {f.path}" for f in findings if f.severity == "error" and USE in str(f.details) + f.path)


def _trees(repo: Path) -> tuple[GitTree, GitTree]:
    store = pygit2.Repository(str(repo))
    tree = lambda ref, label: GitTree(store, store.revparse_single(ref).peel(pygit2.Commit).tree, label)
    return tree("main", "fork"), tree("v1", "old")


@pytest.mark.parametrize("core_new", [CORE_NEW, CORE_METHOD], ids=["removed", "now-a-method"])
def test_a_module_only_one_build_imports_is_judged_by_that_builds_copy(tmp_path: Path, core_new: str) -> None:
    """Upstream drops the function (symbol drift's question) or makes it a method (the alias call's)."""
    repo = _world(tmp_path, core_new=core_new)
    fork, old = _trees(repo)
    assert required_submodules(fork, USE) == {"ext"}
    assert importing_builds(fork, old, USE) == {"acme"}  # not '' or beta: their CMake never adds third_party/ext
    assert _reported(repo) == []  # acme's own core.py keeps _gone


@pytest.mark.parametrize("change", [{"root": ROOT_EVERY_BUILD}, {"init": INIT_FALLS_BACK}, {"acme_core": CORE_NEW},
                                    {"root": ROOT_EVERY_BUILD, "core_new": CORE_METHOD},
                                    {"acme_core": CORE_NEW, "core_new": CORE_METHOD}],
                         ids=["every-build-compiles-it", "import-has-a-fallback", "copy-lacks-the-name",
                              "every-build-method", "copy-lacks-the-method"])
def test_the_removal_stands_where_a_build_meets_it(tmp_path: Path, change: dict[str, str]) -> None:
    """Every build adds the extension, the package loads without it, or the one importing build's copy lacks the
    name: some build runs the use against a module without it."""
    assert _reported(_world(tmp_path, **change)), "the use of _gone is an error"


HELPER = ('import os\n\nflagtree_backend = os.environ.get("FLAGTREE_BACKEND", "")\n\n\n'
          'def skip_package_dir(package):\n    return "backends" in package\n\n\n'
          'def get_package_dir(packages):\n    root = f"../third_party/{flagtree_backend}/python/"\n'
          '    return {package: f"{root}{package}" for package in packages if not skip_package_dir(package)}\n')
EXTRA = "python/triton/language/extra/acme/libdevice.py"


def _listed_setup(condition: str) -> str:
    return ('from setup_tools import setup_helper as helper\nfrom setuptools import setup\n\n'
            'args = ["-DTRITON_CODEGEN_BACKENDS=" + ";".join(["nvidia"])]\n\n\n'
            'def get_packages():\n    packages = ["triton", "triton/language"]\n'
            f'    {condition}\n        packages.append("triton/language/extra/acme")\n    return packages\n\n\n'
            'setup(name="triton", packages=get_packages(), package_dir=helper.get_package_dir(get_packages()))\n')


def _extra_world(tmp_path: Path, condition: str, extra: dict[str, str] | None = None) -> Path:
    old = {"python/setup.py": SETUP, "python/triton/__init__.py": "", "python/triton/language/__init__.py": "",
           "python/triton/language/core.py": CORE_OLD}
    fork = {"python/setup.py": _listed_setup(condition), "python/setup_tools/setup_helper.py": HELPER,
            "third_party/acme/backend/compiler.py": "X = 1\n", "third_party/beta/backend/compiler.py": "Y = 1\n",
            "third_party/acme/python/triton/__init__.py": "", "third_party/acme/python/triton/language/__init__.py": "",
            "third_party/acme/python/triton/language/extra/acme/libdevice.py": "def f(x):\n    return x\n",
            "python/triton/language/extra/__init__.py": "", "python/triton/language/extra/acme/__init__.py": "",
            EXTRA: "from triton.language import core\n\n\ndef f(x):\n    return core._gone(x)\n", **(extra or {})}
    return upgraded_world(tmp_path, old, fork, {**old, "python/triton/language/core.py": CORE_NEW},
                          "[FRONTEND] Drop _gone (#700)")


def test_a_module_no_build_imports_carries_one_info_finding(tmp_path: Path) -> None:
    """The SharedMemory line onto 3.5.1: setup.py lists triton/language/extra/xpu only for xpu, and xpu's setup
    helper installs every package from its own tree; trunk's libdevice.py there is in no wheel. Its two errors
    were false; they become one module-not-imported (info) that names them."""
    by_path = {}
    for name, condition in {"only-acme": 'if helper.flagtree_backend == "acme":', "every-build": "if True:"}.items():
        (tmp_path / name).mkdir()
        repo = _extra_world(tmp_path / name, condition)
        fork, old = _trees(repo)
        findings = drift_of(fork_world(repo), "v1", "v2", "main", target="sync/v2", symbols=True).findings
        by_path[name] = (importing_builds(fork, old, EXTRA),
                         sorted((f.kind, f.severity) for f in findings if f.path == EXTRA))
    only_acme, every_build = by_path["only-acme"], by_path["every-build"]
    assert only_acme == (frozenset(), [("module-not-imported", "info")])  # acme ships its own copy of the package
    assert every_build[0] == {"", "beta"} and ("symbol-removed", "error") in every_build[1]


def test_a_finding_with_a_site_in_an_imported_module_stays(tmp_path: Path) -> None:
    """One removal, one finding for all its sites: a site in a module every build imports keeps it an error."""
    user = "python/triton/language/user.py"
    repo = _extra_world(tmp_path, 'if helper.flagtree_backend == "acme":',
                        {user: "from triton.language import core\n\n\ndef g(x):\n    return core._gone(x)\n"})
    findings = drift_of(fork_world(repo), "v1", "v2", "main", target="sync/v2", symbols=True).findings
    removed = [f for f in findings if f.kind == "symbol-removed"]
    assert removed and all(f.severity == "error" for f in removed)
    assert any(user in f.path or any(user in str(site) for site in f.details.get("sites", [])) for f in removed)
    assert not any(f.kind == "module-not-imported" and f.path == user for f in findings)
