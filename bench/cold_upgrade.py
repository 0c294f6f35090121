"""One cold full upgrade of the benchmark of record (fresh bare clone, empty fact cache), with the sync
package of a given checkout: wall and CPU seconds (this process and its worker processes), and the peak memory
of this process and of its largest worker.

    python bench/cold_upgrade.py PATH_TO_FETCHED_FLAGTREE [--code CHECKOUT] [--phases]

--phases also prints when each part of the run started and how long it took (wall seconds from the start, and
the CPU seconds of the process it ran in):
the replay, the up-front parse of the fork's Python, each analysis, and the steps after them (the files over the
parse limit, the result cache, the report), with the process it ran in, its
resident memory after the part and its peak so far.

To compare two commits, make a worktree of the other one and alternate the runs (CPU time moves less
than wall time when other processes share the cores):

    git worktree add --detach /tmp/base BASE_COMMIT
    for i in 1 2; do python bench/cold_upgrade.py FT --code /tmp/base; python bench/cold_upgrade.py FT; done
"""
from __future__ import annotations

import argparse
import dataclasses
import os
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


def peak_mb(who: int) -> int:
    """The largest resident set of this process, or of any child it waited for (Linux: ru_maxrss is in KiB)."""
    return resource.getrusage(who).ru_maxrss // 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("flagtree", type=Path)
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout whose sync package and bench/upgrade_real.py run (default: this one)")
    parser.add_argument("--phases", action="store_true", help="print each part's start and wall time")
    parser.add_argument("--move", nargs=3, metavar=("OLD", "SOURCE", "ONTO"),
                        help="another move than the record's: replay OLD..SOURCE onto ONTO")
    args = parser.parse_args()
    code = args.code.resolve()
    sys.path[:0] = [str(code), str(code / "bench")]
    import sync
    import upgrade_real
    assert Path(sync.__file__).resolve().is_relative_to(code), sync.__file__
    if args.move:
        upgrade_real.use_move(*args.move)
    work = Path(tempfile.mkdtemp(prefix="flagtree-cold-"))
    try:
        clone = work / "flagtree.git"
        subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(args.flagtree), str(clone)], check=True)
        start = time.perf_counter()
        if args.phases:
            _time_phases(start)
        cpu = cpu_seconds()
        upgrade_real.full_upgrade(clone, work / "report", "bench/sync-cold")
        jobs = os.environ.get("FLAGTREE_SYNC_JOBS")  # so that a pasted line says which setting it ran under
        label = f"FLAGTREE_SYNC_JOBS={jobs} {code}" if jobs else str(code)
        print(f"{label}: cold upgrade {time.perf_counter() - start:.2f} s wall, {cpu_seconds() - cpu:.2f} s CPU, "
              f"peak memory {peak_mb(resource.RUSAGE_SELF)} MB (this process), "
              f"{peak_mb(resource.RUSAGE_CHILDREN)} MB (the largest worker or git)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _resident_mb() -> int:
    """This process's resident set now (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // (1024 * 1024)


def _time_phases(origin: float) -> None:
    """Wrap the replay, the up-front parse and each analysis (also in worker processes) to print their spans."""
    from sync.replay import engine as resumable_replay
    from sync.drift import context
    from sync.drift import registry

    def timed(name: str, function):  # noqa: ANN001, ANN202 (a bench wrapper)
        def run(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            begin, cpu = time.perf_counter(), time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                print(f"  {begin - origin:6.2f} s +{time.perf_counter() - begin:5.2f} s"
                      f" ({time.process_time() - cpu:5.2f} s CPU, {_resident_mb():4d} MB after,"
                      f" {peak_mb(resource.RUSAGE_SELF):4d} MB peak)  pid {os.getpid()}  {name}", flush=True)
        return run

    resumable_replay.run_upgrade = timed("replay", resumable_replay.run_upgrade)
    context.DriftContext.prefetch_fork_python = timed("up-front parse of the fork's Python",
                                                      context.DriftContext.prefetch_fork_python)
    def parts(a: registry.Analyzer) -> registry.Parts | None:
        if a.parts is None:
            return None
        part = a.parts.part
        return registry.Parts(lambda context, k, n: timed(f"{a.name}, part {k + 1} of {n}", part)(context, k, n),
                              timed(f"{a.name}, the parts joined", a.parts.join), a.parts.most)

    from sync.drift import run as drift_run
    from sync.jobs import upgrade as upgrade_job
    drift_run._over_the_parse_limit = timed("files over the parse limit", drift_run._over_the_parse_limit)
    drift_run.result_cache.store = timed("result cache, store", drift_run.result_cache.store)
    upgrade_job.build_report = timed("report, build", upgrade_job.build_report)
    upgrade_job.write_report = timed("report, write", upgrade_job.write_report)
    registry.ANALYZERS = tuple(dataclasses.replace(a, analyze=timed(a.name, a.analyze), parts=parts(a))
                               for a in registry.ANALYZERS)


if __name__ == "__main__":
    raise SystemExit(main())
