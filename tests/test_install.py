"""The FlagTree build of triton against the pinned upstream wheel (CPU only: import, hooks, overlays).

The wheel is a build input that the README's install command and .ci/run download once into
.cache/triton/ (or name with FLAGTREE_TRITON_WHEEL); the tests themselves use no network.
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib.metadata import distribution
from collections.abc import Iterator
from pathlib import Path

import pytest

from sync.builder.package import assemble, extracted_upstream
from sync.errors import SyncError

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


def self_report(python: str, site: Path | None, *flags: str) -> dict | str:
    env = {"PATH": os.environ.get("PATH", ""), **({"PYTHONPATH": str(site)} if site else {})}
    done = subprocess.run([python, "-m", "triton.flagtree_spec", *(flags or ("--json",))], cwd=Path(python).parent,
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout) if not flags else done.stdout


def cache_key(site: Path) -> str:
    done = subprocess.run([sys.executable, "-c", "from triton.runtime.cache import triton_key; print(triton_key())"],
                          cwd=site, capture_output=True, text=True, env={"PYTHONPATH": str(site)})
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def probe(site: Path | None, python: str = sys.executable) -> dict:
    env = {"PATH": os.environ.get("PATH", ""), **({"PYTHONPATH": str(site)} if site else {})}
    done = subprocess.run([python, "-c", PROBE], cwd=Path(python).parent, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(autouse=True)
def no_large_leftovers(tmp_path: Path) -> Iterator[None]:
    """Each build here writes a ~640 MB triton tree; pytest would keep the last runs' trees in /tmp."""
    yield
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.fixture(scope="module")
def upstream() -> Iterator[Path]:
    with extracted_upstream(WHEEL) as package:
        yield package


# What pip's isolated build environment installs (python/pyproject.toml) and what those need.
BUILD_DISTRIBUTIONS = ("setuptools", "wheel", "packaging", "libcst", "pyyaml", "pip", "cmake", "ninja", "pybind11")
README_INSTALL = "FLAGTREE_BACKEND=demo pip install ./python"


def repack(name: str, wheelhouse: Path) -> Path:
    """A wheel of the installed distribution `name`, rebuilt from its files (the tests have no index)."""
    dist = distribution(name)
    tag = next(line.split(":", 1)[1].strip() for line in dist.read_text("WHEEL").splitlines()
               if line.startswith("Tag:"))
    wheel = wheelhouse / f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}-{tag}.whl"
    site = Path(dist.locate_file(""))
    generated = {entry.name for entry in dist.entry_points if entry.group == "console_scripts"}
    dist_info = next(f for f in dist.files if f.name == "METADATA").parent
    records = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in dist.files or []:
            if "__pycache__" in file.parts or file.name == "RECORD":
                continue
            name = str(file)
            if file.parts[0] == "..":  # a script in bin/: pip regenerates entry points, the rest is data
                if file.parent.name != "bin" or file.name in generated:
                    continue
                name = f"{dist_info.stem}.data/scripts/{file.name}"
            data = (site / file).read_bytes()
            member = zipfile.ZipInfo(name)
            member.external_attr = ((site / file).stat().st_mode & 0xFFFF) << 16  # pip keeps cmake's binary executable
            archive.writestr(member, data, zipfile.ZIP_DEFLATED)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            records.append(f"{name},sha256={digest},{len(data)}")
        records.append(f"{dist_info}/RECORD,,")
        archive.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    return wheel


def repository_copy(root: Path) -> Path:
    """What the README's install command reads: the build sources and the cached pinned wheel."""
    for part in ("python", "sync", "patches", "third_party", "lib"):
        shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    (root / ".cache" / "triton").mkdir(parents=True)
    (root / ".cache" / "triton" / WHEEL.name).symlink_to(WHEEL.resolve())
    return root


def tree_bytes(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file() and not path.is_symlink())


@pytest.mark.skipif(WHEEL is not None and not WHEEL.name.startswith(
    f"triton-3.6.0-cp{sys.version_info.major}{sys.version_info.minor}-"), reason="cached wheel is for another Python")
