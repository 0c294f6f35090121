"""The native demo world: a small upstream C++ library (CMake) with tags v3.5.0 and v3.6.0, and a FlagTree
fork whose backend gamma replaces guarded trunk defaults through its C++ spec library.

Upstream's 3.6.0 changes are chosen so that every C++ guard kind drift knows is planted once, and the ones
that predict a compile or link error (a changed signature, a removed default, a missing replacement) do
break the fork's CMake build with the backend selected: `build_command()` gives the gate command."""
from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

from sync.git.scripted import Change
from sync.demo.world import World, build_scripted_world

BACKEND = "gamma"
SPEC = f"third_party/{BACKEND}/backend/spec/"
SPEC_HOOK = '#if __has_include("flagtree_spec.h")\n#include "flagtree_spec.h"\n#endif\n'


def d(text: str) -> str:
    return dedent(text).lstrip("\n")


UPSTREAM_BASE: dict[str, str] = {
    "README.md": "# democore (miniature upstream C++ library for the flagtree-sync native demo)\n",
    "CMakeLists.txt": d("""
        cmake_minimum_required(VERSION 3.16)
        project(democore VERSION 3.5.0 LANGUAGES CXX)
        set(CMAKE_CXX_STANDARD 17)
        set(CMAKE_CXX_STANDARD_REQUIRED ON)

        add_library(demo_analysis STATIC lib/Analysis/Membar.cpp)
        target_include_directories(demo_analysis PUBLIC include)
        add_library(demo_layout STATIC lib/Layout/Layout.cpp)
        target_include_directories(demo_layout PUBLIC include)

        add_executable(analysis_test test/analysis_test.cpp)
        target_link_libraries(analysis_test PRIVATE demo_analysis)
        add_executable(layout_test test/layout_test.cpp)
        target_link_libraries(layout_test PRIVATE demo_layout)
        """),
    "include/demo/Analysis/Membar.h": d("""
        #pragma once

        namespace demo {

        class Membar {
        public:
          bool isFenceNeeded(int op) const;
          int fallbackOrder() const;
          int countFences(int ops) const;
        };

        } // namespace demo
        """),
    "lib/Analysis/Membar.cpp": d("""
        #include "demo/Analysis/Membar.h"

        namespace demo {

        // Whether the op needs a fence before it.
        bool Membar::isFenceNeeded(int op) const {
          return op % 2 == 0;
        }
        // (isFenceNeeded)

        // The order barriers go in when no schedule is known.
        int Membar::fallbackOrder() const {
          return 0;
        }
        // (fallbackOrder)

        int Membar::countFences(int ops) const {
          int fences = 0;
          for (int op = 0; op < ops; ++op)
            fences += isFenceNeeded(op) ? 1 : 0;
          return fences;
        }

        } // namespace demo
        """),
    "include/demo/Layout/Layout.h": d("""
        #pragma once

        namespace demo {

        class Layout {
        public:
          explicit Layout(int lanes) : lanes_(lanes) {}
          int lanes() const { return lanes_; }
          int tileWidth(int bits) const;
          int legacyWidth(int bits) const;

        private:
          int lanes_;
        };

        } // namespace demo
        """),
    "lib/Layout/Layout.cpp": d("""
        #include "demo/Layout/Layout.h"

        namespace demo {

        // How many elements one lane covers.
        int Layout::tileWidth(int bits) const {
          return bits / 8;
        }
        // (tileWidth)

        // Widths for kernels built before 3.0.
        int Layout::legacyWidth(int bits) const {
          return bits / 16;
        }
        // (legacy widths)

        } // namespace demo
        """),
    "test/analysis_test.cpp": d("""
        #include "demo/Analysis/Membar.h"

        #include <cstdio>

        int main() {
          demo::Membar membar;
          int fences = membar.countFences(8);
          if (fences < 0 || fences > 8) {
            std::puts("countFences out of range");
            return 1;
          }
          std::printf("analysis ok: %d fences\\n", fences);
          return 0;
        }
        """),
    "test/layout_test.cpp": d("""
        #include "demo/Layout/Layout.h"

        #include <cstdio>

        int main() {
          demo::Layout layout(4);
          if (layout.tileWidth(64) <= 0) {
            std::puts("tileWidth must be positive");
            return 1;
          }
          if (layout.legacyWidth(64) <= 0) {
            std::puts("legacyWidth must be positive");
            return 1;
          }
          std::puts("layout ok");
          return 0;
        }
        """),
}


