"""Issue 50: a member call through a name that left upstream's whole tree (`enc.getCTALayout()` after the ODS
parameter CTALayout became CGALayout) is a member-removed finding, with the rename where one upstream commit
renamed every declaration of it to one name; port renames the calls, whatever the receiver."""
from __future__ import annotations

from pathlib import Path

from sync.git import open_repo
from sync.jobs.port import PortOptions, PortResult, read_branch_text, run_port
from sync.jobs.port_edit import rename_members_cpp
from sync.drift.analyses.accessors import interface_methods
from sync.facts.includedirs import backend_copy, own_include_dirs
from sync.facts.trees import DiskTree
from tests.test_check import write_tree
from tests.conftest import git
from tests.drift_helpers import drift_of, fork_world, replayed_branch, upgraded_world
from tests.test_symbols import commit

TD_V1 = ('def LayoutTrait : AttrInterface<"LayoutTrait"> {\n  let methods = [\n'
         '    InterfaceMethod<"the layout", "LayoutAttr", "getOldLayout">,\n'
         '    InterfaceMethod<"the rank", "unsigned", "getRank">\n  ];\n}\n'
         'def BlockedAttr : AttrDef<Dialect, "Blocked"> {\n  let parameters = (ins\n'
         '    "unsigned":$warps,\n    "LayoutAttr":$oldLayout\n  );\n}\n'
         'def SharedAttr : AttrDef<Dialect, "Shared"> {\n  let parameters = (ins\n'
         '    "unsigned":$vec,\n    "LayoutAttr":$oldLayout\n  );\n}\n')
TD_RENAMED = TD_V1.replace("getOldLayout", "getNewLayout").replace("$oldLayout", "$newLayout")
TD_SPLIT = TD_V1.replace('"getOldLayout"', '"getNewLayout"').replace(
    '"unsigned":$warps,\n    "LayoutAttr":$oldLayout', '"unsigned":$warps,\n    "LayoutAttr":$newLayout').replace(
    '"unsigned":$vec,\n    "LayoutAttr":$oldLayout', '"unsigned":$vec,\n    "LayoutAttr":$otherLayout')
HEADER = "namespace mlir::triton::gpu {\nclass Helper { public: int getOldLayout() const; };\n}\n"
HEADER_RENAMED = HEADER.replace("getOldLayout", "getNewLayout")
USER = ('#include "Dialect.h"\nint alpha(mlir::Value value) {\n'
        "  auto enc = value.getType().getEncoding();\n"  # a receiver of no known type: symbol drift cannot tell
        "  int a = enc.getOldLayout().getRank();\n"  # 4
        "  int b = helper()->getOldLayout();\n"  # 5
        "  // enc.getOldLayout() in a comment stays\n"
        "  return a + b + value.getType().getEncoding().getOldLayout().getRank();\n}\n")  # 7
OWN = "namespace beta {\nstruct Mine { int getOldLayout() const { return 1; } };\n}\n"
BETA = '#include "Own.h"\nint beta(beta::Mine m) { return m.getOldLayout(); }\n'


def _world(tmp_path: Path, upstream_td: str = TD_RENAMED, header: str = HEADER_RENAMED) -> Path:
    old = {"include/triton/Dialect/Attrs.td": TD_V1, "include/triton/Dialect/Helper.h": HEADER,
           "lib/Up.cpp": "int up(BlockedAttr e) { return e.getOldLayout(); }\n"}
    new = {"include/triton/Dialect/Attrs.td": upstream_td, "include/triton/Dialect/Helper.h": header,
           "lib/Up.cpp": "int up(BlockedAttr e) { return e.getNewLayout(); }\n"}
    fork = {"third_party/alpha/lib/Alpha.cpp": USER, "third_party/beta/include/Own.h": OWN,
            "third_party/beta/lib/Beta.cpp": BETA}
    return upgraded_world(tmp_path, old, fork, new, "[NFC] Rename OldLayout as NewLayout (#201)")


def _members(repo: Path) -> dict[str | None, dict]:
    findings = drift_of(fork_world(repo), "v1", "v2", "main", target="sync/v2", symbols=True).findings
    return {f.backend: f.details for f in findings if f.kind == "member-removed"}


def _port(repo: Path) -> PortResult:
    return run_port(str(repo), old="v1", onto="v2", source="main", options=PortOptions(target="sync/v2"))


