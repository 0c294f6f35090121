"""Assemble a FlagTree triton package: pinned upstream triton + hook set + runtime + one backend.

Used by python/setup.py (so `FLAGTREE_BACKEND=<b> pip install ./python` works) and by tests.
Imports only the standard library and libcst (through sync.builder.hookset).
"""
from __future__ import annotations

import ast
import configparser
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from sync.errors import SyncError
from sync.builder.hookset import apply_hook_set, load_hook_set

RUNTIME_FILES = ("flagtree_spec.py", "_flagtree_backend.py")
MANIFEST = "FLAGTREE_SPEC.json"  # what the build did, for `python -m triton.flagtree_spec`
HOOK_FUNCTIONS = ("spec_path", "spec", "spec_func", "spec_key")
SPEC_HOME = "_flagtree_specs"  # one of flagtree_spec.SPEC_HOMES, outside Triton's backend discovery
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "flagtree-build"
REPO_WHEELS = Path(".cache") / "triton"  # where the README's first command downloads the pinned wheel
# Every FlagTree backend directory (third_party/<b>) is a plain identifier; anything else could name
# a path outside the build (`../../x`, `/abs`).
BACKEND_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def backend_name(raw: str | None) -> str | None:
    """FLAGTREE_BACKEND as given, checked: None for no backend, SyncError for anything not an identifier."""
    name = (raw or "").strip()
    if not name:
        return None
    if not BACKEND_NAME.match(name):
        raise SyncError(f"FLAGTREE_BACKEND={name!r} is not a backend name "
                        "(letters, digits and '_', not starting with a digit)")
    return name


def upstream_source(version: str, repo_root: Path | None = None) -> Path:
    """Where the pinned upstream triton comes from, the first that is given.

    FLAGTREE_TRITON_SRC: an installed or extracted triton package directory; FLAGTREE_TRITON_WHEEL:
    a triton wheel; a wheel for this interpreter in <repo>/.cache/triton/ (the README's first
    command puts it there); otherwise the wheel is downloaded once into the user's cache.
    """
    source = os.environ.get("FLAGTREE_TRITON_SRC")
    if source:
        package = Path(source)
        package = package / "triton" if (package / "triton" / "__init__.py").is_file() else package
        if not (package / "__init__.py").is_file():
            raise SyncError(f"FLAGTREE_TRITON_SRC={source} holds no triton package")
        return package
    wheel = os.environ.get("FLAGTREE_TRITON_WHEEL")
    if wheel:
        return Path(wheel)
    for directory in ([repo_root / REPO_WHEELS] if repo_root else []) + [CACHE / version]:
        found = _compatible_wheels(directory, version)
        if found:
            return found[0]
    return _download(version)


def _compatible_wheels(directory: Path, version: str) -> list[Path]:
    """Wheels of triton `version` in directory that this interpreter can use (CPython tag and machine)."""
    python_tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    machine = sysconfig.get_platform().rpartition("-")[2]
    found = []
    for wheel in sorted(directory.glob(f"triton-{version}-*.whl")):
        parts = wheel.stem.split("-")  # name-version-python-abi-platform
        if len(parts) == 5 and python_tag in parts[2].split(".") and parts[4].endswith(machine):
            found.append(wheel)
    return found


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
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # entry point names are case-sensitive
    parser.read_string(text)
    return {group: [f"{name} = {value}" for name, value in parser.items(group)] for group in parser.sections()}


def _download(version: str) -> Path:
    # pip is a build requirement (python/pyproject.toml), so it is there in pip's isolated build env too.
    target = CACHE / version
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
                    "-d", str(target), f"triton=={version}"], check=True)
    found = _compatible_wheels(target, version)
    if not found:
        raise SyncError(f"pip download gave no triton {version} wheel for this platform")
    return found[0]


