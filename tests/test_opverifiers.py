"""op-verifier-changed: FlagTree-added code creates an op whose upstream verifier changed (op resolved by scope)."""
from __future__ import annotations

from sync.drift.analyses.opverifiers import op_verifier_findings
from tests.upstream_fixture import context_of, sites_of

TD = 'def D_IndexOp : D_Op<"index"> {\n  let arguments = (ins I32:$x);\n  let hasVerifier = 1;\n}\n'
VERIFY_OLD = '#include "D/Dialect.h"\n\nLogicalResult IndexOp::verify() {\n  return success();\n}\n'
VERIFY_NEW = ('#include "D/Dialect.h"\n\nLogicalResult IndexOp::verify() {\n  if (getX() < 0)\n'
              '    return emitError("x must be >= 0");\n  return success();\n}\n')
OLD = {"include/D/Ops.td": TD, "include/D/Dialect.h": "#pragma once\n", "lib/D/Ops.cpp": VERIFY_OLD,
       "include/E/Dialect.h": "#pragma once\n"}
PASS = ('#include "{header}"\n\nvoid run(OpBuilder &builder, Location loc, Value x) {{\n'
        '  builder.create<d::IndexOp>(loc, x);\n  IndexOp::create(builder, loc, x);\n}}\n')


def test_fires_on_a_created_op_whose_verifier_changed(tmp_path) -> None:
    fork = {**OLD, "lib/T/Pass.cpp": PASS.format(header="D/Dialect.h")}
    findings = op_verifier_findings(context_of(tmp_path, OLD, {**OLD, "lib/D/Ops.cpp": VERIFY_NEW}, fork))
    # one finding per changed verifier and backend, at its first site, holding both
    assert [(f.kind, f.path, f.line) for f in findings] == [("op-verifier-changed", "lib/T/Pass.cpp", 4)]
    assert findings[0].details["sites"] == ["lib/T/Pass.cpp:4", "lib/T/Pass.cpp:5"]
    assert all('+    return emitError("x must be >= 0");' in f.diff for f in findings)
    assert findings[0].related_path == "lib/D/Ops.cpp"
    assert findings[0].severity == "info" and findings[0].details["dialect_dir"] == "D"


def test_silent_out_of_scope_or_unchanged_verifier(tmp_path) -> None:
    # Pass.cpp sees only dialect E's headers: its IndexOp is another dialect's op of the same name.
    other = {**OLD, "lib/T/Pass.cpp": PASS.format(header="E/Dialect.h")}
    assert op_verifier_findings(context_of(tmp_path / "scope", OLD, {**OLD, "lib/D/Ops.cpp": VERIFY_NEW}, other)) == []
    same = {**OLD, "lib/T/Pass.cpp": PASS.format(header="D/Dialect.h")}
    reformatted = VERIFY_OLD.replace("  return success();", "    return   success();")
    assert op_verifier_findings(context_of(tmp_path / "same", OLD, {**OLD, "lib/D/Ops.cpp": reformatted}, same)) == []


def test_only_upstream_files_that_define_a_verifier_are_parsed(tmp_path, monkeypatch) -> None:
    from sync.drift.analyses import opverifiers
    parsed: list[str] = []
    real = opverifiers.functions
    monkeypatch.setattr(opverifiers, "functions", lambda text: parsed.append(text) or real(text))
    old = {**OLD, "lib/D/Helpers.cpp": "int helper() {\n  return 1;\n}\n"}
    new = {**old, "lib/D/Ops.cpp": VERIFY_NEW, "lib/D/Helpers.cpp": "int helper() {\n  return 2;\n}\n"}
    fork = {**old, "lib/T/Pass.cpp": PASS.format(header="D/Dialect.h")}
    assert len(sites_of(op_verifier_findings(context_of(tmp_path, old, new, fork)))) == 2
    assert parsed and all("::verify" in text for text in parsed)


def test_a_backend_that_keeps_its_own_copy_of_the_dialect_is_out_of_scope(tmp_path) -> None:
    # Backend b ships include/D/ itself: its build reads that copy, which upstream's verifier change does not
    # reach; backend c includes the same header without a copy of its own, so trunk's op is the one it builds.
    fork = {**OLD, "third_party/b/include/D/Ops.td": TD, "third_party/b/include/D/Dialect.h": "#pragma once\n",
            "third_party/b/lib/Pass.cpp": PASS.format(header="D/Dialect.h"),
            "third_party/c/include/Other/Thing.h": "#pragma once\n",
            "third_party/c/lib/Pass.cpp": PASS.format(header="D/Dialect.h")}
    findings = op_verifier_findings(context_of(tmp_path, OLD, {**OLD, "lib/D/Ops.cpp": VERIFY_NEW}, fork))
    assert sites_of(findings) == [("third_party/c/lib/Pass.cpp", 4),
                                                          ("third_party/c/lib/Pass.cpp", 5)]


