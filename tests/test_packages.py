"""Issue 45, class 1 (the build's own dependencies), on the 3.1 line -> 3.3.0 move: what a backend's build
installs after upstream changed setup.py's package list. FlagTree's setup helper beside setup.py sends every
listed package to the building backend's own python/ tree.
- upstream lists a new package (`triton/tools/extra`, #5411) the backend's tree has no directory for:
  package-dir-missing (setuptools stops);
- upstream's list drops a package (`triton/language/extra/cuda`, #4503) that the backend's installed Python
  still imports: import-not-installed (the wheel lacks it)."""
from __future__ import annotations

import subprocess
from pathlib import Path

from sync.drift.run import analyse_drift
from sync.git import open_repo
from sync.model import Finding
from sync.jobs.revs import resolve_range
from tests.test_mechanisms import _git
from tests.test_symbols import commit

LISTED = ["triton", "triton/language", "triton/language/extra", "triton/language/extra/cuda", "triton/tools"]
NEW_LISTED = [p for p in LISTED if p != "triton/language/extra/cuda"] + ["triton/tools/extra"]
HELPER = '''flagtree_backend = "b"


def skip_package_dir(package):
    return "backends" in package or "profiler" in package


def get_package_dir(packages):
    root = f"../third_party/{flagtree_backend}/python/"
    return {package: f"{root}{package}" for package in packages if not skip_package_dir(package)}
'''
TRUNK = {"python/triton/__init__.py": "", "python/triton/language/__init__.py": "from . import extra\n",
         "python/triton/language/extra/__init__.py": "", "python/triton/tools/__init__.py": ""}
BACKEND = {"third_party/b/python/triton/__init__.py": "import triton.language\n",
           "third_party/b/python/triton/language/__init__.py": "from . import extra\nfrom .extra import cuda as c\n",
           "third_party/b/python/triton/language/extra/__init__.py": "from . import cuda\n",
           "third_party/b/python/triton/language/extra/cuda/__init__.py": "",
           "third_party/b/python/triton/tools/__init__.py": "try:\n    from ..language.extra import cuda\nexcept ImportError:\n    cuda = None\nfrom triton import language\n"}


def _setup(packages: list[str], mapped: bool) -> str:
    head = "import setup_helper as helper\n" if mapped else ""
    extra = ", package_dir=helper.get_package_dir(get_packages())" if mapped else ""
    return (f"{head}from setuptools import setup\n\n\ndef get_packages():\n    packages = {packages!r}\n"
            f"    packages += [f'triton/backends/{{name}}' for name in ('x',)]\n    return packages\n\n\n"
            f"setup(name='triton', packages=get_packages(){extra})\n")


FOUND = ("from setuptools import find_packages, setup\n\n\ndef get_packages():\n"
         "    yield from find_packages(where='python')\n    yield 'triton.profiler'\n\n\n"
         "setup(name='triton', packages=list(get_packages()))\n")


def _findings(tmp_path: Path, backend: dict[str, str] | None = None, fork_listed: list[str] = LISTED,
              new_setup: str = _setup(NEW_LISTED, False)) -> list[Finding]:
    subprocess.run(["git", "init", "-q", "-b", "up", str(tmp_path)], check=True)
    commit(tmp_path, {**TRUNK, "python/setup.py": _setup(LISTED, False)}, "old")
    _git(tmp_path, "tag", "old")
    commit(tmp_path, {"python/setup.py": new_setup, "python/triton/tools/extra/__init__.py": ""}, "new")
    _git(tmp_path, "tag", "new")
    _git(tmp_path, "checkout", "-q", "-b", "flagtree", "old")
    commit(tmp_path, {"python/setup.py": _setup(fork_listed, True), "python/setup_helper.py": HELPER,
                      **(BACKEND if backend is None else backend)}, "FlagTree")
    repo = open_repo(str(tmp_path))
    return [f for f in analyse_drift(repo, resolve_range(repo, "old", "new", "flagtree"), None).findings
            if f.kind in ("package-dir-missing", "import-not-installed")]


def test_a_package_upstream_now_lists_needs_a_directory_in_the_backends_tree(tmp_path: Path) -> None:
    missing = [f for f in _findings(tmp_path / "lacks") if f.kind == "package-dir-missing"]
    assert [(f.path, f.severity, f.details["packages"], f.details["sites"]) for f in missing] == [
        ("third_party/b/python/triton", "error", ["triton.tools.extra"], ["python/setup_helper.py:9"])]
    assert "python/setup.py get_packages" in missing[0].message
    has = {**BACKEND, "third_party/b/python/triton/tools/extra/__init__.py": ""}  # a package that exists
    assert not [f for f in _findings(tmp_path / "has", has) if f.kind == "package-dir-missing"]


