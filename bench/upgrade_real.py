"""Benchmark of record: replay FlagTree 0add68262..fe647093f onto Triton 3.6.0 (7c56a5e40).

    python bench/upgrade_real.py PATH_TO_FETCHED_FLAGTREE [--runs 3]

Set FLAGTREE_SYNC_CACHE=off to run every upgrade without the fact cache (all runs cold).

Measures, side by side in one run: plain `git cherry-pick` of the range in a throw-away
worktree (conflicts staged as-is and continued) versus flagtree-sync's in-memory replay,
and the full upgrade command (replay + drift analysis + report). Then compares the files
our run flags with the files the hand fixes after the manual 3.6 replay had to touch.
Works on a shared bare clone of PATH; PATH itself is never written.
"""
from __future__ import annotations

import argparse
import atexit
import json
import re
import resource
import statistics
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import git
import pygit2

from sync.jobs import ReplayChoices, RunOptions, UpgradeOptions, run_upgrade
from sync.drift.analyses.symbols import UpstreamIndex, significant_name
from sync.git import GitTree, commit_range
from sync.replay.commits import Replayer

OLD, SOURCE, NEW = "0add68262", "fe647093f", "7c56a5e40"
HAND_FIXES = ["978f6293b", "40017c806", "b840119a3"]
HAND_REPLAY = "16fa121a3"
NOT_TRUNK = ("third_party/", ".github/", "docs/", "test/", "python/test/", "unittest/", "python/tutorials/")


def cherry_pick_baseline(repo_dir: Path, commits: list[str]) -> tuple[float, set[str], int]:
    """Checkout-based cherry-pick of each commit; conflicts are added as they are and continued."""
    main = git.Repo(repo_dir)
    worktree = Path(tempfile.mkdtemp(prefix="cherry-"))
    start = time.perf_counter()
    main.git.worktree("add", "--detach", str(worktree), NEW)
    wt = git.Repo(worktree)
    conflicted: set[str] = set()
    stopped = 0
    for sha in commits:
        try:
            wt.git.cherry_pick("--allow-empty", "--keep-redundant-commits", sha)
        except git.GitCommandError:
            stopped += 1
            conflicted.update(wt.git.diff("--name-only", "--diff-filter=U").split())
            wt.git.add("-A")
            wt.git.commit("--allow-empty", "-q", "--no-edit")
    elapsed = time.perf_counter() - start
    main.git.worktree("remove", "--force", str(worktree))
    return elapsed, conflicted, stopped


def in_memory_replay(repo_dir: Path, commits: list[str]) -> tuple[float, set[str], int]:
    repo = pygit2.Repository(str(repo_dir))
    start = time.perf_counter()
    replayer = Replayer(repo, "markers", NEW)
    head = repo.revparse_single(NEW).peel(pygit2.Commit).id
    conflicted: set[str] = set()
    stopped = 0
    for sha in commits:
        commit = repo[sha]
        outcome = replayer.pick_tree(commit, repo[head].tree)
        if outcome.conflicts:
            stopped += 1
            conflicted.update(conflict.path for conflict in outcome.conflicts)
        head = replayer.commit(commit, outcome.tree, head, outcome.conflicts)
    return time.perf_counter() - start, conflicted, stopped


def use_move(old: str, source: str, onto: str) -> None:
    """Measure another move than the record's; the hand upgrade then has nothing to say about it."""
    global OLD, SOURCE, NEW, HAND_REPLAY
    OLD, SOURCE, NEW, HAND_REPLAY = old, source, onto, ""


CPU_TIMES: list[float] = []  # of each full_upgrade: this process and its worker processes, user + system


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def full_upgrade(repo_dir: Path, out: Path, target_branch: str) -> tuple[float, dict]:
    """The upgrade job with every analysis and the four report formats (what the CLI command runs)."""
    start, cpu = time.perf_counter(), _cpu_seconds()
    run_upgrade(str(repo_dir), old=OLD, onto=NEW, source_branch=SOURCE,
                options=UpgradeOptions(run=RunOptions(out=out), replay=ReplayChoices(target_branch=target_branch),
                                       force=True))
    elapsed = time.perf_counter() - start
    CPU_TIMES.append(_cpu_seconds() - cpu)
    return elapsed, json.loads((out / "report.json").read_text())


