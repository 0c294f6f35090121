"""The spec hooks end to end on a small triton-like package written for these tests."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

RUNTIME = Path(__file__).resolve().parents[1] / "python" / "triton"

TRUNK = {
    "__init__.py": "",
    "tools/__init__.py": "from triton.flagtree_spec import spec_path\n\nspec_path(__path__)\n",
    "tools/compile.py": "WHO = 'trunk'\n",
    "tools/link.py": "WHO = 'trunk'\n",
    "language/__init__.py": dedent("""
        from triton.flagtree_spec import spec
        from .core import arange

        spec("language_extend_globals", globals())
        """),
    "language/core.py": "def arange(n):\n    return list(range(n))\n",
    "_utils.py": dedent("""
        from triton.flagtree_spec import spec_func


        def _trunk_apply_with_path(value, path):
            return ("trunk", value, path)


        apply_with_path = spec_func("apply_with_path", _trunk_apply_with_path)


        @spec_func
        def describe():
            return "trunk describe"
        """),
}

BACKEND = {
    "__init__.py": "from ._utils import apply_with_path\nfrom .language import language_extend_globals\n",
    "tools/compile.py": "WHO = 'backend'\n",
    "language/__init__.py": dedent("""
        def language_extend_globals(globals_dict):
            from triton.language.core import arange

            globals_dict["squeeze"] = lambda x: [v for v in x if v is not None]
            globals_dict["arange_alias"] = arange
        """),
    "_utils.py": "def apply_with_path(value, path):\n    return ('backend', value, path)\n",
}

PROBE = dedent("""
    import json, warnings
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        import triton.tools.compile as compile_mod, triton.tools.link as link_mod
        import triton.language as tl, triton._utils as utils
        from triton._flagtree_backend import FLAGTREE_BACKEND
    print(json.dumps({
        "backend": FLAGTREE_BACKEND,
        "compile": compile_mod.WHO, "link": link_mod.WHO,
        "squeeze": hasattr(tl, "squeeze"),
        "apply": list(utils.apply_with_path(1, [0])),
        "describe": utils.describe(),
        "warnings": [str(w.message) for w in caught],
    }))
