"""decorated-keyword-missing: a FlagTree function under a trunk decorator lacking the keyword every upstream
function under it gained (issue 33)."""
from __future__ import annotations

from pathlib import Path

from sync.drift.analyses.conventions import convention_findings
from tests.upstream_fixture import context_of, context_with_history, sites_of

DECORATOR = "def builtin(fn):\n    return fn\n\n\ndef plain(fn):\n    return fn\n\n\n"


def _core(keyword: str, count: int = 9) -> str:
    functions = "".join(f"@builtin\ndef op{n}(x, {keyword}=None):\n    return x\n\n\n" for n in range(count))
    # under another decorator the parameters vary: no convention to read
    varied = "".join(f"@plain\ndef p{n}(x, {'y' if n % 2 else 'z'}=None):\n    return x\n\n\n" for n in range(9))
    return DECORATOR + functions + varied


def _math(keyword: str) -> str:
    return "from . import core\n\n\n" + "".join(f"@core.builtin\ndef m{n}(x, {keyword}=None):\n    return x\n\n\n"
                                                 for n in range(3))


OLD = {"python/triton/language/core.py": _core("_builder"), "python/triton/language/math.py": _math("_builder"),
       "python/triton/language/__init__.py": "from .core import builtin\n"}
NEW = {**OLD, "python/triton/language/core.py": _core("_semantic"), "python/triton/language/math.py": _math("_semantic")}


def _backend(imports: str, decorator: str, params: str) -> str:
    return f"{imports}\n\n\n@{decorator}\ndef mine(x, {params}):\n    return x\n"


CORE = "from triton.language import core"


def test_a_flagtree_function_without_the_keyword_upstreams_functions_gained_is_reported(tmp_path: Path) -> None:
    fork = {**OLD,
            "third_party/a/language/lib.py": _backend(CORE, "core.builtin", "_builder=None"),  # fires
            "third_party/b/language/lib.py": _backend(CORE, "core.builtin", "_semantic=None"),  # takes it
            "third_party/c/language/lib.py": _backend(CORE, "core.builtin", "**kwargs"),  # takes anything
            "third_party/d/language/lib.py": _backend("import triton.language as tl", "tl.core.builtin",
                                                      "_builder=None"),  # fires, through the package alias
            "third_party/e/language/lib.py": _backend("import triton.language as tl", "tl.builtin",
                                                      "y=None"),  # fires, through the package's re-export
            "third_party/f/language/lib.py": _backend("from .core import builtin", "builtin",
                                                      "_builder=None"),  # the backend's own decorator
            "third_party/g/language/lib.py": _backend(CORE, "core.plain", "_builder=None"),  # no convention
            "third_party/h/language/lib.py": _backend(CORE, "core.builtin", "_builder=None"),
            "third_party/h/python/triton/language/core.py": _core("_builder")}  # h installs its own core
    findings = convention_findings(context_of(tmp_path, OLD, NEW, fork))
    assert {(f.kind, f.severity) for f in findings} == {("decorated-keyword-missing", "error")}
    assert sites_of(findings) == [(f"third_party/{b}/language/lib.py", 5) for b in "ade"]
    first = next(f for f in findings if f.path.startswith("third_party/a/"))
    assert "upstream's @builtin functions now take `_semantic` instead of `_builder` (12 of the 12" in first.message
    assert "mine still takes `_builder` and does not take `_semantic`" in first.message
    assert first.details["declaration"] == "@triton.language.core.builtin" and first.details["replaced"] == "_builder"
    other = next(f for f in findings if f.path.startswith("third_party/e/"))
    assert "still takes" not in other.message  # it never took `_builder`


def test_too_few_upstream_functions_or_no_change_claims_nothing(tmp_path: Path) -> None:
    fork = {"third_party/a/language/lib.py": _backend(CORE, "core.builtin", "_builder=None")}
    few_old = {"python/triton/language/core.py": _core("_builder", count=4)}  # 4 here and 3 in math.py: 7 < 8
    few_new = {"python/triton/language/core.py": _core("_semantic", count=4)}
    assert convention_findings(context_of(tmp_path / "few", few_old, few_new, {**few_old, **fork})) == []
    assert convention_findings(context_of(tmp_path / "same", OLD, OLD | {"python/triton/language/extra.py": "x = 1\n"},
                                          {**OLD, **fork})) == []


