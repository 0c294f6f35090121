"""Issue 33: C++ names resolved in their scopes before symbol drift claims a break (symbol-removed)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from sync.facts.cppscope import UseContext, declaration_scopes, resolves, use_contexts
from sync.drift.analyses.symbols import symbol_findings
from sync.git import GitTree
from tests.test_symbols import commit, history_trees

OLD = {
    "include/triton/Utility.h": (
        "namespace mlir::triton {\nstruct BlockInfo {\n  int syncWriteIntervals;\n};\n"
        "enum class Effect { Write, Read };\nvoid push_back(int v);\nint legacyHelper(int v);\n"
        "int movedHelper(int v);\n}\n"),
    "include/triton/Ops.td": 'def TTG_OldBarrierOp : TTG_Op<"old_barrier"> {\n  let arguments = (ins $pred);\n}\n'
                             'def TTG_AsyncOp : TTG_Op<"async"> {\n  let arguments = (ins $ptr);\n}\n',
    "include/triton/Layout.td": 'def CTAEncodingAttr : TritonGPU_Attr<"CTAEncoding"> {\n}\n',
}
NEW = {
    "include/triton/Utility.h": "namespace mlir::triton {\nstruct BlockInfo {\n  int intervals;\n};\n"
                                "enum class Effect { Read };\n}\n",
    "include/triton/Moved.h": "namespace mlir::triton {\nint movedHelper(int v);\n}\n",
    "include/triton/Ops.td": 'def TTG_AsyncOp : TTG_Op<"async"> {\n  let arguments = (ins $ptr);\n}\n',
    "include/triton/Layout.td": 'def CGAEncodingAttr : TritonGPU_Attr<"CGAEncoding"> {\n}\n',
}
FORK = {
    "lib/Fork.cpp": (
        '#include "triton/Utility.h"\nnamespace ttg = mlir::triton::gpu;\n'
        "void f(mlir::triton::BlockInfo &info, std::vector<int> vals, SmallVector<int> more) {\n"
        "  info.syncWriteIntervals = 1;\n"          # 4: member of the receiver's class: resolves
        "  vals.push_back(1);\n"                    # 5: member of std::vector, not the free push_back
        "  auto e = MemoryEffects::Write;\n"        # 6: another enum's Write
        "  auto g = mlir::triton::Effect::Write;\n"  # 7: the removed enumerator: resolves
        "  legacyHelper(2);\n"                      # 8: plain call of a removed free function
        "  movedHelper(3);\n"                       # 9: moved to Moved.h: not gone
        "  ttg::OldBarrierOp::create(b, loc);\n"    # 10: ODS op whose record upstream removed
        "  CTAEncodingAttr layout;\n"               # 11: renamed: the finding names CGAEncodingAttr
        "  unknown().syncWriteIntervals = 2;\n"     # 12: receiver type unknown: no claim
        "}\n"),
}


def _trees(tmp_path: Path, fork_files: dict[str, str] = FORK) -> tuple[pygit2.Repository, list[GitTree]]:
    return history_trees(tmp_path, OLD, NEW, fork_files)


def test_removed_declarations_resolved_in_scope_are_errors_and_coincidences_are_not(tmp_path: Path) -> None:
    repo, trees = _trees(tmp_path)
    findings = symbol_findings(repo, *trees, lambda path: ["shared-trunk"])
    assert {(f.kind, f.path, f.severity) for f in findings} == {("symbol-removed", "lib/Fork.cpp", "error")}
    symbols = {entry.split(":")[0] for f in findings for entry in f.details["symbols"]}
    sites = {f.details["declaration"]: f.details["sites"] for f in findings}
    assert sites["syncWriteIntervals"] == ["lib/Fork.cpp:4"] and sites["Write"] == ["lib/Fork.cpp:7"]
    # fires: member through the receiver's type, the enumerator through its enum, a free function, an ODS op
    assert {"syncWriteIntervals", "Write", "legacyHelper", "OldBarrierOp", "CTAEncodingAttr"} <= symbols
    # does not fire: std::vector's push_back, a moved declaration
    assert "push_back" not in symbols and "movedHelper" not in symbols
    renamed = next(f for f in findings if f.details["declaration"] == "CTAEncodingAttr")
    assert renamed.details["replacements"] == {"CTAEncodingAttr": "CGAEncodingAttr"}
    assert "upstream declares CGAEncodingAttr in its place" in renamed.message


def test_scopes_and_resolution_units() -> None:
    scopes = declaration_scopes(OLD["include/triton/Utility.h"], {"syncWriteIntervals", "Write", "push_back"})
    assert scopes == {"syncWriteIntervals": {"member:BlockInfo"}, "Write": {"enumerator:Effect"},
                      "push_back": {"free:mlir::triton"}}
    contexts = use_contexts(FORK["lib/Fork.cpp"], {"syncWriteIntervals", "Write", "push_back", "OldBarrierOp"})
    assert contexts[("syncWriteIntervals", 4)] == [UseContext("member", "BlockInfo")]
    assert contexts[("syncWriteIntervals", 12)] == [UseContext("member", None)]
    assert contexts[("push_back", 5)] == [UseContext("member", "vector")]
    assert contexts[("OldBarrierOp", 10)] == [UseContext("qualified", "mlir::triton::gpu")]
    assert not resolves(UseContext("member", "vector"), scopes["push_back"])
    assert not resolves(UseContext("member", None), scopes["syncWriteIntervals"])
    assert not resolves(UseContext("qualified", "MemoryEffects"), scopes["Write"])
    assert resolves(UseContext("qualified", "mlir::triton::Effect"), scopes["Write"])
    assert resolves(UseContext("plain"), scopes["push_back"])


def test_backend_code_resolves_to_trunk_headers_unless_the_backend_carries_its_own(tmp_path: Path) -> None:
    use = "void g(mlir::triton::BlockInfo &info) {\n  info.syncWriteIntervals = 1;\n  legacyHelper(2);\n}\n"
    fork = {"third_party/a/lib/Use.cpp": use,  # builds against trunk's include/: fires
            "third_party/b/lib/Use.cpp": use,  # b carries include/triton/Utility.h itself: its own copy
            "third_party/b/include/triton/Utility.h": OLD["include/triton/Utility.h"],
            "third_party/c/lib/Use.cpp": use,  # c declares legacyHelper in a header of its own
            "third_party/c/include/c/Helpers.h": "int legacyHelper(int v);\n",
            "third_party/a/test/Use.cpp": use}  # tests are not part of the backend's build
    repo, trees = _trees(tmp_path, fork)
    found: dict[str, set[str]] = {}
    for f in symbol_findings(repo, *trees, lambda path: ["shared-trunk"]):
        for site in f.details["sites"]:
            found.setdefault(site.rpartition(":")[0], set()).add(f.details["declaration"])
    assert found == {"third_party/a/lib/Use.cpp": {"syncWriteIntervals", "legacyHelper"},
                     "third_party/c/lib/Use.cpp": {"syncWriteIntervals"}}


def test_an_ods_interface_method_declares_the_accessor_it_replaces() -> None:
    # 3.7 moved TensorDescType's $blockType parameter into a type interface method getBlockType: not removed.
    from sync.drift.analyses.symbols import declared_names
    interface = ('def TT_TensorDescInterface : TypeInterface<"TensorDescInterface"> {\n  let methods = [\n'
                 '    InterfaceMethod<\n      /*desc=*/"the block type",\n      /*retType=*/"RankedTensorType",\n'
                 '      /*methodName=*/"getBlockType",\n      /*args=*/(ins)>,\n'
                 '    InterfaceMethod<[{ doc }], "unsigned", "getRankOf">\n  ];\n}\n')
    assert {"getBlockType", "getRankOf", "TensorDescInterface"} <= declared_names("include/I.td", interface)
    assert "getBlockType" not in declared_names("include/I.td", interface.replace("getBlockType", "getOther"))


def test_a_template_member_call_resolves_through_its_receiver() -> None:
    """Issue 33, the 3.3 -> 3.4 move: `rewriter.replaceOpWithNewOp<Op>(...)` on a ConversionPatternRewriter was taken
    for a member of a class upstream deleted; the template method is a member access like any other."""
    text = ("void f(ConversionPatternRewriter &rewriter, Holder *holder, auto other) {\n"
            "  rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, v);\n"
            "  holder->replaceOpWithNewOp<Op>(op);\n"
            "  other.replaceOpWithNewOp<Op>(op);\n}\n")
    contexts = use_contexts(text, {"replaceOpWithNewOp"})
    assert contexts[("replaceOpWithNewOp", 2)] == [UseContext("member", "ConversionPatternRewriter")]
    assert contexts[("replaceOpWithNewOp", 3)] == [UseContext("member", "Holder")]
    assert contexts[("replaceOpWithNewOp", 4)] == [UseContext("member", None)]
    scopes = {"member:PatternRewriterWithAsyncTaskIds"}
    assert not any(resolves(context, scopes) for found in contexts.values() for context in found)
    assert resolves(UseContext("member", "PatternRewriterWithAsyncTaskIds"), scopes)


def test_a_forward_declaration_upstream_drops_removes_no_class(tmp_path: Path) -> None:
    """Issue 33, the 3.3 -> 3.4 move: a deleted header forward-declared `class ModuleOp;` (MLIR's class, defined
    outside the tree); its deletion removed no class. A class whose definition upstream deletes is still gone."""
    old = {"include/triton/Patterns.h": "namespace mlir {\nclass ModuleOp;\ntemplate <typename T> class OperationPass;\n"
                                        "struct Legacy {\n  int a;\n};\n}\n"}
    new = {"include/triton/Patterns.h": "namespace mlir {\n}\n"}  # all three gone from it
    use = ("void g(mlir::ModuleOp module, OperationPass<ModuleOp> *pass, mlir::Legacy legacy) {\n"
           "  module.walk();\n}\n")
    repo, trees = history_trees(tmp_path, old, new, {"third_party/a/lib/Use.cpp": use})
    found = {f.details["declaration"] for f in symbol_findings(repo, *trees, lambda path: ["a"])}
    assert found == {"Legacy"}


def test_a_backend_that_carries_its_own_trunk_headers_builds_against_them(tmp_path: Path) -> None:
    """A backend with its own include/triton/ (hcu, metax, mthreads on the 3.7 move; iluvatar on the 3.3 line) puts
    it first on its include path: a declaration upstream removed from trunk does not reach its code."""
    use = "void g(mlir::triton::BlockInfo &info) {\n  info.syncWriteIntervals = 1;\n  legacyHelper(2);\n}\n"
    fork = {"third_party/a/lib/Use.cpp": use,
            "third_party/own/lib/Use.cpp": use,
            "third_party/own/include/triton/Dialect/Other/IR/Other.h": "#pragma once\n"}  # not Utility.h itself
    repo, trees = _trees(tmp_path, fork)
    paths = {site.rpartition(":")[0] for f in symbol_findings(repo, *trees, lambda path: ["x"])
             for site in f.details["sites"]}
    assert paths == {"third_party/a/lib/Use.cpp"}


def test_files_the_build_leaves_out_typedefs_and_own_definitions_claim_no_removal(tmp_path: Path) -> None:
    """The 3.4.x -> 3.5.1 move (sunrise): uses under a directory whose add_subdirectory is commented out, a class
    upstream turned into a typedef, and the backend's own unqualified definition of a function upstream dropped."""
    old = {"include/triton/Utility.h": "namespace t {\nclass MembarAnalysis {};\nint legacyHelper(int v);\n}\n"}
    new = {"include/triton/Utility.h": "namespace t {\ntemplate <class T> class Generic {};\n"
                                       "typedef Generic<int> MembarAnalysis;\n}\n"}
    use = "void g(t::MembarAnalysis *a) {\n  legacyHelper(2);\n}\n"
    fork = {"third_party/a/lib/CMakeLists.txt": "add_subdirectory(Built)\n#add_subdirectory(Off)\n",
            "third_party/a/lib/Built/Use.cpp": use,
            "third_party/a/lib/Off/Use.cpp": use,
            "third_party/a/lib/Built/Own.cpp": "int legacyHelper(int v) { return v; }\nint h() { return legacyHelper(1); }\n"}
    repo, trees = history_trees(tmp_path, old, new, fork)
    found = {site.rpartition(":")[0] + ":" + f.details["declaration"]
             for f in symbol_findings(repo, *trees, lambda path: ["a"]) for site in f.details["sites"]}
    assert found == {"third_party/a/lib/Built/Use.cpp:legacyHelper"}


