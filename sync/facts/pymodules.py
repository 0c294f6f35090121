"""Trunk Python module names and paths: python/triton/x/y.py is triton.x.y, and a relative import is read from
the package of the module that makes it."""
from __future__ import annotations

TRUNK_PACKAGE = "python/"
MODULE_SUFFIX = ".py"


def module_files(module: str) -> tuple[str, str]:
    """Where trunk keeps a dotted module: python/triton/x/y.py, or the package python/triton/x/y/__init__.py."""
    stem = TRUNK_PACKAGE + module.replace(".", "/")
    return stem + MODULE_SUFFIX, f"{stem}/__init__{MODULE_SUFFIX}"


def module_of(path: str) -> str:
    """triton.x.y for python/triton/x/y.py, triton.x for python/triton/x/__init__.py."""
    dotted = path[len(TRUNK_PACKAGE):-len(MODULE_SUFFIX)].replace("/", ".")
    return dotted[:-len(".__init__")] if dotted.endswith(".__init__") else dotted


def package_of(path: str) -> str:
    """The package a trunk module's relative imports start from."""
    module = module_of(path)
    return module if path.endswith(f"/__init__{MODULE_SUFFIX}") else module.rpartition(".")[0]


def absolute(target: str, package: str) -> str:
    """An import's target made absolute from the importing module's package (`.compiler.X` in triton.backends is
    triton.backends.compiler.X; `..runtime.jit.F` in triton.language is triton.runtime.jit.F)."""
    dots = len(target) - len(target.lstrip("."))
    if not dots:
        return target
    base = package.split(".")
    base = base[:len(base) - (dots - 1)] if dots > 1 else base
    return ".".join([*base, target[dots:]])
