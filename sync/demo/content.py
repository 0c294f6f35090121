"""Text of the miniature upstream Triton and FlagTree fork (written for this project).

Each scenario a later analysis must find is planted here on purpose; the comment
above a change names the scenario. Python and C++ are small but real enough to parse.
"""
from __future__ import annotations

from textwrap import dedent
from typing import Union

# A change maps a path to new text, to None (delete), or to ("rename", new_path, text).
Rename = tuple[str, str, str]
Change = Union[str, None, Rename]


def d(text: str) -> str:
    return dedent(text).lstrip("\n")


UPSTREAM_BASE: dict[str, str] = {
    "README.md": "# triton (miniature upstream for the flagtree-sync demo)\n",
    "CMakeLists.txt": d("""
        cmake_minimum_required(VERSION 3.20)
        project(triton CXX)
        set(TRITON_VERSION 3.5.0)
        add_subdirectory(lib)
        add_subdirectory(python/src)
        """),
    "python/src/ir.cc": d("""
        #include "ir.h"

        void init_triton_ir(py::module &&m) {
          m.def("get_int1_ty", &getInt1Ty);
          m.def("get_int8_ty", &getInt8Ty);
        }
        """),
    "include/triton/Analysis/Utility.h": d("""
        #pragma once

        namespace mlir {
        bool isSingleValue(int value);

        int getNumElements(int shape0, int shape1);

        unsigned getScratchSizeInBytes(int bytes);
        } // namespace mlir
        """),
    "lib/Analysis/Alias.cpp": d("""
        #include "triton/Analysis/Alias.h"

        namespace mlir {
        bool mayAlias(int lhs, int rhs) { return lhs == rhs; }
        } // namespace mlir
        """),
    "lib/Analysis/Membar.cpp": d("""
        #include "triton/Analysis/Membar.h"

        namespace mlir {

        bool MembarAnalysis::isFenceNeeded(Operation *op) const {
          if (!op)
            return false;
          auto effects = getEffects(op);
          return !effects.empty();
        }

        void MembarAnalysis::run() {
          for (auto *op : ops)
            update(op);
        }

        } // namespace mlir
        """),
    "python/triton/__init__.py": d('''
        """Miniature Triton trunk for the flagtree-sync demo."""
        __version__ = "3.5.0"
        '''),
    "python/triton/_utils.py": d('''
        """Small helpers shared across the package."""


        def cdiv(x: int, y: int) -> int:
            return (x + y - 1) // y


        def find_paths_if(iterable, pred):
            found = []
            for index, item in enumerate(iterable):
                if pred(index, item):
                    found.append((index,))
            return found


        def get_iterable_path(iterable, path):
            for index in path:
                iterable = iterable[index]
            return iterable
        '''),
    "python/triton/errors.py": d('''
        """Errors raised by the compiler."""


        class CompilationError(Exception):
            def __init__(self, message: str):
                super().__init__(message)
        '''),
    "python/triton/testing.py": d('''
        """Benchmark helpers."""
        import time


        def do_bench(fn, warmup=25, rep=100):
            for _ in range(warmup):
                fn()
            start = time.perf_counter()
            for _ in range(rep):
                fn()
            return (time.perf_counter() - start) / rep * 1000
        '''),
    "python/triton/language/__init__.py": d('''
        """The language namespace."""
        from . import core
        from .core import arange, expand_dims, load, program_id, reshape, store, tensor
        from .standard import cdiv, max, sum, zeros

        __all__ = [
            "arange", "cdiv", "core", "expand_dims", "load", "max",
            "program_id", "reshape", "store", "sum", "tensor", "zeros",
        ]
        '''),
    "python/triton/language/core.py": d('''
        """Core language primitives."""


        class tensor:
            def __init__(self, shape):
                self.shape = tuple(shape)


        def program_id(axis):
            return axis


        def arange(start, end):
            return tensor([end - start])


        def load(pointer):
            return pointer


        def store(pointer, value):
            return value


        def reshape(value, shape):
            return tensor(shape)


        def expand_dims(value, axis):
            shape = list(value.shape)
            shape.insert(axis, 1)
            return tensor(shape)
        '''),
    "python/triton/language/standard.py": d('''
        """Functions built from the core primitives."""
        from .core import tensor


        def cdiv(x, div):
            return (x + div - 1) // div


        def zeros(shape):
            return tensor(shape)


        def sum(value, axis=None):
            return value


        def max(value, axis=None):
            return value
        '''),
    "python/triton/tools/__init__.py": '"""Command-line tools."""\n',
    "python/triton/tools/compile.py": d('''
        """Compile a kernel ahead of time."""
        import argparse


        def parse_signature(text: str) -> list[str]:
            return [part.strip() for part in text.split(",") if part.strip()]


        def render_header(name: str, signature: list[str]) -> str:
            args = ", ".join(signature)
            return f"void {name}({args});"


        def main(argv=None) -> int:
            parser = argparse.ArgumentParser(description=__doc__)
            parser.add_argument("path")
            parser.add_argument("--signature", default="")
            args = parser.parse_args(argv)
            print(render_header(args.path, parse_signature(args.signature)))
            return 0
        '''),
    "python/triton/tools/link.py": d('''
        """Link ahead-of-time compiled kernels."""


        def link(headers: list[str]) -> str:
            return "\\n".join(headers)
        '''),
    "python/triton/tools/disasm.py": d('''
        """Disassemble a compiled kernel."""


        def disassemble(binary: bytes) -> list[str]:
            return [f"{byte:02x}" for byte in binary]
        '''),
    "python/triton/runtime/__init__.py": d('''
        """Runtime: JIT, autotuning, caching."""
        from .autotuner import Autotuner, autotune
        from .jit import JITFunction, jit
        '''),
    "python/triton/runtime/jit.py": d('''
        """Just-in-time compiled functions."""


        class JITFunction:
            def __init__(self, fn):
                self.fn = fn
                self.__name__ = fn.__name__

            def cache_key(self) -> str:
                return f"{self.fn.__module__}.{self.fn.__qualname__}"


        def jit(fn):
            return JITFunction(fn)
        '''),
    "python/triton/runtime/autotuner.py": d('''
        """Pick the fastest of several kernel configurations."""


        class Autotuner:
            def __init__(self, configs, key):
                self.configs = configs
                self.key = key

            def prune_configs(self, named_args):
                pruned = [config for config in self.configs if config.get("num_warps", 4) <= 8]
                return pruned or self.configs

            def run(self, named_args):
                return self.prune_configs(named_args)[0]


        def autotune(configs, key):
            def decorator(fn):
                return Autotuner(configs, key)

            return decorator
        '''),
    "python/triton/runtime/cache.py": d('''
        """On-disk cache of compiled kernels."""
        import os


        def default_cache_dir() -> str:
            return os.path.join(os.path.expanduser("~"), ".triton", "cache")


        def get_cache_manager(key: str) -> str:
            return os.path.join(default_cache_dir(), key)
        '''),
    "python/triton/runtime/build.py": d('''
        """Build the launcher of a compiled kernel."""
        import subprocess
        import sysconfig


        def compiler_command(src: str, out: str) -> list[str]:
            include = sysconfig.get_paths()["include"]
            return ["cc", src, "-O3", "-shared", "-fPIC", "-I", include, "-o", out]


        def build(src: str, out: str) -> str:
            subprocess.check_call(compiler_command(src, out))
            return out
        '''),
    "python/triton/runtime/driver.py": d('''
        """Select the active GPU driver."""


        class DriverConfig:
            def __init__(self):
                self.default = None
                self.active = None

            def set_active(self, driver):
                self.active = driver


        driver = DriverConfig()
        '''),
    "python/triton/ops/__init__.py": d('''
        """Legacy high-level ops."""
        from .matmul import matmul
        '''),
    "python/triton/ops/matmul.py": d('''
        """Blocked matrix multiplication."""


        def matmul_configs():
            configs = [{"BLOCK_M": 64, "BLOCK_N": 64}, {"BLOCK_M": 128, "BLOCK_N": 64}]
            return configs


        def matmul(a, b):
            return matmul_configs()[0]
        '''),
    "python/triton/compiler/__init__.py": d('''
        """Compiler entry points."""
        from .compiler import compile, make_backend
        '''),
    "python/triton/compiler/compiler.py": d('''
        """Compile a JIT function for a target."""


        class Backend:
            def __init__(self, target, options=None):
                self.target = target
                self.options = options or {}


        def make_backend(target):
            if target is None:
                raise RuntimeError("no target")
            name = str(target)
            options = {"name": name}
            return Backend(target, options)


        def compile(src, target=None):
            backend = make_backend(target)
            return f"{backend.target}:{src}"
        '''),
}