def test_a_backend_site_is_the_first_added_line_using_the_name_outside_a_comment(tmp_path: Path) -> None:
    """A backend file's words are read from its added lines at once; the site of a hit is still the first added
    line that uses the word in code: not a line FlagTree kept, not a `//` comment, not a longer word."""
    kept = "void k() {\n  legacyHelper(0);  // a line FlagTree kept\n}\nvoid h() {\n}\n"
    old = {**OLD, "third_party/a/lib/Use.cpp": kept}
    fork = {"third_party/a/lib/Use.cpp": kept.replace("void h() {\n", "void h() {\n"
                                                      "  // legacyHelper is gone upstream\n"  # 5: a comment
                                                      "  legacyHelperTwo(1);\n"  # 6: a longer word
                                                      "  legacyHelper(2);\n")}  # 7: the use
    repo, trees = history_trees(tmp_path, old, {**NEW, "third_party/a/lib/Use.cpp": kept}, fork)
    sites = {f.details["declaration"]: f.details["sites"] for f in symbol_findings(repo, *trees, lambda path: ["a"])}
    assert sites.get("legacyHelper") == ["third_party/a/lib/Use.cpp:7"]


def test_a_backend_include_of_a_header_upstream_moved_will_not_build(tmp_path: Path) -> None:
    """The 3.4.x -> 3.5.1 and 3.4.x -> 3.6.0 moves: sunrise's ir.cc and tsingmicro's RegisterTritonDialects.h include
    proton's Dialect.h by its repository path, from the directory upstream renamed; the record: tle includes
    trunk's LayoutUtility.h, which 3.6 deleted. A header the backend carries itself is its own."""
    old = {**OLD, "third_party/up/dialect/include/Up.h": "#pragma once\n", "include/common/Gone.h": "#pragma once\n"}
    new = {**NEW, "third_party/up/Dialect/include/Up.h": "#pragma once\n"}
    use = ('#include "third_party/up/dialect/include/Up.h"\n#include "common/Gone.h"\n#include "Local.h"\n'
           "int g() { return 0; }\n")
    fork = {"third_party/a/lib/Use.cpp": use,
            "third_party/c/lib/Use.cpp": use, "third_party/c/include/common/Gone.h": "#pragma once\n"}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    base = commit(tmp_path, old, "old")
    forked = commit(tmp_path, fork, "flagtree")
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", base], check=True)
    upgraded = commit(tmp_path, new, "new", remove=("third_party/up/dialect/include/Up.h", "include/common/Gone.h"))
    repo = pygit2.Repository(str(tmp_path))
    trees = [GitTree(repo, repo[sha].tree, label) for sha, label in ((base, "old"), (upgraded, "new"), (forked, "fork"))]
    sites = sorted(site for f in symbol_findings(repo, *trees, lambda path: ["x"]) if "header" in f.message
                   for site in f.details["sites"])
    assert sites == ["third_party/a/lib/Use.cpp:1", "third_party/a/lib/Use.cpp:2", "third_party/c/lib/Use.cpp:1"]


