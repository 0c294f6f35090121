"""Differential harness: flagtree-sync's replay against plain `git cherry-pick` on real FlagTree moves.

    PYTHONPATH=. python bench/replay_vs_git.py [--move NAME ...] [--repo NAME=PATH ...]

For each move it makes a throw-away bare `git clone --shared` of the repository under /tmp/replay-*,
replays OLD..SOURCE onto ONTO with the upgrade's replay engine (policy markers; the commits the upgrade
leaves out as upstream's are left out of git's picks too, as git rebase drops them), then holds it to git:

- pick by pick: git cherry-pick of the same commit onto the same head (the replay's head before it) must
  leave the same unmerged paths, and the same tree outside them;
- the whole chain: git cherry-pick of every commit in turn from ONTO (conflicts committed as git leaves
  them) must end with the tree the replay ends with, outside every path either side called conflicted.

It prints the first divergent commit and path of each move, the counts, and the time of the replay
alone and of the git chain. Exit status 1 when any move diverges. The repositories are only read.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from sync.git.reference import aside, cherry_picker, differing_paths
from sync.jobs.upgrade import resolve_params
from sync.replay.options import ReplayChoices
from sync.replay.engine import finish_upgrade, run_upgrade

JINGGE = "/work/.mirror/jingge815+FlagTree/repo"
FT37 = "/work/real/ft37.git"


@dataclass(frozen=True)
class Move:
    name: str
    repo: str
    old: str
    source: str
    onto: str


MOVES = (
    Move("3.5->3.6 (record)", JINGGE, "0add68262", "fe647093f", "7c56a5e40"),
    Move("3.3 line->3.4.0", JINGGE, "65c6b8816", "e9572c877", "c817b9b63"),
    Move("triton_v3.6.x->3.7 branch point", FT37, "7c56a5e40", "2865e9e68", "1859e68db"),
)


@dataclass
class Outcome:
    move: Move
    commits: int = 0
    upstream: int = 0
    picks_divergent: list[tuple[str, str, str]] = field(default_factory=list)  # commit, path, why
    conflicted_tool: int = 0
    conflicted_git: int = 0
    final_divergent: list[str] = field(default_factory=list)
    replay_s: float = 0.0
    git_chain_s: float = 0.0
    git_aborted: list[str] = field(default_factory=list)


def run_move(move: Move) -> Outcome:
    outcome = Outcome(move)
    clone = Path(tempfile.mkdtemp(prefix="replay-vs-git-", dir="/tmp"))
    try:
        subprocess.run(["git", "clone", "-q", "--shared", "--bare", "--no-tags", move.repo, str(clone / "r.git")],
                       check=True, capture_output=True)
        repo_path = str(clone / "r.git")
        repo, params = resolve_params(repo_path, old=move.old, onto=move.onto, source_branch=move.source,
                                      choices=ReplayChoices(target_branch="replay-vs-git"))
        start = time.perf_counter()
        result = run_upgrade(repo, params, force=True, progress=lambda *args: None)
        outcome.replay_s = time.perf_counter() - start
        finish_upgrade(repo)
        outcome.commits = len(result.results)
        outcome.upstream = len(result.upstream)
        picked = [item for item in result.results if item.source not in result.upstream]
        with cherry_picker(repo) as git:
            head = params.range.onto.oid
            conflicted_all: set[str] = set()
            for item in picked:
                compare_pick(repo, git, head, item, outcome, conflicted_all)
                head = item.result or head
            start = time.perf_counter()
            chain_head, chain_conflicted = params.range.onto.oid, set()
            for chain_head, pick in git.chain(params.range.onto.oid, [item.source for item in picked]):
                chain_conflicted |= pick.conflicted
            outcome.git_chain_s = time.perf_counter() - start
            outcome.final_divergent = differing_paths(git.repo, head, chain_head, conflicted_all | chain_conflicted)
    finally:
        shutil.rmtree(clone, ignore_errors=True)
    return outcome


def compare_pick(repo: pygit2.Repository, git, head: str, item, outcome: Outcome,  # noqa: ANN001
                 conflicted_all: set[str]) -> None:
    """git cherry-pick of item.source onto head against the replay's pick of it."""
    reference = git.pick(head, item.source)
    if reference is None:
        outcome.git_aborted.append(item.source[:9])
        return
    tool = {aside(conflict.path) for conflict in item.conflicts}
    outcome.conflicted_tool += len(tool)
    outcome.conflicted_git += len(reference.conflicted)
    conflicted_all |= tool | reference.conflicted
    for path in sorted(tool ^ reference.conflicted):
        why = "conflicted by the replay only" if path in tool else "conflicted by git only"
        outcome.picks_divergent.append((item.source[:9], path, why))
    tree = str(repo[item.result].peel(pygit2.Commit).tree_id) if item.result else \
        str(repo[head].peel(pygit2.Commit).tree_id)
    for path in differing_paths(git.repo, tree, reference.tree, tool | reference.conflicted):
        outcome.picks_divergent.append((item.source[:9], path, "different file"))


def report(outcome: Outcome, every: bool = False) -> str:
    move = outcome.move
    lines = [f"== {move.name}: {move.old}..{move.source} onto {move.onto} ({Path(move.repo).parent.name or move.repo})",
             f"commits {outcome.commits}, left out as upstream {outcome.upstream}, "
             f"picked {outcome.commits - outcome.upstream}",
             f"conflicted paths (sum over picks): replay {outcome.conflicted_tool}, git {outcome.conflicted_git}",
             f"divergent paths pick by pick: {len(outcome.picks_divergent)}",
             f"divergent paths in the final tree (outside conflicted ones): {len(outcome.final_divergent)}",
             f"replay alone {outcome.replay_s:.1f} s; git cherry-pick chain {outcome.git_chain_s:.1f} s"]
    for commit, path, why in outcome.picks_divergent[:None if every else 1]:
        lines.append(f"{'divergent' if every else 'first divergent'}: commit {commit} path {path} ({why})")
    if outcome.final_divergent:
        lines.append(f"first divergent path of the final tree: {outcome.final_divergent[0]}")
    if outcome.git_aborted:
        lines.append(f"git itself aborted on {len(outcome.git_aborted)} picks: {', '.join(outcome.git_aborted)}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--move", action="append", help="run only the moves whose name contains this")
    parser.add_argument("--repo", action="append", default=[], help="NAME=PATH: another repository for a move")
    parser.add_argument("--all", action="store_true", help="print every divergent path, not only the first")
    args = parser.parse_args()
    paths = dict(item.split("=", 1) for item in args.repo)
    failed = False
    for move in MOVES:
        if args.move and not any(part in move.name for part in args.move):
            continue
        move = Move(move.name, paths.get(move.name, move.repo), move.old, move.source, move.onto)
        outcome = run_move(move)
        print(report(outcome, args.all), flush=True)
        failed |= bool(outcome.picks_divergent or outcome.final_divergent)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
