"""How long the native FlagTree core (lib/) takes to build for the demo backend, against its budget.

    python bench/native_build.py [--runs 3]

Each run builds into a fresh temporary triton package (CMake, Ninja, pybind11; nothing is cached between runs)
and prints its wall seconds; the budget is 60 s on a 2-core machine. The test of the build itself
(tests/test_native.py) checks what is built, never how long it takes.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sync.builder.package import build_native  # noqa: E402

BUDGET_S = 60.0


def build_once() -> float:
    with tempfile.TemporaryDirectory() as scratch:
        package = Path(scratch) / "triton"
        package.mkdir()
        (package / "FLAGTREE_SPEC.json").write_text('{"native": null}')
        start = time.perf_counter()
        build_native(REPO, package, "demo")
        return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    seconds = [build_once() for _ in range(runs)]
    for number, took in enumerate(seconds, 1):
        print(f"run {number}: {took:.1f} s")
    worst = max(seconds)
    print(f"worst {worst:.1f} s: {'within' if worst < BUDGET_S else 'OVER'} the {BUDGET_S:.0f} s budget")
    return 0 if worst < BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
