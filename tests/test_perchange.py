"""Issue 33, item 3: one finding per upstream change, kind and backend, listing every declaration it covers
and every FlagTree site (sync/drift/perchange.py), reviewed, rendered and scored declaration by declaration."""
from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from sync.drift import registry  # noqa: F401  every fact extractor registered before a fact is computed
from sync.drift.analyses.callsigs import call_signature_findings
from sync.drift.perchange import one_per_upstream_change
from sync.model import Finding
from tests.upstream_fixture import context_with_history

TD_OLD = ('def X_FooAttr : AttrDef<X_Dialect, "Foo"> {\n  let parameters = (ins "unsigned":$blockM, "bool":$unpacked);\n}\n\n'
          'def X_BarType : TypeDef<X_Dialect, "Bar"> {\n  let parameters = (ins "Type":$elementType, "bool":$alloc);\n}\n\n'
          'def X_BazAttr : AttrDef<X_Dialect, "Baz"> {\n  let parameters = (ins "unsigned":$rank, "bool":$packed);\n}\n')
# one commit (#8850) renames a parameter of FooAttr and BarType; a later one (#9000) changes BazAttr
TD_MID = TD_OLD.replace('"bool":$unpacked', '"unsigned":$colStride').replace('"bool":$alloc', '"unsigned":$cga')
TD_NEW = TD_MID.replace('"bool":$packed', '"unsigned":$stride')
UPSTREAM = [("[NFC] Rename CTAEncoding as CGAEncoding (#8850)", {"include/triton/Dialect/X/IR/Attrs.td": TD_MID}),
            ("[Docs] Unrelated (#8851)", {"docs/x.md": "x\n"}),
            ("[Layouts] Baz takes a stride (#9000)", {"include/triton/Dialect/X/IR/Attrs.td": TD_NEW})]
HEAD = '#include "triton/Dialect/X/IR/Dialect.h"\nvoid f() {\n'
FOO = "  auto a = x::FooAttr::get(ctx, 4, true);\n"
BAR = "  auto t = x::BarType::get(ctx, ty, false);\n"
BAZ = "  auto z = x::BazAttr::get(ctx, 2, true);\n"
OLD = {"include/triton/Dialect/X/IR/Attrs.td": TD_OLD, "include/triton/Dialect/X/IR/Dialect.h": "#pragma once\n"}
FORK = {**OLD, "third_party/b/backend/compiler.py": "x = 1\n", "third_party/c/backend/compiler.py": "x = 1\n",
        "third_party/b/lib/A.cpp": HEAD + FOO + FOO + "}\n",  # FooAttr at 3 and 4
        "third_party/b/lib/B.cpp": HEAD + BAR + BAZ + "}\n",  # BarType at 3, BazAttr at 4
        "third_party/c/lib/C.cpp": HEAD + FOO + "}\n"}


def _folded(tmp_path) -> list[Finding]:
    return one_per_upstream_change(call_signature_findings(context_with_history(tmp_path, OLD, UPSTREAM, FORK)))


def test_two_declarations_one_commit_one_backend_are_one_finding_with_every_site_commit_and_pr(tmp_path) -> None:
    found = _folded(tmp_path)
    by_backend_pr = {(f.backend, tuple(f.details["prs"])): f for f in found}
    assert sorted(by_backend_pr) == [("b", ("8850",)), ("b", ("9000",)), ("c", ("8850",))]  # per commit, backend
    rename = by_backend_pr[("b", ("8850",))]
    assert [(part["declaration"], part["sites"]) for part in rename.details["declarations"]] == [
        ("FooAttr::get", ["third_party/b/lib/A.cpp:3", "third_party/b/lib/A.cpp:4"]),
        ("BarType::get", ["third_party/b/lib/B.cpp:3"])]
    assert rename.details["sites"] == ["third_party/b/lib/A.cpp:3", "third_party/b/lib/A.cpp:4",
                                       "third_party/b/lib/B.cpp:3"]
    assert (rename.path, rename.line) == ("third_party/b/lib/A.cpp", 3)  # its own place: the first site
    assert len(rename.details["commits"]) == 1 and rename.details["commits"][0].endswith("CGAEncoding (#8850)")
    assert rename.message.startswith('upstream change #8850 (')
    assert "changed the parameters of 2 declarations FlagTree calls at 3 site(s) in 2 file(s): " \
           "FooAttr::get (2), BarType::get (1)" in rename.message
    assert all("FlagTree calls x::" in part["message"] for part in rename.details["declarations"])  # each kept
    assert rename.diff is not None and rename.diff.count("Attrs.td") >= 2  # both declarations' upstream diffs
    # the other commit and the other backend: findings of their own, as they were
    assert by_backend_pr[("b", ("9000",))].details["sites"] == ["third_party/b/lib/B.cpp:4"]
    assert "declarations" not in by_backend_pr[("b", ("9000",))].details
    assert by_backend_pr[("c", ("8850",))].details["sites"] == ["third_party/c/lib/C.cpp:3"]


