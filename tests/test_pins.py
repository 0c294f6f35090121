"""Issue 45, class 1: a toolchain pin upstream moved that FlagTree's build still names (pin-stale)."""
from __future__ import annotations

from pathlib import Path

from sync.drift.analyses.pins import pin_findings, toolchain_name_findings
from tests.upstream_fixture import context_of, context_with_history

PIN = "cmake/llvm-hash.txt"
OLD_HASH, NEW_HASH = "a66376b0dc3b2ea8a84fda26faca287980986f78", "8957e64a20fc7f4277565c6cfe3e555c119783ce"
HELPER = "python/setup_tools/setup_helper.py"
DOWNLOAD = 'cache.store(file="llvm-{hash}-ubuntu-x64", condition=True)\n'


def test_a_build_line_naming_the_old_pin_is_an_error(tmp_path: Path) -> None:
    """The 3.3.x -> 3.4.0 move: the setup helper downloads llvm-a66376b0 while 3.4.0 pins 8957e64a."""
    old, new = {PIN: OLD_HASH + "\n"}, {PIN: NEW_HASH + "\n"}
    fork = {**old, HELPER: "import os\n" + DOWNLOAD.format(hash=OLD_HASH[:8])}
    found = pin_findings(context_of(tmp_path, old, new, fork))
    assert [(f.kind, f.severity, f.path, f.line) for f in found] == [("pin-stale", "error", HELPER, 2)]
    assert "8957e64a" in found[0].message and found[0].related_path == PIN


def test_no_claim_for_another_toolchain_the_new_pin_or_a_pin_that_did_not_move(tmp_path: Path) -> None:
    old, new = {PIN: OLD_HASH + "\n"}, {PIN: NEW_HASH + "\n"}
    cases = {"own toolchain": (new, DOWNLOAD.format(hash="1f2e3d4c")),
             "already moved": (new, DOWNLOAD.format(hash=NEW_HASH[:8])),
             "longer hex word": (new, DOWNLOAD.format(hash="0" + OLD_HASH[:8])),
             "pin unchanged": ({PIN: OLD_HASH + "\n", "README": "x\n"}, DOWNLOAD.format(hash=OLD_HASH[:8])),
             "not a hash file": ({PIN: "llvm 19\n"}, DOWNLOAD.format(hash=OLD_HASH[:8]))}
    for name, (after, line) in cases.items():
        before = old if name != "not a hash file" else {PIN: "llvm 18\n"}
        fork = {**before, HELPER: "import os\n" + line}
        assert pin_findings(context_of(tmp_path / name.replace(" ", "-"), before, after, fork)) == [], name


def test_a_pin_named_in_a_comment_builds_nothing(tmp_path: Path) -> None:
    """Seen on triton_v3.3.x onto 3.5.1: a note in python/src/ir.cc (`// ... because LLVM a66376b0 cannot ...`) was
    reported as a build naming the old pin. A comment, C++ or Python, whole-line or after code, names nothing a build
    uses; a string of the same line still does."""
    old, new = {PIN: OLD_HASH + "\n"}, {PIN: NEW_HASH + "\n"}
    short = OLD_HASH[:8]
    fork = {**old, "python/src/ir.cc": f"int a;\n  // off: LLVM {short} cannot\nint b; /* {short}\n */\n"
                                      f'const char *url = "llvm-{short}"; // pinned\n',
            HELPER: f"import os  # LLVM {short}\n" + DOWNLOAD.format(hash=short)}
    found = {(f.path, f.line) for f in pin_findings(context_of(tmp_path, old, new, fork))}
    assert found == {("python/src/ir.cc", 5), (HELPER, 2)}


def test_a_pin_upstream_moved_into_a_json_file_is_followed_by_its_name(tmp_path: Path) -> None:
    """3.7: cmake/llvm-hash.txt became the llvm_hash of cmake/llvm-info.json, with a new LLVM."""
    old = {PIN: OLD_HASH + "\n"}
    new = {"cmake/llvm-info.json": '{"llvm_hash": "%s", "build_number": 2}\n' % NEW_HASH, "README": "x\n"}
    fork = {**old, HELPER: "import os\n" + DOWNLOAD.format(hash=OLD_HASH[:8])}
    found = pin_findings(context_of(tmp_path, old, new, fork, removed_upstream=(PIN,)))
    assert [(f.kind, f.line, f.related_path) for f in found] == [("pin-stale", 2, "cmake/llvm-info.json")]


NVVM_USE = "void lower(Value v) {{\n  auto space = NVVM::NVVMMemorySpace::{name};\n  use(space);\n}}\n"


def test_a_name_the_toolchain_bump_took_away_is_an_error(tmp_path: Path) -> None:
    """3.5.1 -> 3.6.0: the LLVM bump #8299 rewrote upstream's kSharedMemorySpace as Shared; TLE still spells it."""
    old = {PIN: OLD_HASH + "\n", "lib/Lower.cpp": NVVM_USE.format(name="kSharedMemorySpace"), "README": "x\n"}
    bump = {PIN: NEW_HASH + "\n", "lib/Lower.cpp": NVVM_USE.format(name="Shared")}
    fork = {**old, "third_party/tle/lib/Barrier.cpp": NVVM_USE.format(name="kSharedMemorySpace"),
            "third_party/tle/lib/Other.cpp": "int kSharedMemorySpaceCount = 0;\n"}
    found = toolchain_name_findings(context_with_history(tmp_path, old, [("Bump LLVM (#8299)", bump)], fork))
    assert [(f.kind, f.severity, f.path, f.line, f.details["replacement"]) for f in found] == [
        ("toolchain-name-gone", "error", "third_party/tle/lib/Barrier.cpp", 2, "NVVM::NVVMMemorySpace::Shared")]
    assert found[0].details["prs"] == ["8299"]


