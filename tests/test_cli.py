"""The CLI as a user meets it: help everywhere, one-line errors, the demo end to end."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sync.cli import cli


@pytest.mark.parametrize("command", [[], ["check"], ["upgrade"], ["drift"], ["demo"]])
def test_help(command: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output


def test_demo_end_to_end_in_a_subprocess(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "sync", "demo", str(tmp_path / "demo")],
                          capture_output=True, text=True)
    assert done.returncode == 1, done.stderr  # the demo plants conflicts and drift
    assert "Traceback" not in done.stdout + done.stderr
    assert "alpha            blocked" in done.stdout
    assert (tmp_path / "demo" / "report" / "index.html").exists()
    again = subprocess.run([sys.executable, "-m", "sync", "demo", str(tmp_path / "demo")],
                           capture_output=True, text=True)
    assert again.returncode == 2 and "is not empty" in again.stderr and "Traceback" not in again.stderr