def test_readme_install_command_in_a_fresh_venv(tmp_path: Path) -> None:
    """The literal README command, with pip pointed at a local wheel directory instead of PyPI
    (PIP_NO_INDEX, PIP_FIND_LINKS): the build finds the pinned triton in <repo>/.cache/triton."""
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    for name in BUILD_DISTRIBUTIONS:
        repack(name, wheelhouse)
    repo = repository_copy(tmp_path / "repo")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {"PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '')}", "HOME": str(tmp_path / "home"),
           "XDG_CACHE_HOME": str(tmp_path / "xdg"), "TMPDIR": str(scratch), "PIP_CONFIG_FILE": os.devnull,
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    done = subprocess.run(["bash", "-c", README_INSTALL], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    result = probe(None, str(venv / "bin" / "python"))
    site = Path(result["file"]).parent.parent
    assert result["backend"] == "demo" and result["file"].startswith(str(venv))
    assert result["version"] == "3.6.0"
    assert result["disasm_overlay"] == "demo"  # the overlay shadows trunk's tools/disasm.py ...
    assert result["link"] == str(site / "triton" / "tools" / "link.py")  # ... and siblings stay trunk's
    assert result["squeeze"] and result["unsqueeze"]
    assert result["apply_with_path"] == [[1, 20]]
    assert result["backends"] == ["amd", "nvidia"]  # upstream's driver entry points survive the rebuild
    report = self_report(str(venv / "bin" / "python"), None)
    assert report["backend"] == "demo" and report["distribution"] == "3.6.0+flagtree.demo"
    tools = next(entry for entry in report["hijacked"] if entry["package"] == "triton.tools")
    assert {"module": "triton.tools.disasm", "shadows_trunk": True} in tools["overlays"]
    functions = {entry["function"]: entry["call_sites"] for entry in report["spec_functions"]}
    assert sorted(functions) == ["apply_with_path", "language_extend_globals"]
    assert [site.split(":")[0] for site in functions["apply_with_path"]] == ["_utils.py"]
    assert functions["language_extend_globals"][0].startswith("language/__init__.py:")
    assert report["cache_key_salt"].startswith("flagtree-demo-")
    if shutil.which("c++") is None:  # the build skips the native core, saying so
        assert report["native"] is None
    else:
        assert report["native"]["guards"] == [{"guard": "FLAGTREE_SPEC_cache_salt", "replaced": True}]
        assert report["cache_key_salt"].endswith("-demo-toolchain-1")  # the demo's C++ cache_salt made it
    # Build hygiene: the upstream wheel is extracted straight into the build, nothing is left in TMPDIR
    # (it was 639 MB a build) nor in the user's cache.
    assert tree_bytes(scratch) < 1 << 20, sorted(p.name for p in scratch.iterdir())
    assert not (tmp_path / "xdg" / "flagtree-build").exists()


def test_without_a_backend_the_build_is_trunk_plus_inert_hooks(tmp_path: Path, upstream: Path) -> None:
    site = tmp_path / "site"
    changed = assemble(upstream, site / "triton", None, REPO)
    assert sorted(changed) == ["_utils.py", "compiler/__init__.py", "language/__init__.py",
                               "runtime/__init__.py", "runtime/cache.py", "tools/__init__.py"]
    assert "spec_path(__path__)" in (site / "triton" / "tools" / "__init__.py").read_text()
    assert not (site / "triton" / "FLAGTREE_BACKEND").exists()
    result = probe(site)
    assert result["backend"] == "" and result["disasm_overlay"] is None
    assert not result["squeeze"] and result["apply_with_path"] is None
    text = self_report(sys.executable, site, "--text")
    assert "backend: none, trunk only" in text and "native core: not built" in text
    assert "hijacked trunk packages: none" in text and "spec functions: none" in text
    # Kernel cache: trunk's key (hooked files, libtriton, version) plus this build's salt, never stock's key.
    key = cache_key(site)
    assert "-flagtree-trunk-" in key and key != cache_key(upstream.parent)


def test_the_hook_set_applies_to_the_pinned_triton(upstream: Path) -> None:
    from sync.builder.hookset import check_hook_set, load_hook_set

    results = check_hook_set(upstream, load_hook_set(REPO / "patches" / "hooks.toml"))
    assert [reason for _, reason in results] == [None] * len(results)


@pytest.mark.parametrize("name", ["../../x", "/abs/backend", "demo-x", "9lives"])
def test_a_backend_name_that_is_not_an_identifier_is_refused_at_build(tmp_path: Path, name: str) -> None:
    with pytest.raises(SyncError, match="is not a backend name"):
        assemble(WHEEL, tmp_path / "site" / "triton", name, REPO)
    assert not (tmp_path / "site").exists()  # refused before anything was written
    done = subprocess.run([sys.executable, str(REPO / "python" / "setup.py"), "--version"], cwd=tmp_path,
                          env={**os.environ, "FLAGTREE_BACKEND": name}, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"flagtree-sync: error: FLAGTREE_BACKEND={name!r} is not a backend name "
        "(letters, digits and '_', not starting with a digit)"]


def test_extracted_upstream_is_removed_also_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(RuntimeError):
        with extracted_upstream(WHEEL) as package:
            assert (package / "__init__.py").is_file() and tree_bytes(scratch) > 100 << 20
            raise RuntimeError("the build failed")
    assert list(scratch.iterdir()) == []
