"""drift on the demo world: every planted class is found, and nothing else."""
from __future__ import annotations

import json

import pygit2
import pytest
from click.testing import CliRunner

from sync.facts.pysource import Param
from sync.drift.analyses.specfuncs import call_mismatch, replacement_mismatch
from sync.cli import cli
from tests.drift_helpers import drift_of

from tests.conftest import git

A = "third_party/alpha/backend/spec/"
B = "third_party/beta/backend/spec/"
EXPECTED = {
    ("alpha", "overlay-in-sync", A + "triton/runtime/driver.py"),
    ("alpha", "overlay-auto-mergeable", A + "triton/tools/compile.py"),
    ("alpha", "overlay-redundant", A + "triton/tools/link.py"),
    ("alpha", "overlay-conflicting", A + "triton/runtime/autotuner.py"),
    ("alpha", "overlay-orphan", A + "triton/runtime/cache.py"),
    ("alpha", "overlay-orphan", A + "triton/runtime/build.py"),
    ("alpha", "hijack-lost", A + "triton/ops/matmul.py"),
    ("beta", "overlay-in-sync", B + "lib/Analysis/Alias.cpp"),
    ("beta", "overlay-auto-mergeable", B + "include/triton/Analysis/Utility.h"),
    ("beta", "guard-default-changed", B + "include/flagtree_spec.h"),
    ("beta", "guard-unused", B + "include/flagtree_spec.h"),
    ("beta", "spec-dead", B + "triton/_matmul.py"),
    ("beta", "spec-call-site-moved", B + "triton/_runtime.py"),
    ("beta", "spec-enclosing-changed", B + "triton/compiler/compiler.py"),
    ("beta", "spec-replaced-function-changed", B + "triton/testing.py"),
    ("beta", "spec-signature-mismatch", B + "triton/testing.py"),
    (None, "spec-unimplemented", "python/triton/errors.py"),
}
# FlagTree's own commit imports get_cache_manager from runtime/cache.py, which upstream deletes
SYMBOL_DRIFT = ("beta", "symbol-removed", "python/triton/compiler/compiler.py")


def ids(repo: pygit2.Repository, *refs: str) -> list[str]:
    return [str(repo.revparse_single(ref).peel(pygit2.Commit).id) for ref in refs]


def findings_of(world, target: str | None = None, backends=None, symbols: bool = False):
    return drift_of(world, target=target, backends=backends, symbols=symbols)


def test_every_planted_class_is_found_and_nothing_else(world) -> None:
    found = {(f.backend, f.kind, f.path) for f in findings_of(world).findings}
    assert found == EXPECTED


# What upstream changed under FlagTree's lines in the demo, found by the breakage analyses: beta's hook line
# sits in make_backend, whose body upstream changed (review-level: the hook line does not use `extra`, the
# only name upstream's change brought in); beta's _matmul.py reads the BLOCK_M key that the deleted
# ops/matmul.py produced (review-level: produced in a dict literal of a list, no container to match).
BREAKAGE = {("beta", "co-change-review", "python/triton/compiler/compiler.py"),
            ("beta", "key-string-review", "python/triton/ops/matmul.py")}


def test_symbol_analysis_adds_exactly_the_planted_symbol_drift(world) -> None:
    found = {(f.backend, f.kind, f.path): f for f in findings_of(world, symbols=True).findings}
    assert set(found) == EXPECTED | {SYMBOL_DRIFT} | BREAKAGE
    assert found[SYMBOL_DRIFT].details["symbols"] == ["get_cache_manager:removed:python/triton/runtime/cache.py"]


def test_symbol_analysis_needs_the_branch_base(world) -> None:
    kinds = {f.kind for f in drift_of(world, old="v3.6.0", symbols=True).findings}
    assert "symbol-drift-skipped" in kinds and "symbol-drift" not in kinds and "symbol-removed" not in kinds


def test_same_findings_against_the_upgraded_branch(world) -> None:
    CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "-q"])
    found = {(f.backend, f.kind, f.path) for f in findings_of(world, "sync/v3.6.0").findings}
    assert found == EXPECTED


def test_findings_carry_diffs_and_renamed_paths(world) -> None:
    by_kind = {(f.kind, f.path): f for f in findings_of(world).findings}
    renamed = by_kind[("overlay-orphan", A + "triton/runtime/build.py")]
    assert renamed.related_path == "python/triton/runtime/_build.py"
    mergeable = by_kind[("overlay-auto-mergeable", A + "triton/tools/compile.py")]
    assert '+    parser.add_argument("--out-name", default=None)' in mergeable.diff
    conflicting = by_kind[("overlay-conflicting", A + "triton/runtime/autotuner.py")]
    hunk = conflicting.details["hunks"][0]
    assert "<= 16" in hunk["theirs"] and "num_stages" in hunk["ours"]
    guard = by_kind[("guard-default-changed", B + "include/flagtree_spec.h")]
    assert "+  auto effects = collectEffects(op, /*recursive=*/true);" in guard.diff


def test_backend_filter(world) -> None:
    found = {(f.backend, f.kind) for f in findings_of(world, backends={"alpha"}).findings}
    assert {backend for backend, _ in found} <= {"alpha", None} and ("alpha", "hijack-lost") in found