# Upstream history between the two tags: several commits, as in a real release.
UPSTREAM_COMMITS: list[tuple[str, dict[str, Change]]] = [
    ("[FRONTEND] tools: add --out-name; link deduplicates headers", {
        # auto-mergeable: trunk changes main(), the alpha overlay changed render_header()
        "python/triton/tools/compile.py": UPSTREAM_BASE["python/triton/tools/compile.py"].replace(
            '    parser.add_argument("--signature", default="")\n',
            '    parser.add_argument("--signature", default="")\n'
            '    parser.add_argument("--out-name", default=None)\n'),
        # redundant: trunk adopts exactly the alpha overlay's change
        "python/triton/tools/link.py": UPSTREAM_BASE["python/triton/tools/link.py"].replace(
            'return "\\n".join(headers)', 'return "\\n".join(sorted(set(headers)))'),
    }),
    ("[RUNTIME] prune by stages; drop the disk cache; build.py becomes private", {
        # conflicting: trunk rewrites the very line the alpha overlay changed
        "python/triton/runtime/autotuner.py": UPSTREAM_BASE["python/triton/runtime/autotuner.py"].replace(
            'config.get("num_warps", 4) <= 8]',
            'config.get("num_warps", 4) <= 8 and config.get("num_stages", 2) <= 4]'),
        # orphan: trunk file deleted
        "python/triton/runtime/cache.py": None,
        # orphan by rename: git's rename detection must name runtime/_build.py
        "python/triton/runtime/build.py": ("rename", "python/triton/runtime/_build.py",
                                           UPSTREAM_BASE["python/triton/runtime/build.py"].replace(
                                               "    subprocess.check_call(compiler_command(src, out))\n",
                                               "    subprocess.run(compiler_command(src, out), check=True)\n")),
    }),
    ("[FRONTEND] remove triton.ops; add language.math", {
        # hijack no longer valid: the package whose __init__.py held spec_path is gone
        "python/triton/ops/__init__.py": None,
        "python/triton/ops/matmul.py": None,
        # textual conflict with the fork's spec(...) inserted after the same import
        "python/triton/language/__init__.py": UPSTREAM_BASE["python/triton/language/__init__.py"].replace(
            "from .standard import cdiv, max, sum, zeros\n",
            "from .standard import cdiv, max, sum, zeros\nfrom .math import exp, log\n"),
        "python/triton/language/math.py": d('''
            """Elementwise math."""


            def exp(value):
                return value


            def log(value):
                return value
            '''),
    }),
    ("[BACKEND] options for make_backend; quantiles in do_bench; 3.6.0", {
        # enclosing trunk function of a spec call site changed (signature and body)
        "python/triton/compiler/compiler.py": UPSTREAM_BASE["python/triton/compiler/compiler.py"].replace(
            "def make_backend(target):\n", "def make_backend(target, extra=None):\n").replace(
            'raise RuntimeError("no target")', 'raise RuntimeError("make_backend needs a target")').replace(
            "    return Backend(target, options)\n", "    return Backend(target, {**options, **(extra or {})})\n"),
        # replaced trunk function changed its signature: the beta do_bench no longer fits
        "python/triton/testing.py": UPSTREAM_BASE["python/triton/testing.py"].replace(
            "def do_bench(fn, warmup=25, rep=100):", "def do_bench(fn, warmup=25, rep=100, quantiles=None):"),
        "python/triton/__init__.py": UPSTREAM_BASE["python/triton/__init__.py"].replace("3.5.0", "3.6.0"),
        # textual conflict with the fork's CMake include added right after this line
        "CMakeLists.txt": UPSTREAM_BASE["CMakeLists.txt"].replace("3.5.0", "3.6.0"),
        # textual conflict with the fork's binding added after the same line
        "python/src/ir.cc": UPSTREAM_BASE["python/src/ir.cc"].replace(
            '  m.def("get_int8_ty", &getInt8Ty);\n',
            '  m.def("get_int8_ty", &getInt8Ty);\n  m.def("get_int16_ty", &getInt16Ty);\n'),
        # guarded trunk default changed inside #ifndef FLAGTREE_SPEC_Membar_isFenceNeeded (merges cleanly)
        "lib/Analysis/Membar.cpp": UPSTREAM_BASE["lib/Analysis/Membar.cpp"].replace(
            "auto effects = getEffects(op);", "auto effects = collectEffects(op, /*recursive=*/true);"),
        # auto-mergeable C++ overlay: trunk changes a declaration the beta overlay kept
        "include/triton/Analysis/Utility.h": UPSTREAM_BASE["include/triton/Analysis/Utility.h"].replace(
            "unsigned getScratchSizeInBytes(int bytes);", "unsigned getScratchSizeInBytes(int bytes, int align);"),
    }),
]


