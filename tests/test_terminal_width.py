"""Issue #35: on a terminal, a finding's line fits its width (the message cut, kind and path whole); piped, to a
file, or in --json/SARIF/github, nothing is cut, since scripts read it."""
from __future__ import annotations

import json

import pytest

from sync.support import terminal
from sync.support.terminal import ELLIPSIS, fit
from tests.conftest import invoke

RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]


def test_fit_cuts_the_message_and_keeps_the_head_whole() -> None:
    head = "  error    overlay-orphan                 third_party/alpha/x.py  "
    message = "trunk counterpart python/triton/runtime/cache.py was deleted upstream " * 3
    line = fit(head, message, 100)
    assert len(line) == 100 and line.startswith(head) and line.endswith(ELLIPSIS)
    assert fit(head, "short", 100) == head + "short"
    assert fit(head, message, None) == head + message  # not a terminal
    narrow = fit(head, message, 40)  # no room: the head stays whole, the message keeps its first words
    assert narrow.startswith(head) and narrow.endswith(ELLIPSIS) and len(narrow) < len(head + message)


def _finding_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("  ")]


def test_drift_and_check_lines_fit_a_terminal_and_stay_whole_when_piped(world, monkeypatch: pytest.MonkeyPatch) -> None:
    piped = invoke("drift", "--repo", str(world.fork), *RANGE)
    assert max(len(line) for line in _finding_lines(piped.stdout)) > 140 and ELLIPSIS not in piped.stdout
    monkeypatch.setattr(terminal, "terminal_width", lambda: 140)  # as a 140-column terminal
    shown = invoke("drift", "--repo", str(world.fork), *RANGE)
    assert shown.exit_code == piped.exit_code == 1
    lines = _finding_lines(shown.stdout)
    assert len(lines) == len(_finding_lines(piped.stdout))
    # a line over 140 columns only where the head (kind, path) alone nearly fills them: the message keeps 20
    assert all(len(line) <= 140 or line.endswith(ELLIPSIS) for line in lines)
    assert sum(len(line) <= 140 for line in lines) > len(lines) // 2
    cut = [line for line in lines if line.endswith(ELLIPSIS)]
    assert cut and all(whole.startswith(line[:-1]) for line, whole in zip(lines, _finding_lines(piped.stdout))
                       if line in cut)
    document = json.loads(invoke("drift", "--repo", str(world.fork), *RANGE, "--json").stdout)  # never cut
    assert ELLIPSIS not in json.dumps(document, ensure_ascii=False)
    github = invoke("drift", "--repo", str(world.fork), *RANGE, "--format", "github").stdout
    assert ELLIPSIS not in github and max(len(line) for line in github.splitlines()) > 100
    monkeypatch.setattr(terminal, "terminal_width", lambda: 80)
    check = invoke("check", str(world.fork))
    finding = next(line for line in check.stdout.splitlines() if "FT002" in line)
    assert len(finding) <= 80 and finding.endswith(ELLIPSIS) and "python/triton/ops/__init__.py:5: FT002" in finding