def test_without_the_fold_each_declaration_is_its_own_finding(tmp_path) -> None:
    """The fixture above is four findings per declaration: the fold is what makes them three."""
    unfolded = call_signature_findings(context_with_history(tmp_path, OLD, UPSTREAM, FORK))
    assert len(unfolded) == 4 and len(one_per_upstream_change(unfolded)) == 3


def test_the_drift_run_folds_after_every_analysis(tmp_path) -> None:
    from sync.drift.run import analyse_drift
    context = context_with_history(tmp_path, OLD, UPSTREAM, FORK)
    assert context.range is not None
    result = analyse_drift(context.repo, context.range, None, symbols=True)
    mine = [f for f in result.findings if f.kind == "call-signature"]
    assert sorted((f.backend, len(f.details["sites"])) for f in mine) == [("b", 1), ("b", 3), ("c", 1)]


def _removed(name: str, site: str, commits: list[str] | None, kind: str = "symbol-removed",
             backend: str | None = "b") -> Finding:
    path, _, line = site.rpartition(":")
    details: dict = {"declaration": name, "sites": [site], "symbols": [f"{name}:removed:include/t.h"]}
    if commits is not None:
        details.update(commits=commits, prs=[c.rsplit("#", 1)[1].rstrip(")") for c in commits if "#" in c])
    return Finding(kind, path, f"{name}: removed from include/t.h", line=int(line), backend=backend,
                   related_path="include/t.h", details=details)


def test_kinds_backends_and_unknown_commits_stay_apart_and_a_pr_is_one_change() -> None:
    drop = ["b939621a0 Rewrite block pointer to be python-only (#9668)"]
    findings = [
        _removed("isTensorPointerType", "third_party/b/lib/A.cpp:7", drop),
        _removed("add_rewrite_tensor_pointer", "third_party/b/backend/compiler.py:3", drop),  # the bindings' analysis
        _removed("getMakeTensorPtrOp", "third_party/b/lib/B.cpp:2", ["c0ffee123 Land it again (#9668)"]),  # same PR
        _removed("MakeTensorPtrOp", "third_party/b/lib/A.cpp:9", None),  # no commit known: stays
        _removed("AdvanceOp", "third_party/b/lib/A.cpp:8", None),
        _removed("barrier", "third_party/b/lib/A.cpp:5", drop, kind="call-no-overload"),  # another kind
        _removed("isTensorPointerType", "third_party/c/lib/A.cpp:7", drop, backend="c")]  # another backend
    out = one_per_upstream_change(findings)
    assert len(out) == 5
    (folded,) = [f for f in out if "declarations" in f.details]
    assert folded.kind == "symbol-removed" and folded.backend == "b"
    assert {part["declaration"] for part in folded.details["declarations"]} == {
        "isTensorPointerType", "add_rewrite_tensor_pointer", "getMakeTensorPtrOp"}
    assert folded.details["prs"] == ["9668"] and len(folded.details["commits"]) == 2
    assert folded.details["symbols"] == ["isTensorPointerType:removed:include/t.h",
                                         "add_rewrite_tensor_pointer:removed:include/t.h",
                                         "getMakeTensorPtrOp:removed:include/t.h"]
    assert (folded.path, folded.line) == ("third_party/b/backend/compiler.py", 3)
    assert "(will not build or import as is)" in folded.message
    assert [f.details["declaration"] for f in out if f.kind == "symbol-removed" and "declarations" not in f.details
            and f.backend == "b"] == ["MakeTensorPtrOp", "AdvanceOp"]


