"""Small fixtures of ours mirroring structures seen on real FlagTree branches (bench/real_trees.toml lists
where): ownership outside spec/, the root hijack, sub-packages of hijacked packages, the python/triton/spec
layout, C++ spec libraries whose macros live in included headers, and a --from that is not an ancestor."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from sync.facts.owners import OwnerIndex
from sync.facts.roles import (CPP_OVERLAY, CPP_SPEC, NEW_MODULE, OVERLAY, SPEC_MODULE, TD_OVERLAY, UNREACHABLE,
                                  classified_files)
from sync.facts.callsites import index_trunk_hooks
from sync.facts.trees import DiskTree
from tests.conftest import git
from tests.drift_helpers import drift_of

HOOK = "from triton.flagtree_spec import spec_path\n\nspec_path(__path__)\n"
B = "third_party/b/backend/spec/"


def tree_of(tmp_path: Path, files: dict[str, str]) -> DiskTree:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return DiskTree(tmp_path)


def roles(tree: DiskTree) -> dict[str, str]:
    return {c.file.path: c.role for c in classified_files(tree, index_trunk_hooks(tree))}


def test_everything_under_third_party_b_is_owned_by_b(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {B + "triton/__init__.py": "", "third_party/nvidia/backend/compiler.py": "x = 1\n",
                              "python/triton/__init__.py": ""})
    owners = OwnerIndex(tree)
    assert owners.owners("third_party/nvidia/backend/compiler.py") == ["nvidia"]
    assert owners.owners("third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/TargetInfo.cpp") == ["nvidia"]
    assert owners.owners("python/triton/language/core.py") == ["shared-trunk"]


def test_files_at_any_depth_below_a_hijacked_package(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {
        "python/triton/__init__.py": "", "python/triton/experimental/__init__.py": "",
        "python/triton/experimental/gluon/__init__.py": HOOK,
        "python/triton/experimental/gluon/language/__init__.py": "",
        "python/triton/experimental/gluon/language/amd/__init__.py": "",
        "python/triton/experimental/gluon/language/amd/cdna.py": "X = 1\n",
        "python/triton/experimental/gluon/_layouts.py": "L = 1\n",
        B + "triton/experimental/gluon/_layouts.py": "L = 2\n",  # overlay, depth 1
        B + "triton/experimental/gluon/hcu/__init__.py": "from . import gfx\n",  # new sub-package
        B + "triton/experimental/gluon/hcu/gfx.py": "G = 1\n",
        B + "triton/experimental/gluon/language/amd/cdna.py": "X = 2\n",  # trunk packages without mirror __init__
        B + "triton/language/extra/helpers.py": "def f():\n    return 1\n",  # no hijack above: spec module
    })
    found = roles(tree)
    assert found[B + "triton/experimental/gluon/_layouts.py"] == OVERLAY
    assert found[B + "triton/experimental/gluon/hcu/__init__.py"] == NEW_MODULE
    assert found[B + "triton/experimental/gluon/hcu/gfx.py"] == NEW_MODULE
    assert found[B + "triton/experimental/gluon/language/amd/cdna.py"] == UNREACHABLE
    assert found[B + "triton/language/extra/helpers.py"] == SPEC_MODULE


def test_a_mirrored_sub_package_with_its_own_init_is_the_backends(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {
        "python/triton/__init__.py": "", "python/triton/runtime/__init__.py": HOOK,
        "python/triton/runtime/sub/__init__.py": "", "python/triton/runtime/sub/m.py": "M = 1\n",
        B + "triton/runtime/sub/__init__.py": "", B + "triton/runtime/sub/m.py": "M = 2\n"})
    found = roles(tree)
    assert found[B + "triton/runtime/sub/m.py"] == OVERLAY and found[B + "triton/runtime/sub/__init__.py"] == OVERLAY


def test_cpp_spec_libraries_are_not_whole_file_overlays(tmp_path: Path) -> None:
    trunk = "".join(f"int f{n}(int x) {{ return x + {n}; }}\n" for n in range(40))
    tree = tree_of(tmp_path, {
        "python/triton/__init__.py": "",
        "lib/Analysis/Membar.cpp": trunk,
        B + "lib/Analysis/Membar.cpp": "int f3(int x) { return x * 3; }\n",  # one replaced function
        "lib/Analysis/Alias.cpp": trunk,
        B + "lib/Analysis/Alias.cpp": trunk.replace("x + 7", "x - 7"),  # a changed copy
        "include/triton/Dialect/Ops.td": "def A : Op<\"a\">;\n",
        B + "include/triton/Dialect/Ops.td": "def A : Op<\"a\">;\ndef B : Op<\"b\">;\n",
        B + "include/flagtree_spec.h": "#include \"b/Macros.h\"\n"})
    found = roles(tree)
    assert found[B + "lib/Analysis/Membar.cpp"] == CPP_SPEC
    assert found[B + "lib/Analysis/Alias.cpp"] == CPP_OVERLAY
    assert found[B + "include/triton/Dialect/Ops.td"] == TD_OVERLAY
    assert found[B + "include/flagtree_spec.h"] == CPP_SPEC


def test_python_triton_spec_layout_is_owned_and_never_trunk(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {
        "python/triton/__init__.py": "", "python/triton/runtime/__init__.py": HOOK,
        "python/triton/runtime/jit.py": "def jit(f):\n    return f\n",
        "python/triton/spec/ascend/runtime/jit.py": "def jit(f):\n    return None\n",
        "python/triton/spec/ascend/runtime/libentry.py": "from .jit import jit\n",
        "python/triton/spec/ascend/__init__.py": "from triton.flagtree_spec import spec\n"})
    found = roles(tree)
    assert found["python/triton/spec/ascend/runtime/jit.py"] == OVERLAY
    assert found["python/triton/spec/ascend/runtime/libentry.py"] == NEW_MODULE
    hooks = index_trunk_hooks(tree)
    assert "python/triton/spec/ascend/__init__.py" not in hooks.facts  # not a trunk file
    assert OwnerIndex(tree).owners("python/triton/spec/ascend/runtime/jit.py") == ["ascend"]


def test_a_configured_layout(tmp_path: Path) -> None:
    tree = tree_of(tmp_path, {
        "pyproject.toml": '[tool.flagtree-sync]\nspec_roots = ["backends/{backend}/py"]\n',
        "python/triton/__init__.py": "", "python/triton/tools/__init__.py": HOOK,
        "python/triton/tools/disasm.py": "A = 1\n", "backends/zeta/py/tools/disasm.py": "A = 2\n"})
    assert roles(tree) == {"backends/zeta/py/tools/disasm.py": OVERLAY}


def _commit(repo: Path, files: dict[str, str | None], message: str) -> None:
    for rel, text in files.items():
        target = repo / rel
        if text is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def small_world(tmp_path: Path, base: dict[str, str], upstream: dict[str, str | None],
                fork: dict[str, str | None]) -> Path:
    """One repository: v1 = base, v2 = base + upstream's change, main = v1 + FlagTree's commit."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    _commit(repo, base, "v1")
    git(repo, "tag", "v1")
    git(repo, "checkout", "-q", "-b", "up")
    _commit(repo, upstream, "v2")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "main")
    _commit(repo, fork, "FlagTree")
    return repo


