"""symbol-removed for Python imports: `from triton.x import N` on FlagTree's lines, where upstream's module no longer
defines N (issue 33; ascend's and mthreads' AttrsDescriptor on the 3.2 -> 3.3 move)."""
from __future__ import annotations

from sync.drift.analyses.pyimports import removed_import_findings
from tests.upstream_fixture import context_of

OLD = {"python/triton/compiler/compiler.py": "X = 1\n",
       "python/triton/backends/compiler.py": "class AttrsDescriptor:\n    pass\n\n\nclass BaseBackend:\n    pass\n",
       "python/triton/backends/__init__.py": "",
       "python/triton/lazy.py": "def __getattr__(name):\n    return name\n\n\nOLD = 1\n"}
NEW = {**OLD, "python/triton/backends/compiler.py": "class BaseBackend:\n    pass\n",
       "python/triton/lazy.py": "def __getattr__(name):\n    return name\n"}
USE = "from triton.backends.compiler import AttrsDescriptor, BaseBackend\n"


def _sites(tmp_path, fork: dict[str, str], old=OLD, new=NEW) -> set[str]:
    findings = removed_import_findings(context_of(tmp_path, old, new, {**old, **fork}))
    assert all(f.kind == "symbol-removed" and f.severity == "error" for f in findings)
    return {f"{site}:{f.details['declaration']}" for f in findings for site in f.details["sites"]}


def test_an_import_of_a_name_upstream_removed_from_a_trunk_module_is_an_error(tmp_path) -> None:
    fork = {"third_party/a/backend/compiler.py": USE,
            "third_party/b/backend/compiler.py": "try:\n    " + USE + "except ImportError:\n    pass\n",  # guarded
            "third_party/c/backend/compiler.py": USE,  # c installs its own copy of the module
            "third_party/c/python/triton/backends/compiler.py": OLD["python/triton/backends/compiler.py"],
            "third_party/a/python/test/test_x.py": USE,  # a test: not what the package imports
            "third_party/a/backend/lazy.py": "from triton.lazy import OLD\n",  # resolved at run time there
            # an overlay of triton/compiler/compiler.py imports relatively from trunk's triton.compiler package
            "python/triton/compiler/__init__.py": "from triton.flagtree_spec import spec_path\n\nspec_path(__path__)\n",
            "third_party/a/backend/spec/triton/compiler/compiler.py": "from ..backends.compiler import AttrsDescriptor\n",
            "python/triton/flagtree_spec.py": "def spec_path(path):\n    return path\n"}
    assert _sites(tmp_path, fork) == {"third_party/a/backend/compiler.py:1:AttrsDescriptor",
                                      "third_party/a/backend/spec/triton/compiler/compiler.py:1:AttrsDescriptor"}


def test_a_name_upstream_never_had_is_not_upstreams_removal(tmp_path) -> None:
    # FlagTree adds flagtree_helper to trunk's module itself: the replay carries it onto the new tag
    own = OLD["python/triton/backends/compiler.py"] + "\n\ndef flagtree_helper():\n    return 1\n"
    fork = {"python/triton/backends/compiler.py": own,
            "third_party/a/backend/compiler.py": "from triton.backends.compiler import flagtree_helper\n"}
    assert _sites(tmp_path, fork) == set()


SEMANTIC_OLD = "def to_tensor(x, builder):\n    return x\n\n\ndef add(x, y, builder):\n    return x\n"
SEMANTIC_NEW = ("class TritonSemantic:\n    def to_tensor(self, x):\n        return x\n\n\n"
                "def add(x, y, builder):\n    return x\n")


def test_a_call_through_a_module_alias_of_a_function_upstream_removed_is_an_error(tmp_path) -> None:
    """The 3.3 -> 3.4 move: tle calls `_semantic_mod.to_tensor(...)` after semantic.py's functions moved into
    the class TritonSemantic."""
    old = {**OLD, "python/triton/language/semantic.py": SEMANTIC_OLD, "python/triton/language/__init__.py": ""}
    new = {**NEW, "python/triton/language/semantic.py": SEMANTIC_NEW, "python/triton/language/__init__.py": ""}
    trunk_use = ("import triton.language.semantic as sm\n\n\ndef f(x):\n    return sm.to_tensor(x, None)\n\n\n"
                 "def g(x):\n    return sm.add(x, 1, None)\n")  # add is still a function of the module
    fork = {"python/triton/experimental/tle/ops.py": trunk_use,
            "third_party/a/language/ops.py": "from triton.language import semantic\n\nsemantic.to_tensor(1, None)\n",
            "third_party/b/language/ops.py": "import triton.language.semantic as sm\n\nsm.TritonSemantic()\n",
            "third_party/a/python/test/test_ops.py": trunk_use}  # a test: not what the package imports
    findings = removed_import_findings(context_of(tmp_path, old, new, {**old, **fork}))
    assert {site for f in findings for site in f.details["sites"]} == {
        "python/triton/experimental/tle/ops.py:5", "third_party/a/language/ops.py:3"}
    assert all(f.kind == "symbol-removed" and f.severity == "error" for f in findings)
    message = next(f.message for f in findings if f.path.startswith("python/"))
    assert "TritonSemantic.to_tensor is a method now" in message and "AttributeError" in message
    assert "FlagTree calls it at 1 site(s)" in message
