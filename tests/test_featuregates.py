"""feature-ungated: FlagTree trunk C++ names a component the fork gates behind a build macro elsewhere."""
from __future__ import annotations

from sync.drift.analyses.featuregates import (_upstream_form, cmake_definitions, component_names, feature_gate_findings,
                                         gated_lines, unconditional_definitions)
from tests.upstream_fixture import context_of

UPSTREAM_PASS = '#include "core/Ops.h"\n\nvoid run() {\n  core::build();\n}\n'
OLD = {"CMakeLists.txt": "project(x)\n", "lib/Pass.cpp": UPSTREAM_PASS, "lib/Other.cpp": UPSTREAM_PASS,
       "lib/Plain.cpp": UPSTREAM_PASS}
# The fork's build defines the macro only when its option is on: a build without it exists.
BUILD = "project(x)\noption(FEAT \"feature\" OFF)\nif(FEAT)\n  add_definitions(-D__FEAT__)\nendif()\n"
GATED = ('#include "core/Ops.h"\n#ifdef __FEAT__\n#include "feat/Dialect.h"\n#endif\n\nvoid run() {\n'
         '  core::build();\n#if defined(__FEAT__)\n  feat::registerAll(op == "feat.other");\n#endif\n}\n')
UNGATED = ('#include "core/Ops.h"\n#include "feat/Dialect.h"\n\nvoid run() {\n  core::build();\n'
           '  if (name == "feat.local") {\n    feat::registerAll();\n  }\n}\n')
NEW_TAG = {"VERSION": "2\n"}  # the fixture needs an upstream commit between the tags
PLAIN = '#include "core/Ops.h"\n\nvoid run() {\n  core::build();\n  core::extra();\n}\n'


def fork_of(**files: str) -> dict[str, str]:
    return {**OLD, "CMakeLists.txt": BUILD, "lib/Pass.cpp": GATED, **files}


def test_fires_on_ungated_code_of_a_gated_component(tmp_path) -> None:
    fork = fork_of(**{"lib/Other.cpp": UNGATED, "lib/Plain.cpp": PLAIN})
    findings = feature_gate_findings(context_of(tmp_path, OLD, {**OLD, **NEW_TAG}, fork))
    assert [(f.kind, f.path, f.line) for f in findings] == [("feature-ungated", "lib/Other.cpp", 2)]
    finding = findings[0]
    assert finding.details["lines"] == [2, 7]  # the include and the namespace; the op-name string compiles
    assert finding.details["macro"] == "__FEAT__" and finding.related_path == "lib/Pass.cpp"
    assert finding.severity == "warning" and "CMakeLists.txt" in finding.message
    assert '+#include "feat/Dialect.h"' in (finding.diff or "")


def test_else_branch_of_the_gate_is_not_gated(tmp_path) -> None:
    other = UNGATED.replace('#include "feat/Dialect.h"\n',
                            '#ifdef __FEAT__\n#else\n#include "feat/Dialect.h"\n#endif\n')
    other = other.replace('  if (name == "feat.local") {\n    feat::registerAll();\n  }\n', "")
    findings = feature_gate_findings(context_of(tmp_path, OLD, {**OLD, **NEW_TAG}, fork_of(**{"lib/Other.cpp": other})))
    assert [(f.path, f.details["lines"]) for f in findings] == [("lib/Other.cpp", [4])]


def test_silent_when_gated_everywhere_or_macro_not_built(tmp_path) -> None:
    everywhere = fork_of(**{"lib/Other.cpp": GATED.replace("registerAll", "registerMore")})
    assert feature_gate_findings(context_of(tmp_path / "gated", OLD, {**OLD, **NEW_TAG}, everywhere)) == []
    # No add_definitions(-D__FEAT__): the #ifdef gates nothing the build turns on, so there is no gate to keep.
    unbuilt = {**fork_of(**{"lib/Other.cpp": UNGATED}), "CMakeLists.txt": "project(x)\n"}
    assert feature_gate_findings(context_of(tmp_path / "unbuilt", OLD, {**OLD, **NEW_TAG}, unbuilt)) == []


def test_silent_on_files_flagtree_added(tmp_path) -> None:
    # A file FlagTree added (absent at the old tag) is the component's own code: its CMake decides its build.
    fork = fork_of(**{"lib/Feat/Impl.cpp": UNGATED})
    assert feature_gate_findings(context_of(tmp_path, OLD, {**OLD, **NEW_TAG}, fork)) == []


def test_silent_when_upstream_already_uses_the_names(tmp_path) -> None:
    # Upstream's own C++ includes feat/ headers and uses feat:: and "feat." op names: they tell no FlagTree component.
    old = {**OLD, "lib/Up.cpp": '#include "feat/Dialect.h"\nvoid f() { feat::registerAll(); g("feat.x"); }\n'}
    # ... while a longer name that merely ends in it (subfeat::) does not count as upstream using feat::.
    assert not _upstream_form("namespace", "feat").search("subfeat::x()")
    fork = {**old, "CMakeLists.txt": BUILD, "lib/Pass.cpp": GATED, "lib/Other.cpp": UNGATED}
    assert feature_gate_findings(context_of(tmp_path, old, {**old, **NEW_TAG}, fork)) == []


