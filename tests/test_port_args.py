"""Issue 50 (rule moved-arguments): a function whose parameters upstream reordered, or dropped where they had a
default, in one commit whose own calls show where each argument went: FlagTree's calls get their argument nodes
moved or dropped. Refused: a dropped parameter without a default, a type change, an overload, a call leaning on a
default, a site in a macro body or a conflict block."""
from __future__ import annotations

from pathlib import Path

from sync.git import open_repo
from sync.jobs.port import PortOptions, PortResult, read_branch_text, run_port
from sync.jobs.port_args import Mapping, move_arguments
from tests.conftest import git
from tests.test_symbols import commit

HEADER_V1 = ("namespace mlir::triton {\nstruct Foo {};\nint mk(int a, const Foo &b, bool c = false);\n"
             "int nodef(int a, int b, int c);\nint typed(int a, long b, int c = 0);\n"
             "int over(int a, long b, int c = 0);\n"
             "int over(int a);\n}\n")
HEADER_V2 = ("namespace mlir::triton {\nstruct Foo {};\nint mk(const Foo &b, int a);\n"
             "int nodef(int b, int a);\nint typed(long b, short a);\nint over(long b, int a);\nint over(int a);\n}\n")
UP_V1 = ('#include "triton/Util.h"\nusing namespace mlir::triton;\nint up(Foo foo) {\n'
         "  return mk(1, foo, true) + nodef(1, 2, 3) + typed(1, 2, 3) + over(1, 2, 3);\n}\n")
UP_V2 = ('#include "triton/Util.h"\nusing namespace mlir::triton;\nint up(Foo foo) {\n'
         "  return mk(foo, 1) + nodef(2, 1) + typed(2, 1) + over(2, 1);\n}\n")
ALPHA = ('#include "triton/Util.h"\nnamespace tt = mlir::triton;\n'
         "int alpha(tt::Foo f, int n) {\n"
         "  int x = tt::mk(/*a=*/n, f, /*c=*/false);\n"  # 4: moved, the dropped argument's comment with it
         "  int y = tt::mk(f, n);\n"  # 5: fits the new declaration already: no finding
         "  return x + y + tt::nodef(1, 2, 3) + tt::typed(1, 2, 3) + tt::over(1, 2, 3);\n"  # 6: each refused
         "}\n")


def _world(tmp_path: Path, v1: dict[str, str], fork: tuple[str, dict[str, str]], v2: dict[str, str], pr: int) -> Path:
    """Tag v1; FlagTree's commit (subject, files) on it; tag v2, upstream's one commit `Reorder the helpers (#pr)` on
    v1; branch sync/v2, v2 with FlagTree's commit picked onto it."""
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, v1, "v1")
    git(repo, "tag", "v1")
    commit(repo, fork[1], fork[0])
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, v2, f"Reorder the helpers (#{pr})")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "sync/v2", "v2")
    git(repo, "checkout", "-q", "sync/v2")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "cherry-pick", "main")
    git(repo, "checkout", "-q", "main")
    return repo


def _cpp_world(tmp_path: Path) -> Path:
    return _world(tmp_path, {"include/triton/Util.h": HEADER_V1, "lib/Up.cpp": UP_V1},
                  ("[FlagTree] alpha", {"third_party/alpha/lib/Alpha.cpp": ALPHA}),
                  {"include/triton/Util.h": HEADER_V2, "lib/Up.cpp": UP_V2}, 201)


def _port(repo: Path, dry_run: bool = False) -> PortResult:
    return run_port(str(repo), old="v1", onto="v2", source="main",
                    options=PortOptions(target="sync/v2", dry_run=dry_run))


def test_a_reordered_call_with_a_dropped_default_is_moved_and_the_rest_refused(tmp_path: Path) -> None:
    repo = _cpp_world(tmp_path)
    before = git(repo, "rev-parse", "sync/v2").strip()
    result = _port(repo)
    log = git(repo, "log", "--format=%s", f"{before}..sync/v2").splitlines()
    assert log == ["port: move the arguments of mk (#201)"]
    text = read_branch_text(open_repo(str(repo)), "sync/v2", "third_party/alpha/lib/Alpha.cpp") or ""
    assert "  int x = tt::mk(f, /*a=*/n);\n" in text
    assert "  int y = tt::mk(f, n);\n" in text and "tt::nodef(1, 2, 3) + tt::typed(1, 2, 3) + tt::over(1, 2, 3)" in text
    reasons = " | ".join(why for move in result.moves for _, why in move.left)
    assert "dropped had no default" in reasons and "changed type" in reasons and "overloaded" in reasons
    body = git(repo, "log", "-1", "--format=%b", "sync/v2")
    assert "Rule: moved-arguments" in body and "mk(1, foo, true) -> mk(foo, 1)" in body


