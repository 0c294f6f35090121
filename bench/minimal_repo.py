"""Write a small bare repository that holds just what the benchmark of record reads, to carry to another machine.

    python bench/minimal_repo.py /path/to/FlagTree/mirror .benchdata/min.git

The FlagTree mirror is hundreds of MB; the lent GPU machine takes 64 MiB of working tree a call. The
benchmark of record (bench/upgrade_real.py, bench/cold_upgrade.py) reads the trees of the old tag, the new tag
and every commit of the range, and walks commit ancestry to check the range. So the copy holds every commit
reachable from the source and the new tag (without their trees: about 5 MB), the range's trees and blobs, and
the whole trees of the two tags, and what `git cherry` reads to find upstream's commits in the range (the
objects of SRC..NEW and their merge-base's tree): about 17 MB. It has no refs (the scripts name commits by
id); `git clone --shared` of it works, anything that reads an older tree does not. The mirror is only read.

On a machine with no network (the lent 16-core ones run Python 3.12), carry the copy and wheels of the
dependencies, both ignored by git (.git/info/exclude), and install them there into a folder of its own:

    pip download -q --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
        --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 -d .whl \
        click GitPython 'pygit2<1.22' libcst unidiff tree-sitter tree-sitter-cpp rich tomlkit
    # there:
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site:$PWD python3 bench/upgrade_real.py .benchdata/min.git --runs 5
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import upgrade_real  # noqa: E402


def git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=True).stdout


def wanted_objects(mirror: Path) -> bytes:
    """Object ids, one a line: the range's objects, every commit, the two tags' whole trees, and what the upgrade's
    `git cherry NEW SRC OLD` diffs: the objects of SRC..NEW and the whole tree of their merge-base."""
    OLD, SOURCE, NEW = upgrade_real.OLD, upgrade_real.SOURCE, upgrade_real.NEW
    ids = set(git(mirror, "rev-list", "--objects", "--no-object-names", SOURCE, f"^{OLD}").split())
    ids.update(git(mirror, "rev-list", SOURCE, NEW).split())
    ids.update(git(mirror, "rev-list", "--objects", "--no-object-names", NEW, f"^{SOURCE}").split())
    base = git(mirror, "merge-base", SOURCE, NEW).decode().strip()
    for tag in (OLD, NEW, base):
        ids.add(git(mirror, "rev-parse", f"{tag}^{{tree}}").strip())
        for line in git(mirror, "ls-tree", "-r", "-t", tag).splitlines():
            meta, _path = line.split(b"\t", 1)
            kind, oid = meta.split()[1:3]
            if kind != b"commit":  # a submodule's commit is not in this repository
                ids.add(oid)
    return b"\n".join(sorted(ids)) + b"\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mirror", type=Path, help="a FlagTree repository holding the benchmark's commits")
    parser.add_argument("out", type=Path, help="the bare repository to create (must not exist)")
    parser.add_argument("--move", nargs=3, metavar=("OLD", "SOURCE", "ONTO"),
                        help="the objects another move reads (default: the record's)")
    args = parser.parse_args()
    if args.move:
        upgrade_real.use_move(*args.move)
    if args.out.exists():
        parser.error(f"{args.out} exists; name a new path")
    subprocess.run(["git", "init", "-q", "--bare", str(args.out)], check=True)
    pack = git(args.mirror, "pack-objects", "-q", "--stdout", stdin=wanted_objects(args.mirror))
    git(args.out, "index-pack", "--stdin", stdin=pack)
    print(f"{args.out}: {len(pack) / 2**20:.1f} MiB pack")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
