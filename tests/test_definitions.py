"""Issue 45, class 2: upstream declares a function FlagTree defines, and changes its parameters between the tags."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.conftest import git
from tests.drift_helpers import drift_of, fork_world
from tests.test_symbols import commit

OLD_HEADER = ("namespace mlir::triton {\nvoid registerPlugin(int level);\n"
              "class Hooks {\npublic:\n  void onLaunch(int grid, int block);\n};\n}\n")
NEW_HEADER = ("namespace mlir::triton {\nvoid registerPlugin(int level, bool verbose);\n"
              "class Hooks {\npublic:\n  void onLaunch(unsigned grid, int block);\n};\n}\n")
PLUGIN = ("#include \"triton/Plugin.h\"\nnamespace mlir::triton {\n"
          "void registerPlugin(int level) { (void)level; }\n}\n"
          "void mlir::triton::Hooks::onLaunch(int grid, int block) {}\n")
UNCHANGED = "namespace mlir::triton {\nvoid keep(int a);\n}\n"



def _world(tmp_path: Path, plugin: str = PLUGIN, fix: str | None = None, test_dir: bool = False) -> SimpleNamespace:
    repo = tmp_path / "fork"
    tmp_path.mkdir(parents=True, exist_ok=True)
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    commit(repo, {"include/triton/Plugin.h": OLD_HEADER, "include/triton/Keep.h": UNCHANGED,
                  "CMakeLists.txt": "add_subdirectory(third_party/acme)\n"}, "v1")
    git(repo, "tag", "v1")
    where = "third_party/acme/unittest/Plugin.cpp" if test_dir else "third_party/acme/lib/Plugin.cpp"
    commit(repo, {where: plugin, "third_party/acme/keep.cpp": "namespace mlir::triton {\nvoid keep(int a) {}\n}\n"},
           "[FlagTree] acme plugin")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"include/triton/Plugin.h": NEW_HEADER}, "v2 (#77)")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "-b", "sync/v2", "v2")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "cherry-pick", "main")
    if fix is not None:
        commit(repo, {where: fix}, "fix the plugin")
    git(repo, "checkout", "-q", "main")
    return fork_world(repo)


def _mismatches(world: SimpleNamespace) -> dict[str, tuple[str, int | None]]:
    findings = drift_of(world, "v1", "v2", "main", target="sync/v2", symbols=True).findings
    return {f.details["declaration"]: (f.path, f.line) for f in findings if f.kind == "definition-mismatch"}


def test_a_definition_written_for_the_old_declaration_is_an_error(tmp_path: Path) -> None:
    found = _mismatches(_world(tmp_path))
    assert found == {"mlir::triton::registerPlugin": ("third_party/acme/lib/Plugin.cpp", 3),
                     "mlir::triton::Hooks::onLaunch": ("third_party/acme/lib/Plugin.cpp", 5)}


def test_a_definition_fixed_on_the_branch_or_in_a_test_directory_is_none(tmp_path: Path) -> None:
    fixed = PLUGIN.replace("registerPlugin(int level)", "registerPlugin(int level, bool verbose)").replace(
        "onLaunch(int grid", "onLaunch(unsigned grid")
    assert _mismatches(_world(tmp_path / "a", fix=fixed)) == {}
    assert _mismatches(_world(tmp_path / "b", test_dir=True)) == {}


def test_a_same_named_function_of_another_namespace_is_none(tmp_path: Path) -> None:
    other = "namespace acme {\nvoid registerPlugin(int level) {}\n}\n"
    assert _mismatches(_world(tmp_path, plugin=other)) == {}


def test_a_declaration_of_a_function_upstream_redefined_links_to_nothing(tmp_path: Path) -> None:
    """3.3 -> 3.7: the cpu backend declares `extern std::string translateLLVMIRToASM(...)` to call the definition in
    python/src/llvm.cc; upstream added a parameter and moved the function into an anonymous namespace."""
    old_llvm = "std::string translateLLVMIRToASM(Module &m, const std::string &triple) { return triple; }\n"
    forms = {"moved": "namespace {\n" + old_llvm + "}\n",
             "widened": old_llvm.replace("const std::string &triple)", "const std::string &triple, bool gep)"),
             "kept": old_llvm + "int other(int a) { return a; }\n"}
    own = ("#include <string>\nextern std::string translateLLVMIRToASM(Module &m, const std::string &triple);\n"
           "std::string lower(Module &m) { return translateLLVMIRToASM(m, \"x\"); }\n")

    def found(name: str) -> list[tuple[str, int | None, str]]:
        repo = tmp_path / name
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main", ".")
        commit(repo, {"python/src/llvm.cc": old_llvm, "CMakeLists.txt": "add_subdirectory(third_party/cpu)\n"}, "v1")
        git(repo, "tag", "v1")
        commit(repo, {"third_party/cpu/python/host.cc": own}, "[FlagTree] cpu backend")
        git(repo, "checkout", "-q", "-b", "upstream", "v1")
        commit(repo, {"python/src/llvm.cc": forms[name]}, "v2 (#88)")
        git(repo, "tag", "v2")
        git(repo, "checkout", "-q", "main")
        findings = drift_of(fork_world(repo), "v1", "v2", "main", symbols=True).findings
        return [(f.path, f.line, f.severity) for f in findings if f.kind == "declaration-mismatch"]
    assert found("moved") == [("third_party/cpu/python/host.cc", 2, "error")]
    assert found("widened") == [("third_party/cpu/python/host.cc", 2, "error")]
    assert found("kept") == []  # the definition upstream still has is the one FlagTree declares


def test_a_declaration_the_backends_own_definition_satisfies_is_none(tmp_path: Path) -> None:
    """3.3 -> 3.7: xpu's triton_xpu.cc declares translateLLVMIRToASM too, but xpu compiles its own copy of
    python/src/llvm.cc, which still defines the old form."""
    old_llvm = "std::string translateLLVMIRToASM(Module &m, const std::string &triple) { return triple; }\n"
    repo = tmp_path / "fork"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", ".")
    commit(repo, {"python/src/llvm.cc": old_llvm, "CMakeLists.txt": "add_subdirectory(third_party/xpu)\n"}, "v1")
    git(repo, "tag", "v1")
    declared = "std::string translateLLVMIRToASM(Module &m, const std::string &t);\n"
    commit(repo, {"third_party/xpu/triton_xpu.cc": declared, "third_party/xpu/python/src/llvm.cc": old_llvm},
           "[FlagTree] xpu")
    git(repo, "checkout", "-q", "-b", "upstream", "v1")
    commit(repo, {"python/src/llvm.cc": "namespace {\n" + old_llvm + "}\n"}, "v2 (#88)")
    git(repo, "tag", "v2")
    git(repo, "checkout", "-q", "main")
    findings = drift_of(fork_world(repo), "v1", "v2", "main", symbols=True).findings
    assert [f for f in findings if f.kind == "declaration-mismatch"] == []