def test_a_site_in_a_macro_or_a_conflict_block_is_never_moved() -> None:
    mapping = Mapping("mk", (1, 0), 3)
    text = ("#define MK(n, f) mk(n, f, false)\nint a = mk(n, f, false);\n<<<<<<< ours\nint b = mk(n, f, true);\n"
            "=======\nint b = 0;\n>>>>>>> theirs\n")
    text += "int c = mk(n, f);\n"  # 8: leans on the default: its arguments do not map one to one
    edit = move_arguments(text, mapping, {1, 2, 4, 8})
    assert edit.changed == [2] and "int a = mk(f, n);" in edit.text
    assert edit.refused == {1: "inside a macro's body", 4: "inside a conflict block",
                            8: "the call does not pass all 3 arguments: not one to one"}


PY_V1 = ("def mk(a, b, c=False):\n    return a\n\n\ndef nodef(a, b, c):\n    return a\n\n\n"
         "def typed(a: int, b, c=0):\n    return a\n")
PY_V2 = "def mk(b, a):\n    return a\n\n\ndef nodef(b, a):\n    return a\n\n\ndef typed(b, a: str):\n    return a\n"
PY_UP_V1 = ("from triton.util import mk, nodef, typed\n\n\ndef up(foo):\n"
            "    return mk(1, foo, True) + nodef(1, 2, 3) + typed(1, 2, 3)\n")
PY_UP_V2 = "from triton.util import mk, nodef, typed\n\n\ndef up(foo):\n    return mk(foo, 1) + nodef(2, 1) + typed(2, 1)\n"
PY_USE = ("from triton.util import mk, nodef, typed\n\n\ndef run(n, f):\n"
          "    x = mk(n,  # the count\n           f, c=False)\n"  # 5: moved, c dropped with its parameter
          "    return x + nodef(1, 2, 3) + typed(1, 2, 3)\n")  # 7: refused (no default; a type change)


def _py_world(tmp_path: Path) -> Path:
    return _world(tmp_path, {"python/triton/__init__.py": "", "python/triton/util.py": PY_V1,
                             "python/triton/up.py": PY_UP_V1},
                  ("[FlagTree] extra", {"python/triton/compiler/extra.py": PY_USE}),
                  {"python/triton/util.py": PY_V2, "python/triton/up.py": PY_UP_V2}, 301)


def test_a_python_call_has_its_arguments_moved_through_libcst_and_the_rest_refused(tmp_path: Path) -> None:
    repo = _py_world(tmp_path)
    result = _port(repo)
    assert git(repo, "log", "-1", "--format=%s", "sync/v2").strip() == "port: move the arguments of mk (#301)"
    text = read_branch_text(open_repo(str(repo)), "sync/v2", "python/triton/compiler/extra.py") or ""
    # the arguments move; the comma and the comment after it stay where they were
    assert "    x = mk(f,  # the count\n           n)\n" in text and "nodef(1, 2, 3) + typed(1, 2, 3)" in text
    reasons = " | ".join(why for move in result.moves for _, why in move.left)
    assert "c dropped had no default" in reasons and "changed type" in reasons


def test_a_python_call_that_leans_on_a_default_or_a_keyword_order_is_refused() -> None:
    from sync.jobs.port_args_py import move_python_arguments
    mapping = Mapping("mk", (1, 0), 3, params=("a", "b", "c"))
    text = "mk(1, 2)\nmk(1, b=2, c=3)\nmk(*xs)\nmk(1, 2, 3)\n"
    edit = move_python_arguments(text, mapping, {1, 2, 3, 4})
    assert edit.changed == [] and edit.text == text  # one refused call leaves the file as it was
    assert "not one to one" in edit.refused[1] and "follow a keyword" in edit.refused[2]
    assert "starred" in edit.refused[3]
    edit = move_python_arguments("mk(1, 2, 3)\nmk(a=1, b=2, c=3)\n", mapping, {1, 2})
    assert edit.changed == [1, 2] and edit.text == "mk(2, 1)\nmk(a=1, b=2)\n"
