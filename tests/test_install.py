"""The FlagTree build of triton against the pinned upstream wheel (CPU only: import, hooks, overlays).

The wheel is a build input that the README's install command and .ci/run download once into
.cache/triton/ (or name with FLAGTREE_TRITON_WHEEL); the tests themselves use no network.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sync.build import assemble, upstream_package

REPO = Path(__file__).resolve().parents[1]
PROBE = """
import json, importlib
from importlib.metadata import entry_points
import triton, triton.language as tl, triton.tools.disasm as disasm, triton.tools.link as link, triton._utils as u
from triton._flagtree_backend import FLAGTREE_BACKEND
print(json.dumps({
    "version": getattr(triton, "__version__", ""), "backend": FLAGTREE_BACKEND, "file": triton.__file__,
    "disasm_overlay": getattr(disasm, "FLAGTREE_OVERLAY", None), "link": link.__file__,
    "squeeze": hasattr(tl, "squeeze"), "unsqueeze": hasattr(tl, "unsqueeze"),
    "apply_with_path": u.apply_with_path([[1, 2]], (0, 1), lambda v: v * 10) if u.apply_with_path else None,
    "backends": sorted(e.name for e in entry_points(group="triton.backends")),
}))
"""


def pinned_wheel() -> Path | None:
    named = os.environ.get("FLAGTREE_TRITON_WHEEL")
    if named:
        return Path(named)
    found = sorted((REPO / ".cache" / "triton").glob("triton-3.6.0-*.whl"))
    return found[0] if found else None


WHEEL = pinned_wheel()
pytestmark = pytest.mark.skipif(WHEEL is None, reason="no pinned triton wheel: run the README install command")


def probe(site: Path | None, python: str = sys.executable) -> dict:
    env = {"PATH": os.environ.get("PATH", ""), **({"PYTHONPATH": str(site)} if site else {})}
    done = subprocess.run([python, "-c", PROBE], cwd=Path(python).parent, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def upstream() -> Path:
    return upstream_package(WHEEL)


def test_pip_builds_and_installs_the_demo_backend(tmp_path: Path) -> None:
    env = {**os.environ, "FLAGTREE_BACKEND": "demo", "FLAGTREE_TRITON_WHEEL": str(WHEEL),
           "FLAGTREE_BUILD_DIR": str(tmp_path / "build")}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
                    str(REPO / "python"), "-w", str(tmp_path / "dist")], check=True, env=env)
    wheels = list((tmp_path / "dist").glob("triton-3.6.0+flagtree.demo-*.whl"))
    assert len(wheels) == 1
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", str(wheels[0])],
                   check=True)
    result = probe(None, python)
    site = Path(result["file"]).parent.parent
    assert result["backend"] == "demo" and result["file"].startswith(str(venv))
    assert result["disasm_overlay"] == "demo"  # the overlay shadows trunk's tools/disasm.py ...
    assert result["link"] == str(site / "triton" / "tools" / "link.py")  # ... and siblings stay trunk's
    assert result["squeeze"] and result["unsqueeze"]
    assert result["apply_with_path"] == [[1, 20]]
    assert result["backends"] == ["amd", "nvidia"]  # upstream's driver entry points survive the rebuild


def test_without_a_backend_the_build_is_trunk_plus_inert_hooks(tmp_path: Path, upstream: Path) -> None:
    site = tmp_path / "site"
    changed = assemble(upstream, site / "triton", None, REPO)
    assert sorted(changed) == ["_utils.py", "compiler/__init__.py", "language/__init__.py",
                               "runtime/__init__.py", "tools/__init__.py"]
    assert "spec_path(__path__)" in (site / "triton" / "tools" / "__init__.py").read_text()
    assert not (site / "triton" / "FLAGTREE_BACKEND").exists()
    result = probe(site)
    assert result["backend"] == "" and result["disasm_overlay"] is None
    assert not result["squeeze"] and result["apply_with_path"] is None


def test_the_hook_set_applies_to_the_pinned_triton(upstream: Path) -> None:
    from sync.hookset import check_hook_set, load_hook_set

    results = check_hook_set(upstream, load_hook_set(REPO / "patches" / "hooks.toml"))
    assert [reason for _, reason in results] == [None] * len(results)
