"""index.html as a real headless browser builds it: the DOM after parsing, not our own string."""
from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from sync.cli import cli

BROWSER = next((found for name in ("chromium", "chromium-browser", "google-chrome") if (found := shutil.which(name))),
               None)


class Outline(HTMLParser):
    """Ids of sections and tables, the headings in order, and the element that follows each heading."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: list[str] = []
        self.headings: list[str] = []
        self.after_heading: dict[str, str] = {}
        self._in_heading: str | None = None
        self._text = ""
        self._last_heading: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if ident := dict(attrs).get("id"):
            self.ids.append(ident)
        if tag in ("h2", "h3"):
            self._in_heading, self._text = tag, ""
        elif self._last_heading is not None and tag not in ("code", "span", "a"):
            self.after_heading.setdefault(self._last_heading, tag)
            self._last_heading = None

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in_heading:
            self.headings.append(self._text.strip())
            self._last_heading, self._in_heading = self._text.strip(), None

    def handle_data(self, data: str) -> None:
        if self._in_heading:
            self._text += data


@pytest.mark.skipif(BROWSER is None, reason="no chromium on this machine (.ci/run installs one)")
def test_the_demo_report_in_a_headless_browser(world, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                                      "-q", "--out", str(out), "--exec", "python3 -m compileall -q python/triton"])
    assert result.exit_code == 1, result.output
    done = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                           (out / "index.html").as_uri()], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    dom = Outline()
    dom.feed(done.stdout)
    assert {"groups", "gate", "conflicted", "group-alpha", "group-beta"} <= set(dom.ids)
    assert "Test gate" in dom.headings and any(h.startswith("Conflicted files (5)") for h in dom.headings)
    findings = next(h for h in dom.headings if h.startswith("Findings ("))
    assert dom.after_heading[findings] == "ul"  # the list right after its heading, not inside a conflict
    assert done.stdout.count("<tr>") >= 5  # the groups table: a header row and one row per group
