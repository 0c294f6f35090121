"""Build the FlagTree triton package; see python/pyproject.toml and README "Install a FlagTree build"."""
import os
import sys
import tomllib
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build import build
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sync.build import assemble, upstream_entry_points, upstream_package, upstream_source  # noqa: E402

PINNED = tomllib.loads((ROOT / "patches" / "hooks.toml").read_text())["triton"]
BACKEND = os.environ.get("FLAGTREE_BACKEND", "").strip() or None
SOURCE = upstream_source(PINNED)


class BuildFlagTree(build_py):
    """Instead of copying sources, assemble the whole triton package into build_lib."""

    def run(self) -> None:
        changed = assemble(upstream_package(SOURCE), Path(self.build_lib) / "triton", BACKEND, ROOT)
        print(f"flagtree: triton {PINNED}, backend {BACKEND or '(none)'}, hooks in {', '.join(changed)}")


def _build_dirs(base: str | None) -> dict:
    if not base:
        return {}
    Path(base).mkdir(parents=True, exist_ok=True)
    return {"build": {"build_base": base}, "bdist": {"bdist_base": f"{base}/bdist"}, "egg_info": {"egg_base": base}}


class Build(build):
    """There are no source packages to declare, so run build_py unconditionally."""

    sub_commands = [("build_py", lambda self: True)] + [c for c in build.sub_commands if c[0] != "build_py"]


class BinaryDistribution(Distribution):
    """The package carries upstream's compiled libraries: the wheel is platform specific."""

    def has_ext_modules(self) -> bool:
        return True


setup(
    name="triton",
    version=f"{PINNED}+flagtree" + (f".{BACKEND}" if BACKEND else ""),
    description="Triton with the FlagTree backend specialization hooks",
    packages=[],
    cmdclass={"build": Build, "build_py": BuildFlagTree},
    entry_points=upstream_entry_points(SOURCE),
    distclass=BinaryDistribution,
    python_requires=">=3.10",
    # The assembled package is the size of a triton wheel: let callers keep it out of the source tree.
    options=_build_dirs(os.environ.get("FLAGTREE_BUILD_DIR")),
    zip_safe=False,
)
