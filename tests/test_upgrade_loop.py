"""The release engineer's loop of UPGRADING.md, end to end on the demo, and the example it generates."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from sync.jobs.status import StatusOptions, refresh_status

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "update_upgrading_example.py"


def _script():
    spec = importlib.util.spec_from_file_location("update_upgrading_example", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_whole_runbook_loop_ends_clean_and_is_the_documented_example(tmp_path: Path) -> None:
    script = _script()
    loop = script.run_loop(tmp_path / "demo")
    statuses = [(step.shown.split(" ")[1], step.status) for step in loop.steps if step.shown.startswith("flagtree")]
    assert statuses[1:5] == [("check", 0), ("upgrade", 4), ("upgrade", 4), ("upgrade", 4)]  # one stop per conflict
    assert "Traceback" not in "".join(step.output for step in loop.steps)
    assert all(step.status == 0 for step in loop.steps if step.shown.startswith(("git ", "flagtree-sync suppress")))
    last = loop.steps[-1]
    assert last.shown.startswith("flagtree-sync status") and last.status == 0
    report = refresh_status(str(loop.checkout), StatusOptions())
    assert {group.name: group.verdict for group in report.groups} == dict.fromkeys(
        ["alpha", "beta", "flagtree-core", "shared-trunk"], "clean")
    assert report.releasable and report.exit_status == 0
    reviewed = [f for f in report.findings if f.suppressed]
    assert len(reviewed) == 4 and not [f for f in report.findings if f.open]
    check = next(step for step in reversed(loop.steps) if step.shown == "flagtree-sync check .")
    assert check.status == 0
    assert script.example_of(loop) == script.documented(), \
        "docs/upgrading-example.md is stale: run python scripts/update_upgrading_example.py"
