"""Symbol drift on a tiny upstream/fork history: what FlagTree's added lines use that upstream changed."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from sync.drift.analyses.symbols import declared_names, symbol_findings, uses_on_lines
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
                    "int f(Helper h, TensorMemoryEncodingAttr a) { return h.legacyCounter + computeOffsetsLegacy(a.getUnpacked())"
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


def _history(tmp_path: Path) -> tuple[pygit2.Repository, list[GitTree]]:
    """OLD, then FORK_ADDS on it (the FlagTree branch), and NEW on OLD (upstream's next tag): their trees."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    old = commit(tmp_path, OLD, "old")
    fork = commit(tmp_path, FORK_ADDS, "flagtree")
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", old], check=True)
    new = commit(tmp_path, NEW, "new", remove=("include/triton/Gone.h",))
    repo = pygit2.Repository(str(tmp_path))
    return repo, [GitTree(repo, repo[sha].tree, label) for sha, label in ((old, "old"), (new, "new"), (fork, "fork"))]


def test_symbol_drift_finds_removed_fields_parameters_accessors_signatures_and_headers(tmp_path: Path) -> None:
    repo, trees = _history(tmp_path)
    found = symbol_findings(repo, *trees, lambda path: ["shared-trunk"])
    findings = {f.path: f for f in found}
    assert set(findings) == {"lib/Flag.cpp", "python/triton/tle.py"}
    # symbol-removed: one finding per upstream change, each listing its FlagTree sites
    cpp = {entry for f in found if f.path == "lib/Flag.cpp" for entry in f.details["symbols"]}
    assert all(f.details["sites"] for f in found if f.kind == "symbol-removed")
    assert cpp == {"legacyCounter:removed:include/triton/Utility.h",
                   "computeOffsetsLegacy:removed:include/triton/Utility.h",
                   "getUnpacked:removed:include/triton/Attr.td",
                   "triton/Gone.h:header:include/triton/Gone.h"}  # getBlockM is still there
    assert min(f.line or 0 for f in found if f.path == "lib/Flag.cpp") == 1 and findings["lib/Flag.cpp"].backend is None
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
    from sync.facts.cpp import NAME_QUERY, captures, forget_trees
    text = "".join(f"void f{n}(Builder &b) {{\n  b.setInsertionPointAfter(op{n});\n  auto v{n} = b.restore(x);\n}}\n"
                   for n in range(60))
    for _ in range(5):
        forget_trees()
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
    from sync.drift.analyses import symboluses as symbols  # where the tokenizing lives
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


def history_trees(tmp_path: Path, old_files: dict[str, str], new_files: dict[str, str],
                  fork_files: dict[str, str], removed: tuple[str, ...] = ()) -> tuple[pygit2.Repository, list[GitTree]]:
    """A history old -> new (upstream, which also deletes the paths removed) and old -> fork, as the trees old, new
    and fork."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    old = commit(tmp_path, old_files, "old")
    fork = commit(tmp_path, fork_files, "flagtree")
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", old], check=True)
    new = commit(tmp_path, new_files, "new", remove=removed)
    repo = pygit2.Repository(str(tmp_path))
    return repo, [GitTree(repo, repo[sha].tree, label) for sha, label in ((old, "old"), (new, "new"), (fork, "fork"))]


def _drift_world(tmp_path: Path, old_files: dict[str, str], new_files: dict[str, str],
                 fork_files: dict[str, str]) -> dict[str, set[str]]:
    """symbol drift's findings on a history old -> new (upstream) and old -> fork: path -> its symbols."""
    repo, trees = history_trees(tmp_path, old_files, new_files, fork_files)
    out: dict[str, set[str]] = {}
    for f in symbol_findings(repo, *trees, lambda path: ["shared-trunk"]):
        out.setdefault(f.path, set()).update(f.details["symbols"])
    return out


# Upstream drops a struct field `loads` and a local of that name from a .cpp, and the Python
# function `parse_loads` (moving nothing): Python reaches C++ only through bindings.
LOADS_CPP_OLD = ("struct PipelinedLoadGroup {\n  SmallVector<PipelinedLoad> loads;\n  Value readyBars;\n};\n"
                 "void lower() {\n  SmallVector<PipelinedLoad> loads;\n  use(loads);\n}\n")
LOADS_CPP_NEW = "struct PipelinedLoadGroup {\n  Value readyBars;\n};\nvoid lower() {\n  use(nothing);\n}\n"
LOADS_OLD = {"lib/Transforms/LoadMMASpecialization.cpp": LOADS_CPP_OLD,
             "python/triton/runtime/cache.py": "def parse_loads(text):\n    return text\n\n\ndef kept(x):\n    return x\n"}
LOADS_NEW = {"lib/Transforms/LoadMMASpecialization.cpp": LOADS_CPP_NEW,
             "python/triton/runtime/cache.py": "def kept(x):\n    return x\n"}


def test_python_lines_do_not_match_names_upstream_removed_only_from_cpp(tmp_path: Path) -> None:
    """`json.loads` on a FlagTree Python line is not the C++ field `loads` upstream removed (issue: the ascend
    compiler.py and runtime/jit.py findings); a C++ line using it still is, and Python's own removals still count."""
    findings = _drift_world(tmp_path, LOADS_OLD, LOADS_NEW, {
        "python/triton/spec/ascend/compiler.py": "import json\n\n\ndef metadata(path):\n"
                                                 "    return json.loads(open(path).read())\n",
        "python/triton/runtime/jit.py": "import json\nfrom triton.runtime.cache import parse_loads\n\n\n"
                                        "def load(text):\n    return json.loads(parse_loads(text))\n",
        "lib/Flag.cpp": "int f(PipelinedLoadGroup g) { return g.loads.size(); }\n",
    })
    assert "python/triton/spec/ascend/compiler.py" not in findings
    assert findings["python/triton/runtime/jit.py"] == {"parse_loads:removed:python/triton/runtime/cache.py"}
    # Issue 33: the struct lived in a .cpp, which no other file includes: lib/Flag.cpp cannot have meant it.
    assert "lib/Flag.cpp" not in findings


def test_a_name_removed_from_cpp_and_python_matches_each_language_its_own(tmp_path: Path) -> None:
    """`loads` goes from a .cpp (found first) and from a Python module: a Python line is told about the Python
    removal, a C++ line as before about the first one found. `pipelineDepth` goes from the Python module while a
    changed .cpp still declares it: moved for C++ lines as before, removed for Python lines."""
    old = {**LOADS_OLD,
           "lib/Other.cpp": "struct Keeper {\n  int pipelineDepth;\n};\nint twice = pipelineDepth;\n",
           "python/triton/runtime/cache.py": "def loads(text):\n    return text\n\n\npipelineDepth = 3\n"}
    new = {**LOADS_NEW, "lib/Other.cpp": "struct Keeper {\n  int pipelineDepth;\n};\n",
           "python/triton/runtime/cache.py": "def kept(x):\n    return x\n"}
    findings = _drift_world(tmp_path, old, new, {
        "python/triton/runtime/jit.py": "from triton.runtime.cache import loads, pipelineDepth\n\n\n"
                                        "def load(text):\n    return loads(text)\n",
        "lib/Flag.cpp": "int f(PipelinedLoadGroup g, Keeper k) { return g.loads.size() + k.pipelineDepth; }\n",
    })
    assert findings["python/triton/runtime/jit.py"] == {"loads:removed:python/triton/runtime/cache.py",
                                                        "pipelineDepth:removed:python/triton/runtime/cache.py"}
    # Issue 33: both structs live in .cpp files, which lib/Flag.cpp cannot include: nothing resolves there.
    assert "lib/Flag.cpp" not in findings


def test_cpp_declarations_inside_function_bodies_are_local() -> None:
    """No other file can name what a function body declares: a local struct's field, or a local that
    tree-sitter reads as a function declaration (`SmallVector<Value> operands(a, b);`, the most vexing parse)."""
    text = ("struct S {\n  int fieldA;\n  void method() { Foo inner(x); }\n};\nint declared(int p);\n"
            "void f() {\n  SmallVector<Value> operands(a, b);\n  struct L { int localField; };\n  Foo holder(y);\n"
            "  auto lam = [](int q) { Bar z(q); return q; };\n}\n")
    names = declared_names("lib/A.cpp", text)
    assert {"S", "fieldA", "method", "declared", "f"} <= names
    assert not {"operands", "localField", "holder", "inner", "z"} & names


def test_parts_of_the_analysis_joined_give_the_whole_analysis(tmp_path: Path) -> None:
    """Each part reads every n-th upstream change (and begins the fork's files at its own share); joined in any
    order, the shares give symbol_findings's findings, with the fact cache shared or not."""
    from sync.drift.analyses.symbols import symbol_join, symbol_part
    from sync.support.cache import FactCache, using

    repo, trees = _history(tmp_path)
    owners = lambda path: ["shared-trunk"]  # noqa: E731
    whole = symbol_findings(repo, *trees, owners)
    assert len(whole) == 5  # one per removed declaration or header (4), one per file of changed signatures
    for cache in (None, FactCache(Path(repo.path))):
        with using(cache):
            for parts in (2, 3, 5):
                shares = [symbol_part(repo, *trees, part, parts) for part in range(parts)]
                assert sum(map(len, shares)) == 4  # each of the 4 upstream changes in one share
                assert symbol_join(repo, *trees, owners, shares[::-1]) == whole


def test_looks_declared_finds_every_declaring_spelling_in_one_scan() -> None:
    """One scan serves every name: neighbouring parameters share a comma, and each still counts."""
    from sync.drift.analyses.symbols import _looks_declared
    text = "def load(ptr, mask, other=None):\n    self.cache = {}\nclass Block:\n    size: int = 4\nx = f(a)\n"
    for name in ("load", "ptr", "mask", "other", "cache", "Block", "size", "x"):
        assert _looks_declared(text, name), name
    for name in ("f", "lo", "int", "None"):
        assert not _looks_declared(text, name), name


_PAD = "".join(f"def filler{i}(x):\n    return x + {i}\n\n\n" for i in range(8))
_SAME_OLD = "def _load_helper(x):\n    return x\n\n\n" + _PAD + "def api(x):\n    return x\n"
_SAME_NEW = _PAD + "def api(x):\n    return x\n"
_SAME_FORK = _SAME_OLD.replace("def api(x):\n    return x\n", "def api(x):\n    y = _load_helper(x)\n    return y\n")


def _same_file_sites(tmp_path: Path, upgraded: str) -> list[str]:
    path = "python/triton/language/semantic.py"
    repo, (old, new, fork) = history_trees(tmp_path, {path: _SAME_OLD}, {path: _SAME_NEW}, {path: _SAME_FORK})
    target_commit = commit(tmp_path, {path: upgraded}, "upgraded")  # on top of new
    target = GitTree(repo, repo[target_commit].tree, "target")
    return [site for f in symbol_findings(repo, old, new, fork, lambda p: ["shared-trunk"], target)
            if f.kind == "symbol-removed" for site in f.details["sites"]]


def test_a_declaration_upstream_removed_from_the_file_flagtree_uses_it_in_is_gone_after_a_clean_merge(
        tmp_path: Path) -> None:
    """git merges upstream's removal of a helper and FlagTree's new call of it in the same file without a conflict:
    the upgraded file calls what it no longer defines (3.7 removed _load_block_pointer from semantic.py under
    FlagTree's calls; there the merge conflicted, and the replay reported it)."""
    merged = _SAME_NEW.replace("def api(x):\n    return x\n", "def api(x):\n    y = _load_helper(x)\n    return y\n")
    assert _same_file_sites(tmp_path / "clean", merged) == ["python/triton/language/semantic.py:38"]
    # FlagTree kept its own definition in the upgraded file: nothing is missing
    assert _same_file_sites(tmp_path / "kept", "def _load_helper(x):\n    return x\n\n\n" + merged) == []
    # a conflicted upgraded file is the replay's to report
    conflicted = merged.replace("    y = _load_helper(x)\n", "<<<<<<< a\n    y = _load_helper(x)\n=======\n"
                                "    y = x\n>>>>>>> b\n")
    assert _same_file_sites(tmp_path / "conflicted", conflicted) == []


def test_a_backend_building_its_own_version_of_a_td_keeps_what_trunks_drops(tmp_path: Path) -> None:
    """Issue 33, the 3.5.x -> 3.7 move: ascend builds its own TritonOps.td (a spec TableGen overlay), which still
    has LoadOp's boundaryCheck: its getBoundaryCheck() stands. Another backend, and trunk, meet trunk's .td."""
    use = '#include "triton/Attr.h"\nint f(TensorMemoryEncodingAttr a) { return a.getUnpacked(); }\n'
    fork = {"third_party/a/backend/spec/include/triton/Attr.td": OLD["include/triton/Attr.td"],
            "third_party/a/lib/Use.cpp": use, "third_party/b/lib/Use.cpp": use, "lib/Use.cpp": use}
    repo, trees = history_trees(tmp_path, OLD, NEW, fork)
    found = symbol_findings(repo, *trees, lambda path: ["shared-trunk"])
    assert {site for f in found for site in f.details["sites"]} == {"third_party/b/lib/Use.cpp:2", "lib/Use.cpp:2"}
    assert {symbol for f in found for symbol in f.details["symbols"]} == {"getUnpacked:removed:include/triton/Attr.td"}


def test_a_backend_op_of_the_same_name_in_its_own_dialect_hides_only_its_own_spelling(tmp_path: Path) -> None:
    """Issue 33, the 3.5.x -> 3.7 move: tsingmicro (triton-shared) has its own tts::MakeTensorPtrOp; its
    `triton::MakeTensorPtrOp` still names upstream's op, which upstream removed."""
    ops = ('def TT_Dialect : Dialect {\n  let cppNamespace = "::mlir::triton";\n}\n'
           'def TT_MakeTensorPtrOp : TT_Op<"make_tensor_ptr"> {\n  let arguments = (ins TT_Ptr:$base);\n}\n')
    old = {"include/triton/Dialect/Triton/IR/TritonOps.td": ops,
           "include/triton/Dialect/Triton/IR/Dialect.h": "#pragma once\n"}
    new = {**old, "include/triton/Dialect/Triton/IR/TritonOps.td": ops.split("def TT_MakeTensorPtrOp")[0]}
    own = ('def TTS_Dialect : Dialect {\n  let cppNamespace = "::mlir::tts";\n}\n'
           'def TTS_MakeTensorPtrOp : TTS_Op<"make_tptr"> {\n  let arguments = (ins TT_Ptr:$base);\n}\n')
    head = '#include "triton/Dialect/Triton/IR/Dialect.h"\n'
    # another of its TableGen files puts an enum in upstream's namespace: not where its op is declared
    enum = 'def MK_Format : I32EnumAttr<"Format", "", []> {\n  let cppNamespace = "::mlir::triton";\n}\n'
    fork = {**old, "third_party/t/include/ts/IR/Structured.td": own, "third_party/t/include/mk/IR/Enums.td": enum,
            "third_party/t/lib/Both.cpp": head + "void f(Operation *op) {\n  if (isa<tts::MakeTensorPtrOp>(op)) {}\n"
                                          "  if (isa<triton::MakeTensorPtrOp>(op)) {}\n}\n",
            "third_party/t/lib/Own.cpp": head + "void g(Operation *op) {\n  if (isa<tts::MakeTensorPtrOp>(op)) {}\n}\n"}
    repo, trees = history_trees(tmp_path, old, new, fork)
    found = symbol_findings(repo, *trees, lambda path: ["t"])
    assert {site for f in found for site in f.details["sites"]} == {"third_party/t/lib/Both.cpp:4"}


def test_a_backend_td_that_includes_a_td_upstream_moved_stops_tablegen(tmp_path: Path) -> None:
    """The 3.2 line onto 3.4: tle's TleOps.td includes triton/Dialect/Triton/IR/TritonTypeInterfaces.td, which
    upstream moved to TritonGPU; TableGen stops on the include. A spec overlay's includes are tdoverlays'."""
    moved = "include/triton/Dialect/Triton/IR/TritonTypeInterfaces.td"
    old = {moved: "class TypeInterface;\n", "include/triton/Dialect/Triton/IR/Other.td": "class Other;\n"}
    new = {"include/triton/Dialect/TritonGPU/IR/TritonGPUTypeInterfaces.td": "class TypeInterface;\n"}
    uses = 'include "triton/Dialect/Triton/IR/TritonTypeInterfaces.td"\ninclude "triton/Dialect/Triton/IR/Other.td"\n'
    fork = {"third_party/tle/dialect/include/IR/TleOps.td": uses,
            "third_party/a/backend/spec/include/triton/Dialect/Triton/IR/Ops.td": uses}
    repo, trees = history_trees(tmp_path, old, new, fork, removed=(moved,))
    found = symbol_findings(repo, *trees, lambda path: ["x"])
    assert {site for f in found for site in f.details["sites"]} == {"third_party/tle/dialect/include/IR/TleOps.td:1"}


def test_a_td_include_on_the_upgraded_branch_still_counts_as_a_use() -> None:
    """The upgraded branch's lines are read again (a use a person removed there is fixed): a TableGen include is
    an include there too, or the finding above is dropped on every real run."""
    _, includes = uses_on_lines("third_party/tle/IR/TleOps.td", 'include "a/B.td"\ndef X : Y;\n', {1, 2})
    assert [(use.name, use.line) for use in includes] == [("a/B.td", 1)]
