"""The file vocabulary, defined once: which language a path is written in (language_of), whether a build takes
it (is_built), and the suffix sets the readers use. tests/test_file_vocabulary.py fails on a literal tuple of
suffixes anywhere else in sync/.

The sets are built from a few parts and named by what reads them. Where readers differ (a parser that reads
.inc, a build that compiles .c, copy detection that compares TableGen too), the difference is spelled here,
beside the others, and not in the reader.
"""
from __future__ import annotations

PY_SUFFIXES = (".py",)
TD_SUFFIXES = (".td",)
C_SUFFIXES = (".c",)
CPP_HEADERS = (".h", ".hpp", ".hh")  # the headers every C++ reader knows
CPP_SOURCES = (".cpp", ".cc", ".cxx")  # compile units
INC_SUFFIXES = (".inc",)  # TableGen's generated C++ and hand-written fragments: included, not compiled
CMAKE_SUFFIXES = ("CMakeLists.txt", ".cmake")
OBJECT_SUFFIXES = (".o", ".obj")  # what a compiler writes: a build tree's objects

CPP_SUFFIXES = CPP_HEADERS + CPP_SOURCES  # what the declaration index parses as C++
CPP_CODE = CPP_SUFFIXES + INC_SUFFIXES  # C++ as the line-based analyses read it (FlagTree's added lines)
# Files other files include: where a declaration others see lives (.inc and .def: included, not compiled).
HEADER_SUFFIXES = CPP_HEADERS + (".hxx",) + INC_SUFFIXES + (".def",)
COMPILED = CPP_CODE + C_SUFFIXES  # what a build compiles or includes
CMAKE_SOURCES = CPP_SOURCES + C_SUFFIXES  # the sources of a CMake target
PYBIND_SOURCES = (".cc", ".cpp")  # where pybind11 bindings (python/src/, a backend's python/) are written
COPY_SUFFIXES = PY_SUFFIXES + CPP_CODE + TD_SUFFIXES + C_SUFFIXES  # what copy detection compares
SPEC_TREE_CODE = CPP_CODE + TD_SUFFIXES  # the C++ and TableGen of a spec tree's include/ and lib/
# What the parsers read: a file of these over the parse limit is parsed as empty (parselimit), and said so.
PARSED_SUFFIXES = PY_SUFFIXES + (".pyi",) + C_SUFFIXES + CPP_HEADERS + (".hxx",) + CPP_SOURCES + INC_SUFFIXES
PIN_SUFFIXES = (".txt", ".json")  # where upstream pins a toolchain: a one-hash text file, a JSON record
# Text that may name a Python module (a build file, a script, a config): where a module's name is looked for.
NAMING_SUFFIXES = (".py", ".pyi", ".c", ".cc", ".cpp", ".h", ".hpp", ".txt", ".cmake", ".toml", ".cfg", ".ini", ".in",
                   ".sh")

# Directories whose files trunk's build neither installs nor loads: tests, tutorials and examples run against it.
TEST_DIRS = frozenset({"test", "tests", "unittest", "tutorials", "examples"})
# What a build neither installs nor loads, for the analyses of what FlagTree's code calls and imports: the test
# directories above and enflame's C++ `unittests` (copy detection keeps reading those: is_test_path).
NOT_BUILT_DIRS = TEST_DIRS | {"unittests"}
TEST_FILE_PREFIX = "test_"  # a pytest module, wherever it sits


def language_of(path: str) -> str | None:
    """The language the declaration index reads path as: cmake, cpp, td, py; None for any other file."""
    if path.endswith(CMAKE_SUFFIXES) and (path.endswith(".cmake") or path.rsplit("/", 1)[-1] == "CMakeLists.txt"):
        return "cmake"
    if path.endswith(CPP_SUFFIXES):
        return "cpp"
    if path.endswith(TD_SUFFIXES):
        return "td"
    if path.endswith(PY_SUFFIXES):
        return "py"
    return None


def is_cmake(path: str) -> bool:
    """A CMakeLists.txt or a .cmake module."""
    return language_of(path) == "cmake"


def _in_directory(path: str, names: frozenset[str]) -> bool:
    return any(part in names for part in path.split("/")[:-1])


def is_test_path(path: str) -> bool:
    """Whether a file sits in a tests, tutorials or examples directory (not installed in trunk's place)."""
    return _in_directory(path, TEST_DIRS)


def is_built(path: str) -> bool:
    """Whether a file sits outside every directory a build leaves out (NOT_BUILT_DIRS); a directory a
    commented-out add_subdirectory leaves out is facts/cmakebuilt's to tell."""
    return not _in_directory(path, NOT_BUILT_DIRS)


def not_built(path: str) -> bool:
    """Whether a file sits in a tests, tutorials or examples directory (a test's stub defines nothing)."""
    return not is_built(path)


def is_test_file(path: str) -> bool:
    """Whether a file is a pytest module by its name (test_*), wherever it sits."""
    return path.rsplit("/", 1)[-1].startswith(TEST_FILE_PREFIX)


def is_shipped_python(path: str) -> bool:
    """A Python file the package a build makes can import: outside the directories a build leaves out and not a
    pytest module. Only such files can break on a new tag at build or import time (issue 45's question)."""
    return path.endswith(PY_SUFFIXES) and is_built(path) and not is_test_file(path)
