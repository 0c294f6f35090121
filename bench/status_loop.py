"""The release loop's reruns, timed against plain git: after one cold upgrade, `status` in a worktree of the
upgraded branch (as UPGRADING.md runs it) with nothing changed, `status` after one fix committed there (the
result cache misses, the fact cache is warm), and the same upgrade again (--force onto the same branch).

    python bench/status_loop.py PATH_TO_FETCHED_FLAGTREE [--move OLD SOURCE ONTO] [--code CHECKOUT]

The fix takes one conflicted file (the first the report lists that ONTO holds otherwise) as it is at ONTO.
Plain `git cherry-pick` of the same commits into a fresh worktree runs first, for the ratios. --code runs
another checkout's sync package (a worktree of another commit), to compare two commits on one machine state.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _differs_at(worktree: Path, rev: str, path: str) -> bool:
    """Whether rev holds path with other content than the worktree's HEAD."""
    held = subprocess.run(["git", "-C", str(worktree), "cat-file", "-e", f"{rev}:{path}"]).returncode == 0
    if not held:
        return False
    diff = ["git", "-C", str(worktree), "diff", "--quiet", rev, "HEAD", "--", path]
    return subprocess.run(diff).returncode == 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("flagtree", type=Path)
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout whose sync package runs (default: this one)")
    parser.add_argument("--move", nargs=3, metavar=("OLD", "SOURCE", "ONTO"),
                        default=("7c56a5e40", "2865e9e68", "1859e68db"),
                        help="replay OLD..SOURCE onto ONTO (default: the 3.7 move)")
    args = parser.parse_args()
    code = args.code.resolve()
    sys.path[:0] = [str(code), str(code / "bench")]
    import pygit2
    import sync
    import upgrade_real
    from sync.git.repo import commit_range
    from sync.jobs.status import StatusOptions, refresh_status
    assert Path(sync.__file__).resolve().is_relative_to(code), sync.__file__
    old, source, onto = args.move
    upgrade_real.use_move(old, source, onto)
    work = Path(tempfile.mkdtemp(prefix="flagtree-loop-"))
    try:
        clone = work / "flagtree.git"
        subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(args.flagtree), str(clone)], check=True)
        repo = pygit2.Repository(str(clone))
        # as in a user's repository, where ONTO is an upstream tag: the branch's base stays named
        subprocess.run(["git", "-C", str(clone), "tag", "bench-loop-onto", onto], check=True)
        commits = [str(oid) for oid in commit_range(repo, repo.revparse_single(old).peel(pygit2.Commit),
                                                    repo.revparse_single(source).peel(pygit2.Commit))]
        git_seconds = upgrade_real.cherry_pick_baseline(clone, commits)[0]
        timings: list[tuple[str, float]] = []

        def timed(name: str, run) -> None:  # noqa: ANN001 (a bench helper)
            start = time.perf_counter()
            run()
            timings.append((name, time.perf_counter() - start))

        timed("cold upgrade", lambda: upgrade_real.full_upgrade(clone, work / "report", "bench/loop"))
        worktree = work / "sync"
        subprocess.run(["git", "-C", str(clone), "worktree", "add", "-q", str(worktree), "bench/loop"], check=True)
        timed("status, nothing changed", lambda: refresh_status(str(worktree), StatusOptions()))
        conflicted = json.loads((work / "report" / "report.json").read_text())["summary"]["conflicted_files"]
        fixed = next(path for path in conflicted if _differs_at(worktree, onto, path))
        subprocess.run(["git", "-C", str(worktree), "checkout", onto, "--", fixed], check=True)
        subprocess.run(["git", "-C", str(worktree), "-c", "user.name=bench", "-c", "user.email=bench@example.com",
                        "commit", "-qm", f"take {fixed} as upstream has it"], check=True)
        timed("status after one fix", lambda: refresh_status(str(worktree), StatusOptions()))
        subprocess.run(["git", "-C", str(clone), "worktree", "remove", "--force", str(worktree)], check=True)
        subprocess.run(["git", "-C", str(clone), "branch", "-q", "-D", "bench/loop"], check=True)
        timed("the same upgrade again", lambda: upgrade_real.full_upgrade(clone, work / "again", "bench/loop"))
        timed("the same upgrade again, twice", lambda: upgrade_real.full_upgrade(clone, work / "again2",
                                                                                  "bench/loop"))
        print(f"{code}: {len(commits)} commits {old}..{source} onto {onto}; git cherry-pick {git_seconds:.2f} s")
        for name, seconds in timings:
            print(f"  {name:32s} {seconds:6.2f} s  {seconds / git_seconds:5.2f}x git")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