def _wheel_members(wheel: Path) -> Iterator[tuple[zipfile.ZipFile, zipfile.ZipInfo, PurePosixPath]]:
    """The wheel's triton/ members with their path inside the package (names that leave it are refused)."""
    if not wheel.is_file():
        raise SyncError(f"triton wheel {wheel} does not exist")
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            name = PurePosixPath(info.filename)
            if name.parts[:1] != ("triton",):
                continue
            relative = PurePosixPath(*name.parts[1:])
            if name.is_absolute() or ".." in relative.parts:
                raise SyncError(f"triton wheel {wheel}: member {info.filename!r} leaves the package")
            yield archive, info, relative


def _copy_upstream(source: Path, target: Path) -> None:
    """Put the upstream triton package at target: copied from a directory or straight out of a wheel,
    so that no extracted copy is left anywhere else."""
    if source.suffix != ".whl":
        shutil.copytree(source, target, symlinks=True)
        return
    target.mkdir(parents=True)
    for archive, info, relative in _wheel_members(source):
        destination = target / relative
        if info.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        with archive.open(info) as reader, open(destination, "wb") as writer:
            shutil.copyfileobj(reader, writer, 1 << 20)
        mode = (info.external_attr >> 16) & 0o777  # zipfile drops the executable bits of ptxas & co.
        if mode:
            os.chmod(destination, mode)


@contextmanager
def extracted_upstream(source: Path) -> Iterator[Path]:
    """The upstream triton package directory for the with-block; a wheel is extracted into a temporary
    directory that is removed when the block ends, also on failure."""
    if source.suffix != ".whl":
        yield source
        return
    with tempfile.TemporaryDirectory(prefix="flagtree-upstream-") as scratch:
        package = Path(scratch) / "triton"
        _copy_upstream(source, package)
        yield package


def assemble(upstream: Path, target: Path, backend: str | None, repo_root: Path) -> list[str]:
    """Put upstream (a package directory or a wheel) at target, apply the hooks, add the runtime and the
    backend; returns the hooked files."""
    backend = backend_name(backend)
    spec = repo_root / "third_party" / backend / "backend" / "spec" if backend else None
    if spec is not None and not spec.is_dir():
        raise SyncError(f"FLAGTREE_BACKEND={backend}: {spec} does not exist")
    links = [path for path in spec.rglob("*") if path.is_symlink()] if spec is not None else []
    if links:  # a link would let the backend ship code from outside its own tree
        raise SyncError(f"FLAGTREE_BACKEND={backend}: {links[0]} is a symbolic link; a spec tree holds files")
    hook_set = load_hook_set(repo_root / "patches" / "hooks.toml")
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    _copy_upstream(upstream, target)
    changed = apply_hook_set(target, hook_set)
    for name in RUNTIME_FILES:
        shutil.copy2(repo_root / "python" / "triton" / name, target / name)
    record = target / "FLAGTREE_BACKEND"
    if backend and spec is not None:
        shutil.copytree(spec, target / SPEC_HOME / backend / "spec")
        record.write_text(backend + "\n", encoding="utf-8")
    elif record.exists():
        record.unlink()
    _write_manifest(target, {"triton": hook_set.triton, "backend": backend, "hooked_files": changed,
                             "call_sites": hook_call_sites(target), "native": None})
    return changed


def hook_call_sites(package: Path) -> list[dict[str, object]]:
    """Every trunk call of a hook function with a literal first argument: which trunk line asks for
    which spec function (spec_path has none: it names the package)."""
    sites: list[dict[str, object]] = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if relative.parts[0] == SPEC_HOME or relative.name in RUNTIME_FILES:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if "flagtree_spec" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in HOOK_FUNCTIONS:
                first = node.args[0] if node.args else None
                name = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else \
                    first.id if isinstance(first, ast.Name) else ""
                sites.append({"hook": node.func.id, "function": name, "file": relative.as_posix(),
                              "line": node.lineno})
    return sites