def _upstream_file(path: str) -> str:
    return UPSTREAM_BASE[path]


SPEC_PATH_HOOK = 'from triton.flagtree_spec import spec_path\n\n# flagtree backend path specialization\nspec_path(__path__)\n'


def _hook_package(path: str) -> str:
    """Trunk __init__.py with spec_path before its imports (so overlays win)."""
    docstring, _, rest = _upstream_file(path).partition("\n")
    return f"{docstring}\n{SPEC_PATH_HOOK}{rest}"


ALPHA = "third_party/alpha/backend/spec/triton/"
BETA = "third_party/beta/backend/spec/"

FORK_COMMITS: list[tuple[str, dict[str, Change]]] = [
    ("[CORE] Add the FlagTree spec interface", {
        "python/triton/flagtree_spec.py": d('''
            """Backend specialization hooks (demo copy of the FlagTree runtime)."""
            def spec_path(path): ...
            def spec(name, *args, **kwargs): ...
            def spec_func(name, default=None): ...
            '''),
        "python/triton/_flagtree_backend.py": 'FLAGTREE_BACKEND = ""\n',
        "CMakeLists.txt": _upstream_file("CMakeLists.txt").replace(
            "set(TRITON_VERSION 3.5.0)\n", "set(TRITON_VERSION 3.5.0)\ninclude(cmake/FlagTree.cmake)\n"),
        "cmake/FlagTree.cmake": "# Select the FlagTree backend\nset(FLAGTREE_BACKEND $ENV{FLAGTREE_BACKEND})\n",
    }),
    ("[CORE] Hook trunk: spec_path, spec and spec_func call sites", {
        "python/triton/tools/__init__.py": _hook_package("python/triton/tools/__init__.py"),
        "python/triton/runtime/__init__.py": _hook_package("python/triton/runtime/__init__.py"),
        "python/triton/ops/__init__.py": _hook_package("python/triton/ops/__init__.py"),
        "python/triton/language/__init__.py": _upstream_file("python/triton/language/__init__.py").replace(
            '"""The language namespace."""\n', '"""The language namespace."""\nfrom triton.flagtree_spec import spec\n').replace(
            "from .standard import cdiv, max, sum, zeros\n",
            "from .standard import cdiv, max, sum, zeros\n# flagtree backend specialization\n"
            'spec("language_extend_globals", globals())\n'),
        "python/triton/_utils.py": _upstream_file("python/triton/_utils.py")
        + '\n\nfrom triton.flagtree_spec import spec_func\n\n# flagtree backend func specialization\n'
          'apply_with_path = spec_func("apply_with_path")\n',
        "python/triton/testing.py": _upstream_file("python/triton/testing.py").replace(
            "import time\n", "import time\n\nfrom triton.flagtree_spec import spec_func\n")
        + '\n\n# flagtree backend func specialization\ndo_bench = spec_func("do_bench", do_bench)\n',
        "python/triton/errors.py": _upstream_file("python/triton/errors.py").replace(
            '"""Errors raised by the compiler."""\n',
            '"""Errors raised by the compiler."""\nfrom triton.flagtree_spec import spec\n').replace(
            "super().__init__(message)", 'super().__init__(spec("format_compilation_error", message) or message)'),
        "python/triton/compiler/compiler.py": _upstream_file("python/triton/compiler/compiler.py").replace(
            '"""Compile a JIT function for a target."""\n',
            '"""Compile a JIT function for a target."""\nfrom triton.flagtree_spec import spec\n').replace(
            "    name = str(target)\n",
            '    name = str(target)\n    target = spec("compiler_override_target", target) or target\n'),
        "python/triton/ops/matmul.py": _upstream_file("python/triton/ops/matmul.py").replace(
            '"""Blocked matrix multiplication."""\n',
            '"""Blocked matrix multiplication."""\nfrom triton.flagtree_spec import spec\n').replace(
            "    return configs\n", '    return spec("matmul_heuristics", configs) or configs\n'),
        "python/triton/runtime/build.py": _upstream_file("python/triton/runtime/build.py").replace(
            "import sysconfig\n", "import sysconfig\n\nfrom triton.flagtree_spec import spec\n").replace(
            '    return ["cc", src, "-O3", "-shared", "-fPIC", "-I", include, "-o", out]\n',
            '    command = ["cc", src, "-O3", "-shared", "-fPIC", "-I", include, "-o", out]\n'
            '    return spec("build_extra_flags", command) or command\n'),
    }),
    ("[alpha] 新增 alpha 后端特化 (overlays and spec functions)", {
        ALPHA + "__init__.py": d('''
            from ._utils import apply_with_path
            from .language import language_extend_globals
            '''),
        ALPHA + "language/__init__.py": d('''
            def language_extend_globals(globals_dict):
                # NOTE: absolute imports only: this module is not part of triton.language.
                from triton.language.core import expand_dims, reshape

                globals_dict["unsqueeze"] = expand_dims
                globals_dict["squeeze"] = reshape
            '''),
        ALPHA + "_utils.py": d('''
            def apply_with_path(value, path, fn):
                for index in path[:-1]:
                    value = value[index]
                value[path[-1]] = fn(value[path[-1]])
                return value
            '''),
        ALPHA + "tools/compile.py": _upstream_file("python/triton/tools/compile.py").replace(
            'return f"void {name}({args});"', 'return f"extern \\"C\\" void {name}({args});"'),
        ALPHA + "tools/link.py": _upstream_file("python/triton/tools/link.py").replace(
            'return "\\n".join(headers)', 'return "\\n".join(sorted(set(headers)))'),
        ALPHA + "runtime/autotuner.py": _upstream_file("python/triton/runtime/autotuner.py").replace(
            'config.get("num_warps", 4) <= 8]', 'config.get("num_warps", 4) <= 16]'),
        ALPHA + "runtime/cache.py": _upstream_file("python/triton/runtime/cache.py").replace(
            '".triton", "cache"', '".flagtree", "alpha", "cache"'),
        ALPHA + "runtime/build.py": _upstream_file("python/triton/runtime/build.py").replace('"-O3"', '"-O2"'),
        ALPHA + "runtime/driver.py": _upstream_file("python/triton/runtime/driver.py").replace(
            "        self.default = None\n", '        self.default = "alpha"\n'),
        ALPHA + "ops/matmul.py": _upstream_file("python/triton/ops/matmul.py").replace(
            '{"BLOCK_M": 128, "BLOCK_N": 64}', '{"BLOCK_M": 32, "BLOCK_N": 32}'),
    }),
    ("[beta] Add beta backend: spec functions and C++ guards", {
        BETA + "triton/__init__.py": d('''
            from ._matmul import matmul_heuristics
            from ._runtime import build_extra_flags
            from .compiler.compiler import compiler_override_target
            from .testing import do_bench
            '''),
        BETA + "triton/_matmul.py": d('''
            def matmul_heuristics(configs):
                return [config for config in configs if config["BLOCK_M"] <= 64]
            '''),
        BETA + "triton/_runtime.py": d('''
            def build_extra_flags(command):
                return command + ["-DBETA=1"]
            '''),
        BETA + "triton/compiler/compiler.py": d('''
            def compiler_override_target(target):
                from triton.compiler.compiler import Backend  # absolute: see the policy

                return target if isinstance(target, Backend) else f"beta:{target}"
            '''),
        BETA + "triton/testing.py": d('''
            import time


            def do_bench(fn, warmup=10, rep=50):
                for _ in range(warmup):
                    fn()
                start = time.perf_counter()
                for _ in range(rep):
                    fn()
                return (time.perf_counter() - start) / rep * 1000
            '''),
        BETA + "include/flagtree_spec.h": d("""
            #pragma once
            // beta replaces these trunk defaults with code from spec/lib.
            #define FLAGTREE_SPEC_Membar_isFenceNeeded
            #define FLAGTREE_SPEC_Utility_legacyHelper
            """),
        BETA + "include/triton/Analysis/Utility.h": _upstream_file("include/triton/Analysis/Utility.h").replace(
            "bool isSingleValue(int value);", "bool isSingleValue(long value);"),
        BETA + "lib/Analysis/Alias.cpp": _upstream_file("lib/Analysis/Alias.cpp").replace(
            "return lhs == rhs;", "return lhs == rhs || lhs < 0;"),
        BETA + "lib/Analysis/beta_Membar.cpp": d("""
            #include "triton/Analysis/Membar.h"

            namespace mlir {
            bool MembarAnalysis::isFenceNeeded(Operation *op) const { return op != nullptr; }
            } // namespace mlir
            """),
        "lib/Analysis/Membar.cpp": _upstream_file("lib/Analysis/Membar.cpp").replace(
            '#include "triton/Analysis/Membar.h"\n',
            '#include "triton/Analysis/Membar.h"\n#if __has_include("flagtree_spec.h")\n'
            '#include "flagtree_spec.h"\n#endif\n').replace(
            "bool MembarAnalysis::isFenceNeeded(Operation *op) const {\n",
            "#ifndef FLAGTREE_SPEC_Membar_isFenceNeeded\nbool MembarAnalysis::isFenceNeeded(Operation *op) const {\n").replace(
            "  return !effects.empty();\n}\n", "  return !effects.empty();\n}\n#endif\n"),
    }),
    ("[CORE] Bind FlagTree types in ir.cc", {
        "python/src/ir.cc": _upstream_file("python/src/ir.cc").replace(
            '  m.def("get_int8_ty", &getInt8Ty);\n',
            '  m.def("get_int8_ty", &getInt8Ty);\n  m.def("get_flagtree_ty", &getFlagTreeTy);\n'),
    }),
    ("[CORE] compiler: cache compiled sources", {
        # merges cleanly, yet uses runtime.cache, which upstream deletes before 3.6.0
        "python/triton/compiler/compiler.py": None,  # filled in below from the previous fork commit
    }),
]


def _fill_compiler_cache_commit() -> None:
    hooked = FORK_COMMITS[1][1]["python/triton/compiler/compiler.py"]
    assert isinstance(hooked, str)
    FORK_COMMITS[-1][1]["python/triton/compiler/compiler.py"] = hooked.replace(
        "from triton.flagtree_spec import spec\n",
        "from triton.flagtree_spec import spec\nfrom triton.runtime.cache import get_cache_manager\n").replace(
        '    return f"{backend.target}:{src}"\n',
        '    get_cache_manager(str(src))\n    return f"{backend.target}:{src}"\n')


_fill_compiler_cache_commit()
