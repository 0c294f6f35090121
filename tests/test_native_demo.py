"""The native demo world: C++ guard drift on it, and what a real CMake build of the upgraded tree then says."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from sync.cli import cli
from sync.demo.native import PLANTED_GUARDS, build_command, build_native_world, missing_build_tools
from sync.jobs import GateOptions, RunOptions, UpgradeOptions, run_upgrade
from tests.drift_helpers import drift_of

needs_compiler = pytest.mark.skipif(shutil.which("c++") is None or bool(missing_build_tools()),
                                    reason=f"no C++ toolchain: {', '.join(missing_build_tools()) or 'c++'} not found")
# The kinds that say the upgraded tree will not compile or link with the backend selected.
BREAKING = {"guard-replacement-missing", "guard-signature-mismatch", "guard-default-removed"}
_MACRO = re.compile(r"FLAGTREE_SPEC_\w+")


def _macro(finding) -> str:
    found = (finding.details or {}).get("macro") or _MACRO.search(finding.message)
    return found if isinstance(found, str) else found[0]


def _function(macro: str) -> str:
    """FLAGTREE_SPEC_<Class>_<method> -> Class::method (the world's naming, as FlagTree's)."""
    owner, method = macro.removeprefix("FLAGTREE_SPEC_").split("_", 1)
    return f"{owner}::{method}"


@pytest.fixture
def short_root():
    """A short root path: the gate keeps only the tail of the build's output, and every diagnostic spells
    the absolute path of its file (pytest's tmp_path would crowd out the first errors)."""
    root = Path(tempfile.mkdtemp(prefix="ftn-"))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_drift_gives_exactly_the_planted_guard_kinds(tmp_path) -> None:
    world = build_native_world(tmp_path / "w")
    findings = drift_of(world).findings
    assert {(f.kind, _macro(f)) for f in findings} == PLANTED_GUARDS
    assert {f.kind for f in findings} == {"guard-default-changed", "guard-default-removed", "guard-unused",
                                          "guard-replacement-missing", "guard-signature-mismatch",
                                          "guard-macro-unreachable"}


def test_a_target_that_dropped_a_guard_reports_it_lost(tmp_path) -> None:
    world = build_native_world(tmp_path / "w")
    CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "-q"])
    worktree = tmp_path / "fix"
    _git(world.fork, "worktree", "add", "-q", "-b", "hand-fix", str(worktree), "sync/v3.6.0")
    membar = worktree / "lib/Analysis/Membar.cpp"
    text = membar.read_text()
    membar.write_text(text.replace("#ifndef FLAGTREE_SPEC_Membar_isFenceNeeded\n", "")
                      .replace("// (isFenceNeeded)\n#endif\n", "// (isFenceNeeded)\n"))
    _git(worktree, "commit", "-qam", "take upstream's isFenceNeeded")
    lost = [f for f in drift_of(world, target="hand-fix").findings if f.kind == "guard-lost"]
    assert [_macro(f) for f in lost] == ["FLAGTREE_SPEC_Membar_isFenceNeeded"]


@needs_compiler
def test_the_fork_builds_with_its_backend_before_the_upgrade(tmp_path) -> None:
    world = build_native_world(tmp_path / "w")
    done = subprocess.run(build_command(), shell=True, cwd=world.fork, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "analysis ok: 2 fences" in done.stdout  # gamma's isFenceNeeded (every 4th op), not trunk's


@needs_compiler
def test_gate_names_the_breaking_commit_and_the_compiler_agrees_with_the_guard_findings(short_root) -> None:
    world = build_native_world(short_root / "w")
    report = run_upgrade(str(world.fork), old="v3.5.0", onto="v3.6.0", source_branch=None,
                         options=UpgradeOptions(run=RunOptions(gate=GateOptions(command=build_command(), timeout=120))))
    gate = report.gate
    assert gate is not None and not gate.passed and not gate.baseline_failed
    first = gate.first_failure
    assert first is not None and first.label.endswith("[gamma] Add the gamma backend: C++ spec library")
    earlier = [run for run in gate.runs if run.label.endswith("FLAGTREE_SPEC guards in trunk")]
    assert earlier and all(run.passed for run in earlier)  # the commit before it builds on 3.6.0

    breaking = [f for f in report.findings if f.kind in BREAKING]
    assert {f.kind for f in breaking} == BREAKING
    output = first.output
    for finding in breaking:
        assert f"{_function(_macro(finding))}(" in output, (finding.kind, output)
    mismatch = next(f for f in breaking if f.kind == "guard-signature-mismatch")
    trunk_params = re.search(r"trunk \S+?\(([^)]*)\)", mismatch.message)[1]
    method = _function(_macro(mismatch)).split("::")[-1]
    assert f"{method}({trunk_params})" in output or f"'{method}' does not match" in output, output
    missing = _function(_macro(next(f for f in breaking if f.kind == "guard-replacement-missing")))
    assert re.search(rf"undefined (reference|symbol).*{missing}\(", output), output

    # and every error the build reports is one a finding predicted (none from the harmless kinds)
    predicted = {_function(_macro(f)) for f in breaking}
    errors = [line for line in output.splitlines()
              if ("error:" in line or "undefined" in line) and "ld returned" not in line]
    assert errors and all(any(name in line for name in predicted) for line in errors), errors


@needs_compiler
def test_demo_native_command_runs_the_gated_upgrade(short_root) -> None:
    result = CliRunner().invoke(cli, ["demo", str(short_root / "d"), "--native"])
    assert result.exit_code == 1, result.output
    assert "first fails at" in result.output and "[gamma] Add the gamma backend" in result.output
    assert (short_root / "d" / "report" / "report.json").is_file()


def test_demo_native_no_run_builds_only_the_world(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["demo", str(tmp_path / "d"), "--native", "--no-run"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "d" / "flagtree" / "third_party/gamma/backend/spec/include/flagtree_spec.h").is_file()
    assert not (tmp_path / "d" / "report").exists()
