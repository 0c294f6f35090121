"""One cold full upgrade of the benchmark of record (fresh bare clone, empty fact cache), with the sync
package of a given checkout: wall and CPU seconds (this process and its worker processes).

    python bench/cold_upgrade.py PATH_TO_FETCHED_FLAGTREE [--code CHECKOUT]

To compare two commits, make a worktree of the other one and alternate the runs (CPU time moves less
than wall time when other processes share the cores):

    git worktree add --detach /tmp/base BASE_COMMIT
    for i in 1 2; do python bench/cold_upgrade.py FT --code /tmp/base; python bench/cold_upgrade.py FT; done
"""
from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("flagtree", type=Path)
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout whose sync package and bench/upgrade_real.py run (default: this one)")
    args = parser.parse_args()
    code = args.code.resolve()
    sys.path[:0] = [str(code), str(code / "bench")]
    import sync
    import upgrade_real
    assert Path(sync.__file__).resolve().is_relative_to(code), sync.__file__
    work = Path(tempfile.mkdtemp(prefix="flagtree-cold-"))
    try:
        clone = work / "flagtree.git"
        subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(args.flagtree), str(clone)], check=True)
        cpu, start = cpu_seconds(), time.perf_counter()
        upgrade_real.full_upgrade(clone, work / "report", "bench/sync-cold")
        print(f"{code}: cold upgrade {time.perf_counter() - start:.2f} s wall, {cpu_seconds() - cpu:.2f} s CPU")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
