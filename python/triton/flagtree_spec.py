"""FlagTree backend specialization hooks: spec_path, spec and spec_func.

Trunk files call these; the backend recorded in FLAGTREE_BACKEND supplies the
differing code under <triton>/<home>/<backend>/spec/triton/. With no backend
installed every hook is a no-op and trunk runs unchanged. A backend that is
installed but broken raises FlagTreeSpecError instead of silently running trunk.
Backends must not modify this file.
"""
from __future__ import annotations

import functools
import importlib
import os
import re
import warnings
from types import ModuleType
from typing import Any, Callable, TypeVar

__all__ = ["spec_path", "spec", "spec_func", "FlagTreeSpecError", "FlagTreeSpecWarning"]

_PACKAGE = __name__.rpartition(".")[0] or "triton"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

# Where an installed backend's spec tree may live, relative to the triton package.
# FlagTree installs third_party/<b>/backend as triton/backends/<b>; a backend that is
# not a compiler backend is installed under _flagtree_specs so that Triton's backend
# discovery (which expects compiler.py in every backends/ entry) never sees it.
SPEC_HOMES = ("backends", "_flagtree_specs")
# A backend name becomes a path component: only an identifier can never leave the package.
_BACKEND_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

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

    if FLAGTREE_BACKEND and not _BACKEND_NAME.match(FLAGTREE_BACKEND):
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
