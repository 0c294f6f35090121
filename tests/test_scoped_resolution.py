"""Issue 45: a use counts only once it resolves, through its imports (Python) or its namespaces (C++), to the
declaration it named at the old tag; a name matched without its scope is no finding."""
from __future__ import annotations

from pathlib import Path

from sync.drift.analyses.symbols import symbol_findings
from sync.facts.pyresolve import PyUse, foreign, python_uses
from tests.test_symbols import history_trees

CORE_OLD = ("class Pair:\n    def unpack(self):\n        return self.a, self.b\n\n\n"
            "def unpack_all(pairs):\n    return [p.unpack() for p in pairs]\n")
CORE_NEW = "class Pair:\n    pass\n\n\ndef unpack_all(pairs):\n    return list(pairs)\n"


def _removed(tmp_path: Path, fork: dict[str, str]) -> dict[str, list[str]]:
    repo, trees = history_trees(tmp_path, {"python/triton/language/core.py": CORE_OLD},
                                {"python/triton/language/core.py": CORE_NEW}, fork)
    return {f.details["declaration"]: f.details["sites"] for f in symbol_findings(repo, *trees, lambda p: ["x"])
            if f.kind == "symbol-removed"}


def test_a_standard_module_s_function_is_no_use_of_a_removed_trunk_method(tmp_path: Path) -> None:
    fork = {"python/triton/tle/runtime.py": "import struct\nfrom struct import unpack as u\n\n\n"
                                            "def decode(bits):\n    return struct.unpack('!d', bits)[0]\n"}
    assert "unpack" not in _removed(tmp_path, fork)


def test_a_method_on_a_value_of_unknown_type_or_through_trunk_s_module_still_counts(tmp_path: Path) -> None:
    fork = {"python/triton/tle/runtime.py": "import struct\nimport triton.language as tl\n\n\n"
                                            "def decode(bits, pair):\n    struct.unpack('!d', bits)\n"
                                            "    return pair.unpack()\n"}
    assert _removed(tmp_path, fork)["unpack"] == ["python/triton/tle/runtime.py:7"]  # the first that may mean it


def test_uses_know_the_module_their_receiver_is_imported_as() -> None:
    text = ("import struct\nimport numpy as np\nimport triton.language as tl\nfrom os import path\n"
            "x = struct.unpack(b)\ny = tl.core.unpack(b)\nz = obj.unpack()\nw = np.linalg.unpack\n")
    uses = python_uses(text, "unpack")
    assert uses == [PyUse(5, "struct"), PyUse(6, "triton.language.core"), PyUse(7, None), PyUse(8, "numpy.linalg")]
    assert [foreign(use) for use in uses] == [True, False, False, True]
    assert python_uses("def f(:\n", "unpack") is None



def test_a_method_of_a_string_is_strs() -> None:
    """3.2 -> 3.4: FlagTree's `'.'.join(current_module_name.split('.')[:-1])`, where current_module_name =
    __name__, was taken for trunk's `split`, whose signature changed (two false warnings)."""
    text = ("def f(p, q):\n    name = __name__\n    alias = name\n    parent = '.'.join(name.split('.')[:-1])\n"
            "    a = alias.split('.')\n    b = 'x.y'.split('.')\n    c = f'{p}'.split()\n    d = p.split()\n"
            "    e = q.split()\n    f = g.split()\n    g = tensor\n    for q in ():\n        pass\n")
    uses = python_uses(text, "split")
    assert [(use.line, use.module) for use in uses] == [
        (4, "builtins.str"), (5, "builtins.str"), (6, "builtins.str"), (7, "builtins.str"), (8, None), (9, None),
        (10, None)]  # a parameter, a loop name, a name assigned something else: unknown
    assert all(foreign(use) for use in uses[:4])



def test_a_string_s_method_is_no_use_of_a_trunk_function_whose_signature_changed(tmp_path: Path) -> None:
    """3.2 -> 3.4: two symbol-drift warnings on FlagTree's `current_module_name.split('.')` (= __name__) for trunk's
    `split(a, _builder)` -> `split(a, _semantic)`."""
    old = {"python/triton/language/core.py": "def split(a, _builder=None):\n    return a\n"}
    new = {"python/triton/language/core.py": "def split(a, _semantic=None):\n    return a\n"}

    def drifted(name: str, use: str) -> list[str]:
        fork = {**old, "python/triton/language/math.py": "from . import core\n\n\ndef spec(x):\n" + use}
        repo, trees = history_trees(tmp_path / name, old, new, fork)
        return [f"{f.path}:{f.line}" for f in symbol_findings(repo, *trees, lambda p: ["x"])]
    assert drifted("str", "    name = __name__\n    return '.'.join(name.split('.')[:-1])\n") == []
    assert drifted("trunk", "    return core.split(x)\n") == ["python/triton/language/math.py:5"]


DIALECT = 'def Triton_Dialect : Dialect {\n  let name = "tt";\n  let cppNamespace = "::mlir::triton";\n}\n'
OPS_OLD = ('def TT_MakeTensorPtrOp : TT_Op<"make_tensor_ptr"> {\n}\n'
           'def TT_LoadOp : TT_Op<"load"> {\n}\n')
OPS_NEW = 'def TT_LoadOp : TT_Op<"load"> {\n}\n'
BACKEND = ("namespace tt = mlir::triton;\nvoid f(OpBuilder &b) {\n"
           "  b.create<mlir::tts::MakeTensorPtrOp>(loc);\n"   # 3: the backend's own dialect's op of that name
           "  b.create<tts::MakeTensorPtrOp>(loc);\n"         # 4: the same, through its short namespace
           "  b.create<tt::MakeTensorPtrOp>(loc);\n"          # 5: upstream's removed op, through an alias
           "}\n")


def test_an_op_of_another_dialect_with_a_removed_op_s_name_is_no_use(tmp_path: Path) -> None:
    """The ODS record's C++ class lives in its dialect's cppNamespace: `tts::MakeTensorPtrOp` is not it."""
    old = {"include/triton/Dialect/Triton/IR/TritonDialect.td": DIALECT,
           "include/triton/Dialect/Triton/IR/TritonOps.td": OPS_OLD}
    new = {**old, "include/triton/Dialect/Triton/IR/TritonOps.td": OPS_NEW}
    repo, trees = history_trees(tmp_path, old, new, {"lib/Backend.cpp": BACKEND})
    found = {f.details["declaration"]: f.details["sites"] for f in symbol_findings(repo, *trees, lambda p: ["x"])
             if f.kind == "symbol-removed"}
    assert found == {"MakeTensorPtrOp": ["lib/Backend.cpp:5"]}
