"""Peak RSS of libgit2's three-way merge of bench/scale.py's big module: the replay's share of an upgrade's peak.

    python bench/merge_memory.py --huge-mb 1 2 4

For each size, a fresh scale repository (1000 files, 1 commit) is built, and a child process merges the big
module's three versions (tag old, branch src, tag new) with sync.git.merge.merge_blobs, the call the replay
makes; it prints the child's peak RSS (VmHWM) before and after the merge.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import scale

CHILD = """
import sys, pygit2
from sync.git.merge import merge_blobs
hwm = lambda: int(next(line for line in open("/proc/self/status") if line.startswith("VmHWM")).split()[1]) // 1024
repo, path = pygit2.Repository(sys.argv[1]), "python/triton/pkg/huge.py"
side = lambda ref: repo.revparse_single(ref).peel(pygit2.Tree)[path].id
before = hwm()
outcome = merge_blobs(repo, path, side("old"), side("src"), side("new"))
print(f"peak RSS {before} MiB before the merge, {hwm()} MiB after (clean: {outcome.clean})")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--huge-mb", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    args = parser.parse_args()
    for size in args.huge_mb:
        with tempfile.TemporaryDirectory(prefix="flagtree-merge-memory-") as work:
            repo = Path(work) / "repo.git"
            scale.build_repo(repo, 1000, 1, size)
            done = subprocess.run([sys.executable, "-c", CHILD, str(repo)], capture_output=True, text=True, check=True)
            print(f"{size:4.1f} MB module: {done.stdout.strip()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