def test_a_member_name_that_left_the_tree_is_a_finding_with_its_rename(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    found = _members(repo)
    assert set(found) == {"alpha"}  # beta declares a getOldLayout of its own: its call may build
    details = found["alpha"]
    assert details["renamed_to"] == "getNewLayout"
    assert details["sites"] == ["third_party/alpha/lib/Alpha.cpp:4", "third_party/alpha/lib/Alpha.cpp:5",
                                "third_party/alpha/lib/Alpha.cpp:7"]
    assert details["commits"][0].endswith("[NFC] Rename OldLayout as NewLayout (#201)")


def test_port_renames_every_member_call_and_the_next_drift_has_none(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    result = _port(repo)
    change = next(change for change in result.changes if change.pr == "201")
    assert change.committed and len(change.sites) == 3
    text = read_branch_text(open_repo(str(repo)), "sync/v2", "third_party/alpha/lib/Alpha.cpp")
    assert text == USER.replace("enc.getOldLayout()", "enc.getNewLayout()", 1).replace(
        "helper()->getOldLayout", "helper()->getNewLayout").replace("getEncoding().getOldLayout", "getEncoding().getNewLayout")
    assert "// enc.getOldLayout() in a comment stays" in (text or "")
    body = git(repo, "log", "-1", "--format=%B", "sync/v2")
    assert body.startswith("port: getOldLayout -> getNewLayout (#201)") and "Rule: renamed-member" in body
    assert _members(repo) == {}
    assert "m.getOldLayout()" in git(repo, "show", "sync/v2:third_party/beta/lib/Beta.cpp")


def test_declarations_that_went_different_ways_are_left(tmp_path: Path) -> None:
    repo = _world(tmp_path, upstream_td=TD_SPLIT)
    details = _members(repo)["alpha"]
    assert "renamed_to" not in details and details["not_certain"].startswith("its declarations went different ways")
    result = run_port(str(repo), old="v1", onto="v2", source="main",
                      options=PortOptions(target="sync/v2", dry_run=True))
    assert not any(change.sites for change in result.changes)
    assert any(what == ".getOldLayout()" and why.startswith("its declarations went different ways")
               for change in result.changes for what, why in change.left)


def test_a_cpp_declaration_that_took_no_new_name_leaves_the_rename_uncertain(tmp_path: Path) -> None:
    repo = _world(tmp_path, header=HEADER.replace("int getOldLayout() const;", "int size() const;"))
    assert "renamed_to" not in _members(repo)["alpha"]


def test_a_name_upstream_still_spells_is_no_finding(tmp_path: Path) -> None:
    repo = _world(tmp_path, header=HEADER_RENAMED + "// getOldLayout: see getNewLayout\n")
    assert _members(repo) == {}


def test_member_edits_refuse_conflict_blocks_and_macros() -> None:
    text = ("#define LAYOUT(x) (x).getOldLayout()\nint f(A a) {\n<<<<<<< ours\n  return a.getOldLayout();\n"
            "=======\n  return 0;\n>>>>>>> theirs\n}\nint g(A a) { return a.getOldLayout() + getOldLayout(a); }\n")
    edit = rename_members_cpp(text, "getOldLayout", "getNewLayout", {1, 4, 9})
    assert edit.changed == [9]
    assert edit.refused == {1: "inside a macro's body", 4: "inside a conflict block"}
    assert edit.text == text.replace("a.getOldLayout() +", "a.getNewLayout() +")  # the free call is not a member


def test_interface_methods_are_read_from_the_td() -> None:
    assert interface_methods(TD_V1) == {"LayoutTrait": ["getOldLayout", "getRank"]}


def test_a_call_symbol_drift_reports_through_its_receiver_type_is_not_reported_twice(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    git(repo, "checkout", "-q", "main")
    typed = "int typed(Helper *h) { return h->getOldLayout(); }\n"
    commit(repo, {"third_party/alpha/lib/Typed.cpp": typed}, "[FlagTree] typed")
    git(repo, "branch", "-f", "sync/v2", "main")  # the branch is only read here
    findings = drift_of(fork_world(repo), "v1", "v2", "main", symbols=True).findings
    members = [site for f in findings if f.kind == "member-removed" for site in f.details["sites"]]
    removed = [f for f in findings if f.kind == "symbol-removed" and "Typed.cpp" in str(f.details)]
    assert "third_party/alpha/lib/Typed.cpp:1" not in members and removed


def test_a_finding_port_leaves_carries_upstream_worked_example(tmp_path: Path) -> None:
    from sync.report.markdown import render_group
    repo = _world(tmp_path, upstream_td=TD_SPLIT)
    drift = drift_of(fork_world(repo), "v1", "v2", "main", target="sync/v2", symbols=True).findings
    result = run_port(str(repo), old="v1", onto="v2", source="main",
                      options=PortOptions(target="sync/v2", dry_run=True))
    assert result.report is not None
    left = next(f for f in result.report.findings if f.kind == "member-removed")
    example = left.details["upstream_example"]
    assert (example["path"], example["line"], example["before"], example["after"]) == (
        "lib/Up.cpp", 1, ["int up(BlockedAttr e) { return e.getOldLayout(); }"],
        ["int up(BlockedAttr e) { return e.getNewLayout(); }"])
    group = next(group for group in result.report.groups if left in group.findings)
    page = render_group(result.report, group)
    assert "-int up(BlockedAttr e) { return e.getOldLayout(); }" in page
    assert "+int up(BlockedAttr e) { return e.getNewLayout(); }" in page
    # the finding is drift's own but for the example; findings port ported or did not read stay as they are
    from dataclasses import replace
    for finding in result.report.findings:
        plain = {key: value for key, value in finding.details.items() if key != "upstream_example"}
        assert replace(finding, details=plain, diff=None if plain != finding.details else finding.diff) in drift
    (tmp_path / "all").mkdir()
    ported = run_port(str(_world(tmp_path / "all")), old="v1", onto="v2", source="main",
                      options=PortOptions(target="sync/v2", dry_run=True)).report
    assert ported is not None and not any("upstream_example" in f.details for f in ported.findings)


def test_a_name_flagtree_trunk_declares_is_no_finding_anywhere(tmp_path: Path) -> None:
    repo = _world(tmp_path)
    git(repo, "checkout", "-q", "main")
    commit(repo, {"include/triton/Dialect/Mine.h": OWN.replace("namespace beta", "namespace trunk")},
           "[FlagTree] a trunk class of its own")
    git(repo, "checkout", "-q", "sync/v2")
    commit(repo, {"include/triton/Dialect/Mine.h": OWN.replace("namespace beta", "namespace trunk")},
           "[FlagTree] a trunk class of its own")
    git(repo, "checkout", "-q", "main")
    assert _members(repo) == {}  # every call may mean FlagTree's own getOldLayout


def _with_backend_copy(repo: Path, files: dict[str, str]) -> None:
    """A backend gamma that compiles its own copy of trunk's dialect (the 3.1 line's iluvatar, mthreads, xpu):
    the same files on the FlagTree branch and on the upgraded one."""
    for branch in ("main", "sync/v2"):
        git(repo, "checkout", "-q", branch)
        commit(repo, files, "[FlagTree] gamma builds its own copy of trunk")
    git(repo, "checkout", "-q", "main")


GAMMA = "int gamma(mlir::Value value) {\n  auto enc = value.getType().getEncoding();\n  return enc.getOldLayout().getRank();\n}\n"


def test_a_call_of_a_backend_that_compiles_its_own_copy_of_the_declaring_td_is_no_finding(tmp_path: Path) -> None:
    """The 3.1 line -> 3.3.0 move: `adaptor.getFunc()` in iluvatar's lib/ copy was read against trunk's
    TritonOps.td, while the root CMake puts third_party/${FLAGTREE_BACKEND}/include, whose copy still declares
    $func, on that backend's include path in place of trunk's include/."""
    repo = _world(tmp_path)
    root_cmake = ("set(BACKEND_INCLUDE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/third_party/${FLAGTREE_BACKEND}/include)\n"
                  "if(FLAGTREE_BACKEND AND EXISTS ${BACKEND_INCLUDE_DIR})\n  include_directories(${BACKEND_INCLUDE_DIR})\n"
                  "else()\n  include_directories(${PROJECT_SOURCE_DIR}/include)\nendif()\n")
    _with_backend_copy(repo, {"CMakeLists.txt": root_cmake, "third_party/gamma/include/triton/Dialect/Attrs.td": TD_V1,
                              "third_party/gamma/lib/Gamma.cpp": GAMMA})
    assert set(_members(repo)) == {"alpha"}  # alpha still reads trunk's renamed record


def test_a_backends_include_directories_are_read_from_its_build(tmp_path: Path) -> None:
    """Where a backend's compiled files find trunk's headers: the directories its build names (the root's
    template through FLAGTREE_BACKEND, its own CMakeLists.txt), not the build tree's, and its include/."""
    root = ("set(OWN ${CMAKE_CURRENT_SOURCE_DIR}/third_party/${FLAGTREE_BACKEND}/root/include)\n"
            "include_directories(${OWN})  # the backend's copy\ninclude_directories(${PROJECT_SOURCE_DIR}/include)\n")
    own = ("include_directories(${CMAKE_CURRENT_SOURCE_DIR}/musa/include)\n"
           "include_directories(${CMAKE_CURRENT_BINARY_DIR}/include ${LLD_INCLUDE_DIRS})\ninclude_directories(tle)\n")
    tree = DiskTree(write_tree(tmp_path, {"CMakeLists.txt": root, "third_party/m/CMakeLists.txt": own,
                                          "include/triton/A.h": "", "include/triton/B.h": "",
                                          "third_party/m/musa/include/triton/A.h": "",
                                          "third_party/m/root/include/triton/B.h": ""}))
    assert own_include_dirs(tree, "m") == ("third_party/m/root/include", "third_party/m/musa/include",
                                           "third_party/m/tle", "third_party/m/include")
    assert backend_copy(tree, "m", "include/triton/A.h") == "third_party/m/musa/include/triton/A.h"
    assert backend_copy(tree, "m", "include/triton/B.h") == "third_party/m/root/include/triton/B.h"
    assert backend_copy(tree, "n", "include/triton/A.h") is None


def test_a_member_the_backend_s_own_trunk_copy_declares_may_take_its_calls(tmp_path: Path) -> None:
    """A backend that carries its own copy of trunk's headers (third_party/<b>/include/triton/) builds against
    it: a member of that name there, on whatever class, may be what the call means (the 3.3 -> 3.2 backport:
    iluvatar's getLoadType, xpu's getStride), so the call is no finding; another backend's calls still are."""
    repo = _world(tmp_path)
    git(repo, "checkout", "-q", "main")
    copy = ('def MineAttr : AttrDef<Dialect, "Mine"> {\n  let parameters = (ins\n'
            '    "unsigned":$oldLayout\n  );\n}\n')
    commit(repo, {"third_party/alpha/include/triton/Dialect/Mine.td": copy,
                  "third_party/gamma/lib/Gamma.cpp": USER.replace("alpha", "gamma")}, "[FlagTree] own copy")
    git(repo, "branch", "-f", "sync/v2", "main")  # the branch is only read here
    found = {f.backend for f in drift_of(fork_world(repo), "v1", "v2", "main", symbols=True).findings
             if f.kind == "member-removed"}
    assert "alpha" not in found and "gamma" in found


def test_a_member_only_another_compile_unit_declared_is_not_the_calls(tmp_path: Path) -> None:
    """Seen on triton_v3.5.x onto 3.7: tsingmicro's `desc.setOffset(...)` calls MLIR's MemRefDescriptor (outside
    the tree); the only setOffset upstream removed was a member of a class local to a deleted .cpp."""
    local = "namespace {\nstruct Rewrite { void setOffset(int v) {} };\n}\nvoid pass() {}\n"
    caller = "void lower(Descriptor desc) {\n  desc.setOffset(0);\n}\n"
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"lib/Rewrite.cpp": local, "include/triton/Helper.h": HEADER}, "v1")
    git(repo, "tag", "v1")
    commit(repo, {"third_party/alpha/lib/Lower.cpp": caller}, "[FlagTree] alpha")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    git(repo, "rm", "-q", "lib/Rewrite.cpp")
    commit(repo, {"include/triton/Helper.h": HEADER}, "Remove the rewrite pass (#7)")
    git(repo, "tag", "v2")
    replayed_branch(repo, "v2", "main", "sync/v2")
    assert _members(repo) == {}
    # The same member in a header the call can reach is the call's: reported.
    git(repo, "checkout", "-q", "-b", "header", "v1")
    commit(repo, {"include/triton/Rewrite.h": local.replace("namespace {", "namespace t {")}, "v1 header")
    git(repo, "tag", "v1h")
    commit(repo, {"third_party/alpha/lib/Lower.cpp": caller}, "[FlagTree] alpha")
    git(repo, "checkout", "-q", "-b", "upstream-h", "v1h")
    git(repo, "rm", "-q", "include/triton/Rewrite.h", "lib/Rewrite.cpp")
    commit(repo, {"include/triton/Helper.h": HEADER}, "Remove the rewrite header (#8)")
    git(repo, "tag", "v2h")
    replayed_branch(repo, "v2h", "header", "sync/v2h")
    findings = drift_of(fork_world(repo), "v1h", "v2h", "header", target="sync/v2h", symbols=True).findings
    assert [f.details["sites"] for f in findings if f.kind == "member-removed"] == [
        ["third_party/alpha/lib/Lower.cpp:2"]]