def profile_upgrade(repo_dir: Path, out: Path, top: int) -> None:
    """cProfile of one full upgrade: where the time goes (cumulative, then own time)."""
    import cProfile
    import pstats
    profiler = cProfile.Profile()
    profiler.enable()
    full_upgrade(repo_dir, out, "bench/sync-profile")
    profiler.disable()
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def hand_fixed_trunk_files(repo_dir: Path) -> set[str]:
    repo = git.Repo(repo_dir)
    files: set[str] = set()
    for sha in HAND_FIXES:
        files.update(repo.git.diff_tree("--no-commit-id", "--name-only", "-r", sha).split())
    return {path for path in files if not path.startswith(NOT_TRUNK)}


CODE = (".py", ".h", ".hpp", ".cpp", ".cc", ".td", ".inc")
_GATING = ("#if", "#ifdef", "#ifndef", "#endif", "#else", "#elif", "//", "#")


def report_accuracy(title: str, truth: set[str], flagged: set[str]) -> None:
    hits = truth & flagged
    precision = len(hits) / len(flagged) if flagged else 0.0
    recall = len(hits) / len(truth) if truth else 0.0
    print(f"{title}: {len(truth)} files; we flag {len(flagged)}; hits {len(hits)}: "
          f"precision {precision:.2f}, recall {recall:.2f}")
    print("  hits:", ", ".join(sorted(hits)) or "none")
    print("  missed:", ", ".join(sorted(truth - hits)) or "none")


