"""FlagTree backend specialization hooks: spec_path, spec, spec_func and spec_key.

Trunk files call these; the backend recorded in FLAGTREE_BACKEND supplies the
differing code under <triton>/<home>/<backend>/spec/triton/. With no backend
installed every hook is a no-op and trunk runs unchanged. A backend that is
installed but broken raises FlagTreeSpecError instead of silently running trunk.
Backends must not modify this file.

`python -m triton.flagtree_spec [--json]` reports the installed specialization.
"""
from __future__ import annotations

import functools
import importlib
import os
import sys
import warnings
from types import ModuleType
from typing import Any, Callable, TypeVar

__all__ = ["spec_path", "spec", "spec_func", "spec_key", "specialization_key", "native", "report",
           "FlagTreeSpecError", "FlagTreeSpecWarning"]

_PACKAGE = __name__.rpartition(".")[0] or "triton"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# Where an installed backend's spec tree may live, relative to the triton package.
# FlagTree installs third_party/<b>/backend as triton/backends/<b>; a backend that is
# not a compiler backend is installed under _flagtree_specs so that Triton's backend
# discovery (which expects compiler.py in every backends/ entry) never sees it.
SPEC_HOMES = ("backends", "_flagtree_specs")
# A backend name becomes a path component: only an ASCII identifier ([A-Za-z_][A-Za-z0-9_]*) can never
# leave the package. hashlib and json are imported where used: `import triton` stays as cheap as it was.

F = TypeVar("F", bound=Callable[..., Any])


class FlagTreeSpecError(ImportError):
    """An installed backend's spec code exists but cannot be used."""


class FlagTreeSpecWarning(UserWarning):
    """A specialization that works but breaks the FlagTree directory policy."""


_UNSET: Any = object()
_spec_module: ModuleType | None | Any = _UNSET
_spec_error: FlagTreeSpecError | None = None
_hijacked: dict[str, str] = {}  # trunk package dir (relative to triton) -> backend dir


def _installed_backend() -> str:
    from ._flagtree_backend import FLAGTREE_BACKEND

    if FLAGTREE_BACKEND and not (FLAGTREE_BACKEND.isascii() and FLAGTREE_BACKEND.isidentifier()):
        raise FlagTreeSpecError(
            f"FlagTree backend record {os.path.join(_PACKAGE_DIR, 'FLAGTREE_BACKEND')} names "
            f"{FLAGTREE_BACKEND!r}, which is not a backend name (letters, digits and '_')"
        )
    return FLAGTREE_BACKEND


@functools.lru_cache(maxsize=1)
def _spec_root() -> tuple[str, str] | None:
    """Module name and directory of the installed backend's spec/triton tree (looked up once)."""
    backend = _installed_backend()
    if not backend:
        return None
    for home in SPEC_HOMES:
        directory = os.path.join(_PACKAGE_DIR, home, backend, "spec", "triton")
        if os.path.isdir(directory):
            return f"{_PACKAGE}.{home}.{backend}.spec.triton", directory
    return None


def _load_spec_module() -> ModuleType | None:
    """Import the backend's spec/triton/__init__.py once; None when no backend is installed."""
    global _spec_module, _spec_error
    if _spec_error is not None:
        raise _spec_error
    if _spec_module is not _UNSET:
        return _spec_module
    root = _spec_root()
    if root is None:
        _spec_module = None
        return None
    module_name, directory = root
    entry = os.path.join(directory, "__init__.py")
    try:
        _spec_module = importlib.import_module(module_name)
    except Exception as exc:  # any failure of code that exists is the backend's bug
        where = getattr(exc, "filename", None) or entry
        _spec_error = FlagTreeSpecError(
            f"FlagTree backend {_installed_backend()!r}: spec module {module_name} "
            f"({where}) failed to import: {type(exc).__name__}: {exc}"
        )
        raise _spec_error from exc
    return _spec_module


def _backend_definition(name: str) -> Callable[..., Any] | None:
    module = _load_spec_module()
    if module is None:
        return None
    found = getattr(module, name, None)
    if found is not None and not callable(found):
        raise FlagTreeSpecError(
            f"FlagTree backend {_installed_backend()!r}: {module.__name__}.{name} "
            f"is a {type(found).__name__}, not a function"
        )
    return found


