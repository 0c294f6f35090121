"""On a CUDA machine: build FlagTree triton with the demo backend, run tl.squeeze on the GPU, compare.

    python3 bench/gpu_demo.py [--out DIR]

Assembles the build with sync.builder.package.assemble (what python/setup.py runs) from the triton already
installed there (FLAGTREE_TRITON_SRC), then, in separate processes for the FlagTree build and for
stock triton: checks a kernel that uses the backend's tl.squeeze/tl.unsqueeze against torch, times
the same plain kernel on both (the hooks must cost nothing at kernel run time) and times
`import triton` in fresh interpreters, alternating the two builds. The build includes the native core
(triton._C.libflagtree) when a C++ compiler is there. Before the timings it compiles one kernel with
stock triton twice and then with the FlagTree build twice, all sharing one TRITON_CACHE_DIR, and
counts the kernel's cache entries each run adds (a new entry is a miss). Prints and writes results.json.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE_PROBE = r'''
import json, os, sys, time
import torch, triton, triton.language as tl
from triton.runtime.cache import triton_key


@triton.jit
def flagtree_cache_probe(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 3.0 + 1.0, mask=mask)


def kernel_entries(root):
    """Cache directories that hold a compiled flagtree_cache_probe (one per distinct cache key)."""
    if not os.path.isdir(root):
        return set()
    return {d for d in os.listdir(root) if any(f.startswith("flagtree_cache_probe.") for f in os.listdir(os.path.join(root, d)))}


root = os.environ["TRITON_CACHE_DIR"]
before = kernel_entries(root)
x = torch.arange(4096, device="cuda", dtype=torch.float32)
y = torch.empty_like(x)
start = time.perf_counter()
flagtree_cache_probe[(4,)](x, y, x.numel(), BLOCK=1024)
torch.cuda.synchronize()
seconds = time.perf_counter() - start
added = sorted(kernel_entries(root) - before)
print(json.dumps({"triton": triton.__file__, "key_tail": triton_key()[-72:], "correct": bool(torch.equal(y, x * 3.0 + 1.0)),
                  "first_call_s": seconds, "new_kernel_entries": added, "hit": not added}))
'''


def cache_runs(stock_env: dict[str, str], flagtree_env: dict[str, str]) -> list[dict]:
    """stock, stock, FlagTree, FlagTree, each a fresh process, one shared cache directory."""
    cache = tempfile.mkdtemp(prefix="flagtree-shared-cache-")
    script = Path(tempfile.mkdtemp(prefix="flagtree-cache-probe-")) / "cache_probe.py"
    script.write_text(CACHE_PROBE)
    runs = []
    for name, env in (("stock", stock_env), ("stock", stock_env), ("flagtree", flagtree_env), ("flagtree", flagtree_env)):
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              env={**env, "TRITON_CACHE_DIR": cache})
        if done.returncode != 0:
            raise SystemExit(done.stderr[-4000:])
        runs.append({"build": name, **json.loads(done.stdout.strip().splitlines()[-1])})
        print(f"cache: {name}: {'hit' if runs[-1]['hit'] else 'miss'} ({runs[-1]['first_call_s']:.3f} s first call)")
    return runs


def kernels_source() -> str:
    return r'''
import json, sys, time
import torch, triton, triton.language as tl


@triton.jit
def rows_trunk(x_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * N + tl.arange(0, N)[None, :])          # [1, N]
    y = tl.reshape(x, [N]) * 2.0                                       # [N]
    total = tl.sum(tl.expand_dims(y, 1), axis=0)                       # [1]
    tl.store(out_ptr + row + tl.arange(0, 1), total)


if hasattr(tl, "squeeze"):
    @triton.jit
    def rows_spec(x_ptr, out_ptr, N: tl.constexpr):
        row = tl.program_id(0)
        x = tl.load(x_ptr + row * N + tl.arange(0, N)[None, :])      # [1, N]
        y = tl.squeeze(x, 0) * 2.0                                     # [N]
        total = tl.sum(tl.unsqueeze(y, 1), axis=0)                     # [1]
        tl.store(out_ptr + row + tl.arange(0, 1), total)


def run(kernel, x):
    out = torch.empty(x.shape[0], device="cuda", dtype=torch.float32)
    kernel[(x.shape[0],)](x, out, N=x.shape[1])
    return out


torch.manual_seed(0)
x = torch.randn(131072, 1024, device="cuda", dtype=torch.float32)  # 512 MiB: a few hundred us per call
expected = (x * 2.0).sum(dim=1)
try:
    from triton._flagtree_backend import FLAGTREE_BACKEND
except ImportError:  # stock triton
    FLAGTREE_BACKEND = None
result = {"backend": FLAGTREE_BACKEND, "triton": triton.__file__, "has_squeeze": hasattr(tl, "squeeze")}
for name in ("rows_trunk", "rows_spec"):
    kernel = globals().get(name)
    if kernel is None:
        continue
    got = run(kernel, x)
    result[name + "_max_abs_err"] = float((got - expected).abs().max())
    result[name + "_ms"] = [triton.testing.do_bench(lambda: run(kernel, x), warmup=50, rep=300) for _ in range(5)]
print(json.dumps(result))
'''


def role(env: dict[str, str]) -> dict:
    script = Path(tempfile.mkdtemp(prefix="flagtree-kernels-")) / "kernels.py"  # @jit needs a source file
    script.write_text(kernels_source())
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-4000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def import_seconds(env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import triton"], check=True, env=env)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    parser.add_argument("--imports", type=int, default=41)
    parser.add_argument("--pip", action="store_true",
                        help="install the build with `pip install ./python` (needs setuptools, wheel and libcst "
                             "importable) instead of calling sync.builder.package.assemble directly")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    import triton  # the stock triton of this machine: the build input

    from sync.builder.package import assemble, build_native
    from sync.errors import SyncError

    site = Path(tempfile.mkdtemp(prefix="flagtree-site-"))
    if args.pip:
        env = {**os.environ, "FLAGTREE_BACKEND": "demo", "FLAGTREE_TRITON_SRC": str(Path(triton.__file__).parent),
               "FLAGTREE_BUILD_DIR": tempfile.mkdtemp(prefix="flagtree-build-")}
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
                        "--target", str(site), str(REPO / "python")], check=True, env=env)
        print(f"pip installed FlagTree triton (backend demo) into {site}")
    else:
        hooked = assemble(Path(triton.__file__).parent, site / "triton", "demo", REPO)
        print(f"assembled FlagTree triton (backend demo) in {site}; hooks in {', '.join(hooked)}")
        start = time.perf_counter()
        try:
            native = str(build_native(REPO, site / "triton", "demo"))
        except SyncError as exc:  # the run still measures the Python half; the result says why
            native = f"not built: {exc}"
        native_build_s = time.perf_counter() - start
        print(f"native core: {native} ({native_build_s:.1f} s)")
    # A plain copy of stock triton beside the build separates the cost of the hooks from the cost
    # of importing from another file system location.
    copy = Path(tempfile.mkdtemp(prefix="stock-copy-"))
    shutil.copytree(Path(triton.__file__).parent, copy / "triton", symlinks=True)
    base = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    stock_env = dict(base)
    flagtree_env = {**base, "PYTHONPATH": str(site)}
    copy_env = {**base, "PYTHONPATH": str(copy)}
    cache = cache_runs(stock_env, flagtree_env)
    self_report = subprocess.run([sys.executable, "-m", "triton.flagtree_spec", "--json"], capture_output=True,
                                 text=True, env=flagtree_env)
    flagtree, stock = role(flagtree_env), role(stock_env)
    role(copy_env)  # warms the copy's bytecode cache like the others
    imports = {"flagtree": [], "stock": [], "stock_copy": []}
    for _ in range(args.imports):  # interleaved so all see the same machine state
        imports["flagtree"].append(import_seconds(flagtree_env))
        imports["stock"].append(import_seconds(stock_env))
        imports["stock_copy"].append(import_seconds(copy_env))
    breakdown = subprocess.run([sys.executable, "-X", "importtime", "-c", "import triton"], capture_output=True,
                               text=True, env=flagtree_env).stderr.splitlines()
    flagtree_lines = [line for line in breakdown if "flagtree" in line]
    median = statistics.median
    summary = {
        "native": native if not args.pip else "see self_report",
        "native_build_s": native_build_s if not args.pip else None,
        "cache": cache,
        "self_report": json.loads(self_report.stdout) if self_report.returncode == 0 else self_report.stderr[-2000:],
        "flagtree": flagtree, "stock": stock,
        "import_s": {k: median(v) for k, v in imports.items()},
        "import_ratio_vs_stock_copy": median(imports["flagtree"]) / median(imports["stock_copy"]),
        "import_ratio_vs_stock_in_place": median(imports["flagtree"]) / median(imports["stock"]),
        "plain_kernel_ratio": median(flagtree["rows_trunk_ms"]) / median(stock["rows_trunk_ms"]),
        "squeeze_kernel_vs_stock_ratio": median(flagtree["rows_spec_ms"]) / median(stock["rows_trunk_ms"]),
        "flagtree_importtime_us": flagtree_lines,
    }
    print(json.dumps(summary, indent=1))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