# Dialect D's ops live in C++ namespace mlir::d; backend b has a dialect X of its own (mlir::x) with an op of the
# same class name, IndexOp, and a file that sees both dialects.
D_DIALECT = 'def D_Dialect : Dialect {\n  let name = "d";\n  let cppNamespace = "::mlir::d";\n}\n'
QUALIFIED = ('#include "D/Dialect.h"\n#include "X/Dialect.h"\n\nnamespace dd = ::mlir::d;\n\n'
             'void run(OpBuilder &builder, Location loc, Value x) {\n'
             '  builder.create<x::IndexOp>(loc, x);\n'          # 7: another dialect's op
             '  x::IndexOp::create(builder, loc, x);\n'         # 8: the same, spelled the other way
             '  builder.create<mlir::x::IndexOp>(loc, x);\n'    # 9: fully qualified, still dialect X
             '  builder.create<d::IndexOp>(loc, x);\n'          # 10: D's op
             '  builder.create<::mlir::d::IndexOp>(loc, x);\n'  # 11: D's op, fully qualified
             '  builder.create<dd::IndexOp>(loc, x);\n'         # 12: D's op through a namespace alias
             '  builder.create<ee::IndexOp>(loc, x);\n'         # 13: an alias declared in a header elsewhere
             '  IndexOp::create(builder, loc, x);\n}\n')        # 14: unqualified: scope decides, as before
X_FILES = {"third_party/b/include/X/Dialect.h": "#pragma once\n",
           "third_party/b/include/X/Ops.td": 'def X_Dialect : Dialect {\n  let cppNamespace = "::mlir::x";\n}\n'
                                             'def X_IndexOp : X_Op<"index"> {\n  let hasVerifier = 1;\n}\n',
           "third_party/b/include/X/Aliases.h": "namespace ee = mlir::d;\n"}


def test_an_op_qualified_by_another_dialects_namespace_is_another_op(tmp_path) -> None:
    old = {**OLD, "include/D/Dialect.td": D_DIALECT}
    fork = {**old, **X_FILES, "third_party/b/lib/Pass.cpp": QUALIFIED}
    findings = op_verifier_findings(context_of(tmp_path, old, {**old, "lib/D/Ops.cpp": VERIFY_NEW}, fork))
    assert [line for _, line in sites_of(findings)] == [10, 11, 12, 13, 14]


def test_a_dialect_whose_namespace_is_unknown_keeps_every_qualifier(tmp_path) -> None:
    # No .td of D's directory names a C++ namespace: the tool cannot tell d:: from x::, and says so by matching.
    fork = {**OLD, **X_FILES, "third_party/b/lib/Pass.cpp": QUALIFIED}
    findings = op_verifier_findings(context_of(tmp_path, OLD, {**OLD, "lib/D/Ops.cpp": VERIFY_NEW}, fork))
    assert [line for _, line in sites_of(findings)] == list(range(7, 15))


def test_creations_of_one_op_are_one_finding_with_every_site_the_commit_and_pr(tmp_path) -> None:
    """Issue 33: one finding per changed verifier and backend, naming the upstream commit and its PR."""
    from tests.upstream_fixture import context_with_history
    upstream = [("[Dialect] IndexOp checks x (#9025)", {"lib/D/Ops.cpp": VERIFY_NEW}),
                ("[Build] Unrelated (#9026)", {"lib/D/Other.cpp": "int other();\n"})]
    fork = {**OLD, "lib/T/Pass.cpp": PASS.format(header="D/Dialect.h"),
            "lib/U/Pass.cpp": PASS.format(header="D/Dialect.h")}
    (finding,) = op_verifier_findings(context_with_history(tmp_path, OLD, upstream, fork))
    assert (finding.path, finding.line) == ("lib/T/Pass.cpp", 4)
    assert finding.details["sites"] == ["lib/T/Pass.cpp:4", "lib/T/Pass.cpp:5", "lib/U/Pass.cpp:4", "lib/U/Pass.cpp:5"]
    assert finding.details["op"] == "IndexOp" and finding.details["prs"] == ["9025"]
    assert "4 site(s) of this upstream change in 2 file(s)" in finding.message and "(#9025)" in finding.message