def _upstream(path: str) -> str:
    return UPSTREAM_BASE[path]


def _edit(path: str, *pairs: tuple[str, str]) -> str:
    """Upstream's file with each (old, new) replaced; an old text that is absent is a bug in this script."""
    text = _upstream(path)
    for old, new in pairs:
        assert old in text, (path, old)
        text = text.replace(old, new)
    return text


# Each upstream change sits one unchanged line away from the fork's guard lines, so the replay merges
# cleanly and what breaks is the build, not the merge.
UPSTREAM_COMMITS: list[tuple[str, dict[str, Change]]] = [
    ("[Analysis] isFenceNeeded: ops past 100 always fence", {
        "lib/Analysis/Membar.cpp": _edit("lib/Analysis/Membar.cpp",
                                         ("  return op % 2 == 0;\n", "  return op % 2 == 0 || op > 100;\n")),
    }),
    ("[Layout] tileWidth takes the lane count", {
        "include/demo/Layout/Layout.h": _edit("include/demo/Layout/Layout.h", (
            "int tileWidth(int bits) const;", "int tileWidth(int bits, int lanes) const;")),
        "lib/Layout/Layout.cpp": _edit("lib/Layout/Layout.cpp", (
            "int Layout::tileWidth(int bits) const {\n  return bits / 8;\n",
            "int Layout::tileWidth(int bits, int lanes) const {\n  return bits / 8 * lanes;\n")),
        "test/layout_test.cpp": _edit("test/layout_test.cpp", (
            "layout.tileWidth(64)", "layout.tileWidth(64, layout.lanes())")),
    }),
    ("[Layout] Remove legacyWidth", {
        "include/demo/Layout/Layout.h": _edit("include/demo/Layout/Layout.h", (
            "int tileWidth(int bits) const;\n  int legacyWidth(int bits) const;\n",
            "int tileWidth(int bits, int lanes) const;\n")),
        "lib/Layout/Layout.cpp": _edit("lib/Layout/Layout.cpp", (
            "int Layout::tileWidth(int bits) const {\n  return bits / 8;\n",
            "int Layout::tileWidth(int bits, int lanes) const {\n  return bits / 8 * lanes;\n"), (
            "int Layout::legacyWidth(int bits) const {\n  return bits / 16;\n}\n", "")),
        "test/layout_test.cpp": _edit("test/layout_test.cpp", (
            "layout.tileWidth(64)", "layout.tileWidth(64, layout.lanes())"), (
            '  if (layout.legacyWidth(64) <= 0) {\n    std::puts("legacyWidth must be positive");\n'
            "    return 1;\n  }\n", "")),
    }),
    ("[test] Cover Membar::fallbackOrder; 3.6.0", {
        "CMakeLists.txt": _edit("CMakeLists.txt", ("VERSION 3.5.0", "VERSION 3.6.0")),
        "test/analysis_test.cpp": _edit("test/analysis_test.cpp", (
            "  std::printf(", '  if (membar.fallbackOrder() < 0) {\n    std::puts("fallbackOrder must not be negative");\n'
                            "    return 1;\n  }\n  std::printf(")),
    }),
]

