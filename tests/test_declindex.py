"""The declaration index (issue 33 item 1): per-blob declarations of C++, ODS and Python, a tree's view over them,
and the fact cache (a second run parses nothing)."""
from __future__ import annotations

from pathlib import Path

import pytest

from sync.facts import declindex
from sync.facts.declindex import PARSES, DeclarationIndex, Decl, declarations_of
from sync.facts.trees import DiskTree
from sync.support.cache import FactCache, using

HEADER = """\
namespace mlir { namespace triton {
namespace ttg = mlir::triton::gpu;
enum class AddrSpace : int { Local = 1, Shared, All };
enum Plain { A, B };
using ValueList = SmallVector<Value>;
typedef int Width;
class TargetInfoBase {
public:
  virtual void barrier(Location loc, RewriterBase &rewriter, bool isWarpSync = false) const = 0;
  virtual void barrier(Location loc, RewriterBase &rewriter, triton::AddrSpace targets,
                       int count = 1) const = 0;
  static int lanes(int a, ...);
  void inlined() { struct Local { int x; }; }
  int width;
  ~TargetInfoBase();
};
struct Config;
int freeFunction(int a, float b = 1.0f);
} // namespace triton
namespace triton { namespace gpu {
void foo(Value v);
}}
} // namespace mlir
void mlir::triton::TargetInfoBase::outOfLine(int) {}
"""


@pytest.fixture(autouse=True)
def fresh() -> None:
    declindex.forget()


def by_name(decls: tuple[Decl, ...], kind: str, name: str) -> list[Decl]:
    return [decl for decl in decls if decl.kind == kind and decl.name == name]


def test_each_cpp_declaration_kind() -> None:
    decls = declarations_of("include/T.h", HEADER)
    (alias,) = by_name(decls, "namespace-alias", "ttg")
    assert (alias.qualified, alias.target) == ("mlir::triton::ttg", "mlir::triton::gpu")
    (klass,) = by_name(decls, "class", "TargetInfoBase")
    assert klass.qualified == "mlir::triton::TargetInfoBase" and "definition" in klass.flags
    (forward,) = by_name(decls, "struct", "Config")
    assert "definition" not in forward.flags
    (lanes,) = by_name(decls, "method", "lanes")
    assert lanes.owner == "TargetInfoBase" and {"static", "variadic"} <= lanes.flags and "pack" not in lanes.flags
    (inlined,) = by_name(decls, "method", "inlined")
    assert "definition" in inlined.flags
    (local,) = by_name(decls, "struct", "Local")
    assert "local" in local.flags
    (field,) = by_name(decls, "field", "width")
    assert (field.qualified, field.owner) == ("mlir::triton::TargetInfoBase::width", "TargetInfoBase")
    (destructor,) = by_name(decls, "method", "~TargetInfoBase")
    assert "special" in destructor.flags
    (using_alias,) = by_name(decls, "alias", "ValueList")
    assert using_alias.target == "SmallVector<Value>"
    (typedef,) = by_name(decls, "alias", "Width")
    assert "typedef" in typedef.flags and typedef.target == "int"
    (free,) = by_name(decls, "function", "freeFunction")
    assert free.qualified == "mlir::triton::freeFunction" and free.owner is None
    assert [(p.name, p.type, p.has_default) for p in free.params or ()] == [("a", "int", False), ("b", "float", True)]
    (foo,) = by_name(decls, "function", "foo")
    assert foo.qualified == "mlir::triton::gpu::foo"
    (outside,) = by_name(decls, "function", "outOfLine")
    assert outside.qualified == "mlir::triton::TargetInfoBase::outOfLine" and {"qualified", "definition"} <= outside.flags


def test_overloads_with_defaults_virtual_and_pure() -> None:
    overloads = by_name(declarations_of("include/T.h", HEADER), "method", "barrier")
    assert [(decl.required, len(decl.params or ())) for decl in overloads] == [(2, 3), (3, 4)]
    assert all({"virtual", "pure", "const"} <= decl.flags for decl in overloads)
    assert [param.type for param in overloads[1].params or ()] == ["Location", "RewriterBase", "AddrSpace", "int"]