def test_gated_lines_and_names() -> None:
    text = ("a\n#ifdef M\nb\n#else\nc\n#endif\n#ifndef M\nd\n#else\ne\n#endif\n"
            "#if defined(M) && X\nf\n#elif !defined(M)\ng\n#endif\n#if !defined(M)\nh\n#endif\n")
    regions = gated_lines(text, {"M"})
    gated = {text.splitlines()[n - 1] for n, macros in regions.items() if "M" in macros}
    assert gated == {"b", "e", "f"}
    names = component_names('#include "third_party/feat/a/B.h"\n#include <vector>\nx = ns::y("d.op", "no dot");\n')
    assert names == {1: {("include", "feat")}, 3: {("namespace", "ns"), ("op", "d")}}
    cmake = "add_definitions(-DA -DB=1)\nadd_compile_definitions(C D=2)\nset(E 1)\n"
    assert cmake_definitions(cmake) == {"A", "B", "C", "D"}


def test_names_are_read_only_from_files_that_spell_a_gated_component(tmp_path, monkeypatch) -> None:
    """A trunk file without the macro and without any name of the gated component cannot be reported."""
    from sync.drift.analyses import featuregates
    read: list[str] = []
    real = featuregates.component_names
    monkeypatch.setattr(featuregates, "component_names", lambda text: read.append(text) or real(text))
    fork = fork_of(**{"lib/Other.cpp": UNGATED, "lib/Plain.cpp": PLAIN})
    findings = feature_gate_findings(context_of(tmp_path, OLD, {**OLD, **NEW_TAG}, fork))
    assert [f.path for f in findings] == ["lib/Other.cpp"]
    assert sorted(read) == sorted([GATED, UNGATED])  # not PLAIN: it names no part of feat


def test_the_scan_of_upstreams_cpp_is_kept_by_tree_and_names(tmp_path, monkeypatch) -> None:
    from sync.drift.analyses import featuregates
    from sync.support.cache import FactCache, using
    context = context_of(tmp_path / "world", OLD, {**OLD, **NEW_TAG}, fork_of(**{"lib/Other.cpp": UNGATED}))
    names = {("namespace", "core"), ("namespace", "feat")}
    scans: list[object] = []
    real = featuregates._scan_upstream_names
    monkeypatch.setattr(featuregates, "_scan_upstream_names", lambda *args: scans.append(args) or real(*args))
    (tmp_path / "git-dir").mkdir()
    found = []
    for _ in range(2):
        with using(FactCache(tmp_path / "git-dir")):
            found.append(featuregates._upstream_names(context.upstream_old, names))
    assert found == [{("namespace", "core")}] * 2 and len(scans) == 1
    with using(FactCache(tmp_path / "git-dir")):  # other names: another entry
        assert featuregates._upstream_names(context.upstream_old, {("namespace", "feat")}) == set()
    assert len(scans) == 2


def test_a_macro_a_backends_cmake_defines_gates_nothing_in_trunk(tmp_path) -> None:
    # add_definitions holds for its directory and below: a macro only third_party/b/ defines is never set for
    # lib/ (issue 33: ENABLE_TLE of one backend taken for the feature's gate of trunk code).
    fork = {**fork_of(**{"lib/Other.cpp": UNGATED}), "CMakeLists.txt": "project(x)\n",
            "third_party/b/CMakeLists.txt": BUILD}
    assert feature_gate_findings(context_of(tmp_path / "backend", OLD, {**OLD, **NEW_TAG}, fork)) == []
    # The same macro defined by a CMake file whose directory holds the trunk file still fires.
    fork = {**fork, "lib/CMakeLists.txt": BUILD}
    findings = feature_gate_findings(context_of(tmp_path / "lib", OLD, {**OLD, **NEW_TAG}, fork))
    assert [(f.path, f.details["macro"]) for f in findings] == [("lib/Other.cpp", "__FEAT__")]


def test_reaches_is_the_cmake_directory_subtree() -> None:
    from sync.drift.analyses.featuregates import reaches
    assert reaches("CMakeLists.txt", "lib/a.cpp") and reaches("lib/CMakeLists.txt", "lib/x/a.cpp")
    assert not reaches("third_party/b/CMakeLists.txt", "lib/a.cpp") and not reaches("lib/CMakeLists.txt", "libx/a.cpp")


def test_a_literal_use_reads_as_its_pattern_does() -> None:
    """_uses finds a qualifier or an op name with str.find: the same answers as the patterns it stands for."""
    from sync.drift.analyses.featuregates import _upstream_form, _uses
    texts = ["tle::Op x;", "xtle::Op", "_tle::Op", "étle::Op", "a tle::Op", "(tle::Op", "xtle::Op tle::B",
             '"tle.op"', '"xtle.op"', 'tle.op', '#include "tle/x.h"', '# include <third_party/tle/x.h>',
             '#include "x/tle/y.h"', "tle ::Op", ""]
    for kind in ("namespace", "op", "include"):
        form = _upstream_form(kind, "tle")
        assert [_uses(text, (kind, "tle"), form) for text in texts] == [bool(form.search(text)) for text in texts]


