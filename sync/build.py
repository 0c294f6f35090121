"""Assemble a FlagTree triton package: pinned upstream triton + hook set + runtime + one backend.

Used by python/setup.py (so `FLAGTREE_BACKEND=<b> pip install ./python` works) and by tests.
Imports only the standard library and libcst (through sync.hookset).
"""
from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from .errors import SyncError
from .hookset import apply_hook_set, load_hook_set

RUNTIME_FILES = ("flagtree_spec.py", "_flagtree_backend.py")
SPEC_HOME = "_flagtree_specs"  # one of flagtree_spec.SPEC_HOMES, outside Triton's backend discovery
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "flagtree-build"


def upstream_source(version: str) -> Path:
    """Where the pinned upstream triton comes from, the first that is given.

    FLAGTREE_TRITON_SRC: an installed or extracted triton package directory; FLAGTREE_TRITON_WHEEL:
    a triton wheel; otherwise the wheel is downloaded once into the user's cache.
    """
    source = os.environ.get("FLAGTREE_TRITON_SRC")
    if source:
        package = Path(source)
        package = package / "triton" if (package / "triton" / "__init__.py").is_file() else package
        if not (package / "__init__.py").is_file():
            raise SyncError(f"FLAGTREE_TRITON_SRC={source} holds no triton package")
        return package
    wheel = os.environ.get("FLAGTREE_TRITON_WHEEL")
    return Path(wheel) if wheel else _download(version)


def upstream_package(source: Path) -> Path:
    """A directory holding the upstream triton package (a wheel is extracted first)."""
    return _extract(source) if source.suffix == ".whl" else source


def upstream_entry_points(source: Path) -> dict[str, list[str]]:
    """Upstream's entry points (its triton.backends group finds the GPU drivers): our distribution
    replaces upstream's under the same name, so it must declare them too."""
    text = ""
    if source.suffix == ".whl":
        with zipfile.ZipFile(source) as archive:
            names = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
            text = archive.read(names[0]).decode() if names else ""
    else:
        found = sorted(source.parent.glob("triton-*.dist-info/entry_points.txt"))
        text = found[0].read_text(encoding="utf-8") if found else ""
    parser = configparser.ConfigParser(delimiters=("=",))
    parser.optionxform = str  # entry point names are case-sensitive
    parser.read_string(text)
    return {group: [f"{name} = {value}" for name, value in parser.items(group)] for group in parser.sections()}


def _download(version: str) -> Path:
    target = CACHE / version
    found = sorted(target.glob(f"triton-{version}-*.whl"))
    if found:
        return found[0]
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                    "-d", str(target), f"triton=={version}"], check=True)
    found = sorted(target.glob(f"triton-{version}-*.whl"))
    if not found:
        raise SyncError(f"pip download gave no triton {version} wheel for this platform")
    return found[0]


def _extract(wheel: Path) -> Path:
    if not wheel.is_file():
        raise SyncError(f"triton wheel {wheel} does not exist")
    out = Path(tempfile.mkdtemp(prefix="flagtree-upstream-"))
    with zipfile.ZipFile(wheel) as archive:
        members = [info for info in archive.infolist() if info.filename.startswith("triton/")]
        archive.extractall(out, members)
        for info in members:  # zipfile drops the executable bits of ptxas & co.
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(out / info.filename, mode)
    return out / "triton"


def assemble(upstream: Path, target: Path, backend: str | None, repo_root: Path) -> list[str]:
    """Copy upstream into target, apply the hooks, add the runtime and the backend; returns the hooked files."""
    hook_set = load_hook_set(repo_root / "patches" / "hooks.toml")
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(upstream, target, symlinks=True)
    changed = apply_hook_set(target, hook_set)
    for name in RUNTIME_FILES:
        shutil.copy2(repo_root / "python" / "triton" / name, target / name)
    record = target / "FLAGTREE_BACKEND"
    if backend:
        spec = repo_root / "third_party" / backend / "backend" / "spec"
        if not spec.is_dir():
            raise SyncError(f"FLAGTREE_BACKEND={backend}: {spec} does not exist")
        shutil.copytree(spec, target / SPEC_HOME / backend / "spec")
        record.write_text(backend + "\n", encoding="utf-8")
    elif record.exists():
        record.unlink()
    return changed