def test_enum_class_members_and_scope() -> None:
    decls = declarations_of("include/T.h", HEADER)
    (scoped,) = by_name(decls, "enum", "AddrSpace")
    assert scoped.members == ("Local", "Shared", "All") and "scoped" in scoped.flags
    (plain,) = by_name(decls, "enum", "Plain")
    assert plain.members == ("A", "B") and "scoped" not in plain.flags
    members = [decl for decl in decls if decl.kind == "enumerator" and decl.owner == "AddrSpace"]
    assert [decl.qualified for decl in members] == ["mlir::triton::AddrSpace::Local", "mlir::triton::AddrSpace::Shared",
                                                    "mlir::triton::AddrSpace::All"]


def test_pybind_registrations() -> None:
    text = ('void init(py::module &m) {\n  m.def("create_x", &f).def("keep", &g);\n'
            '  ADD_PASS_WRAPPER_0("add_x", createX);\n  helper("not_a_binding");\n}\n')
    assert sorted(decl.name for decl in declarations_of("python/src/ir.cc", text) if decl.kind == "pybind") == \
        ["add_x", "create_x", "keep"]


ODS = """\
def TT_CacheModifier : I32EnumAttr<"CacheModifier", "", [CM_NONE, CM_CA]> {
  let cppNamespace = "::mlir::triton";
}
def TT_LoadOp : TT_Op<"load"> {
  let arguments = (ins TT_Ptr:$ptr, Optional<I1>:$mask, DefaultValuedAttr<BoolAttr, "false">:$is_volatile);
  let results = (outs TT_Type:$result);
  let builders = [OpBuilder<(ins "Value":$ptr, CArg<"bool", "false">:$isVolatile)>];
}
"""


def test_an_ods_enum_attr_and_an_op() -> None:
    decls = declarations_of("include/Ops.td", ODS)
    (enum,) = by_name(decls, "enum-attr", "CacheModifier")
    assert enum.target == "TT_CacheModifier"
    (op,) = by_name(decls, "op", "LoadOp")
    assert op.members == ("getPtr", "getMask", "getIsVolatile", "getResult")
    builders = [decl for decl in decls if decl.kind == "builder" and decl.owner == "LoadOp"]
    assert [(decl.required, [p.name for p in decl.params or ()]) for decl in builders][0] == (1, ["ptr", "isVolatile"])


def test_python_defs_classes_and_reexports() -> None:
    text = ("from .semantic import load as tl_load\nfrom triton._C.libtriton import ir\nimport os.path\n"
            "class Builder(Base):\n  KIND = 1\n  def create(self, a, b=1, *rest, key, **kw): pass\n"
            "try:\n  from fast import impl\nexcept ImportError:\n  impl = None\n")
    decls = declarations_of("python/triton/x.py", text)
    (reexport,) = by_name(decls, "import", "tl_load")
    assert reexport.target == ".semantic.load" and "as" in reexport.flags
    assert by_name(decls, "import", "ir")[0].target == "triton._C.libtriton.ir"
    (create,) = by_name(decls, "def", "create")
    assert create.qualified == "Builder.create" and create.owner == "Builder"
    assert [(p.name, p.has_default, p.kind) for p in create.params or ()] == [
        ("self", False, "positional"), ("a", False, "positional"), ("b", True, "positional"), ("rest", False, "vararg"),
        ("key", False, "keyword-only"), ("kw", False, "varkw")]
    assert [decl.kind for decl in decls if decl.name == "impl"] == ["import", "assign"]
    assert "from" in reexport.flags and "from" not in by_name(decls, "import", "os")[0].flags
    looped = declarations_of("python/triton/y.py", "for k in KINDS:\n    def handler(): pass\nwhile x:\n    n += 1\n")
    assert [(decl.kind, decl.name) for decl in looped] == [("def", "handler"), ("assign", "n")]
    assert declarations_of("python/triton/bad.py", "def (:\n") == ()


def test_python_declarations_from_the_shared_walk_equal_a_parse_of_their_own(run_python_facts) -> None:
    """A fork file parsed up front (pyblobs) gives its declarations without another parse: the same ones,
    decorators included, for a text parsed whole and for one parsed chunk by chunk."""
    from sync.facts import pyblobs
    small = ("import triton.language as tl\n\n\nclass K(Base):\n    @tl.core.builtin\n    @staticmethod\n"
             "    def m(x, _semantic=None):\n        return x\n\n\ntry:\n    import fast\nexcept ImportError:\n"
             "    fast = None\n")
    large = small + "".join(f"\n\n@tl.builtin\ndef f{n}(a, b=1, *c, d, **e):\n    return a\n" for n in range(6000))
    for text in (small, large):
        declindex.forget()
        own = declarations_of("python/triton/m.py", text)
        assert [d.target for d in own if d.name == "m"] == ["tl.core.builtin, staticmethod"]
        pyblobs.prefetch([text])
        declindex.forget()
        parsed = PARSES["py"]
        assert declarations_of("python/triton/m.py", text) == own
        assert PARSES["py"] == parsed  # read from the shared walk's facts
    assert len(large) > 256 * 1024  # chunked (pychunks.CHUNK_THRESHOLD)