MEMBAR_V1 = ("namespace mlir {\n#ifndef FLAGTREE_SPEC_Membar_update\n"
             "void MembarAnalysis::update(Operation *op, BlockInfo *info) {\n  info->add(op);\n}\n#endif\n"
             "void MembarAnalysis::run() {}\n}\n")


@pytest.mark.parametrize("replacement, expected", [
    ("void MembarAnalysis::update(Operation *op, BlockInfo *info) {\n  info->mine(op);\n}\n", set()),
    ("void MembarAnalysis::update(Operation *op) {\n}\n", {"guard-signature-mismatch"}),
    (None, {"guard-replacement-missing"}),
])
def test_guard_macros_are_followed_into_included_headers(tmp_path: Path, replacement: str | None,
                                                          expected: set[str]) -> None:
    """Real backends define their FLAGTREE_SPEC_* macros in headers that flagtree_spec.h includes."""
    fork = {B + "include/flagtree_spec.h": '#include "b/Analysis/b_Membar.h"\n',
            B + "include/b/Analysis/b_Membar.h": "#define FLAGTREE_SPEC_Membar_update\n",
            "lib/Analysis/Membar.cpp": MEMBAR_V1, "python/triton/__init__.py": ""}
    if replacement is not None:
        fork[B + "lib/Analysis/Membar.cpp"] = "namespace mlir {\n" + replacement + "}\n"
    repo = small_world(tmp_path, {"lib/Analysis/Membar.cpp": MEMBAR_V1, "python/triton/__init__.py": ""},
                       {"README.md": "v2\n"}, fork)
    findings = drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main", target="main").findings
    guards = {f.kind for f in findings if f.kind.startswith("guard")}
    assert guards == expected
    assert all(f.path == B + "include/b/Analysis/b_Membar.h" for f in findings if f.kind.startswith("guard"))