""")


def make_package(root: Path, backend: str | None, backend_files: dict[str, str] | None = None,
                 home: str = "_flagtree_specs") -> Path:
    package = root / "triton"
    for rel, text in TRUNK.items():
        (package / rel).parent.mkdir(parents=True, exist_ok=True)
        (package / rel).write_text(text)
    shutil.copy(RUNTIME / "flagtree_spec.py", package)
    shutil.copy(RUNTIME / "_flagtree_backend.py", package)
    if backend is not None:
        (package / "FLAGTREE_BACKEND").write_text(backend + "\n")
        for rel, text in (BACKEND if backend_files is None else backend_files).items():
            target = package / home / backend / "spec" / "triton" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
    return root


def probe(root: Path, code: str = PROBE) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=root, env={"PYTHONPATH": str(root)},
                          capture_output=True, text=True)


def run_probe(root: Path) -> dict:
    done = probe(root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_overlay_shadows_trunk_and_siblings_fall_through(tmp_path: Path) -> None:
    result = run_probe(make_package(tmp_path, "demo"))
    assert result["backend"] == "demo"
    assert result["compile"] == "backend"
    assert result["link"] == "trunk"


def test_spec_extends_language_globals(tmp_path: Path) -> None:
    assert run_probe(make_package(tmp_path, "demo"))["squeeze"] is True


def test_spec_func_supplies_backend_function_or_trunk_default(tmp_path: Path) -> None:
    result = run_probe(make_package(tmp_path, "demo"))
    assert result["apply"] == ["backend", 1, [0]]
    assert result["describe"] == "trunk describe"  # the backend does not define describe()


def test_no_backend_installed_runs_plain_trunk(tmp_path: Path) -> None:
    result = run_probe(make_package(tmp_path, None))
    assert result == {"backend": "", "compile": "trunk", "link": "trunk", "squeeze": False,
                      "apply": ["trunk", 1, [0]], "describe": "trunk describe", "warnings": []}


def test_recorded_backend_without_spec_tree_falls_back_silently(tmp_path: Path) -> None:
    root = make_package(tmp_path, "demo", backend_files={})
    result = run_probe(root)
    assert (result["compile"], result["squeeze"], result["apply"][0]) == ("trunk", False, "trunk")


def test_spec_tree_under_backends_home_is_found(tmp_path: Path) -> None:
    result = run_probe(make_package(tmp_path, "demo", home="backends"))
    assert (result["compile"], result["squeeze"]) == ("backend", True)


@pytest.mark.parametrize("broken", [
    "from ._utils import apply_with_path\nthis is not python\n",
    "from ._utils import apply_with_path\nfrom .no_such_module import thing\n",
])
def test_broken_backend_raises_naming_backend_and_file(tmp_path: Path, broken: str) -> None:
    root = make_package(tmp_path, "demo", {**BACKEND, "__init__.py": broken})
    done = probe(root, "import triton.language")
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("triton.flagtree_spec.FlagTreeSpecError: FlagTree backend 'demo'")
    assert "_flagtree_specs/demo/spec/triton" in last


def test_non_callable_export_is_an_error(tmp_path: Path) -> None:
    root = make_package(tmp_path, "demo", {**BACKEND, "__init__.py": BACKEND["__init__.py"] + "describe = 3\n"})
    done = probe(root, "import triton._utils")
    assert done.returncode != 0 and "not a function" in done.stderr


def test_parent_and_child_hijack_is_detected(tmp_path: Path) -> None:
    root = make_package(tmp_path, "demo", {**BACKEND, "tools/sub/mod.py": "WHO = 'backend'\n"})
    sub = root / "triton" / "tools" / "sub"
    sub.mkdir()
    (sub / "__init__.py").write_text("from triton.flagtree_spec import spec_path\n\nspec_path(__path__)\n")
    done = probe(root, "import warnings; warnings.simplefilter('error'); import triton.tools.sub")
    assert done.returncode != 0
    assert "hijacks both tools and tools/sub" in done.stderr


@pytest.mark.parametrize("recorded", ["../../x", "/tmp/evil", "demo/../../x", "a b"])
def test_recorded_backend_that_is_not_a_name_is_refused(tmp_path: Path, recorded: str) -> None:
    outside = tmp_path / "x" / "spec" / "triton" / "tools"  # where ../../x would lead from _flagtree_specs
    outside.mkdir(parents=True)
    (outside / "compile.py").write_text("WHO = 'outside'\n")
    root = make_package(tmp_path / "site", "demo")
    (root / "triton" / "FLAGTREE_BACKEND").write_text(recorded + "\n")
    done = probe(root, "import triton.tools.compile as c; print(c.WHO)")
    assert done.returncode != 0 and "outside" not in done.stdout
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("triton.flagtree_spec.FlagTreeSpecError: FlagTree backend record")
    assert repr(recorded) in last


# A stand-in for upstream's runtime/cache.py: the spec_key hook is applied to it by sync.builder.hookset.
STOCK_CACHE = '"""Kernel cache."""\nimport functools\n\n\n@functools.lru_cache()\ndef triton_key():\n    return "3.6.0-trunkhash"\n'
KEY_PROBE = "from triton.runtime.cache import triton_key; print(triton_key())"


def keyed_package(root: Path, backend: str | None, hooked: bool = True, spec_files: dict[str, str] | None = None) -> Path:
    from sync.builder.hookset import Hook, apply_hook

    make_package(root, backend)
    cache = root / "triton" / "runtime" / "cache.py"
    cache.parent.mkdir(parents=True, exist_ok=True)
    (cache.parent / "__init__.py").write_text("")
    cache.write_text(apply_hook(STOCK_CACHE, Hook("spec_key", "runtime/cache.py", name="triton_key"))
                     if hooked else STOCK_CACHE)
    for rel, text in (spec_files or {}).items():
        target = root / "triton" / "_flagtree_specs" / (backend or "") / "spec" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def key_of(root: Path) -> str:
    done = probe(root, KEY_PROBE)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_kernel_cache_key_carries_backend_and_spec_tree(tmp_path: Path) -> None:
    stock = key_of(keyed_package(tmp_path / "stock", None, hooked=False))
    trunk = key_of(keyed_package(tmp_path / "trunk", None))
    demo = key_of(keyed_package(tmp_path / "demo", "demo"))
    same = key_of(keyed_package(tmp_path / "demo2", "demo"))  # an identical build elsewhere
    other = key_of(keyed_package(tmp_path / "other", "other"))  # same spec files, other name
    edited_python = key_of(keyed_package(tmp_path / "py", "demo", spec_files={"triton/_utils.py": "# changed\n"}))
    edited_cpp = key_of(keyed_package(tmp_path / "cpp", "demo", spec_files={"lib/cache_salt.cpp": "// v2\n"}))
    assert stock == "3.6.0-trunkhash"
    assert trunk.startswith("3.6.0-trunkhash-flagtree-trunk-") and demo.startswith("3.6.0-trunkhash-flagtree-demo-")
    assert demo == same == key_of(tmp_path / "demo")  # stable across processes and install locations
    assert len({stock, trunk, demo, other, edited_python, edited_cpp}) == 6


def test_spec_key_hook_is_structural_and_needs_the_function() -> None:
    from sync.builder.hookset import Hook, HookError, apply_hook

    hook = Hook("spec_key", "runtime/cache.py", name="triton_key")
    once = apply_hook(STOCK_CACHE, hook)
    assert once.splitlines()[1] == "from triton.flagtree_spec import spec_key"
    assert once.rstrip().endswith("triton_key = spec_key(triton_key)")
    assert apply_hook(once, hook) == once  # idempotent
    with pytest.raises(HookError, match="spec_key needs a top-level def triton_key"):
        apply_hook('"""Kernel cache."""\nimport functools\n', hook)