def tree_of(tmp_path: Path, files: dict[str, str]) -> DiskTree:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return DiskTree(tmp_path)


def test_a_trees_view_answers_from_the_files_that_spell_the_name(tmp_path: Path) -> None:
    tree = tree_of(tmp_path / "tree", {"include/T.h": HEADER, "include/Ops.td": ODS, "include/Other.h": "int x;\n",
                                       "third_party/b/include/T.h": "enum AddrSpace2 { Z };\n"})
    index = DeclarationIndex.of(tree)
    assert DeclarationIndex.of(tree) is index
    before = PARSES["cpp"]
    assert index.enums({"AddrSpace", "CacheModifier", "Width", "AddrSpace2"}, under=("include/",)) == \
        {"AddrSpace", "CacheModifier"}
    assert PARSES["cpp"] == before + 1  # Other.h spells none of the names: never parsed
    assert [(decl.required, len(decl.params or ())) for _, decl in index.overloads("TargetInfoBase::barrier")] == \
        [(2, 3), (3, 4)]
    assert index.declares("mlir::triton::gpu::foo") and not index.declares("mlir::triton::foo")
    assert index.declares("LoadOp") and [path for path, _ in index.find("Local", ("enumerator",))] == ["include/T.h"]


def test_a_second_run_parses_nothing(tmp_path: Path) -> None:
    tree = tree_of(tmp_path / "tree", {"include/T.h": HEADER, "include/Ops.td": ODS, "python/x.py": "def f(a=1): pass\n"})
    with using(FactCache(tmp_path)):
        first = {path: DeclarationIndex.of(tree).file(path) for path in tree.paths()}
    declindex.forget()  # a new process: nothing in memory
    parsed = dict(PARSES)
    with using(FactCache(tmp_path)) as cache:
        second = {path: DeclarationIndex.of(tree).file(path) for path in tree.paths()}
        assert cache is not None and cache.hits == 3
    assert dict(PARSES) == parsed and second == first


CMAKE = """# a library and its generated headers
add_triton_library(TritonIR
  Dialect.cpp   # the dialect
  Ops.cpp
  ${GEN}.cpp
  DEPENDS TritonTableGen
  LINK_LIBS PUBLIC MLIRIR TritonTableGen
)
add_library(Plain STATIC util.cc)
add_custom_target(NotALibrary ALL)
"""


def test_cmake_library_targets_with_their_sources_and_dependencies() -> None:
    decls = declarations_of("lib/Dialect/CMakeLists.txt", CMAKE)
    targets = [(d.name, d.target, d.line, d.members) for d in decls if d.kind == "cmake-target"]
    assert targets == [("TritonIR", "add_triton_library", 2, ("Dialect.cpp", "Ops.cpp")),
                       ("Plain", "add_library", 9, ("util.cc",))]
    assert [(d.name, d.owner) for d in decls if d.kind == "cmake-depends"] == [
        ("TritonTableGen", "TritonIR"), ("MLIRIR", "TritonIR")]  # each word once; section keywords are no words
    assert declarations_of("cmake/Helpers.cmake", CMAKE) == decls
    assert declarations_of("lib/Dialect/CMakeLists.txt.orig", CMAKE) == ()


def test_python_imports_only_a_type_checker_runs_bind_nothing() -> None:
    """3.4's knobs.py imports JitFunctionInfo from triton.runtime.jit under `if TYPE_CHECKING:`: that import never
    runs, so an overlay of jit.py that lacks the name still imports (a false overlay-missing-names on 3.2 -> 3.4)."""
    text = ("from typing import TYPE_CHECKING\nimport typing\nif TYPE_CHECKING:\n    from .jit import Info\nelse:\n"
            "    Info = None\nif typing.TYPE_CHECKING:\n    from .jit import Other\nif DEBUG:\n    from .jit import Debug\n")
    decls = declarations_of("python/triton/z.py", text)
    assert [(decl.kind, decl.name) for decl in decls if decl.name in ("Info", "Other", "Debug")] == [
        ("assign", "Info"), ("import", "Debug")]