def test_no_toolchain_claim_for_a_name_upstream_still_spells_or_a_change_outside_the_bump(tmp_path: Path) -> None:
    old = {PIN: OLD_HASH + "\n", "lib/Lower.cpp": NVVM_USE.format(name="kSharedMemorySpace"), "README": "x\n"}
    fork = {**old, "third_party/tle/lib/Barrier.cpp": NVVM_USE.format(name="kSharedMemorySpace")}
    still = {PIN: NEW_HASH + "\n", "lib/Lower.cpp": NVVM_USE.format(name="Shared"),
             "lib/Keep.cpp": NVVM_USE.format(name="kSharedMemorySpace")}
    assert toolchain_name_findings(context_with_history(tmp_path / "still", old, [("Bump", still)], fork)) == []
    # the rewrite came in a commit that did not move the pin: a refactor, not the toolchain
    apart = [("Refactor", {"lib/Lower.cpp": NVVM_USE.format(name="Shared")}), ("Bump", {PIN: NEW_HASH + "\n"})]
    assert toolchain_name_findings(context_with_history(tmp_path / "apart", old, apart, fork)) == []


def test_a_pin_finding_stays_until_the_branch_stops_naming_the_old_hash(tmp_path: Path) -> None:
    """The finding names the hash as FlagTree spells it (eight digits), so the check for a fix committed on the
    branch (jobs.review.fixed_on_branch) sees the line that still names it."""
    from sync.jobs.review import fixed_on_branch
    old, new = {PIN: OLD_HASH + "\n"}, {PIN: NEW_HASH + "\n"}
    context = context_of(tmp_path, old, new, {**old, HELPER: "import os\n" + DOWNLOAD.format(hash=OLD_HASH[:8])})
    (finding,) = pin_findings(context)
    assert finding.details["declaration"] == OLD_HASH[:8]
    assert not fixed_on_branch(finding, context.fork)


def test_no_toolchain_claim_in_a_directory_the_build_adds_only_in_a_comment(tmp_path: Path) -> None:
    """3.4 -> 3.7: sunrise's spec/lib/Dialect/Triton/IR/Ops.cpp spells a name the LLVM bump took away, but its
    parent CMakeLists.txt has `# add_subdirectory(Triton)`: the file builds nothing."""
    old = {PIN: OLD_HASH + "\n", "lib/Lower.cpp": NVVM_USE.format(name="kSharedMemorySpace"), "README": "x\n"}
    bump = {PIN: NEW_HASH + "\n", "lib/Lower.cpp": NVVM_USE.format(name="Shared")}
    use = NVVM_USE.format(name="kSharedMemorySpace")
    fork = {**old, "third_party/s/lib/CMakeLists.txt": "# add_subdirectory(Dialect)\nadd_subdirectory(Live)\n",
            "third_party/s/lib/Dialect/CMakeLists.txt": "add_library(D Ops.cpp)\n",
            "third_party/s/lib/Dialect/Ops.cpp": use, "third_party/s/lib/Live/CMakeLists.txt": "add_library(L Ops.cpp)\n",
            "third_party/s/lib/Live/Ops.cpp": use}
    found = toolchain_name_findings(context_with_history(tmp_path, old, [("Bump LLVM (#8299)", bump)], fork))
    assert [site for f in found for site in f.details["sites"]] == ["third_party/s/lib/Live/Ops.cpp:2"]


def test_a_sibling_of_a_member_the_bump_renamed_is_a_warning(tmp_path: Path) -> None:
    """The 3.5 matmul line onto 3.6.0: the bump renamed kSharedMemorySpace to Shared, and TLE also spells
    kSharedClusterMemorySpace, which upstream uses at neither tag (the toolchain renamed it SharedCluster). A
    member upstream still spells, or one of a scope the bump renamed nothing in, claims nothing."""
    old = {PIN: OLD_HASH + "\n", "lib/Lower.cpp": NVVM_USE.format(name="kSharedMemorySpace"), "README": "x\n",
           "lib/Keep.cpp": NVVM_USE.format(name="kGlobalMemorySpace")}
    bump = {PIN: NEW_HASH + "\n", "lib/Lower.cpp": NVVM_USE.format(name="Shared")}
    fork = {**old, "third_party/tle/lib/Cluster.cpp": NVVM_USE.format(name="kSharedClusterMemorySpace"),
            "third_party/tle/lib/Global.cpp": NVVM_USE.format(name="kGlobalMemorySpace"),
            "third_party/tle/lib/Other.cpp": "void f() {\n  auto k = Other::Kind::kSharedOnly;\n}\n"}
    found = toolchain_name_findings(context_with_history(tmp_path, old, [("Bump LLVM (#8299)", bump)], fork))
    assert [(f.kind, f.severity, f.path, f.line, f.details["likely"]) for f in found] == [
        ("toolchain-sibling-renamed", "warning", "third_party/tle/lib/Cluster.cpp", 2,
         "NVVMMemorySpace::SharedCluster")]