def _folded_call_signature() -> Finding:
    members = []
    for callee, sites in (("x::FooAttr::get (attr FooAttr)", ["third_party/zeta/lib/A.cpp:3", "third_party/zeta/lib/B.cpp:4"]),
                          ("x::BarType::get (type BarType)", ["third_party/zeta/lib/A.cpp:9"])):
        path, _, line = sites[0].rpartition(":")
        members.append(Finding("call-signature", path, f"FlagTree calls {callee}", line=int(line), backend="zeta",
                               related_path="include/Attrs.td",
                               details={"callee": callee, "declaration": callee.split("(")[1].rstrip(")"),
                                        "sites": sites, "commits": ["371b6445f Rename (#8850)"], "prs": ["8850"]}))
    (folded,) = one_per_upstream_change(members)
    return folded


def _entry(path: str, callee: str, blob: str) -> str:
    return (f'[[suppress]]\nkind = "call-signature"\npath = "{path}"\nsubject = "{callee}"\nreviewed_for = "v2"\n'
            f'trunk = "include/Attrs.td"\ntrunk_blob = "{blob}"\nreason = "checked {path}"\n')


def test_a_folded_finding_is_reviewed_when_each_declaration_is(tmp_path) -> None:
    from sync.facts.trees import DiskTree
    from sync.records.suppressions import apply_suppressions, parse_suppressions, subjects_of, with_suppression
    blob = "a" * 40
    new = SimpleNamespace(blob_id=lambda path: blob if path == "include/Attrs.td" else None)
    toml = tmp_path / "third_party/zeta/backend/spec/suppressions.toml"
    toml.parent.mkdir(parents=True)
    # the entries the per-declaration findings had: FooAttr in A.cpp and B.cpp; BarType's A.cpp site not yet
    toml.write_text(_entry("third_party/zeta/lib/A.cpp", "x::FooAttr::get (attr FooAttr)", blob)
                    + _entry("third_party/zeta/lib/B.cpp", "x::FooAttr::get (attr FooAttr)", blob))
    (out,) = apply_suppressions([_folded_call_signature()], DiskTree(tmp_path), new, backends=[])
    assert out.suppressed is None  # A.cpp has an entry, but for FooAttr: BarType's call there was never reviewed
    toml.write_text(toml.read_text() + _entry("third_party/zeta/lib/A.cpp", "x::BarType::get (type BarType)", blob))
    (out,) = apply_suppressions([_folded_call_signature()], DiskTree(tmp_path), new, backends=[])
    assert out.suppressed is not None and out.suppressed.reason == "checked third_party/zeta/lib/A.cpp"
    # suppress on the folded finding: an entry per declaration and file, each with its declaration's subject
    written = with_suppression(None, _folded_call_signature(), new, "v2", "ok")  # type: ignore[arg-type]
    assert [(e.path, e.subject) for e in parse_suppressions(written, "x")] == [
        ("third_party/zeta/lib/A.cpp", "x::FooAttr::get (attr FooAttr)"),
        ("third_party/zeta/lib/B.cpp", "x::FooAttr::get (attr FooAttr)"),
        ("third_party/zeta/lib/A.cpp", "x::BarType::get (type BarType)")]
    toml.write_text(written)
    (out,) = apply_suppressions([_folded_call_signature()], DiskTree(tmp_path), new, backends=[])
    assert out.suppressed is not None
    with pytest.raises(Exception, match="already suppressed"):
        with_suppression(written, _folded_call_signature(), new, "v2", "again")  # type: ignore[arg-type]
    assert subjects_of(_folded_call_signature()) == ["x::FooAttr::get (attr FooAttr)", "x::BarType::get (type BarType)"]


def test_suppress_finds_a_folded_finding_by_any_declaration_s_subject() -> None:
    from sync.jobs.review import SuppressRequest, _the_finding
    folded = _folded_call_signature()
    request = SuppressRequest(kind="call-signature", path="third_party/zeta/lib/B.cpp", reason="ok")
    with pytest.raises(Exception, match="about 2 subjects: pass --subject"):  # one reason is about one of them
        _the_finding([folded], request)
    bar = SuppressRequest(kind="call-signature", path="third_party/zeta/lib/A.cpp", reason="ok",
                          subject="x::BarType::get (type BarType)")
    assert _the_finding([folded], bar) is folded
    with pytest.raises(Exception, match="--subject is one of"):
        _the_finding([folded], SuppressRequest(kind="call-signature", path="third_party/zeta/lib/A.cpp", reason="ok",
                                               subject="nope"))