def test_a_macro_every_configuration_defines_gates_nothing(tmp_path) -> None:
    """The 3.5.x -> 3.6.0 move: `add_definitions(-D__TLE__)` at the top of the root CMakeLists.txt (and in 3.6.x
    inside `if(FLAGTREE_TLE)` right after `set(FLAGTREE_TLE ON)`): no build leaves __TLE__ out, so ungated TLE
    lines break nothing."""
    for name, build in {"top": "project(x)\nadd_definitions(-D__FEAT__)\n",
                        "set on": "set(FEAT ON)\nif(FEAT)\n  add_definitions(-D__FEAT__)\nendif()\n"}.items():
        fork = {**fork_of(**{"lib/Other.cpp": UNGATED}), "CMakeLists.txt": build}
        assert feature_gate_findings(context_of(tmp_path / name.replace(" ", "-"), OLD, {**OLD, **NEW_TAG}, fork)) == [], name
    assert unconditional_definitions("if(A)\nadd_definitions(-DX)\nelse()\nadd_definitions(-DY)\nendif()\n"
                                     "set(B ON)\nif(B)\nadd_definitions(-DZ)\nelse()\nadd_definitions(-DW)\nendif()\n"
                                     "add_definitions(-DV) # top\n") == {"Z", "V"}


def test_a_definition_list_over_several_lines_counts() -> None:
    """The line-based reader saw `add_definitions(` and `-DA` on different lines and read neither; a condition
    split over lines closed no block for it either."""
    text = ("add_definitions(\n  -DA # first\n  -DB)\nif(X AND\n   Y)\n  add_definitions(-DC)\nendif()\n"
            "add_definitions(-DD)\n")
    assert unconditional_definitions(text) == {"A", "B", "D"}


def test_a_commented_out_definition_defines_nothing() -> None:
    """`#add_definitions(-D__TLE_STRUCT__)` in FlagTree's root CMakeLists.txt (3.6.x): the regex read it as one."""
    assert cmake_definitions("#add_definitions(-D__TLE_STRUCT__)\nadd_definitions(-D__TLE__) # -D__NOT__\n") == \
        {"__TLE__"}


def test_an_op_name_string_alone_needs_no_gate(tmp_path) -> None:
    """Seen on triton_v3.5.x onto 3.7: Alias.cpp compares an op's name with "tle.local_pointers" outside the TLE
    gate; a string compiles in a build without the component."""
    only_string = UNGATED.replace('#include "feat/Dialect.h"\n', "").replace("    feat::registerAll();\n", "")
    fork = fork_of(**{"lib/Other.cpp": only_string})
    assert feature_gate_findings(context_of(tmp_path, OLD, {**OLD, **NEW_TAG}, fork)) == []


FEAT_BUILT = ('set(FLAGTREE_BACKEND "$ENV{FLAGTREE_BACKEND}")\nif(FLAGTREE_BACKEND STREQUAL "acme")\n'
              '  add_definitions(-D__FEAT__)\nendif()\nadd_subdirectory(third_party/feat)\n')
FEAT_GATED_BUILD = ('set(FLAGTREE_BACKEND "$ENV{FLAGTREE_BACKEND}")\nif(FLAGTREE_BACKEND STREQUAL "acme")\n'
                    '  add_definitions(-D__FEAT__)\n  add_subdirectory(third_party/feat)\nendif()\n')


def test_a_component_every_configuration_builds_needs_no_gate(tmp_path) -> None:
    """triton_v3.5.x onto 3.7: only some backends define __TLE__, but the root CMake adds third_party/tle in every
    configuration, so python/src/ir.cc's ungated TLE include and qualifier compile in each build. Where the
    component's directory is added only beside the macro, a build without it lacks the header."""
    component = {"third_party/feat/CMakeLists.txt": "add_library(feat feat.cpp)\n",
                 "third_party/feat/Dialect.h": "namespace feat { void registerAll(); }\n",
                 "third_party/feat/feat.cpp": "void f() {}\n", "third_party/acme/backend/compiler.py": "X = 1\n",
                 "python/setup.py": 'args = ["-DTRITON_CODEGEN_BACKENDS=" + ";".join(backends)]\n'}
    found = {}
    for name, build in {"built-anyway": FEAT_BUILT, "built-with-the-macro": FEAT_GATED_BUILD}.items():
        fork = {**fork_of(**{"lib/Other.cpp": UNGATED}), **component, "CMakeLists.txt": build}
        findings = feature_gate_findings(context_of(tmp_path / name, OLD, {**OLD, **NEW_TAG}, fork))
        found[name] = [(f.kind, f.path) for f in findings]
    assert found == {"built-anyway": [], "built-with-the-macro": [("feature-ungated", "lib/Other.cpp")]}
