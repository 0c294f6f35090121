"""Drift for every backend of a real FlagTree branch; prints time and findings per backend.

    python bench/drift_real.py PATH_TO_FETCHED_FLAGTREE

Cases: branch main (iluvatar), based on upstream 513f38c47, against the upstream move
513f38c47 -> 0add68262 (3.5.1), hooks taken from an in-memory replay of the branch; and FlagTree's
own 3.5 -> 3.6 move: triton_v3.5.x (60 commits on 0add68262, ascend spec tree) against
0add68262 -> 7c56a5e40 (3.6.0), once with FlagTree's 3.6 line triton_v3.6.x as the upgraded tree and
once replayed in memory. (feat/mthreads-spec-path-third-party, which an earlier version ran from
0add68262, is based on 7c56a5e40 itself and the mirror holds no later upstream commit: no drift range
exists for it, and drift refuses a --from that is not the branch's base.)

Works on a shared bare clone of PATH in a temporary directory (PATH itself is never written), so
the first run of each case starts with an empty fact cache (<git dir>/flagtree-sync/cache) and
later runs find it filled; --no-cache runs without it.
"""
from __future__ import annotations

import argparse
import atexit
import collections
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import statistics

from sync.jobs import DriftOptions, run_drift

CASES = [
    ("main", "513f38c47", "0add68262", None),
    ("triton_v3.5.x", "0add68262", "7c56a5e40", "triton_v3.6.x"),
    ("triton_v3.5.x", "0add68262", "7c56a5e40", None),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("flagtree", type=Path)
    parser.add_argument("--runs", type=int, default=1, help="runs per case, interleaved; the median is shown")
    parser.add_argument("--symbols", action="store_true", help="with symbol drift (drift --symbols)")
    parser.add_argument("--no-cache", action="store_true", help="without the fact cache")
    args = parser.parse_args()
    if args.no_cache:
        os.environ["FLAGTREE_SYNC_CACHE"] = "off"
    scratch = Path(tempfile.mkdtemp(prefix="flagtree-drift-bench-"))
    atexit.register(shutil.rmtree, scratch, True)  # the clone this run made, also when it fails
    clone = scratch / "flagtree.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(args.flagtree), str(clone)], check=True)
    times: dict[tuple, list[float]] = collections.defaultdict(list)
    reports = {}
    for _ in range(args.runs):
        for case in CASES:
            branch, old, new, target = case
            start = time.perf_counter()
            reports[case] = run_drift(str(clone), old=old, onto=new, source=branch,
                                      options=DriftOptions(target=target, symbols=args.symbols))
            times[case].append(time.perf_counter() - start)
    for case in CASES:
        branch, old, new, target = case
        findings = reports[case].findings + list(reports[case].notes)
        per_backend: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        for finding in findings:
            per_backend[finding.backend or "(trunk)"][finding.kind] += 1
        runs = " ".join(f"{t:.2f}" for t in times[case])
        print(f"## {branch}: {old} -> {new}, target {'in-memory replay' if target is None else target}: "
              f"first run {times[case][0]:.2f} s, later runs median "
              f"{statistics.median(times[case][1:] or times[case]):.2f} s (runs {runs}), {len(findings)} findings")
        for backend, kinds in sorted(per_backend.items()):
            print(f"  {backend}: " + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