def test_an_import_of_a_package_upstream_no_longer_lists_is_an_error(tmp_path: Path) -> None:
    lost = [f for f in _findings(tmp_path / "imports") if f.kind == "import-not-installed"]
    # relative imports, `from . import cuda` and `from .extra import cuda`; the try-guarded one and the imports of
    # installed packages (triton.language, .extra) are none
    assert [(f.path, f.line, f.details["modules"], f.details["sites"]) for f in lost] == [
        ("third_party/b/python/triton/language/__init__.py", 2, ["triton.language.extra.cuda"],
         ["third_party/b/python/triton/language/__init__.py:2",
          "third_party/b/python/triton/language/extra/__init__.py:1"])]
    quiet = {**BACKEND, "third_party/b/python/triton/language/__init__.py": "from . import extra\n",
             "third_party/b/python/triton/language/extra/__init__.py": "import triton.tools\n"}
    assert not [f for f in _findings(tmp_path / "installed", quiet) if f.kind == "import-not-installed"]


def test_a_package_only_flagtree_lists_is_not_upstreams_drop(tmp_path: Path) -> None:
    """FlagTree's own entry (the 3.1 line appends extra/xpu for xpu) goes on with the merge: not dropped."""
    own = {**BACKEND, "third_party/b/python/triton/language/extra/__init__.py": "from . import cuda, mine\n",
           "third_party/b/python/triton/language/extra/mine/__init__.py": ""}
    found = _findings(tmp_path, own, LISTED + ["triton/language/extra/mine"])
    assert [f.details["modules"] for f in found if f.kind == "import-not-installed"] == [["triton.language.extra.cuda"]]


def test_a_new_setup_that_finds_its_packages_drops_only_what_trunk_no_longer_has(tmp_path: Path) -> None:
    """Upstream's 3.4 get_packages yields find_packages' packages (setup(packages=list(get_packages()))): the
    packages python/triton still holds stay installed (triton itself, triton.language), the one it lost
    (extra/cuda) does not."""
    found = _findings(tmp_path, new_setup=FOUND)
    assert [(f.kind, f.details.get("modules") or f.details.get("packages")) for f in found] == [
        ("import-not-installed", ["triton.language.extra.cuda"])]  # tools/extra is found at the new tag: no listing


def test_a_backend_the_helper_leaves_to_trunks_packages_needs_no_directory(tmp_path: Path) -> None:
    """3.2's helper maps packages only `if flagtree_backend not in configs.plugin_backends` (ascend, aipu,
    tsingmicro keep trunk's packages): a plugin backend's tree needs no directory for a new package."""
    def helper(plugins: str) -> str:
        body = HELPER.split("def get_package_dir(packages):\n")[1]
        backend = 'import os\nflagtree_backend = os.environ.get("FLAGTREE_BACKEND", "b")\n'
        return HELPER.replace('flagtree_backend = "b"\n', f'{backend}PLUGINS = {plugins}\n').replace(
            body, "    if flagtree_backend not in PLUGINS:\n" + body.replace("    ", "        ") + "    return {}\n")

    def missing(name: str, plugins: str) -> list[str]:
        repo = tmp_path / name
        subprocess.run(["git", "init", "-q", "-b", "up", str(repo)], check=True)
        commit(repo, {**TRUNK, "python/setup.py": _setup(LISTED, False)}, "old")
        _git(repo, "tag", "old")
        commit(repo, {"python/setup.py": _setup(NEW_LISTED, False), "python/triton/tools/extra/__init__.py": ""}, "new")
        _git(repo, "tag", "new")
        _git(repo, "checkout", "-q", "-b", "flagtree", "old")
        commit(repo, {"python/setup.py": _setup(LISTED, True), "python/setup_helper.py": helper(plugins), **BACKEND},
               "FlagTree")
        opened = open_repo(str(repo))
        return [f.path for f in analyse_drift(opened, resolve_range(opened, "old", "new", "flagtree"), None).findings
                if f.kind == "package-dir-missing"]
    assert missing("plugin", '("a", "b")') == []
    assert missing("not-a-plugin", '("a",)') == ["third_party/b/python/triton"]
    assert missing("unknown", "load_plugins()") == ["third_party/b/python/triton"]  # decides nothing
