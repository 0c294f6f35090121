"""Issue 45: a qualified name that resolved at the old tag and, after upstream moved the declaration to another
namespace, no longer does -- generated pass registrations included (triton_v3.3.x -> 3.4.0)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from sync.facts.generated import pass_registrations
from sync.git import GitTree, open_repo
from tests.conftest import git
from tests.drift_helpers import drift_of, fork_world, replayed_branch
from tests.test_symbols import commit

CMAKE = "set(LLVM_TARGET_DEFINITIONS Passes.td)\nmlir_tablegen(Passes.h.inc -gen-pass-decls -name Triton)\n"
TD = 'def TritonCombineOps : Pass<"triton-combine", "mlir::ModuleOp"> {\n}\n'
OLD_PASSES = ("namespace mlir {\nnamespace triton {\nstd::unique_ptr<Pass> createCombineOpsPass();\n}\n"
              "#define GEN_PASS_REGISTRATION\n#include \"triton/Transforms/Passes.h.inc\"\n}\n")
NEW_PASSES = ("namespace mlir {\nnamespace triton {\n#define GEN_PASS_DECL\n#include \"triton/Transforms/Passes.h.inc\"\n"
              "#define GEN_PASS_REGISTRATION\n#include \"triton/Transforms/Passes.h.inc\"\n}\n}\n")
OLD_UTIL = "namespace mlir::triton {\nint helper(int v);\nint stays(int v);\n}\n"
NEW_UTIL = "namespace mlir::triton::gpu {\nint helper(int v);\n}\nnamespace mlir::triton {\nint stays(int v);\n}\n"
TOOL = ("#include \"triton/Transforms/Passes.h\"\nnamespace tt = mlir::triton;\nint main() {\n"
        "  mlir::registerTritonPasses();\n"        # 4: moved into mlir::triton
        "  mlir::registerTritonCombineOps();\n"    # 5: the pass's own registration moved too
        "  tt::helper(1);\n"                       # 6: moved into mlir::triton::gpu, through an alias
        "  tt::stays(2);\n"                        # 7: still there
        "  mlir::registerAllPasses();\n"           # 8: MLIR's, not in the tree: no claim
        "}\n")



def _world(tmp_path: Path) -> SimpleNamespace:
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    base = {"include/triton/Transforms/CMakeLists.txt": CMAKE, "include/triton/Transforms/Passes.td": TD,
            "include/triton/Util.h": OLD_UTIL}
    commit(repo, {**base, "include/triton/Transforms/Passes.h": OLD_PASSES}, "v1")
    git(repo, "tag", "v1")
    # another backend's copy of the old header declares the old names: not on acme's include path
    commit(repo, {"third_party/acme/bin/acme-opt.cpp": TOOL, "third_party/other/include/Util.h": OLD_UTIL},
           "[FlagTree] acme tool")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"include/triton/Transforms/Passes.h": NEW_PASSES, "include/triton/Util.h": NEW_UTIL}, "v2 (#88)")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "main")
    return fork_world(repo)


def test_generated_pass_registrations_land_in_the_namespaces_of_their_header(tmp_path: Path) -> None:
    world = _world(tmp_path)
    repo = open_repo(world.fork)
    old = GitTree.of_commit(repo, repo.revparse_single("v1").id, "old")
    new = GitTree.of_commit(repo, repo.revparse_single("v2").id, "new")
    assert {d.qualified for d in pass_registrations(old)} == {"mlir::registerTritonPasses",
                                                               "mlir::registerTritonCombineOps"}
    assert {d.qualified for d in pass_registrations(new)} == {"mlir::triton::registerTritonPasses",
                                                               "mlir::triton::registerTritonCombineOps"}


def test_a_qualified_name_upstream_moved_is_an_error_at_each_site(tmp_path: Path) -> None:
    world = _world(tmp_path)
    git(world.fork, "branch", "sync/v2", "v2")
    git(world.fork, "checkout", "-q", "sync/v2")
    git(world.fork, "-c", "user.name=t", "-c", "user.email=t@e", "cherry-pick", "main")
    git(world.fork, "checkout", "-q", "main")
    findings = drift_of(world, "v1", "v2", "main", target="sync/v2", symbols=True).findings
    moved = {f.details["declaration"]: (f.line, f.details["moved_to"]) for f in findings if f.kind == "symbol-moved"}
    assert moved == {"mlir::registerTritonPasses": (4, ["mlir::triton::registerTritonPasses"]),
                     "mlir::registerTritonCombineOps": (5, ["mlir::triton::registerTritonCombineOps"]),
                     "mlir::triton::helper": (6, ["mlir::triton::gpu::helper"])}
    assert all(f.severity == "error" for f in findings if f.kind == "symbol-moved")


A_OLD = "namespace mlir::triton {\nint helperMoved(int v);\nint keep(int v);\n}\n"
A_NEW = "namespace mlir::triton {\nint keep(int v);\n}\n"
B_NEW = "namespace mlir::triton {\nint helperMoved(int v);\n}\n"
C_NEW = '#include "triton/B.h"\n'
STILL = '#include "triton/A.h"\nint f() { return mlir::triton::helperMoved(1); }\n'          # reaches only A.h
REACHES = '#include "triton/A.h"\n#include "triton/C.h"\nint g() { return mlir::triton::helperMoved(2); }\n'


def test_a_declaration_moved_to_a_header_the_file_does_not_reach_is_an_error(tmp_path: Path) -> None:
    """Issue 45, class 5: the use resolved through the file's includes at the old tag; upstream moved the
    declaration to another header, which the file reaches neither directly nor through what it includes."""
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"include/triton/A.h": A_OLD, "include/triton/C.h": "#pragma once\n"}, "v1")
    git(repo, "tag", "v1")
    commit(repo, {"lib/Still.cpp": STILL, "lib/Reaches.cpp": REACHES}, "[FlagTree] uses")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"include/triton/A.h": A_NEW, "include/triton/B.h": B_NEW, "include/triton/C.h": C_NEW}, "v2")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "main")
    findings = drift_of(fork_world(repo), "v1", "v2", "main", symbols=True).findings
    moved = [(f.details["sites"], f.details.get("moved_to_headers")) for f in findings if f.kind == "symbol-moved"]
    assert moved == [(["lib/Still.cpp:2"], ["include/triton/B.h"])]


M_OLD = ("namespace mlir {\nclass Membar { public: void run(); };\nclass Gone { public: void run(); };\n"
         "class Mover { public: void go(); };\nclass Fence { public: void wait(); };\n}\n")
M_NEW = ("namespace mlir {\ntemplate <typename T> class MembarOf { public: void run(); };\n"
         "using Membar = MembarOf<int>;\n}\n"                      # the class is an alias of a template now
         "namespace llvm {\nclass OtherPass { public: void run(); };\n}\n"  # another class's member of that name
         "namespace mlir::gpu {\nclass Mover { public: void go(); };\n}\n"  # the class moved namespace
         "namespace mlir::detail {\ntemplate <typename T> class Fence { public: void wait(); };\n}\n"
         "namespace mlir {\nusing Fence = detail::Fence<int>;\n}\n")  # an alias of a same-named template
M_USER = ('#include "triton/M.h"\nvoid use() {\n'
          "  auto a = &mlir::Membar::run;\n"   # 3: resolves through the alias
          "  auto b = &mlir::Gone::run;\n"     # 4: Gone left; OtherPass::run is no move of it
          "  auto c = &mlir::Mover::go;\n"     # 5: moved with its class
          "  auto d = &mlir::Fence::wait;\n"  # 6: resolves through the alias
          "}\n")


def test_a_member_moves_only_with_a_class_of_its_name_and_an_alias_is_no_move(tmp_path: Path) -> None:
    """Seen on triton_v3.4.x onto 3.6.0: `mlir::ModuleMembarAnalysis::run`, whose class became an alias of a
    template that still declares run(), was reported as moved to `llvm::BreakStructPhiNodesPass::run`."""
    repo = tmp_path / "fork"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"include/triton/M.h": M_OLD}, "v1")
    git(repo, "tag", "v1")
    commit(repo, {"third_party/acme/lib/Use.cpp": M_USER}, "[FlagTree] acme")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"include/triton/M.h": M_NEW}, "v2 (#9)")
    git(repo, "tag", "v2")
    replayed_branch(repo, "v2", "main", "sync/v2")
    findings = drift_of(fork_world(repo), "v1", "v2", "main", target="sync/v2", symbols=True).findings
    moved = {f.details["declaration"]: (f.line, f.details["moved_to"]) for f in findings if f.kind == "symbol-moved"}
    assert moved == {"mlir::Mover::go": (5, ["mlir::gpu::Mover::go"])}