def test_the_functions_a_removed_pass_record_generated_are_gone_with_it(tmp_path: Path) -> None:
    """The 3.4.x -> 3.5.1 and 3.6.0 moves: 3.5 moved TritonGPUCanonicalize out of TritonGPU's Passes.td, and with
    it went the createTritonGPUCanonicalize() TableGen generated, which sunrise's python/src/passes.cc calls."""
    passes = ('def TritonGPUFoo : Pass<"tritongpu-foo", "mlir::ModuleOp"> {\n  let summary = "foo";\n}\n'
              'def TritonGPUBar : Pass<"tritongpu-bar"> {\n  let constructor = "mlir::createBarPass()";\n}\n'
              'def TritonGPUKept : Pass<"tritongpu-kept"> {\n  let summary = "kept";\n}\n')
    old = {**OLD, "include/triton/Dialect/TritonGPU/Transforms/Passes.td": passes}
    kept = 'def TritonGPUKept : Pass<"tritongpu-kept"> {\n  let summary = "kept";\n}\n'
    new = {**NEW, "include/triton/Dialect/TritonGPU/Transforms/Passes.td": kept}
    use = ("void add(PassManager &pm) {\n  pm.addPass(createTritonGPUFoo());\n  pm.addPass(mlir::createBarPass());\n"
           "  pm.addPass(createTritonGPUKept());\n  registerTritonGPUFooPass();\n}\n")
    repo, trees = history_trees(tmp_path, old, new, {"third_party/a/python/src/passes.cc": use})
    found = {f.details["declaration"] for f in symbol_findings(repo, *trees, lambda path: ["a"])}
    assert found == {"createTritonGPUFoo", "createBarPass", "registerTritonGPUFooPass"}