def fix_lines(repo: pygit2.Repository, path: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for sha in HAND_FIXES:
        commit = repo.revparse_single(sha).peel(pygit2.Commit)
        for patch in repo.diff(commit.parents[0].tree, commit.tree, context_lines=0):
            if patch.delta.new_file.path == path or patch.delta.old_file.path == path:
                for hunk in patch.hunks:
                    for line in hunk.lines:
                        text = line.content.strip()
                        if text and line.origin == "-":
                            removed.append(text)
                        elif text and line.origin == "+":
                            added.append(text)
    return removed, added


def _normalized_tokens(lines: list[str]) -> list[str]:
    code = [line.split("//", 1)[0] for line in lines if not line.startswith(_GATING)]
    return sorted(token for line in code for token in re.findall(r"\w+|[^\w\s]", line))


def classify_fix(repo: pygit2.Repository, path: str, index: UpstreamIndex) -> tuple[str, str]:
    """Evidence, from the hand fix itself, of whether comparing the two tags could have found it."""
    if not path.endswith(CODE):
        return "not Python/C++", "documentation, Dockerfile or CMake file"
    def blob(ref: str):
        try:
            return repo.revparse_single(f"{ref}:{path}").id
        except KeyError:
            return None
    at_old, at_source, at_new = blob(OLD), blob(SOURCE), blob(NEW)
    if at_source is None and at_new is None:
        return "created by the fix", "exists neither on the FlagTree branch nor at the new tag"
    removed, added = fix_lines(repo, path)
    facts = [f"FlagTree {'changed' if at_source != at_old else 'did not change'} it",
             f"upstream {'changed' if at_new != at_old else 'did not change'} it",
             f"fix -{len(removed)}/+{len(added)}"]
    guards = sum("__TLE__" in line for line in added)
    if guards:
        facts.append(f"{guards} __TLE__ guard line(s)")
    if _normalized_tokens(removed) == _normalized_tokens(added):
        return "FlagTree gating", "; ".join(facts) + ": apart from #if/#endif and comments the fix only moves or " \
                                                    "reflows code (FlagTree's own __TLE__ gating)"
    if at_source != at_old:
        flagtree_lines = {line.content.strip() for patch in repo.diff(repo.revparse_single(OLD).peel(pygit2.Commit).tree,
                                                                      repo.revparse_single(SOURCE).peel(pygit2.Commit).tree,
                                                                      context_lines=0)
                          if patch.delta.new_file.path == path for hunk in patch.hunks for line in hunk.lines
                          if line.origin == "+"}
        own = sum(line in flagtree_lines for line in removed)
        facts.append(f"{own}/{len(removed)} removed lines are FlagTree's own")
    else:
        own = 0
    names = {name for line in removed + added for name in re.findall(r"[A-Za-z_]\w*", line) if significant_name(name)}
    drifted = sorted(index.drifts(names))
    facts.append(f"upstream-changed symbols on the fix's lines: {', '.join(drifted) or 'none'}")
    if at_source == at_old:
        shared = sorted({name for line in _upstream_removed_lines(repo, path) for name in re.findall(r"[A-Za-z_]\w*", line)
                         if significant_name(name)} & names)
        if shared:
            facts.append(f"the fix re-creates what upstream removed here (shared names: {', '.join(shared[:4])})")
        return "not in the delta", "; ".join(facts) + ": no FlagTree line in this file for the analysis to check"
    if not drifted and own == len(removed):
        return "FlagTree refactor", "; ".join(facts)
    return "upstream-related", "; ".join(facts)


def _upstream_removed_lines(repo: pygit2.Repository, path: str) -> set[str]:
    old, new = (repo.revparse_single(ref).peel(pygit2.Commit).tree for ref in (OLD, NEW))
    return {line.content.strip() for patch in repo.diff(old, new, context_lines=0)
            if patch.delta.old_file.path == path for hunk in patch.hunks for line in hunk.lines
            if line.origin == "-" and line.content.strip()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("flagtree", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", type=int, metavar="N", default=0,
                        help="only profile one full upgrade and print the top N functions")
    parser.add_argument("--warm", action="store_true",
                        help="with --profile: run one upgrade first, so that the profiled one finds the fact cache filled")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="keep the clone and each run's report files here (a new directory)")
    parser.add_argument("--move", nargs=3, metavar=("OLD", "SOURCE", "ONTO"),
                        help="another move than the record's: replay OLD..SOURCE onto ONTO (no hand comparison)")
    args = parser.parse_args()
    if args.move:
        use_move(*args.move)
    work = args.out if args.out is not None else Path(tempfile.mkdtemp(prefix="flagtree-bench-"))
    if args.out is None:  # only what this run created, and only then: --out is kept
        atexit.register(shutil.rmtree, work, True)
    work.mkdir(parents=True, exist_ok=True)
    clone = work / "flagtree.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(args.flagtree), str(clone)], check=True)
    repo = pygit2.Repository(str(clone))
    if args.profile:
        if args.warm:
            full_upgrade(clone, work / "report-warmup", "bench/sync-warmup")
        profile_upgrade(clone, work / "report-profile", args.profile)
        return 0
    commits = [str(oid) for oid in commit_range(repo, repo.revparse_single(OLD).peel(pygit2.Commit),
                                                repo.revparse_single(SOURCE).peel(pygit2.Commit))]
    print(f"range {OLD}..{SOURCE}: {len(commits)} commits onto {NEW}")
    baseline, ours, upgrade_times, again_times = [], [], [], []
    for run in range(args.runs):  # interleaved, so both see the same machine state
        b = cherry_pick_baseline(clone, commits)
        o = in_memory_replay(clone, commits)
        u, document = full_upgrade(clone, work / f"report-{run}", f"bench/sync-{run}")
        baseline.append(b[0]), ours.append(o[0]), upgrade_times.append(u)
        if run == 0:
            first_document = document
        else:  # the same upgrade again onto run 1's branch: what a user re-running it gets (the result cache)
            a, again = full_upgrade(clone, work / f"report-again-{run}", "bench/sync-0")
            again_times.append(a)
            CPU_TIMES.pop()  # the CPU line below is that of the runs above
            assert again["groups"] == first_document["groups"], "a re-run reported something else"
    b_conflicts, b_stops = b[1], b[2]
    o_conflicts, o_stops = o[1], o[2]
    print(f"git cherry-pick (worktree):   median {statistics.median(baseline):.2f} s  "
          f"stops {b_stops}, conflicted files {len(b_conflicts)}")
    print(f"in-memory replay (pygit2):    median {statistics.median(ours):.2f} s  "
          f"stops {o_stops}, conflicted files {len(o_conflicts)}")
    print(f"full upgrade (replay+drift+report): median {statistics.median(upgrade_times):.2f} s")
    for name, times in (("cherry-pick", baseline), ("replay", ours), ("upgrade", upgrade_times)):
        print(f"  {name} runs: " + " ".join(f"{t:.2f}" for t in times))
    # CPU time moves less than wall time when other processes share the cores.
    print("  upgrade CPU seconds (this process and its workers): " + " ".join(f"{t:.2f}" for t in CPU_TIMES))
    print(f"ratio replay / cherry-pick:   {statistics.median(ours) / statistics.median(baseline):.2f}x")
    print(f"ratio full upgrade / cherry-pick: {statistics.median(upgrade_times) / statistics.median(baseline):.2f}x")
    # Run 1 starts with an empty fact cache (a fresh clone); later runs find the parsed facts there.
    print(f"first run (empty fact cache): upgrade {upgrade_times[0]:.2f} s / cherry-pick {baseline[0]:.2f} s = "
          f"{upgrade_times[0] / baseline[0]:.2f}x")
    if len(upgrade_times) > 1:
        warm, picks = statistics.median(upgrade_times[1:]), statistics.median(baseline[1:])
        print(f"later runs (fact cache warm): median upgrade {warm:.2f} s / cherry-pick {picks:.2f} s = {warm / picks:.2f}x")
        again = statistics.median(again_times)
        print("the same upgrade again (result cache): runs " + " ".join(f"{t:.2f}" for t in again_times)
              + f", median {again:.2f} s / cherry-pick {picks:.2f} s = {again / picks:.2f}x (same groups as run 1)")
    print(f"conflicted files, ours only: {sorted(o_conflicts - b_conflicts)}; git only: {sorted(b_conflicts - o_conflicts)}")
    print("conflicted files:", ", ".join(sorted(o_conflicts)))

    if not HAND_REPLAY or HAND_REPLAY not in repo:  # bench/minimal_repo.py's copy holds what the timings read, not the hand upgrade
        print(f"no comparison with the hand upgrade: {HAND_REPLAY} is not in {args.flagtree}")
        return 0
    ours_tree = repo.revparse_single(f"bench/sync-{args.runs - 1}").peel(pygit2.Commit).tree
    hand_tree = repo.revparse_single(HAND_REPLAY).peel(pygit2.Commit).tree
    differing = sorted(patch.delta.new_file.path for patch in repo.diff(hand_tree, ours_tree))
    print(f"our replayed tree vs hand replay {HAND_REPLAY}: {len(differing)} files differ, "
          f"{len(set(differing) - o_conflicts)} of them not conflicted in our run")
    # What the hand upgrade touched: files it resolved while replaying, then files the fixes changed.
    resolved = {path for path in differing if not path.startswith(NOT_TRUNK)}
    fixed = hand_fixed_trunk_files(clone)
    truth = resolved | fixed
    flagged = set(document["summary"]["conflicted_files"])
    for group in document["groups"]:
        for finding in group["findings"]:
            if finding["severity"] != "info":
                flagged.add(finding.get("related_path") or finding["path"])
                if finding["kind"] == "symbol-drift":
                    flagged.add(finding["path"])  # the FlagTree file that uses the changed symbol
    flagged_trunk = {path for path in flagged if not path.startswith(NOT_TRUNK)}
    print(f"the hand upgrade touched {len(truth)} trunk files: {len(resolved)} resolved while replaying, "
          f"{len(fixed)} changed by the fix commits ({len(resolved & fixed)} both)")
    report_accuracy("all trunk files the hand upgrade touched", truth, flagged_trunk)
    index = UpstreamIndex(repo, *(GitTree(repo, repo.revparse_single(ref).peel(pygit2.Commit).tree, ref)
                                  for ref in (OLD, NEW)))
    evidence = {path: classify_fix(repo, path, index) for path in sorted(fixed - resolved)}
    predictable = (resolved | {path for path, (kind, _) in evidence.items() if kind == "upstream-related"})
    code = lambda paths: {path for path in paths if path.endswith(CODE)}
    report_accuracy("Python/C++ files the hand upgrade touched for upgraded trunk code", code(predictable),
                    code(flagged_trunk))
    print("evidence for each file only the fix commits touched:")
    for path, (kind, why) in evidence.items():
        mark = "hit " if path in flagged_trunk else "miss"
        print(f"  {mark} {kind:<18} {path}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