def test_auto_merge_is_applied_on_the_target_branch(world, tmp_path) -> None:
    runner = CliRunner()
    runner.invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "-q"])
    result = runner.invoke(cli, ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                                 "--target", "sync/v3.6.0", "--apply", "--out", str(tmp_path / "d")])
    assert result.exit_code == 1, result.output
    merged = git(world.fork, "show", f"sync/v3.6.0:{A}triton/tools/compile.py")
    assert 'extern \\"C\\" void' in merged and "--out-name" in merged
    header = git(world.fork, "show", f"sync/v3.6.0:{B}include/triton/Analysis/Utility.h")
    assert "isSingleValue(long value)" in header and "getScratchSizeInBytes(int bytes, int align)" in header
    assert git(world.fork, "log", "-1", "--format=%s", "sync/v3.6.0").strip() == "Auto-merge drifted overlays"
    document = json.loads((tmp_path / "d" / "report.json").read_text())
    assert document["drift"]["applied_commit"]
    applied = [f for g in document["groups"] for f in g["findings"] if f["kind"] == "overlay-auto-mergeable"]
    assert applied and all(f"committed by --apply in {document['drift']['applied_commit'][:9]}" in f["message"]
                           for f in applied)  # what it printed is the state before the merge: it says so


def test_hand_fixed_target_reports_changed_arguments_and_lost_guards(world) -> None:
    CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "-q"])
    worktree = world.root / "fix"
    git(world.fork, "worktree", "add", "-q", "-b", "hand-fix", str(worktree), "sync/v3.6.0")
    compiler = worktree / "python/triton/compiler/compiler.py"
    compiler.write_text(compiler.read_text().replace('spec("compiler_override_target", target)',
                                                     'spec("compiler_override_target", target, extra)'))
    membar = worktree / "lib/Analysis/Membar.cpp"
    membar.write_text(membar.read_text().replace("#ifndef FLAGTREE_SPEC_Membar_isFenceNeeded\n", "")
                      .replace("}\n#endif\n", "}\n"))
    git(worktree, "commit", "-qam", "hand fix")
    found = {(f.kind, f.path): f for f in findings_of(world, "hand-fix").findings}
    changed = found[("spec-call-args-changed", B + "triton/compiler/compiler.py")]
    assert "(target, extra)" in changed.message
    mismatch = found[("spec-signature-mismatch", B + "triton/compiler/compiler.py")]
    assert "2 positional argument(s)" in mismatch.message
    assert ("guard-lost", B + "include/flagtree_spec.h") in found


@pytest.mark.parametrize("params, args, problem", [
    ((Param("a", "positional", False),), ("x",), None),
    ((Param("a", "positional", False),), ("x", "y"), "2 positional"),
    ((Param("a", "positional", False),), (), "required parameter(s) a"),
    ((Param("a", "positional", False), Param("k", "keyword_only", True)), ("x", "k=1"), None),
    ((Param("a", "positional", False),), ("x", "k=1"), "no such parameter"),
    ((Param("a", "var_positional", False),), ("x", "y", "z"), None),
    ((Param("a", "positional", False),), ("*rest",), None),
])
def test_call_binding(params, args, problem) -> None:
    reason = call_mismatch(params, args)
    assert (reason is None) if problem is None else (problem in reason)


def test_replacement_must_accept_trunk_parameters() -> None:
    trunk = (Param("fn", "positional", False), Param("quantiles", "positional", True))
    assert "quantiles" in replacement_mismatch((Param("fn", "positional", False),), trunk)
    assert replacement_mismatch((Param("fn", "positional", False), Param("kw", "var_keyword", False)), trunk) is None
    assert "requires extra" in replacement_mismatch(
        (*trunk, Param("extra", "positional", False)), trunk)


def test_drift_cli_errors(world) -> None:
    runner = CliRunner()
    base = ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0"]
    for extra, message in [(["--backend", "gamma"], "no backend gamma (third_party/<backend>/) on this branch; "
                                                    "known: alpha, beta"),
                           (["--apply"], "--apply commits the clean merges"),
                           (["--target", "nope"], "unknown revision 'nope'")]:
        result = runner.invoke(cli, base + extra)
        assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    result = runner.invoke(cli, base + ["--json"])
    assert result.exit_code == 1 and json.loads(result.output)["schema"] == "flagtree-sync/report/1"


def test_drift_refuses_a_from_that_is_not_the_branch_base(world) -> None:
    result = CliRunner().invoke(cli, ["drift", "--repo", str(world.fork), "--from", "v3.6.0", "--onto", "v3.6.0"])
    assert result.exit_code == 2 and "is not an ancestor of main" in result.output
    assert "pass the upstream tag the FlagTree branch is based on as --from" in result.output


def test_a_third_party_directory_without_backend_is_a_group_backend_selects(world) -> None:
    """Seen on FlagTree: third_party/tle/ (no backend/ directory) is a group of the report, so --backend takes it."""
    (world.fork / "third_party" / "tle").mkdir(parents=True)
    (world.fork / "third_party" / "tle" / "tle.cc").write_text("int tle() { return 1; }\n")
    git(world.fork, "add", "third_party/tle")
    git(world.fork, "-c", "user.name=u", "-c", "user.email=u@e", "commit", "-qm", "[TLE] add tle")
    base = ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--json"]
    result = CliRunner().invoke(cli, [*base, "--backend", "tle"])
    assert result.exit_code in (0, 1), result.output
    groups = {group["name"] for group in json.loads(result.output)["groups"]}
    assert "alpha" not in groups and "beta" not in groups
    refused = CliRunner().invoke(cli, [*base, "--backend", "gamma"])
    assert refused.exit_code == 2 and "known: alpha, beta, tle" in refused.output
