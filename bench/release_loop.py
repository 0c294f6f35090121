"""The release loop of UPGRADING.md on a real FlagTree branch, with no range flag after `upgrade`.

    PYTHONPATH=. python bench/release_loop.py /work/.mirror/stringl1l1l1l+FlagTree/repo \
        [--branch triton_v3.5.x] [--from 0add68262] [--onto 7c56a5e40]

A shared clone of the mirror (the mirror is never written) under /tmp/rel-loop-*: the FlagTree branch has no
flagtree-upstream.toml, so `upgrade` is the only command given --from and --onto. Then, on the branch it made,
each command reads the range from the branch: status, drift --target, drift --target --apply, suppress --target
(the first finding drift lists that a review can take), provenance (per backend, in a worktree of the branch),
status again, and check --baseline. Prints each command, its exit status, its time and the first lines of what it
printed; exit 1 when any command exits 2 or 3 (what the loop must never do).
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLAGS = ("--from", "--onto")  # never given after upgrade


def sh(*args: str, cwd: Path) -> str:
    return subprocess.run(args, cwd=cwd, check=True, capture_output=True, text=True).stdout


class Loop:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.failed: list[str] = []

    def run(self, *args: str, cwd: Path | None = None, lines: int = 6) -> subprocess.CompletedProcess[str]:
        shown = "flagtree-sync " + " ".join(args)
        if self.failed == [] and any(flag in args for flag in FLAGS) and args[0] != "upgrade":
            self.failed.append(f"{shown}: a range flag after upgrade")
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "sync", *args], cwd=cwd or self.repo, capture_output=True,
                              text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
        took = time.perf_counter() - start
        print(f"$ {shown}\n(exit status {done.returncode}, {took:.1f} s)")
        output = (done.stdout + done.stderr).splitlines()
        for line in output[:lines]:
            print(f"  {line[:200]}")
        if len(output) > lines:
            print(f"  ... {len(output) - lines} more line(s)")
        if done.returncode in (2, 3):
            self.failed.append(f"{shown}: exit {done.returncode}: {(done.stderr or done.stdout).strip()[:300]}")
        return done


def stops_only_on(loop: Loop, args: argparse.Namespace, root: Path, glob: str = "third_party/nvidia/*") -> None:
    """Stop mode on real history, stopping only on one backend's files: each stop resolved by taking FlagTree's
    side of the matching files (git rm where FlagTree deleted it), the other conflicts git-added with markers."""
    print(f"\n# --stop-on {glob}: stops only on that backend's conflicts, the others committed with markers")
    done = loop.run("upgrade", "--from", args.old, "--onto", args.onto, "--target-branch", "sync/stops", "-q",
                    "--stop-on", glob, lines=1)
    worktree = loop.repo / ".git" / "flagtree-sync" / "worktree"
    stops = 0
    while done.returncode == 4 and stops < 40:
        stops += 1
        for path in sh("git", "diff", "--name-only", "--diff-filter=U", cwd=worktree).split():
            if fnmatch.fnmatchcase(path, glob):
                theirs = subprocess.run(["git", "checkout", "--theirs", "--", path], cwd=worktree, capture_output=True)
                sh("git", "add", "-A", "--", path, cwd=worktree) if theirs.returncode == 0 else \
                    sh("git", "rm", "-q", "--", path, cwd=worktree)
            else:
                sh("git", "add", "-A", "--", path, cwd=worktree)
        done = loop.run("upgrade", "--continue", "-q", lines=1)
    print(f"  {stops} stop(s) with --stop-on {glob}")
    loop.run("status", "--target", "sync/stops", "-q", lines=1)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mirror", type=Path)
    parser.add_argument("--branch", default="triton_v3.5.x")
    parser.add_argument("--from", dest="old", default="0add68262")
    parser.add_argument("--onto", default="7c56a5e40")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="rel-loop-"))
    try:
        repo = root / "flagtree"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(args.mirror), str(repo)], check=True)
        sh("git", "checkout", "-q", "-B", "release", f"origin/{args.branch}", cwd=repo)
        sh("git", "config", "user.name", "Release Engineer", cwd=repo)
        sh("git", "config", "user.email", "release@example.com", cwd=repo)
        pinned = subprocess.run(["git", "cat-file", "-e", "HEAD:flagtree-upstream.toml"], cwd=repo,
                                capture_output=True).returncode == 0
        print(f"# {args.branch} ({sh('git', 'rev-parse', '--short=9', 'HEAD', cwd=repo).strip()}), "
              f"flagtree-upstream.toml: {'yes' if pinned else 'no'}; {args.old} -> {args.onto}\n")
        loop = Loop(repo)
        target = "sync/release"
        upgrade = loop.run("upgrade", "--from", args.old, "--onto", args.onto, "--target-branch", target,
                           "-q", "--out", str(root / "report"))
        print(f"  pin commit: {sh('git', 'log', '-1', '--format=%B', target, cwd=repo).strip()!r}")
        commits = json.loads((root / "report" / "report.json").read_text())["commits"]
        print(f"  --on-conflict stop would stop {sum(1 for c in commits if c['conflicts'])} time(s) "
              f"({sum(len(c['conflicts']) for c in commits)} conflicts)\n")
        if upgrade.returncode in (2, 3):
            raise SystemExit("\n".join(loop.failed))
        loop.run("status", "--target", target, "-q")
        drift = loop.run("drift", "--target", target, "-q", "--json", lines=0)
        findings = [(f["kind"], f["path"], f.get("subject")) for g in json.loads(drift.stdout)["groups"]
                    for f in g["findings"] if f["severity"] in ("error", "warning") and not f.get("suppressed")]
        print(f"  {len(findings)} open finding(s): " + ", ".join(sorted({kind for kind, _, _ in findings})))
        loop.run("drift", "--target", target, "-q", "--apply", lines=2)
        reviewable = [f for f in findings if f[0] not in ("overlay-auto-mergeable",)]
        if reviewable:
            kind, path, _ = reviewable[0]
            done = loop.run("suppress", "--target", target, "--kind", kind, "--path", path, "--reason",
                            "reviewed in the release loop bench")
            if done.returncode == 2 and "--subject" in done.stdout + done.stderr:
                print("  (several subjects: the error lists them; the bench takes none)")
                loop.failed = [line for line in loop.failed if not line.startswith("flagtree-sync suppress")]
        checkout = root / "sync"
        sh("git", "worktree", "add", "-q", str(checkout), target, cwd=repo)
        backends = sorted(p.name for p in (checkout / "third_party").iterdir()
                          if (p / "backend" / "spec").is_dir()) if (checkout / "third_party").is_dir() else []
        for backend in backends:
            loop.run("provenance", "--tag", args.onto, "--backend", backend, cwd=checkout, lines=3)
        sh("git", "add", "-A", "third_party", cwd=checkout)
        if sh("git", "status", "--porcelain", "--untracked-files=no", cwd=checkout).strip():
            sh("git", "commit", "-qm", "Record the new bases", cwd=checkout)
        loop.run("status", "-q", cwd=checkout)  # on the branch: not even --target
        baseline = root / "check-baseline.json"
        loop.run("check", ".", "--write-baseline", str(baseline), cwd=checkout, lines=2)
        loop.run("check", ".", "--baseline", str(baseline), cwd=checkout, lines=3)
        stops_only_on(loop, args, root)
        print("\nresult: " + ("every command after upgrade ran with no range flag and none exited 2 or 3"
                              if not loop.failed else "FAILED:\n  " + "\n  ".join(loop.failed)))
        return 1 if loop.failed else 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