FLAGTREE_CMAKE = d("""
    # FlagTree backend selection: -DFLAGTREE_BACKEND=<name>. The backend's spec/include goes first on the
    # include path (trunk's __has_include("flagtree_spec.h") finds its header) and spec/lib/<Component>/ is
    # built as the component's own spec library, linked into the component.
    set(FLAGTREE_BACKEND "" CACHE STRING "FlagTree backend (empty: trunk only)")
    set(FLAGTREE_SPEC_DIR "${CMAKE_CURRENT_SOURCE_DIR}/third_party/${FLAGTREE_BACKEND}/backend/spec")

    function(flagtree_specialize target component)
      if(NOT FLAGTREE_BACKEND OR NOT EXISTS "${FLAGTREE_SPEC_DIR}/include/flagtree_spec.h")
        return()  # trunk only: every guarded default stays on
      endif()
      target_include_directories(${target} BEFORE PUBLIC "${FLAGTREE_SPEC_DIR}/include")
      file(GLOB sources CONFIGURE_DEPENDS "${FLAGTREE_SPEC_DIR}/lib/${component}/*.cpp")
      if(sources)
        set(spec ${target}_spec_${FLAGTREE_BACKEND})
        add_library(${spec} STATIC ${sources})
        target_include_directories(${spec} BEFORE PUBLIC "${FLAGTREE_SPEC_DIR}/include"
                                   PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/include")
        target_link_libraries(${target} PUBLIC ${spec})
      endif()
    endfunction()
    """)


def _guard(text: str, macro: str, first: str, last: str) -> str:
    """Wrap the lines from `first` to `last` (inclusive) in #ifndef macro ... #endif."""
    assert first in text and last in text, (first, last)
    return text.replace(first, f"#ifndef {macro}\n{first}").replace(last, f"{last}#endif\n")


def _hooked(path: str, guards: list[tuple[str, str, str]]) -> str:
    text = _upstream(path)
    include = text.splitlines(keepends=True)[0]
    text = text.replace(include, include + SPEC_HOOK, 1)
    for macro, first, last in guards:
        text = _guard(text, macro, first, last)
    return text


FORK_COMMITS: list[tuple[str, dict[str, Change]]] = [
    ("[CORE] FlagTree build: backend selection and FLAGTREE_SPEC guards in trunk", {
        "CMakeLists.txt": _edit("CMakeLists.txt", (
            "set(CMAKE_CXX_STANDARD_REQUIRED ON)\n", "set(CMAKE_CXX_STANDARD_REQUIRED ON)\ninclude(cmake/FlagTree.cmake)\n"), (
            "target_link_libraries(layout_test PRIVATE demo_layout)\n",
            "target_link_libraries(layout_test PRIVATE demo_layout)\n\n"
            "flagtree_specialize(demo_analysis Analysis)\nflagtree_specialize(demo_layout Layout)\n")),
        "cmake/FlagTree.cmake": FLAGTREE_CMAKE,
        "lib/Analysis/Membar.cpp": _hooked("lib/Analysis/Membar.cpp", [
            ("FLAGTREE_SPEC_Membar_isFenceNeeded", "// Whether the op needs", "// (isFenceNeeded)\n"),
            ("FLAGTREE_SPEC_Membar_fallbackOrder", "// The order barriers", "// (fallbackOrder)\n"),
        ]),
        "lib/Layout/Layout.cpp": _hooked("lib/Layout/Layout.cpp", [
            ("FLAGTREE_SPEC_Layout_tileWidth", "// How many elements", "// (tileWidth)\n"),
            ("FLAGTREE_SPEC_Layout_legacyWidth", "// Widths for kernels", "// (legacy widths)\n"),
        ]),
    }),
    ("[gamma] Add the gamma backend: C++ spec library", {
        SPEC + "include/flagtree_spec.h": d("""
            #pragma once
            // The gamma backend's C++ specialization: the macros live in gamma/spec_macros.h.
            #include "gamma/spec_macros.h"
            """),
        SPEC + "include/gamma/spec_macros.h": d("""
            #pragma once
            // Trunk defaults gamma turns off; spec/lib/<Component>/ defines their replacements.
            #define FLAGTREE_SPEC_Membar_isFenceNeeded
            #define FLAGTREE_SPEC_Membar_fallbackOrder
            #define FLAGTREE_SPEC_Layout_tileWidth
            #define FLAGTREE_SPEC_Layout_legacyWidth
            #define FLAGTREE_SPEC_Layout_packedWidth
            """),
        SPEC + "lib/Analysis/gamma_Membar.cpp": d("""
            #include "demo/Analysis/Membar.h"

            namespace demo {

            // gamma fences every fourth op.
            bool Membar::isFenceNeeded(int op) const { return op % 4 == 0; }

            } // namespace demo
            """),
        SPEC + "lib/Layout/gamma_Layout.cpp": d("""
            #include "demo/Layout/Layout.h"

            namespace demo {

            // gamma tiles are twice as wide.
            int Layout::tileWidth(int bits) const { return bits / 4; }

            int Layout::legacyWidth(int bits) const { return bits / 32; }

            } // namespace demo
            """),
    }),
    ("[gamma] Experimental fence fast path (header only, not wired yet)", {
        SPEC + "include/gamma/experimental.h": d("""
            #pragma once
            // Not included by flagtree_spec.h yet: the build never sees this macro.
            #define FLAGTREE_SPEC_Membar_fastPath
            """),
    }),
]

