"""Guarded trunk defaults whose removal or replacement the backend's build never meets (issue 33: the
3.4.x -> 3.5.1 move, which the rules were not developed on, had 31 false guard-default-removed errors and 7 false
guard-replacement-missing ones for sunrise). Each rule is a plain fact of C++ and the build, tested on its own."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.drift_helpers import drift_of
from tests.test_real_structures import small_world

B = "third_party/b/backend/spec/"
MACRO = "#define FLAGTREE_SPEC_Impl_cpp\n"
HEADER = "namespace t {\nstruct Layout {\n  int width() const;\n  int depth() const;\n};\nint helper(int a);\n}\n"
TRUNK = ("#ifndef FLAGTREE_SPEC_Impl_cpp\nnamespace t {\nnamespace {\nint local(int a) { return a; }\n}\n"
         "static int quiet(int a) { return local(a); }\nint Layout::width() const { return quiet(1); }\n"
         "int Layout::depth() const { return 2; }\nint helper(int a) { return a; }\n}\n#endif\n")
LIBRARY = ("namespace t {\nint Layout::width() const { return 3; }\nint Layout::depth() const { return 4; }\n"
           "int helper(int a) { return -a; }\n}\n")


def _guard_kinds(tmp_path: Path, upstream: dict[str, str], fork_extra: dict[str, str] | None = None) -> set[tuple[str, str]]:
    base = {"include/t/Layout.h": HEADER, "lib/Impl.cpp": TRUNK.replace("#ifndef FLAGTREE_SPEC_Impl_cpp\n", "")
            .replace("#endif\n", ""), "python/triton/__init__.py": ""}
    fork = {**base, "lib/Impl.cpp": TRUNK, B + "include/flagtree_spec.h": MACRO, B + "lib/Impl.cpp": LIBRARY,
            **(fork_extra or {})}
    tmp_path.mkdir(parents=True, exist_ok=True)
    repo = small_world(tmp_path, base, upstream, fork)
    found = set()
    for finding in drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings:
        if finding.kind in ("guard-default-removed", "guard-replacement-missing"):
            what = finding.message.split(" default ")[-1].split(" at ")[0] if finding.kind == "guard-default-removed" \
                else finding.message.split(" defines no ")[-1]
            found.add((finding.kind, what))
    return found


def test_file_local_helpers_compiled_out_with_their_callers_need_no_replacement(tmp_path: Path) -> None:
    # local (anonymous namespace) and quiet (static) are used only inside the guard: the library need not define them
    assert _guard_kinds(tmp_path, {"README.md": "v2\n"}) == set()


def test_a_removed_member_default_is_an_error_unless_the_backends_own_declarations_keep_it(tmp_path: Path) -> None:
    # upstream drops Layout::depth (header and default) and the file-local helpers; the library still defines depth
    header = HEADER.replace("  int depth() const;\n", "")
    trunk = "namespace t {\nint Layout::width() const { return 1; }\nint helper(int a) { return a; }\n}\n"
    upstream = {"include/t/Layout.h": header, "lib/Impl.cpp": trunk}
    assert _guard_kinds(tmp_path / "plain", upstream) == {("guard-default-removed", "Layout::depth")}
    # a backend that builds its own copy of the declaring header (or TableGen) still declares depth
    own = {"third_party/b/include/t/Layout.h": HEADER}
    assert _guard_kinds(tmp_path / "own", upstream, own) == set()


def test_a_removed_free_default_is_an_error_only_where_trunk_still_has_it(tmp_path: Path) -> None:
    # helper gone from trunk altogether: the library's helper is the backend's own function now
    header = HEADER.replace("int helper(int a);\n", "")
    gone = {"include/t/Layout.h": header,
            "lib/Impl.cpp": "namespace t {\nint Layout::width() const { return 1; }\n"
                            "int Layout::depth() const { return 2; }\n}\n"}
    assert _guard_kinds(tmp_path / "gone", gone) == set()
    # helper moved to another file: the library's definition would clash with trunk's new one
    moved = {**gone, "include/t/Layout.h": HEADER, "lib/Helper.cpp": "namespace t {\nint helper(int a) { return a; }\n}\n"}
    assert _guard_kinds(tmp_path / "moved", moved) == {("guard-default-removed", "helper")}
