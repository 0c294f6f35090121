"""Scale benchmark: time and peak RSS of upgrade, drift, check and plain `git cherry-pick` on synthetic repos.

    python bench/scale.py --quick            # commits {20, 100} x files {1k, 10k}, one 1 MB file
    python bench/scale.py                    # commits {50, 200, 1000} x files {1k, 10k, 50k}, one 30 MB file
    python bench/scale.py --commits 50 --files 1000 --huge-mb 2   # one cell
    python bench/scale.py --commits 20 --files 1000 --huge-mb 1 2 4 --json big.json   # the big module grows
    python bench/scale.py --plot docs/scale.png grid.json big.json   # a figure from saved runs (matplotlib)

Each cell is a fresh repository written with `git fast-import` in a temporary directory: a base commit
(tag `old`) of N files (nine in ten small Python modules, the rest C++) plus one huge Python module; an
upstream commit on it (tag `new`) that edits the first line of 2% of the files and of the huge one; and a
FlagTree branch `src` of C commits on `old`, each appending a line to three files (the first also to the
huge file), so every commit replays cleanly. Every tool runs in its own child process, with the fact cache
deleted before it (cold: the worst case); time is wall clock, peak RSS is the child's
(resource.getrusage(RUSAGE_CHILDREN) of a wrapper process that runs only that command). cherry-pick is
`git worktree add` of `new` plus one `git cherry-pick` per commit, as bench/upgrade_real.py does.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PY = sys.executable


def measure(command: list[str], cwd: Path | None = None) -> dict:
    """Run command in a wrapper process; its wall time and the peak RSS of the command's processes."""
    wrapper = [PY, __file__, "--measure", "--", *command]
    done = subprocess.run(wrapper, cwd=cwd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _measure_here(command: list[str]) -> int:
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
    print(json.dumps({"seconds": elapsed, "rss_mib": peak_kib / 1024, "rc": done.returncode,
                      "stderr": done.stderr[-300:]}))
    return 0


def _small_file(index: int) -> tuple[str, str]:
    if index % 10 == 9:
        return f"lib/d{index // 200:03d}/f{index}.cpp", (
            f"// file {index}\n#include <vector>\nint value_{index}(int a) {{\n  int b = a + {index};\n"
            + "".join(f"  b += {k};\n" for k in range(20)) + "  return b;\n}\n")
    return f"python/triton/pkg/d{index // 200:03d}/m{index}.py", (
        f"# module {index}\nimport os\n\n\ndef compute_{index}(a, b=1):\n    total = a + b\n"
        + "".join(f"    total += {k}\n" for k in range(20)) + "    return total\n")


def _huge_file(megabytes: float) -> str:
    block = "".join(f"def helper_{k}(x):\n    return x + {k}\n\n\n" for k in range(200))
    return "# huge module\n" + block * max(1, int(megabytes * 1e6 / len(block)))


def build_repo(root: Path, files: int, commits: int, huge_mb: float) -> None:
    subprocess.run(["git", "init", "-q", "--bare", str(root)], check=True)
    base = dict(_small_file(index) for index in range(files))
    base["python/triton/pkg/huge.py"] = _huge_file(huge_mb)
    paths = sorted(base)
    stream: list[bytes] = []

    def blob_command(path: str, text: str) -> None:
        data = text.encode()
        stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))

    def commit(ref: str, mark: int, parent: int | None, message: str, changes: dict[str, str]) -> None:
        stream.append(b"commit %s\nmark :%d\nauthor A <a@x> %d +0000\ncommitter A <a@x> %d +0000\n"
                      % (ref.encode(), mark, 1_700_000_000 + mark, 1_700_000_000 + mark))
        stream.append(b"data %d\n%s\n" % (len(message), message.encode()))
        if parent is not None:
            stream.append(b"from :%d\n" % parent)
        for path, text in changes.items():
            blob_command(path, text)
    commit("refs/heads/base", 1, None, "base", base)
    upstream = {path: "# upstream changed this\n" + base[path].split("\n", 1)[1]
                for path in paths[::50] + ["python/triton/pkg/huge.py"]}
    commit("refs/heads/upstream", 2, 1, "upstream", upstream)
    current = dict(base)
    for number in range(commits):
        touched = [paths[(number * 7 + k * 13) % len(paths)] for k in range(3)]
        if number == 0:
            touched.append("python/triton/pkg/huge.py")
        changes = {}
        for path in touched:
            line = f"flagtree_{number} = {number}\n" if path.endswith(".py") else f"// flagtree {number}\n"
            current[path] = current[path] + line
            changes[path] = current[path]
        commit("refs/heads/src", 3 + number, 1 if number == 0 else 2 + number, f"flagtree change {number}", changes)
    subprocess.run(["git", "-C", str(root), "fast-import", "--quiet"], input=b"".join(stream), check=True)
    subprocess.run(["git", "-C", str(root), "tag", "old", "base"], check=True)
    subprocess.run(["git", "-C", str(root), "tag", "new", "upstream"], check=True)


CHERRY_PICK = """set -e
git -C "$1" worktree add -q --detach "$2" new
cd "$2"
for c in $(git rev-list --reverse old..src); do
  git cherry-pick --allow-empty --keep-redundant-commits "$c" >/dev/null 2>&1 || \
    { git add -A; git commit -q --allow-empty --no-edit; }
done
"""