def test_markdown_html_and_sarif_fold_the_declarations() -> None:
    from markdown_it import MarkdownIt
    from sync.model import DriftInfo, Range, Rev, build_report
    from sync.report.html import render_html
    from sync.report.markdown import MAX_DECLARATION_SITES, MAX_DECLARATIONS, render_group
    from sync.report.sarif import sarif_log
    members = [Finding("call-signature", f"third_party/zeta/lib/F{n}.cpp", f"FlagTree calls x::R{n}::get", line=1,
                       backend="zeta", related_path="include/Attrs.td",
                       details={"callee": f"x::R{n}::get (attr R{n})", "declaration": f"attr R{n}",
                                "sites": [f"third_party/zeta/lib/F{n}.cpp:{line}" for line in range(1, 3 + 20 * (n == 0))],
                                "commits": ["371b6445f Rename (#8850)"], "prs": ["8850"]})
               for n in range(MAX_DECLARATIONS + 2)]
    (folded,) = one_per_upstream_change(members)
    report = build_report(Range(Rev("v1", "a" * 40), Rev("v2", "b" * 40), Rev("main", "c" * 40)), ["zeta"], [folded],
                          (), None, drift=DriftInfo("(replayed in memory)"))
    group = next(group for group in report.groups if group.name == "zeta")
    page = render_group(report, group)
    assert f"{MAX_DECLARATIONS + 2} declarations, {22 + 2 * (MAX_DECLARATIONS + 1)} site(s):" in page
    assert "`R0::get` (22): " in page and f"and {22 - MAX_DECLARATION_SITES} more" in page
    assert "(2 more declarations left out here" in page and "`R9::get`" not in page.split("declarations, ")[1]
    MarkdownIt("commonmark").parse(page)
    html_text = render_html(report)
    assert "<details><summary>12 declarations, 44 site(s)</summary>" in html_text and "<code>R1::get</code> (2)" in html_text
    (result,) = sarif_log([folded], "0.1.0")["runs"][0]["results"]
    related = {(r["physicalLocation"]["artifactLocation"]["uri"], r["message"]["text"]) for r in result["relatedLocations"]}
    assert ("third_party/zeta/lib/F1.cpp", "another site of the same upstream change (R1::get)") in related


def test_python_calls_of_pybind_methods_fold_as_what_will_not_run() -> None:
    drop = ["b6a5590cb Pass explicit captures (#9133)"]
    pybind = lambda name, site: replace(_removed(name, site, drop, kind="call-no-overload"),
                                        details={**_removed(name, site, drop).details, "resolved_by": "pybind binding"})
    (python,) = one_per_upstream_change([pybind("create_ws", "third_party/b/x.py:3"),
                                         pybind("create_parts", "third_party/b/x.py:5")])
    assert "(will not run as is)" in python.message
    (cpp,) = one_per_upstream_change([_removed("f", "third_party/b/A.cpp:3", drop, kind="call-no-overload"),
                                      _removed("g", "third_party/b/A.cpp:5", drop, kind="call-no-overload")])
    assert "(will not build as is)" in cpp.message


def _verifier(op: str, site: str, trunk: str) -> Finding:
    return Finding("op-verifier-changed", site.rpartition(":")[0], f"FlagTree creates {op}", line=1, backend="zeta",
                   related_path=trunk, details={"op": op, "dialect_dir": "D", "sites": [site],
                                                "commits": ["371b6445f Verify more (#9000)"], "prs": ["9000"]})