def _write_manifest(package: Path, data: dict[str, object]) -> None:
    (package / MANIFEST).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def build_native(repo_root: Path, package: Path, backend: str | None) -> Path | None:
    """Build lib/ (CMake + Ninja + pybind11) into <package>/_C/libflagtree, with the backend's C++ spec
    when it has one; records it in the manifest. FLAGTREE_NATIVE=0 skips it; without a C++ compiler it
    is skipped with a note (the runtime then uses its Python defaults)."""
    backend = backend_name(backend)
    wanted = os.environ.get("FLAGTREE_NATIVE", "auto")
    compiler = shutil.which(os.environ.get("CXX", "c++"))
    if wanted == "0" or (wanted == "auto" and compiler is None):
        print(f"flagtree: native core not built ({'FLAGTREE_NATIVE=0' if wanted == '0' else 'no C++ compiler'})")
        return None
    tools = {name: shutil.which(name) for name in ("cmake", "ninja", "nm")}
    try:
        import pybind11
    except ImportError:
        tools["pybind11"] = None
    else:
        tools["pybind11"] = pybind11.get_cmake_dir()
    missing = [name for name, found in tools.items() if found is None] + ([] if compiler else ["a C++ compiler"])
    if missing:
        raise SyncError(f"the native FlagTree core needs {', '.join(missing)} (python/pyproject.toml lists them)")
    found = {name: str(path) for name, path in tools.items() if path is not None}
    spec = repo_root / "third_party" / backend / "backend" / "spec" if backend else None
    with tempfile.TemporaryDirectory(prefix="flagtree-native-") as work:
        configure = [found["cmake"], "-S", str(repo_root / "lib"), "-B", work, "-G", "Ninja",
                     f"-DCMAKE_MAKE_PROGRAM={found['ninja']}", f"-DCMAKE_CXX_COMPILER={compiler}",
                     "-DCMAKE_BUILD_TYPE=Release", f"-Dpybind11_DIR={found['pybind11']}",
                     f"-DPython_EXECUTABLE={sys.executable}", f"-DFLAGTREE_BACKEND={backend or ''}",
                     f"-DFLAGTREE_SPEC_DIR={spec if spec is not None and spec.is_dir() else ''}"]
        for command in (configure, [found["cmake"], "--build", work]):
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise SyncError(f"native FlagTree core: {Path(command[0]).name} failed:\n"
                                f"{(done.stdout + done.stderr)[-3000:]}")
        built = sorted(Path(work).glob("libflagtree*.so"))
        if not built:
            raise SyncError(f"native FlagTree core: the build made no libflagtree module in {work}")
        if spec is not None:
            _check_replacements(spec, backend or "", built[0], compiler or "c++", tools["nm"] or "nm")
        destination = package / "_C" / built[0].name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built[0], destination)
    manifest = json.loads((package / MANIFEST).read_text(encoding="utf-8"))
    manifest["native"] = {"module": destination.relative_to(package).as_posix()}
    _write_manifest(package, manifest)
    return destination


def _check_replacements(spec: Path, backend: str, module: Path, compiler: str, nm: str) -> None:
    """A guard macro the backend header defines must come with the backend's definition of the function;
    without it the module would only fail when Python imports it, with a mangled symbol name."""
    header = spec / "include" / "flagtree_spec.h"
    if not header.is_file():
        return
    macros = subprocess.run([compiler, "-dM", "-E", "-x", "c++", str(header)], capture_output=True, text=True,
                            check=True).stdout
    guarded = sorted({line.split()[1][len("FLAGTREE_SPEC_"):] for line in macros.splitlines()
                      if line.startswith("#define FLAGTREE_SPEC_")})
    undefined = subprocess.run([nm, "-D", "-C", "--undefined-only", str(module)], capture_output=True, text=True,
                               check=True).stdout
    for name in guarded:
        if f"flagtree::{name}(" in undefined:
            raise SyncError(f"FLAGTREE_BACKEND={backend}: {header} defines FLAGTREE_SPEC_{name}, but no source in "
                            f"{spec / 'lib'} defines flagtree::{name}")