def test_upstreams_own_backend_passes_count_and_their_vendored_headers_do_not(tmp_path: Path) -> None:
    """The 3.4.x -> 3.6.0 move: tsingmicro's RegisterTritonDialects.h registers amd's TritonAMDGPUStreamPipeline,
    a pass 3.6 removed from third_party/amd's Passes.td, in the file that also includes proton's renamed
    Dialect.h (both are reported). amd's vendored HIP headers changing their std names claim nothing."""
    passes = ('def TritonAMDGPUStreamPipeline : Pass<"tritonamdgpu-stream-pipeline", "mlir::ModuleOp"> {\n'
              '  let summary = "pipeline";\n}\n')
    hip = "namespace std {\ntemplate <class T> struct is_same_hip {};\n}\n"
    old = {**OLD, "third_party/amd/include/Transforms/Passes.td": passes,
           "third_party/amd/backend/include/hip/hip_traits.h": hip,
           "third_party/up/dialect/include/Up.h": "#pragma once\n"}
    new = {**NEW, "third_party/amd/include/Transforms/Passes.td": 'def Kept : Pass<"kept"> {\n}\n',
           "third_party/amd/backend/include/hip/hip_traits.h": "namespace std {\n}\n",
           "third_party/up/Dialect/include/Up.h": "#pragma once\n"}
    use = ('#include "third_party/up/dialect/include/Up.h"\nvoid registerAll() {\n'
           "  mlir::registerTritonAMDGPUStreamPipeline();\n  std::is_same_hip<int> same;\n}\n")
    repo, trees = history_trees(tmp_path, old, new, {"third_party/t/bin/RegisterTritonDialects.h": use},
                                removed=("third_party/up/dialect/include/Up.h",))
    found = {(f.details["declaration"], site) for f in symbol_findings(repo, *trees, lambda path: ["t"])
             for site in f.details["sites"]}
    assert found == {("registerTritonAMDGPUStreamPipeline", "third_party/t/bin/RegisterTritonDialects.h:3"),
                     ("third_party/up/dialect/include/Up.h", "third_party/t/bin/RegisterTritonDialects.h:1")}


