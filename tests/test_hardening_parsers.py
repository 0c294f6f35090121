"""Input the parsers cannot handle is a finding, never a crash (issue 13, item 8).

Deep but valid Python (150 nested lists, calls, attributes, a long chain of `+`) is analysed; Python
that CPython refuses (300 nested parentheses, too many levels) is FT013 for check and an unparsable
finding for drift and upgrade, which still write their report.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from sync.facts.parsing import DEEP_RECURSION_LIMIT, Unparseable, guarded, guarded_walk, parsed_ast, parsed_python
from sync.facts.pyfacts import function_table, parse_module_facts
from sync.cli import cli
from sync.drift.parallel import guarded_analysis
from tests.conftest import commit_files as shared_commit_files, git

A = "third_party/alpha/backend/spec/triton/"
DEEP_VALID = ("x = " + "[" * 150 + "]" * 150 + "\n" + "y = " + "f(" * 150 + ")" * 150 + "\n"
              + "z = a" + ".b" * 150 + "\n" + "w = 1" + " + 1" * 150 + "\n"
              + "def g(a=" + "[" * 150 + "]" * 150 + "):\n    return 1\n")
REFUSED = "x = " + "(" * 300 + "1" + ")" * 300 + "\n"  # CPython: too many nested parentheses
UPGRADE = ["upgrade", "--from", "v3.5.0", "--onto", "v3.6.0", "-q"]
DRIFT = ["drift", "--from", "v3.5.0", "--onto", "v3.6.0"]


def commit_files(world, files, message: str = "[alpha] deep files") -> None:
    shared_commit_files(world, files, message)


def with_deep_files(world) -> None:
    utils = (world.fork / A / "_utils.py").read_text()
    commit_files(world, {A + "_utils.py": utils + DEEP_VALID, A + "runtime/refused.py": REFUSED,
                         "python/triton/deep_trunk.py": DEEP_VALID + REFUSED})


def test_deep_valid_python_is_parsed_and_refused_python_is_unparseable() -> None:
    assert not isinstance(parsed_ast(DEEP_VALID), Unparseable)
    assert not isinstance(parsed_python(DEEP_VALID), Unparseable)
    facts = parse_module_facts("deep.py", DEEP_VALID)
    assert facts.error is None and "g" in facts.functions  # the visitor walked the whole deep tree
    table = function_table(DEEP_VALID)
    assert table is not None and table["g"].source.startswith("def g(a=[[[")  # code generation, as deep
    refused = parsed_python(REFUSED)
    assert isinstance(refused, Unparseable) and "too many nested parentheses" in refused.reason
    assert "too many nested parentheses" in (parse_module_facts("refused.py", REFUSED).error or "")
    chain = "w = 1" + " + 1" * 5000 + "\n"  # CPython: too deep for its ast; libcst is never asked
    assert "nested too deeply" in (parse_module_facts("chain.py", chain).error or "")


def test_recursion_limit_and_stack_size_are_restored() -> None:
    import threading
    limit, stack = sys.getrecursionlimit(), threading.stack_size()

    def too_deep(n: int = 0) -> int:
        return too_deep(n + 1)
    result = guarded(too_deep)
    assert isinstance(result, Unparseable) and str(DEEP_RECURSION_LIMIT) in result.reason
    assert isinstance(parse_module_facts("deep2.py", DEEP_VALID + "\n"), object)
    assert (sys.getrecursionlimit(), threading.stack_size()) == (limit, stack)


def test_an_analysis_that_still_overflows_is_a_finding_and_a_bug_stays_a_bug() -> None:
    def overflow(n: int = 0) -> list:
        return overflow(n + 1)
    [finding] = guarded_analysis("symbols", overflow).findings
    assert finding.kind == "analysis-skipped" and finding.message.startswith("symbols:")

    def bug() -> list:
        raise KeyError("a bug")
    try:
        guarded_walk(bug)
    except KeyError:
        pass
    else:
        raise AssertionError("a bug must not become a finding")


def test_check_reports_ft013_and_does_not_crash(world) -> None:
    with_deep_files(world)
    result = CliRunner().invoke(cli, ["check", str(world.fork), "--format", "json"])
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    findings = document["findings"] if isinstance(document, dict) else document
    by_path = {f["path"]: f for f in findings if f.get("rule") == "FT013" or f.get("kind") == "python-syntax"}
    assert A + "runtime/refused.py" in by_path
    assert "too many nested parentheses" in by_path[A + "runtime/refused.py"]["message"]
    assert A + "_utils.py" not in by_path  # deep but valid: analysed, no finding


def test_drift_and_upgrade_report_the_refused_file_and_write_the_report(world, tmp_path: Path) -> None:
    with_deep_files(world)
    utils = (world.fork / A / "_utils.py").read_text()  # a spec-function module: drift parses it
    commit_files(world, {A + "_utils.py": utils + REFUSED}, "[alpha] refused nesting")
    drift = CliRunner().invoke(cli, [*DRIFT, "--repo", str(world.fork), "--out", str(tmp_path / "drift")])
    assert drift.exit_code == 1, drift.output
    out = tmp_path / "upgrade"
    upgrade = CliRunner().invoke(cli, [*UPGRADE, "--repo", str(world.fork), "--out", str(out)])
    assert upgrade.exit_code == 1, upgrade.output
    report = json.loads((out / "report.json").read_text())
    [finding] = [f for group in report["groups"] for f in group["findings"] if f["path"] == A + "_utils.py" and "nested" in f["message"]]
    assert finding["kind"] == "spec-module-unparsable" and "too many nested parentheses" in finding["message"]
    assert git(world.fork, "rev-parse", "--verify", "sync/v3.6.0").strip()
    assert not (world.fork / ".git" / "flagtree-sync" / "upgrade.json").exists()  # finished, not left half-done


def test_toml_nested_too_deeply_is_exit_2_not_a_crash(world, tmp_path: Path) -> None:
    deep = "x = " + "[" * 3000 + "]" * 3000 + "\n"
    (world.fork / "pyproject.toml").write_text("[tool.flagtree-sync]\nspec_roots = []\n" + deep)
    commit_files(world, {"third_party/alpha/backend/spec/suppressions.toml": deep}, "[alpha] deep toml")
    check = CliRunner().invoke(cli, ["check", str(world.fork)])
    assert check.exit_code in (1, 2) and "nested too deeply" in check.output, check.output
    drift = CliRunner().invoke(cli, [*DRIFT, "--repo", str(world.fork), "--out", str(tmp_path / "drift")])
    assert drift.exit_code == 2 and "nested too deeply" in drift.output, drift.output
