"""index.html as a real headless browser builds it: the DOM after parsing, not our own string."""
from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from sync.cli import cli
from PIL import Image

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
    opened = next(h for h in dom.headings if h.startswith("Open ("))
    assert dom.after_heading[opened] == "div"  # the open table (in its scroll box) right after its heading
    assert done.stdout.count("<tr>") >= 5  # the groups table: a header row and one row per group


def _grey(pixel: bytes) -> bool:
    return all(190 <= value <= 215 for value in pixel)  # the tables' #ccc borders


def _groups_table_edge(png: Path) -> tuple[int, int, int]:
    """The screenshot's width, the right edge of its first table (the first grey line across half the page) and
    how many of the 40 rows below it are grey there: a table cut at the window's edge has no border there."""
    with Image.open(png) as shot:
        image = shot.convert("RGB")
    width, height = image.size
    pixels = image.load()
    for y in range(min(height, 700)):
        grey = [x for x in range(width) if _grey(bytes(pixels[x, y]))]
        if len(grey) > width // 2:
            right = max(grey)
            return width, right, sum(1 for below in range(y, min(y + 40, height)) if _grey(bytes(pixels[right, below])))
    raise AssertionError(f"no table in {png}")


@pytest.mark.skipif(BROWSER is None, reason="no chromium on this machine (.ci/run installs one)")
def test_the_report_uses_the_full_width_and_fits_a_narrow_window(world, tmp_path: Path) -> None:
    """Screenshots at 1400 and 800 px: the groups table spans the page (no 740 px column) and is not cut off."""
    out = tmp_path / "report"
    CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "-q",
                             "--out", str(out)])
    page = (out / "index.html").read_text()
    scripts = re.findall(r"<script[^>]*>", page)  # one small inline script (the filters), nothing fetched
    assert len(page.encode()) < 70_000 and scripts == ["<script>"] and "http" not in page.replace("http-equiv", "")
    for width in (1400, 800):
        png = tmp_path / f"shot-{width}.png"
        done = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               f"--screenshot={png}", f"--window-size={width},1000", (out / "index.html").as_uri()],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and png.exists(), done.stderr[-2000:]
        shot_width, right, border = _groups_table_edge(png)
        assert shot_width == width
        assert width - 40 < right < width - 4, (width, right)  # full width, inside the window
        assert border > 30, (width, right, border)  # its right border is drawn: not cut off by the window


@pytest.mark.skipif(BROWSER is None, reason="no chromium on this machine (.ci/run installs one)")
def test_the_filters_run_in_a_headless_browser(world, tmp_path: Path) -> None:
    """Issue 48.8: the page filters by group, severity and kind (here from the address, as a shared link would);
    what does not match is hidden, the rest shows; the kinds links land on the page's own rendered kinds."""
    out = tmp_path / "report"
    CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "-q",
                             "--out", str(out)])

    def dom(address: str) -> str:
        done = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", address],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    def shown(page: str) -> list[tuple[str, str]]:
        rows = re.findall(r"<(?:tr|li) ([^>]*data-kind[^>]*)>", page)
        return [(re.search(r'data-severity="([^"]*)"', row).group(1), re.search(r'data-group="([^"]*)"', row).group(1))
                for row in rows if " hidden" not in f" {row}"]

    everything = dom((out / "index.html").as_uri())
    assert '<form id="filters">' in everything  # the script showed the form
    assert {severity for severity, _ in shown(everything)} >= {"error", "warning", "conflict"}
    errors = dom((out / "index.html").as_uri() + "#severity=error&group=beta")
    assert shown(errors) and all(severity == "error" and "beta" in group.split() for severity, group in shown(errors))
    sections = re.findall(r'<section id="group-(\w+)" data-group="\w+"( hidden="")?', errors)
    assert dict(sections) == {"alpha": ' hidden=""', "beta": ""}, sections
    assert re.search(r'href="#(kind-[^"]+)"', everything) and '<section id="kinds">' in everything