def test_nodes_of_types_come_in_the_order_of_a_preorder_walk() -> None:
    """The query that finds nodes by type must hand them over as a walk from the root would: an enclosing
    node before the nodes it holds, even where both start at one byte (`a.b(x).c(y)`: the outer call first)."""
    from sync.facts.cpp import nodes_of_types, parse_tree

    text = ("namespace n { struct S { int f; void g(int a, float b = 1); }; }\n"
            "void h() { a.b(x).c(y); S s; s.g(f(1), g(2)); auto l = [&](int q) { return q.m(); }; }\n"
            "enum E { One, Two };\n")
    root = parse_tree(text).root_node

    def preorder(node):  # noqa: ANN001, ANN202
        yield node
        for child in node.children:
            yield from preorder(child)

    for types in [("call_expression",), ("identifier", "field_identifier", "type_identifier"),
                  ("declaration", "parameter_declaration", "optional_parameter_declaration", "field_declaration"),
                  ("enumerator", "function_declarator", "struct_specifier", "enum_specifier")]:
        expected = [(node.start_byte, node.end_byte, node.type) for node in preorder(root) if node.type in types]
        found = [(node.start_byte, node.end_byte, node.type) for node in nodes_of_types(root, types)]
        assert found == expected and len(found) > 2
    calls = nodes_of_types(root, ("call_expression",))
    assert calls[0].start_byte == calls[1].start_byte and calls[0].end_byte > calls[1].end_byte
