"""Issue 45, class 1: a toolchain pin upstream moved that FlagTree's build still names (pin-stale)."""
from __future__ import annotations

from pathlib import Path

from sync.drift.analyses.pins import pin_findings
from tests.upstream_fixture import context_of

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


def test_a_pin_upstream_moved_into_a_json_file_is_followed_by_its_name(tmp_path: Path) -> None:
    """3.7: cmake/llvm-hash.txt became the llvm_hash of cmake/llvm-info.json, with a new LLVM."""
    old = {PIN: OLD_HASH + "\n"}
    new = {"cmake/llvm-info.json": '{"llvm_hash": "%s", "build_number": 2}\n' % NEW_HASH, "README": "x\n"}
    fork = {**old, HELPER: "import os\n" + DOWNLOAD.format(hash=OLD_HASH[:8])}
    found = pin_findings(context_of(tmp_path, old, new, fork, removed_upstream=(PIN,)))
    assert [(f.kind, f.line, f.related_path) for f in found] == [("pin-stale", 2, "cmake/llvm-info.json")]
