"""Symbol drift on a tiny upstream/fork history: what FlagTree's added lines use that upstream changed."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from sync.analyzers.symbols import declared_names, symbol_findings, uses_on_lines
from sync.git import GitTree

OLD = {
    "include/triton/Attr.td": 'def TensorMemoryEncodingAttr {\n  let parameters = (ins "bool":$unpacked, "unsigned":$blockM);\n}\n',
    "include/triton/Utility.h": "struct Helper {\n  int legacyCounter;\n};\nint computeOffsetsLegacy(int value);\n",
    "include/triton/Gone.h": "#pragma once\n",
    "python/triton/language/semantic.py": "def make_descriptor(base, shape, strides):\n    return base\n",
}
NEW = {
    "include/triton/Attr.td": 'def TensorMemoryEncodingAttr {\n  let parameters = (ins "unsigned":$colStride, "unsigned":$blockM);\n}\n',
    "include/triton/Utility.h": "struct Helper {\n  int counter;\n};\nint computeOffsets(int value);\n",
    "python/triton/language/semantic.py": "def make_descriptor(base, shape, strides, padding):\n    return base\n",
}
FORK_ADDS = {
    "lib/Flag.cpp": '#include "triton/Gone.h"\n// legacyCounter in a comment does not count\n'
                    "int f(Helper h, Attr a) { return h.legacyCounter + computeOffsetsLegacy(a.getUnpacked())"
                    " + a.getBlockM(); }\n",
    "python/triton/tle.py": "from triton.language.semantic import make_descriptor\n\n\n"
                            "def tle_descriptor(base):\n    return make_descriptor(base, [1], [1])\n",
}


def commit(repo: Path, files: dict[str, str], message: str, remove: tuple[str, ...] = ()) -> str:
    for path in remove:
        (repo / path).unlink()
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    run = lambda *args: subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", message)
    return run("rev-parse", "HEAD").stdout.strip()


def test_symbol_drift_finds_removed_fields_parameters_accessors_signatures_and_headers(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    old = commit(tmp_path, OLD, "old")
    fork = commit(tmp_path, FORK_ADDS, "flagtree")
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", old], check=True)
    new = commit(tmp_path, NEW, "new", remove=("include/triton/Gone.h",))
    repo = pygit2.Repository(str(tmp_path))
    trees = [GitTree(repo, repo[sha].tree, label) for sha, label in ((old, "old"), (new, "new"), (fork, "fork"))]
    findings = {f.path: f for f in symbol_findings(repo, *trees, lambda path: ["shared-trunk"])}
    assert set(findings) == {"lib/Flag.cpp", "python/triton/tle.py"}
    cpp = set(findings["lib/Flag.cpp"].details["symbols"])
    assert cpp == {"legacyCounter:removed:include/triton/Utility.h",
                   "computeOffsetsLegacy:removed:include/triton/Utility.h",
                   "getUnpacked:removed:include/triton/Attr.td",
                   "triton/Gone.h:header:include/triton/Gone.h"}  # getBlockM is still there
    assert findings["lib/Flag.cpp"].line == 1 and findings["lib/Flag.cpp"].backend is None
    python = findings["python/triton/tle.py"]
    assert python.details["symbols"] == ["make_descriptor:signature:python/triton/language/semantic.py"]
    assert "(base, shape, strides) -> (base, shape, strides, padding)" in python.message


def test_uses_skip_comments_strings_and_generic_names() -> None:
    text = 'x = value  # legacyCounter\ny = "computeOffsetsLegacy"\nz = realSymbol(value)\n'
    uses, includes = uses_on_lines("a.py", text, {1, 2, 3})
    assert [use.name for use in uses] == ["realSymbol"] and includes == []


def test_declarations_by_language() -> None:
    assert {"Helper", "legacyCounter", "computeOffsetsLegacy"} <= declared_names("u.h", OLD["include/triton/Utility.h"])
    assert {"unpacked", "getUnpacked", "TensorMemoryEncodingAttr"} <= declared_names("a.td", OLD["include/triton/Attr.td"])
    assert {"make_descriptor", "base", "strides"} <= declared_names("s.py", OLD["python/triton/language/semantic.py"])


def test_cpp_captures_come_in_document_order_on_every_parse() -> None:
    """py-tree-sitter lists captures in an order that changes between parses of the same text; "the first use
    of a name" (a finding's line) must not change with it."""
    from sync.analyzers.cpp import NAME_QUERY, captures, parse_tree
    text = "".join(f"void f{n}(Builder &b) {{\n  b.setInsertionPointAfter(op{n});\n  auto v{n} = b.restore(x);\n}}\n"
                   for n in range(60))
    for _ in range(5):
        parse_tree.cache_clear()
        nodes = captures(NAME_QUERY, text)["id"]
        assert [node.start_byte for node in nodes] == sorted(node.start_byte for node in nodes)
    uses, _ = uses_on_lines("lib/A.cpp", text, set(range(1, 241)))
    assert next(use.line for use in uses if use.name == "setInsertionPointAfter") == 2


FRAGMENT_MODULE = '''"""Module docstring."""
import os
from triton.language import core as tl_core

CONSTANT = tl_core.float32
a = os.path.join("x"); b = tl_core.make(a,
    flag=True)


@decorator(option=1)
def helper(x):
    """Doc."""
    return x.shape_of(x) \\
        + tl_core.other()
name_only
(called_by_the_next_line)
value = [
    item.attr
    for item in ()]
if CONSTANT:
    from triton.runtime import driver
last = driver.active
'''


def test_a_large_module_is_tokenized_only_around_the_lines_asked_about(monkeypatch) -> None:
    """Its names are the whole text's: the runs of statements that hold the lines, with the statement after."""
    from sync.analyzers import symbols
    whole = lambda lines: symbols._python_trunk_names(FRAGMENT_MODULE, lines)
    every = set(range(1, FRAGMENT_MODULE.count("\n") + 2))
    cases = [every, {2}, {6}, {7}, {13, 14}, {15}, {17, 18}, {20}, {21}, {1, 21}, {10, 11}]
    expected = [whole(lines) for lines in cases]
    assert expected[cases.index({15})] == {"name_only": 15}  # a call: the next statement starts with (
    monkeypatch.setattr(symbols, "FRAGMENT_THRESHOLD", 0)
    tokenized: list[str] = []
    real = symbols._trunk_name_candidates
    monkeypatch.setattr(symbols, "_trunk_name_candidates", lambda text: tokenized.append(text) or real(text))
    assert [whole(lines) for lines in cases] == expected
    tokenized.clear()
    assert whole({15}) == {"name_only": 15}
    assert tokenized == ["name_only\n(called_by_the_next_line)\n"]
