"""`hooks`: does the FlagTree hook set (patches/hooks.toml) still apply to a given upstream triton package?"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from sync.errors import SyncError
from sync.builder.hookset import check_hook_set, load_hook_set

DEFAULT_HOOK_SET = Path(__file__).resolve().parents[2] / "patches" / "hooks.toml"


@dataclass(frozen=True, kw_only=True)
class HooksRequest:
    """What `hooks` was given, by name (None: not given)."""

    triton_package: Path
    hook_set: Path | None = None


def run_hooks(request: HooksRequest) -> int:
    package, hook_set_path = request.triton_package, request.hook_set
    package = package / "triton" if (package / "triton" / "__init__.py").is_file() else package
    if not (package / "__init__.py").is_file():
        wheel = package.is_file() and package.suffix == ".whl"
        raise SyncError(f"{package} is not a triton package directory" + (
            f": it is a wheel; extract it (python -m zipfile -e {package} DIR) and pass DIR" if wheel else ""))
    hook_set_path = hook_set_path or DEFAULT_HOOK_SET
    if not hook_set_path.is_file():
        raise SyncError(f"no hook set at {hook_set_path}: pass --hook-set")
    hook_set = load_hook_set(hook_set_path)
    if not hook_set.hooks:  # else "every hook applies" would be printed as silence and exit 0
        raise SyncError(f"{hook_set_path} names no hooks: pass the FlagTree hook set (patches/hooks.toml)")
    failures = 0
    for hook, reason in check_hook_set(package, hook_set):
        failures += reason is not None
        click.echo(f"{'ok  ' if reason is None else 'FAIL'} {hook.kind:<9} {hook.file}"
                   + (f": {reason}" if reason else ""))
    return 1 if failures else 0