def test_a_def_under_two_decorators_is_one_site_and_old_lines_claim_nothing(tmp_path: Path) -> None:
    both = (f"{CORE}\n\n\n@core.builtin\n@core.builtin\ndef mine(x, _builder=None):\n    return x\n")
    old = {**OLD, "third_party/a/language/old.py": _backend(CORE, "core.builtin", "_builder=None")}
    new = {**NEW, "third_party/a/language/old.py": _backend(CORE, "core.builtin", "_builder=None")}
    fork = {**old, "third_party/a/language/lib.py": both}  # old.py is upstream's, unchanged by FlagTree
    findings = convention_findings(context_of(tmp_path, old, new, fork))
    assert sites_of(findings) == [("third_party/a/language/lib.py", 6)]


def test_the_finding_names_the_commit_that_changed_the_convention(tmp_path: Path) -> None:
    one_more = NEW["python/triton/language/core.py"] + "@builtin\ndef extra(x, _semantic=None):\n    return x\n"
    upstream = [("Make semantic a class (#7054)", {"python/triton/language/core.py": NEW["python/triton/language/core.py"],
                                                   "python/triton/language/math.py": NEW["python/triton/language/math.py"]}),
                ("Add one more builtin (#7139)", {"python/triton/language/core.py": one_more})]
    fork = {**OLD, "third_party/a/language/lib.py": _backend(CORE, "core.builtin", "_builder=None")}
    finding, = convention_findings(context_with_history(tmp_path, OLD, upstream, fork))
    assert finding.details["prs"] == ["7054"]  # the commit that added a function taking it changed no convention
    assert "upstream change: " in finding.message and "(#7054)" in finding.message


def test_two_decorators_changed_by_one_commit_fold_into_one_finding_a_backend(tmp_path: Path) -> None:
    from sync.drift.perchange import one_per_upstream_change
    extern = lambda keyword: ("from triton.language import core\n\n\n" + "".join(
        f"@core.extern\ndef lib{n}(x, {keyword}=None):\n    return x\n\n\n" for n in range(8)))
    old = {**OLD, "python/triton/language/core.py": _core("_builder") + "def extern(fn):\n    return builtin(fn)\n",
           "third_party/nvidia/language/libdevice.py": extern("_builder")}
    new_files = {"python/triton/language/core.py": _core("_semantic") + "def extern(fn):\n    return builtin(fn)\n",
                 "python/triton/language/math.py": NEW["python/triton/language/math.py"],
                 "third_party/nvidia/language/libdevice.py": extern("_semantic")}  # upstream's own backend counts
    fork = {**old, "third_party/a/language/lib.py": _backend(CORE, "core.builtin", "_builder=None")
            + "\n\n@core.extern\ndef mine2(x, _builder=None):\n    return x\n"}
    findings = convention_findings(context_with_history(tmp_path, old, [("Semantic (#7054)", new_files)], fork))
    assert sorted(f.details["declaration"] for f in findings) == ["@triton.language.core.builtin",
                                                                 "@triton.language.core.extern"]
    folded, = one_per_upstream_change(findings)
    assert folded.severity == "error" and folded.details["prs"] == ["7054"]
    assert "changed the keyword the functions take under 2 declarations FlagTree decorates functions with" \
        in folded.message
    assert [part["declaration"] for part in folded.details["declarations"]] == ["@triton.language.core.builtin",
                                                                                "@triton.language.core.extern"]


def test_a_wrapper_a_factory_function_defines_counts_too(tmp_path: Path) -> None:
    """aipu's libdevice on the 3.3 -> 3.4 move: `@core.extern def unary_op(arg0, _builder=None)` inside a function
    that makes and returns it."""
    factory = (f"{CORE}\n\n\ndef make(name):\n    @core.builtin\n    def unary_op(x, _builder=None):\n"
               "        return x\n    return unary_op\n")
    fork = {**OLD, "third_party/a/language/lib.py": factory}
    assert sites_of(convention_findings(context_of(tmp_path, OLD, NEW, fork))) == [("third_party/a/language/lib.py", 6)]