def test_suppress_without_a_subject_refuses_a_folded_finding_about_several_ops() -> None:
    """Issue 48.3: four op verifiers of one upstream change, folded; a review without --subject covered all four
    (their findings had no subject) and recorded one trunk file. Now the error lists them, and a review of one
    records that op's own trunk file alone."""
    from sync.jobs.review import SuppressRequest, _the_finding
    from sync.records.suppressions import parse_suppressions, with_suppression
    (folded,) = one_per_upstream_change([_verifier("LoadOp", "third_party/zeta/lib/A.cpp:3", "lib/D/Load.cpp"),
                                         _verifier("StoreOp", "third_party/zeta/lib/A.cpp:9", "lib/D/Store.cpp")])
    request = SuppressRequest(kind="op-verifier-changed", path="third_party/zeta/lib/A.cpp", reason="LoadOp is fine")
    with pytest.raises(Exception, match=r"about 2 subjects: pass --subject \(one of: LoadOp, StoreOp"):
        _the_finding([folded], request)
    assert _the_finding([folded], replace(request, subject="LoadOp")) is folded
    blobs = {"lib/D/Load.cpp": "a" * 40, "lib/D/Store.cpp": "b" * 40}
    new = SimpleNamespace(blob_id=blobs.get, tree=SimpleNamespace(id="c" * 40))
    written = with_suppression(None, folded, new, "v2", "LoadOp is fine", "LoadOp")  # type: ignore[arg-type]
    assert [(e.subject, e.trunk) for e in parse_suppressions(written, "x")] == [("LoadOp", "lib/D/Load.cpp")]
    both = with_suppression(written, folded, new, "v2", "StoreOp too", "StoreOp")  # type: ignore[arg-type]
    assert [(e.subject, e.trunk, e.trunk_blob) for e in parse_suppressions(both, "x")] == [
        ("LoadOp", "lib/D/Load.cpp", "a" * 40), ("StoreOp", "lib/D/Store.cpp", "b" * 40)]


def test_a_warning_at_an_errors_sites_about_its_declaration_folds_into_it() -> None:
    """Issue 45 (3.3 -> 3.4): symbol-drift said xpu's libdevice.py:6 uses extern_elementwise, whose signature
    changed, at the line where call-no-overload already says that call fits no overload: one break told twice.
    The warning folds into the error (details.also). A warning at another site, or about another declaration
    at the same site, stays."""
    from sync.drift.perchange import into_errors
    error = Finding("call-no-overload", "lib.py", "FlagTree calls triton.language.core.extern_elementwise ...",
                    line=6, details={"callee": "triton.language.core.extern_elementwise", "sites": ["lib.py:6", "lib.py:9"]})
    twice = Finding("symbol-drift", "lib.py", "FlagTree code here uses trunk symbols upstream changed: extern_elementwise",
                    line=6, details={"symbols": ["extern_elementwise:signature:python/triton/language/core.py"]})
    elsewhere = Finding("symbol-drift", "lib.py", "m", line=12,
                        details={"symbols": ["extern_elementwise:signature:python/triton/language/core.py"]})
    other = Finding("symbol-drift", "lib.py", "m", line=9, details={"symbols": ["make_block:signature:core.py"]})
    out = into_errors([error, twice, elsewhere, other])
    assert [f.kind for f in out] == ["call-no-overload", "symbol-drift", "symbol-drift"]
    assert [f.line for f in out[1:]] == [12, 9]
    assert out[0].details["also"] == [{"kind": "symbol-drift", "message": twice.message}]


def test_an_untyped_error_a_resolved_error_already_tells_folds_into_it() -> None:
    """3.5 -> 3.7: attribute-removed (read from the name alone) and symbol-removed (resolved through the file's
    imports) both named ascend's `backend.get_arg_specialization` at jit.py:484: the resolved error tells it, the
    other folds in. An attribute-removed error with a site of its own stays."""
    from sync.drift.perchange import into_errors
    resolved = Finding("symbol-removed", "jit.py", "get_arg_specialization: removed from compiler.py", line=484,
                       details={"declaration": "get_arg_specialization", "sites": ["jit.py:484"]})
    untyped = Finding("attribute-removed", "jit.py", "get_arg_specialization: trunk's BaseBackend...", line=484,
                      details={"declaration": "BaseBackend.get_arg_specialization", "sites": ["jit.py:484"]})
    own = Finding("attribute-removed", "jit.py", "to_dict: trunk's AttrsDescriptor...", line=338,
                  details={"declaration": "AttrsDescriptor.to_dict", "sites": ["jit.py:338"]})
    out = into_errors([untyped, resolved, own])
    assert [(f.kind, f.line) for f in out] == [("symbol-removed", 484), ("attribute-removed", 338)]
    assert out[0].details["also"] == [{"kind": "attribute-removed", "message": untyped.message}]