# What drift finds on this world, (kind, macro): the planted C++ guard drift.
PLANTED_GUARDS: frozenset[tuple[str, str]] = frozenset({
    ("guard-default-changed", "FLAGTREE_SPEC_Membar_isFenceNeeded"),
    ("guard-replacement-missing", "FLAGTREE_SPEC_Membar_fallbackOrder"),
    ("guard-default-changed", "FLAGTREE_SPEC_Layout_tileWidth"),
    ("guard-signature-mismatch", "FLAGTREE_SPEC_Layout_tileWidth"),
    ("guard-default-removed", "FLAGTREE_SPEC_Layout_legacyWidth"),
    ("guard-unused", "FLAGTREE_SPEC_Layout_packedWidth"),
    ("guard-macro-unreachable", "FLAGTREE_SPEC_Membar_fastPath"),
})


def build_native_world(root: Path | str) -> World:
    """Create <root>/upstream and <root>/flagtree (the native world); root must be empty or absent."""
    return build_scripted_world(root, "democore", UPSTREAM_BASE, UPSTREAM_COMMITS, FORK_COMMITS)


def _tool(name: str) -> str | None:
    """A build tool on PATH, or next to this Python (pip's cmake and ninja in a virtual environment)."""
    beside = Path(sys.executable).parent / name
    return shutil.which(name) or (str(beside) if beside.is_file() else None)


def missing_build_tools() -> list[str]:
    """What the gate command needs and this machine lacks (c++, cmake)."""
    return [name for name in ("c++", "cmake") if _tool(name) is None]


def _version_output(tool: str) -> str:
    try:
        return subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _terse_diagnostics(compiler: str) -> str:
    """No source excerpts under each diagnostic: the gate keeps only its output's tail, and it should hold
    every error a broken guard causes."""
    return "-fno-caret-diagnostics" if "clang" in _version_output(compiler).lower() else "-fno-diagnostics-show-caret"


def _ninja_quiet(ninja: str) -> bool:
    """ninja 1.11 and later can leave out its status lines (--quiet)."""
    parts = _version_output(ninja).strip().split(".")
    return len(parts) > 1 and parts[0].isdigit() and parts[1].isdigit() and (int(parts[0]), int(parts[1])) >= (1, 11)


def build_command(backend: str = BACKEND) -> str:
    """Configure, build (keep going past the first error, so every broken guard speaks) and run the tests of
    the world's CMake project in a fresh build directory, with the backend selected."""
    cmake, ninja, compiler = _tool("cmake") or "cmake", _tool("ninja"), _tool("c++") or "c++"
    generator = f"-G Ninja -DCMAKE_MAKE_PROGRAM={shlex.quote(ninja)}" if ninja else '-G "Unix Makefiles"'
    keep_going = ("-k 0" + (" --quiet" if _ninja_quiet(ninja) else "")) if ninja else "-k -s"
    cmake = shlex.quote(cmake)
    return (f"rm -rf build && {cmake} -S . -B build {generator} -DCMAKE_CXX_COMPILER={shlex.quote(compiler)} "
            f"-DCMAKE_CXX_FLAGS={_terse_diagnostics(compiler)} -DFLAGTREE_BACKEND={shlex.quote(backend)} >/dev/null "
            f"&& {cmake} --build build -- {keep_going} && build/analysis_test && build/layout_test")
