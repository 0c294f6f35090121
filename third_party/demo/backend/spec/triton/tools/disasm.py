"""Overlay of triton.tools.disasm for the demo backend: SASS straight from cuobjdump, unformatted.

Trunk post-processes cuobjdump's listing; this backend keeps the raw listing and says so, which
makes the overlay visible (FLAGTREE_OVERLAY) while sibling tools modules still come from trunk.
"""
import os
import shutil
import subprocess
import tempfile

FLAGTREE_OVERLAY = "demo"


def cuobjdump_path() -> str:
    found = shutil.which("cuobjdump")
    if found is None:
        raise FileNotFoundError("cuobjdump is not on PATH")
    return found


def extract(file_path, fun=None):
    command = [cuobjdump_path(), "-sass", file_path]
    if fun is not None:
        command[2:2] = ["-fun", fun]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def get_sass(cubin_asm, fun=None):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "kernel.cubin")
        with open(path, "wb") as handle:
            handle.write(cubin_asm)
        return extract(path, fun)
