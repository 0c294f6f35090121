"""Peak RSS of libgit2's three-way merge of bench/scale.py's big module: the replay's share of an upgrade's peak.

    python bench/merge_memory.py --huge-mb 1 2 4
    python bench/merge_memory.py --huge-mb 1 2 4 --line-bytes 40   # lines as long as real source's

For each size, a fresh scale repository (1000 files, 1 commit) is built, and a child process merges the big
module's three versions (tag old, branch src, tag new) with sync.git.merge.merge_blobs, the call the replay
makes; it prints the child's peak RSS (VmHWM) before and after the merge.

The scale module's lines are about 9 bytes long, and xdiff's memory goes by lines. --line-bytes N merges a
module of N-byte lines instead (each line distinct; new edits its first line, src appends one), written to
a fresh repository before the child starts, so the child's peak before the merge holds none of it.
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
repo, path = pygit2.Repository(sys.argv[1]), sys.argv[2]
side = lambda ref: repo.revparse_single(ref).peel(pygit2.Tree)[path].id
before = hwm()
outcome = merge_blobs(repo, path, side("old"), side("src"), side("new"))
print(f"peak RSS {before} MiB before the merge, {hwm()} MiB after (clean: {outcome.clean})")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--huge-mb", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    parser.add_argument("--line-bytes", type=int, metavar="N", help="merge a module of N-byte lines instead")
    args = parser.parse_args()
    for size in args.huge_mb:
        with tempfile.TemporaryDirectory(prefix="flagtree-merge-memory-") as work:
            repo = Path(work) / "repo.git"
            if args.line_bytes:
                path = "module.py"
                _module_repo(repo, path, size, args.line_bytes)
                label = f"{size:4.1f} MB module of {args.line_bytes}-byte lines"
            else:
                path = "python/triton/pkg/huge.py"
                scale.build_repo(repo, 1000, 1, size)
                label = f"{size:4.1f} MB module"
            done = subprocess.run([sys.executable, "-c", CHILD, str(repo), path], capture_output=True, text=True,
                                  check=True)
            print(f"{label}: {done.stdout.strip()}", flush=True)
    return 0


def _module_repo(repo: Path, path: str, megabytes: float, line_bytes: int) -> None:
    """Tags old and new and branch src of one module of distinct line_bytes-long lines."""
    import pygit2
    store = pygit2.init_repository(str(repo), bare=True)
    count = max(1, int(megabytes * 1e6 / line_bytes))
    lines = [f"value_{index} = {index}".ljust(line_bytes - 1, "#") + "\n" for index in range(count)]
    signature = pygit2.Signature("bench", "bench@example.com", 0, 0)

    def commit(text: str, parents: list[pygit2.Oid]) -> pygit2.Oid:
        builder = store.TreeBuilder()
        builder.insert(path, store.create_blob(text.encode()), pygit2.GIT_FILEMODE_BLOB)
        return store.create_commit(None, signature, signature, "m", builder.write(), parents)

    old = commit("".join(lines), [])
    new = commit("".join(["edited = 0\n", *lines[1:]]), [old])
    src = commit("".join([*lines, "appended = 1\n"]), [old])
    store.create_reference("refs/tags/old", old)
    store.create_reference("refs/tags/new", new)
    store.create_reference("refs/heads/src", src)


if __name__ == "__main__":
    raise SystemExit(main())
