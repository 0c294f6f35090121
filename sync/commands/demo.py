"""`demo`: build the embedded demo world and run the main job (upgrade with report) on it."""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from sync.demo.native import build_command, build_native_world, missing_build_tools
from sync.demo.world import build_world
from sync.errors import SyncError
from sync.commands import echo_line
from sync.commands.upgrade import UpgradeRequest, run_upgrade_command


@dataclass(frozen=True, kw_only=True)
class DemoRequest:
    """What `demo` was given, by name."""

    directory: Path
    no_run: bool = False
    native: bool = False


def run_demo(request: DemoRequest) -> int:
    directory, no_run, native = request.directory, request.no_run, request.native
    blocker = next((path for path in (directory, *directory.parents) if os.path.lexists(path) and not path.is_dir()),
                   None)
    if blocker is not None:  # else a NotADirectoryError deep inside the world builder
        raise SyncError(f"{blocker} exists and is not a directory: choose a new directory for the demo")
    try:
        world = build_native_world(directory) if native else build_world(directory)
    except FileExistsError as exc:
        raise SyncError(f"{directory} is not empty: choose a new directory for the demo") from exc
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise  # the CLI says "no space left on device"
        where = f" ({exc.filename})" if exc.filename else ""
        raise SyncError(f"cannot build the demo in {directory}: {exc.strerror or exc}{where}; choose a directory "
                        "you can write") from None
    echo_line(f"demo: upstream {world.upstream} (tags {world.old_tag}, {world.new_tag}); fork {world.fork}")
    if no_run:
        return 0
    gate = None
    if native:
        missing = missing_build_tools()
        if missing:
            echo_line(f"demo: no {' or '.join(missing)} on this machine: the upgrade runs without the build gate")
        else:
            gate = build_command()
    echo_line(f"demo: flagtree-sync upgrade --repo {world.fork} --from {world.old_tag} --onto {world.new_tag} "
               f"--out {world.root / 'report'}" + (f" --exec '{gate}'" if gate else ""))
    return run_upgrade_command(UpgradeRequest(repo_path=str(world.fork), old=world.old_tag, onto=world.new_tag,
                                              out=world.root / "report", exec_command=gate))
