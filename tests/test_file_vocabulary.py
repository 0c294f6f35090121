"""One file vocabulary (issue 49, item 1): the suffix sets, the test and not-built directories and the group names
are spelled in one place each (sync/facts/filekinds.py, sync/model/report.py), never again in a reader."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from sync.facts.filekinds import (CPP_CODE, HEADER_SUFFIXES, is_built, is_test_file, is_test_path, language_of,
                                  not_built)

ROOT = Path(__file__).resolve().parent.parent / "sync"
VOCABULARY = "facts/filekinds.py"
GROUPS = "model/report.py"
# Modules of other rooms that still spell a set of their own; each is folded by its owner, then removed here
# (test_the_pending_modules_are_still_pending fails once one no longer needs its place).
PENDING: set[str] = set()
_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,6}|CMakeLists\.txt")
_TEST_DIRECTORY = re.compile(r"/?(test|tests|unittest|unittests|tutorials|examples)/?")
_GROUP_NAMES = {"flagtree-core", "shared-trunk"}


def suffix_tuples(source: str) -> list[int]:
    """Lines of tuples whose items are all file suffixes (".py", ".h", ...)."""
    return [node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Tuple) and node.elts
            and all(isinstance(item, ast.Constant) and isinstance(item.value, str) and _SUFFIX.fullmatch(item.value)
                    for item in node.elts)]


def spelled(source: str, wanted: re.Pattern[str] | set[str]) -> list[int]:
    """Lines of string constants that are a test directory's spelling ("/test/") or a group's name."""
    def hit(text: str) -> bool:
        return text in wanted if isinstance(wanted, set) else wanted.fullmatch(text) is not None and "/" in text
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and hit(node.value)]


def offenders(find, allowed: set[str]) -> dict[str, list[int]]:  # noqa: ANN001 (one of the finders above)
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        lines = find(path.read_text())
        if lines and name not in allowed:
            found[name] = lines
    return found


def test_no_suffix_tuple_outside_the_vocabulary() -> None:
    assert offenders(suffix_tuples, {VOCABULARY} | PENDING) == {}


def test_no_test_directory_spelled_outside_the_vocabulary() -> None:
    assert offenders(lambda source: spelled(source, _TEST_DIRECTORY), {VOCABULARY} | PENDING) == {}


def test_the_group_names_are_spelled_once() -> None:
    assert offenders(lambda source: spelled(source, _GROUP_NAMES), {GROUPS}) == {}


def test_the_pending_modules_are_still_pending() -> None:
    """An entry of PENDING whose module no longer spells a set of its own is removed from it."""
    assert all(suffix_tuples((ROOT / name).read_text()) for name in PENDING)


def test_the_finders_see_what_they_look_for() -> None:
    source = ('HEADERS = (".h", ".hpp")\nBUILD = ("CMakeLists.txt",)\nOTHER = ("a", ".h")\n'
              'skip = "/test" in path or "/unittests/" in path\nmode = ("r", "w")\nGROUP = "shared-trunk"\n')
    assert suffix_tuples(source) == [1, 2]
    assert spelled(source, _TEST_DIRECTORY) == [4, 4]
    assert spelled(source, _GROUP_NAMES) == [6]


def test_the_vocabulary_answers() -> None:
    assert [language_of(path) for path in ("a/CMakeLists.txt", "x.cmake", "a.hpp", "b.td", "c.py", "d.inc")] == \
        ["cmake", "cmake", "cpp", "td", "py", None]
    assert "lib/X.inc".endswith(CPP_CODE) and "a.hxx".endswith(HEADER_SUFFIXES)
    # a directory by its name: python/triton/testing.py is trunk's module, not a test ("/test" in path said it was)
    assert is_built("python/triton/testing.py") and is_built("python/triton/language/core.py")
    assert not_built("python/test/unit/test_core.py") and not_built("test/lib/Foo.cpp")
    assert not_built("third_party/enflame/unittests/a.cpp") and not is_test_path("third_party/enflame/unittests/a.cpp")
    assert is_test_path("python/tutorials/01-vector-add.py") and not_built("python/tutorials/01-vector-add.py")
    assert is_test_file("python/triton/test_x.py") and not is_test_file("python/triton/testing.py")