OPS_V1 = ("#ifndef FLAGTREE_SPEC_Ops_cpp\n"
          "void LoadOp::build(Builder &b, State &s, Value p) {\n  build(b, s, p, {});\n}\n"
          "void LoadOp::build(Builder &b, State &s, Value p, Value m) {\n  build(b, s, p, m, {});\n}\n"
          "void LoadOp::build(Builder &b, State &s, Value p, Value m, Value o) {\n  s.add(p, m, o);\n}\n"
          "int FoldA::matchAndRewrite(Op op, Rewriter &r) const {\n  return 1;\n}\n"  # FoldA, FoldB: a header's
          "int FoldB::matchAndRewrite(Op op, Rewriter &r) const {\n  return 2;\n}\n"  # classes, not this file's
          "#endif\n")
OPS_V2 = (OPS_V1.replace("Value m, Value o) {\n  s.add(p, m, o);", "Value m, Value o, bool v) {\n  s.add(p, m, o, v);")
          .replace("int FoldA::matchAndRewrite(Op op, Rewriter &r) const {\n  return 1;\n}\n", "")
          .replace("int FoldB::matchAndRewrite(Op op, Rewriter &r) const {\n  return 2;\n}\n", ""))


def test_overloads_and_same_named_methods_under_a_guard_are_told_apart(tmp_path: Path) -> None:
    """Seen on triton_v3.5.x (ascend, five LoadOp::build overloads) and main (iluvatar, matchAndRewrite of several
    patterns): each overload is checked against its own counterpart, and a finding names which one it is."""
    library = "".join(f"void LoadOp::build(Builder &b, State &s{params}) {{}}\n"
                      for params in (", Value p", ", Value p, Value m", ", Value p, Value m, Value o"))
    library += "int FoldA::matchAndRewrite(Op op, Rewriter &r) const { return 0; }\n"
    library += "int FoldB::matchAndRewrite(Op op, Rewriter &r) const { return 0; }\n"
    fork = {B + "include/flagtree_spec.h": "#define FLAGTREE_SPEC_Ops_cpp\n", B + "lib/Ops.cpp": library,
            "lib/Ops.cpp": OPS_V1, "python/triton/__init__.py": ""}
    repo = small_world(tmp_path, {"lib/Ops.cpp": OPS_V1, "python/triton/__init__.py": ""},
                       {"lib/Ops.cpp": OPS_V2}, fork)
    # No target: the upgrade is replayed in memory, so trunk's Ops.cpp is upstream's v2 (FlagTree left it alone).
    findings = [f for f in drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
                if f.kind.startswith("guard")]
    mismatches = [f.message for f in findings if f.kind == "guard-signature-mismatch"]
    assert len(mismatches) == 1  # the one overload upstream changed, once
    assert "Value, Value, Value, bool" in mismatches[0] and mismatches[0].endswith(
        "takes (Builder &, State &, Value, Value, Value)")  # paired with its own counterpart
    removed = sorted(f.message for f in findings if f.kind == "guard-default-removed")
    assert len(removed) == 2 and len(set(removed)) == 2  # one a method, each naming where it is
    assert "at lib/Ops.cpp:11 (in the guard at lib/Ops.cpp:1)" in removed[0]
    assert "at lib/Ops.cpp:14 (in the guard at lib/Ops.cpp:1)" in removed[1]


def test_guard_unused_names_the_header_that_defines_the_macro(tmp_path: Path) -> None:
    fork = {B + "include/flagtree_spec.h": '#include "b/Extra.h"\n', B + "include/b/Extra.h":
            "#pragma once\n#define FLAGTREE_SPEC_Nothing_here\n", "python/triton/__init__.py": ""}
    repo = small_world(tmp_path, {"python/triton/__init__.py": ""}, {"README.md": "v2\n"}, fork)
    found = [f for f in drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main", target="main").findings
             if f.kind == "guard-unused"]
    assert [(f.path, f.line) for f in found] == [(B + "include/b/Extra.h", 2)]