def spec_path(package_path: list[str]) -> None:
    """Put the backend's mirror of this trunk package first on its __path__.

    Call as ``spec_path(__path__)`` in a trunk package's ``__init__.py``: a module of
    the same name in the backend then shadows trunk, every other module falls through.
    """
    root = _spec_root()
    if root is None or not package_path:
        return
    trunk_dir = os.path.abspath(package_path[-1])
    relative = os.path.relpath(trunk_dir, _PACKAGE_DIR)
    if relative == os.curdir or relative.startswith(os.pardir):
        warnings.warn(
            FlagTreeSpecWarning(f"spec_path is not allowed for {trunk_dir}: not a sub-package of {_PACKAGE}"),
            stacklevel=2,
        )
        return
    backend_dir = os.path.join(root[1], relative)
    if not os.path.isdir(backend_dir) or backend_dir in package_path:
        return
    for other in _hijacked:
        if relative.startswith(other + os.sep) or other.startswith(relative + os.sep):
            warnings.warn(
                FlagTreeSpecWarning(
                    f"backend {_installed_backend()!r} hijacks both {other} and {relative}: "
                    "the parent overlay can hide the child's trunk modules"
                ),
                stacklevel=2,
            )
    _hijacked[relative] = backend_dir
    package_path.insert(0, backend_dir)


def spec(name: str, *args: Any, **kwargs: Any) -> Any:
    """Call the backend's ``name(*args, **kwargs)``; None when the backend does not define it."""
    function = _backend_definition(name)
    if function is None:
        return None
    return function(*args, **kwargs)


def spec_func(name: str | F, default: Any = None) -> Any:
    """The backend's definition of a function, or the trunk default.

    ``fn = spec_func("fn", trunk_fn)`` returns the backend's ``fn`` or ``trunk_fn``.
    As a decorator, ``@spec_func`` on a trunk ``def fn`` replaces it by the backend's
    ``fn`` when there is one, so the trunk definition is the default.
    """
    if callable(name):
        return _backend_definition(name.__name__) or name
    return _backend_definition(name) or default


_NATIVE_MODULE = f"{_PACKAGE}._C.libflagtree"
_MANIFEST = os.path.join(_PACKAGE_DIR, "FLAGTREE_SPEC.json")


