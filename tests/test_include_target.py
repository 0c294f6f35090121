"""One resolution of `#include "x"` for every analysis: the including file's directory, then the backend's
include trees, then the repository's root and trunk's include/ (cppcalls.include_target)."""
from __future__ import annotations

from sync.facts.cppcalls import include_target, includes_of
from sync.facts.includes import spelled_includes
from tests.upstream_fixture import context_of


def test_an_include_reaches_the_first_file_in_the_search_order(tmp_path) -> None:
    files = {"third_party/b/lib/A.cpp": '#include "U.h"\n#include "triton/T.h"\n#include "python/src/ir.h"\n',
             "third_party/b/lib/U.h": '#include "Deep.h"\n',
             "third_party/b/include/U.h": "",
             "third_party/b/include/triton/T.h": '#include "triton/Next.h"\n',
             "include/triton/T.h": "", "include/U.h": "", "python/src/ir.h": ""}
    fork = context_of(tmp_path, {"README": ""}, {"README": "new"}, files).fork
    source = "third_party/b/lib/A.cpp"
    assert include_target(fork, source, "U.h", ["third_party/b/include"]) == "third_party/b/lib/U.h"
    assert include_target(fork, source, "triton/T.h", ["third_party/b/include"]) == "third_party/b/include/triton/T.h"
    assert include_target(fork, source, "triton/T.h") == "include/triton/T.h"
    assert include_target(fork, source, "python/src/ir.h") == "python/src/ir.h"
    assert include_target(fork, source, "Missing.h") is None
    # includes_of reads one more level through what the backend's own tree holds first
    assert includes_of(fork, source) == {"U.h", "triton/T.h", "python/src/ir.h", "Deep.h", "triton/Next.h"}


def test_includes_and_namespace_aliases_count_only_at_the_start_of_a_line() -> None:
    from sync.facts.cppcalls import _aliases_in, include_paths

    text = ('#include "a.h"\n  #  include <b/c.h>\nint x; #include "not.h"\n#\ninclude "split.h"\n'
            '// see #include "comment.h"\nnamespace ttg = mlir::triton::gpu;\n  namespace tt=\n ::mlir::triton ;\n'
            'int y; namespace no = other;\nnamespace real {}\n')
    assert include_paths(text) == {"a.h", "b/c.h", "split.h"}
    assert _aliases_in(text) == {"ttg": {"mlir::triton::gpu"}, "tt": {"mlir::triton"}}
    assert include_paths("int main() {}\n") == set() and _aliases_in("namespace a {}\n") == {}


def test_the_includes_of_a_text_carry_the_lines_git_numbers() -> None:
    """symbolbackends reads a backend's #includes through facts/includes.py: the lines must be git's (a form
    feed is no line break there), since they are matched against FlagTree's added lines."""
    text = '#include "a.h"\n\f// page\n  #  include <b/c.h>\nint x; // #include "no.h"\n#include "d.h"\n'
    assert spelled_includes(text) == [(1, "a.h"), (3, "b/c.h"), (5, "d.h")]