def test_hooks_without_a_recognizable_spec_tree_are_reported_not_skipped(tmp_path: Path) -> None:
    hooked = "from triton.flagtree_spec import spec\n\n\ndef f():\n    return spec('f_impl')\n"
    repo = small_world(tmp_path, {"python/triton/__init__.py": "", "python/triton/x.py": "def f():\n    return 1\n"},
                       {"README.md": "v2\n"},
                       {"python/triton/x.py": hooked, "vendor/b/overrides/x.py": "def f_impl():\n    return 2\n"})
    findings = drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
    assert [(f.kind, f.path) for f in findings if f.kind == "layout-unrecognized"] == [
        ("layout-unrecognized", "python/triton/x.py")]


HINTED_V1 = ("#ifndef FLAGTREE_SPEC_Ops_cpp\n"
             "void LoadOp::build(Builder &b, State &s, Value p) {\n  s.add(p);\n}\n#endif\n"
             "int unrelated() {\n  return 1;\n}\n")


@pytest.mark.parametrize("trunk_takes_hints, mismatches", [(True, 0), (False, 1)])
def test_a_guarded_signature_is_judged_against_the_upgraded_trunk_flagtree_changes_included(
        tmp_path: Path, trunk_takes_hints: bool, mismatches: int) -> None:
    """Seen on triton_v3.5.x: FlagTree's own trunk adds a parameter to a guarded default and the backend's
    replacement takes it too; the upgraded trunk (upstream's change replayed with FlagTree's) declares it, so
    the replacement matches what the build compiles. Without FlagTree's trunk change it does not.
    Upstream v2 changes another function of the file."""
    hinted = HINTED_V1.replace("Value p) {", "Value p, StringAttr hints) {")
    library = "void LoadOp::build(Builder &b, State &s, Value p, StringAttr hints) {}\n"
    fork = {B + "include/flagtree_spec.h": "#define FLAGTREE_SPEC_Ops_cpp\n", B + "lib/Ops.cpp": library,
            "lib/Ops.cpp": hinted if trunk_takes_hints else HINTED_V1, "python/triton/__init__.py": ""}
    upstream = {"lib/Ops.cpp": HINTED_V1.replace("return 1;", "return 2;")}
    repo = small_world(tmp_path, {"lib/Ops.cpp": HINTED_V1, "python/triton/__init__.py": ""}, upstream, fork)
    findings = drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
    assert len([f for f in findings if f.kind == "guard-signature-mismatch"]) == mismatches


FOLD_TRUNK = ("#ifndef FLAGTREE_SPEC_Ops_cpp\n"
              "OpFoldResult AddPtrOp::fold(FoldAdaptor adaptor) {\n  return {};\n}\n"
              "LogicalResult AddPtrOp::verify() {\n  return success();\n}\n#endif\n")
FOLD_TD = ('def TT_AddPtrOp : TT_Op<"addptr"> {{\n  let arguments = (ins TT_Ptr:$ptr, I32:$offset);\n'
           '  {folder}\n  let hasVerifier = 1;\n}}\n')


@pytest.mark.parametrize("folder, missing", [("// let hasFolder = 1;", []),
                                             ("let hasFolder = 1;", ["AddPtrOp::fold"])])
def test_an_op_hook_the_backends_own_tablegen_never_declares_needs_no_replacement(
        tmp_path: Path, folder: str, missing: list[str]) -> None:
    """Seen on triton_v3.5.x (ascend): the backend's own copy of the op's .td comments out hasFolder, so its
    build declares no AddPtrOp::fold and the guard may turn trunk's off without a replacement."""
    fork = {B + "include/flagtree_spec.h": "#define FLAGTREE_SPEC_Ops_cpp\n",
            B + "include/triton/Dialect/Triton/IR/TritonOps.td": FOLD_TD.format(folder=folder),
            B + "lib/Ops.cpp": "LogicalResult AddPtrOp::verify() {\n  return success();\n}\n",
            "lib/Ops.cpp": FOLD_TRUNK, "python/triton/__init__.py": ""}
    repo = small_world(tmp_path, {"lib/Ops.cpp": FOLD_TRUNK, "python/triton/__init__.py": ""},
                       {"README.md": "v2\n"}, fork)
    findings = drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main").findings
    assert [f.message.split(" defines no ")[-1] for f in findings if f.kind == "guard-replacement-missing"] == missing
