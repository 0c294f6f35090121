"""Drift for every backend of a real FlagTree branch; prints time and findings per backend.

    python bench/drift_real.py PATH_TO_FETCHED_FLAGTREE

Cases (DESIGN.md): branch main (iluvatar), based on upstream 513f38c47, against the upstream
move 513f38c47 -> 0add68262 (3.5.1), hooks taken from an in-memory replay of the branch; and
feat/mthreads-spec-path-third-party (mthreads, hcu), already on 7c56a5e40 (3.6.0), against
0add68262 -> 7c56a5e40 with the branch itself as the upgraded tree.
"""
from __future__ import annotations

import argparse
import collections
import time
from pathlib import Path

import pygit2

from sync.drift import analyse_drift

CASES = [
    ("main", "513f38c47", "0add68262", None),
    ("feat/mthreads-spec-path-third-party", "0add68262", "7c56a5e40", "feat/mthreads-spec-path-third-party"),
]


def commit_id(repo: pygit2.Repository, ref: str) -> str:
    return str(repo.revparse_single(ref).peel(pygit2.Commit).id)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("flagtree", type=Path)
    args = parser.parse_args()
    repo = pygit2.Repository(str(args.flagtree))
    for branch, old, new, target in CASES:
        start = time.perf_counter()
        result = analyse_drift(repo, commit_id(repo, old), commit_id(repo, new), commit_id(repo, branch),
                               commit_id(repo, target) if target else None)
        elapsed = time.perf_counter() - start
        per_backend = collections.defaultdict(collections.Counter)
        for finding in result.findings:
            per_backend[finding.backend or "(trunk)"][finding.kind] += 1
        print(f"## {branch}: {old} -> {new}, target {'in-memory replay' if target is None else target}: "
              f"{elapsed:.2f} s, {len(result.findings)} findings")
        for backend, kinds in sorted(per_backend.items()):
            print(f"  {backend}: " + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())))
        for finding in result.findings:
            if finding.severity != "info":
                print(f"    {finding.severity:<7} {finding.kind:<30} {finding.location()}  {finding.message[:100]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
