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

from sync.builder.package import assemble, backend_name, build_native, upstream_entry_points, upstream_source  # noqa: E402
from sync.errors import SyncError  # noqa: E402


def _or_exit(step, *args):
    """Bad input (backend name, wheel, hook set) ends the build with one line and exit 2, not a traceback."""
    try:
        return step(*args)
    except SyncError as exc:
        print(f"flagtree-sync: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


PINNED = tomllib.loads((ROOT / "patches" / "hooks.toml").read_text())["triton"]
BACKEND = _or_exit(backend_name, os.environ.get("FLAGTREE_BACKEND"))
SOURCE = _or_exit(upstream_source, PINNED, ROOT)


class BuildFlagTree(build_py):
    """Instead of copying sources, assemble the whole triton package into build_lib, native core included."""

    def run(self) -> None:
        package = Path(self.build_lib) / "triton"
        changed = _or_exit(assemble, SOURCE, package, BACKEND, ROOT)
        _or_exit(build_native, ROOT, package, BACKEND)
        print(f"flagtree: triton {PINNED} from {SOURCE}, backend {BACKEND or '(none)'}, hooks in {', '.join(changed)}")


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