def run_cell(work: Path, files: int, commits: int, huge_mb: float) -> dict:
    repo = work / f"repo-{files}-{commits}.git"
    start = time.perf_counter()
    build_repo(repo, files, commits, huge_mb)
    built = time.perf_counter() - start
    checkout = work / f"checkout-{files}-{commits}"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(checkout), "src"], check=True)
    cache = repo / "flagtree-sync" / "cache"
    sync = [PY, "-m", "sync"]
    rng = ["--repo", str(repo), "--from", "old", "--onto", "new", "--branch", "src"]
    results: dict[str, Any] = {"files": files, "commits": commits, "huge_mb": huge_mb, "build_s": built}
    picks = work / f"pick-{files}-{commits}"
    results["cherry-pick"] = measure(["bash", "-c", CHERRY_PICK, "pick", str(repo), str(picks)])
    for name, command in (("drift", [*sync, "drift", *rng, "--symbols"]),
                          ("check", [*sync, "check", str(checkout)]),
                          ("upgrade", [*sync, "upgrade", *rng, "--force", "--target-branch", "sync/scale",
                                       "--out", str(work / f"report-{files}-{commits}")])):
        shutil.rmtree(cache, ignore_errors=True)
        results[name] = measure(command)
    shutil.rmtree(repo, ignore_errors=True)
    shutil.rmtree(checkout, ignore_errors=True)
    shutil.rmtree(picks, ignore_errors=True)
    return results


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--measure":
        return _measure_here(sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--commits", type=int, nargs="*")
    parser.add_argument("--files", type=int, nargs="*")
    parser.add_argument("--huge-mb", type=float, nargs="*", help="sizes of the big module (one cell grid each)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--plot", type=Path, metavar="PNG",
                        help="draw the results of saved --json runs (given as arguments) into PNG and exit")
    parser.add_argument("saved", nargs="*", type=Path, help="with --plot: the JSON files of earlier runs")
    args = parser.parse_args()
    if args.plot:
        rows = [row for path in args.saved for row in json.loads(path.read_text())]
        plot(rows, args.plot)
        return 0
    commits = args.commits or ([20, 100] if args.quick else [50, 200, 1000])
    files = args.files or ([1000, 10000] if args.quick else [1000, 10000, 50000])
    sizes = args.huge_mb or [1.0 if args.quick else 30.0]
    work = Path(tempfile.mkdtemp(prefix="flagtree-scale-"))
    os.environ.setdefault("PYTHONPATH", str(Path(__file__).resolve().parent.parent))
    rows = []
    for huge in sizes:
        print(f"{'files':>6} {'commits':>7} | {'cherry-pick':>16} | {'upgrade':>16} {'ratio':>6} | "
              f"{'drift':>16} | {'check':>16}   (seconds, peak RSS MiB; huge file {huge} MB)")
        for file_count in files:
            for commit_count in commits:
                row = run_cell(work, file_count, commit_count, huge)
                rows.append(row)
                cell = lambda name: f"{row[name]['seconds']:7.2f}s {row[name]['rss_mib']:6.0f}M" + (
                    "" if row[name]["rc"] in (0, 1) else f" rc={row[name]['rc']}")
                ratio = row["upgrade"]["seconds"] / row["cherry-pick"]["seconds"]
                print(f"{file_count:>6} {commit_count:>7} | {cell('cherry-pick'):>16} | {cell('upgrade'):>16} "
                      f"{ratio:5.2f}x | {cell('drift'):>16} | {cell('check'):>16}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return 0


def plot(rows: list[dict], out: Path) -> None:
    """Left: seconds against commits, a line per tree size, cherry-pick dashed, upgrade solid (cells with the
    small module). Right: upgrade's and cherry-pick's seconds and peak RSS against the big module's size."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, (grid, big) = plt.subplots(1, 2, figsize=(10, 4))
    small = [row for row in rows if row["huge_mb"] < 0.1]
    for files in sorted({row["files"] for row in small}):
        cells = sorted((row for row in small if row["files"] == files), key=lambda row: row["commits"])
        if len(cells) < 2:
            continue
        commits = [row["commits"] for row in cells]
        for tool, style in (("cherry-pick", "--"), ("upgrade", "-")):
            grid.plot(commits, [row[tool]["seconds"] for row in cells], style, marker="o",
                      label=f"{tool}, {files // 1000}k files")
    grid.set(xscale="log", yscale="log", xlabel="FlagTree commits", ylabel="seconds (cold, wall)",
             title="time against commits and tree size")
    grid.legend(fontsize=7)
    growing = sorted((row for row in rows if row["huge_mb"] >= 0.1), key=lambda row: row["huge_mb"])
    if growing:
        sizes = [row["huge_mb"] for row in growing]
        memory = big.twinx()
        for tool, style in (("cherry-pick", "--"), ("upgrade", "-")):
            big.plot(sizes, [row[tool]["seconds"] for row in growing], style, marker="o", label=f"{tool} seconds")
            memory.plot(sizes, [row[tool]["rss_mib"] for row in growing], style, marker="s", color="grey",
                        label=f"{tool} peak RSS")
        big.set(xlabel="big Python module FlagTree changed (MB)", ylabel="seconds",
                title=f"one big module ({growing[0]['files']} files, {growing[0]['commits']} commits)")
        memory.set_ylabel("peak RSS (MiB)")
        big.legend(loc="upper left", fontsize=7)
        memory.legend(loc="lower right", fontsize=7)
    figure.tight_layout()
    figure.savefig(out, dpi=80)


if __name__ == "__main__":
    raise SystemExit(main())