def _manifest() -> dict[str, Any]:
    """What the build recorded (sync/builder/package.py); empty for a tree that was not built by it."""
    import json

    try:
        with open(_MANIFEST, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


@functools.lru_cache(maxsize=1)
def native() -> ModuleType | None:
    """The native FlagTree core (triton._C.libflagtree) when the build made one, else None."""
    recorded = (_manifest().get("native") or {}).get("module")
    if not recorded:
        return None
    try:
        return importlib.import_module(_NATIVE_MODULE)
    except ImportError as exc:  # built and installed, yet unusable: never fall back silently
        raise FlagTreeSpecError(f"FlagTree native core {recorded} failed to import: {exc}") from exc


def _digest_tree(digest: Any, root: str) -> None:
    import hashlib

    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(directory, name)
            digest.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as handle:
                digest.update(hashlib.sha256(handle.read()).digest())


@functools.lru_cache(maxsize=1)
def specialization_key() -> str:
    """What this build adds to Triton's kernel cache key: the backend name and a digest of the installed
    spec tree (Python and C++ sources) and of the native core, so kernels compiled by stock triton or
    another FlagTree build are never reused and this build's own always are."""
    import hashlib

    backend = _installed_backend()
    digest = hashlib.sha256(f"backend={backend}\n".encode())
    root = _spec_root()
    if root is not None:
        _digest_tree(digest, os.path.dirname(root[1]))  # <home>/<backend>/spec: triton/, include/, lib/
    recorded = (_manifest().get("native") or {}).get("module")
    if recorded:
        with open(os.path.join(_PACKAGE_DIR, recorded), "rb") as handle:
            digest.update(hashlib.sha256(handle.read()).digest())
    core = native()
    if core is not None:
        return core.cache_salt(backend, digest.hexdigest()[:32])
    return f"flagtree-{backend or 'trunk'}-{digest.hexdigest()[:32]}"


def spec_key(function: F) -> F:
    """``triton_key = spec_key(triton_key)``: trunk's cache key followed by specialization_key()."""

    @functools.wraps(function)
    def keyed(*args: Any, **kwargs: Any) -> str:
        return f"{function(*args, **kwargs)}-{specialization_key()}"

    return keyed  # type: ignore[return-value]


def _overlays(package: str, backend_dir: str) -> list[dict[str, Any]]:
    """The backend modules of one hijacked package, each saying whether it shadows a trunk module."""
    trunk_dir = os.path.join(_PACKAGE_DIR, *package.split(".")[1:])
    found = []
    for name in sorted(os.listdir(backend_dir)):
        stem, extension = os.path.splitext(name)
        if extension == ".py" and stem != "__init__":
            found.append({"module": f"{package}.{stem}", "shadows_trunk": os.path.isfile(os.path.join(trunk_dir, name))})
    return found


def report() -> dict[str, Any]:
    """The installed specialization: what `python -m triton.flagtree_spec` prints."""
    manifest = _manifest()
    backend = _installed_backend()
    sites = manifest.get("call_sites", [])
    for site in sites:  # importing each hooked trunk package runs its spec_path
        if site["hook"] == "spec_path":
            importlib.import_module(".".join([_PACKAGE, *site["file"].split("/")[:-1]]))
    module = _load_spec_module()
    provided = sorted(name for name in getattr(module, "__all__", dir(module) if module else [])
                      if not name.startswith("_") and callable(getattr(module, name, None)))
    core = native()
    try:
        from importlib.metadata import distribution as find_distribution

        found = find_distribution("triton")
        # Another triton's metadata (an assembled tree put first on PYTHONPATH) is not this build's.
        owns = os.path.abspath(str(found.locate_file("triton/flagtree_spec.py"))) == os.path.abspath(__file__)
        distribution = found.version if owns else None
    except Exception:  # no metadata: a tree that was assembled, not installed
        distribution = None
    return {
        "backend": backend or None,
        "trunk_only": not backend,
        "triton": manifest.get("triton"),
        "distribution": distribution,
        "spec_tree": os.path.dirname(root[1]) if (root := _spec_root()) else None,
        "hijacked": [{"package": f"{_PACKAGE}." + relative.replace(os.sep, "."), "overlays":
                      _overlays(f"{_PACKAGE}." + relative.replace(os.sep, "."), directory)}
                     for relative, directory in sorted(_hijacked.items())],
        "spec_functions": [{"function": name, "call_sites": [f"{s['file']}:{s['line']} ({s['hook']})" for s in sites
                                                             if s["function"] == name]} for name in provided],
        "native": None if core is None else {
            "module": core.__file__, "backend": core.backend,
            "guards": [{"guard": guard, "replaced": replaced} for guard, replaced in core.guards()]},
        "cache_key_salt": specialization_key(),
    }


def _text(data: dict[str, Any]) -> str:
    lines = [f"FlagTree triton {data['triton'] or '?'} (distribution {data['distribution'] or 'not installed'})"]
    if data["trunk_only"]:
        lines.append("backend: none, trunk only (every hook runs trunk's code)")
    else:
        lines.append(f"backend: {data['backend']} (spec tree {data['spec_tree'] or 'missing: hooks run trunk'})")
    lines.append("hijacked trunk packages (spec_path):" if data["hijacked"] else "hijacked trunk packages: none")
    for entry in data["hijacked"]:
        overlays = ", ".join(f"{o['module']} ({'overlay' if o['shadows_trunk'] else 'added'})"
                             for o in entry["overlays"]) or "no modules"
        lines.append(f"  {entry['package']}: {overlays}")
    lines.append("spec functions the backend provides:" if data["spec_functions"] else "spec functions: none")
    for entry in data["spec_functions"]:
        lines.append(f"  {entry['function']}: {', '.join(entry['call_sites']) or 'no trunk call site'}")
    if data["native"] is None:
        lines.append("native core: not built")
    else:
        lines.append(f"native core: {data['native']['module']}")
        for guard in data["native"]["guards"]:
            lines.append(f"  {guard['guard']}: {'replaced by the backend' if guard['replaced'] else 'trunk default'}")
    lines.append(f"kernel cache key salt: {data['cache_key_salt']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m triton.flagtree_spec",
                                     description="Print the installed FlagTree specialization.")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--text", action="store_true", help="print text (the default)")
    arguments = parser.parse_args(argv)
    # Run as __main__ this file is a second copy; the hooks' state lives in the imported module.
    live = importlib.import_module(f"{_PACKAGE}.flagtree_spec")
    import json

    data = live.report()
    print(json.dumps(data, indent=1) if arguments.json else live._text(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
