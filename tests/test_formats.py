"""--format sarif (SARIF 2.1.0) and --format github (workflow annotations) for check and drift, and
check on a tree holding conflict markers."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sync.cli import cli
from sync.model.kinds import kind_of
from sync.model import Finding, Review
from sync.report.github import annotation
from sync.report.sarif import sarif_log

TRUNK_INIT = "from triton.flagtree_spec import spec\n"
MARKED = ("import os\n"
          "<<<<<<< ours\nA = 1\n||||||| base\nA = 0\n=======\nA = 2\n>>>>>>> theirs\n")


def conflicted_tree(root: Path) -> Path:
    files = {"python/triton/__init__.py": TRUNK_INIT, "python/triton/language/core.py": MARKED}
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_check_reports_markers_at_their_line_not_a_tokenizer_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", str(conflicted_tree(tmp_path))])
    assert result.exit_code == 1
    assert "python/triton/language/core.py:2: FT014 error" in result.output
    assert "FT013" not in result.output and "tokenizer" not in result.output


def test_check_sarif_structure_and_catalogue(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", str(conflicted_tree(tmp_path)), "--format", "sarif"])
    assert result.exit_code == 1
    log = json.loads(result.output)
    assert log["version"] == "2.1.0" and "sarif-2.1.0" in log["$schema"]
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] == "flagtree-sync"
    (result_,) = run["results"]
    rule = rules[result_["ruleIndex"]]
    assert result_["ruleId"] == rule["id"] == "FT014"
    spec = kind_of(rule["name"])
    assert rule["shortDescription"]["text"] == spec.meaning and rule["help"]["text"] == spec.action
    assert rule["properties"]["doc"] == f"docs/KINDS.md#{spec.anchor}"
    assert "helpUri" not in rule  # SARIF: an absolute URI if present; the docs' place is relative
    assert result_["level"] == "error"
    location = result_["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": "python/triton/language/core.py"}, "region": {"startLine": 2}}


def test_sarif_levels_rules_once_and_reviews_as_suppressions() -> None:
    findings = [Finding("overlay-orphan", "a.py", "m1", backend="alpha"),
                Finding("overlay-orphan", "b.py", "m2", backend="alpha",
                        suppressed=Review("needs no change", "v3.6.0")),
                Finding("spec-unused", "c.py", "m3", line=4)]
    log = sarif_log(findings, "0.1.0")
    run = log["runs"][0]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == ["overlay-orphan", "spec-unused"]
    assert [r["level"] for r in run["results"]] == ["error", "error", "note"]
    assert [r["ruleIndex"] for r in run["results"]] == [0, 0, 1]
    assert "suppressions" not in run["results"][0]
    assert run["results"][1]["suppressions"][0]["justification"].startswith("needs no change")
    assert run["results"][0]["properties"] == {"backend": "alpha"}


def test_github_annotations_escape_what_could_start_a_command() -> None:
    finding = Finding("overlay-orphan", "dir/a,b:c\n.py", "two\nlines 100%", line=7, backend="alpha")
    line = annotation(finding)  # a finding's message is one line already; a path may hold a line break
    assert line.startswith("::error file=dir/a%2Cb%3Ac%0A.py,line=7,title=overlay-orphan::two lines 100%25")
    assert "\n" not in line and kind_of("overlay-orphan").doc_url in line
    reviewed = annotation(Finding("overlay-redundant", "x.py", "m", suppressed=Review("ok\r\nsure", "v3.6.0")))
    assert reviewed.startswith("::notice file=x.py,title=overlay-redundant::m (reviewed: ok%0D%0Asure)")
    assert annotation(Finding("spec-unused", "x.py", "m")).startswith("::notice ")
    assert annotation(Finding("overlay-auto-mergeable", "x.py", "m")).startswith("::warning ")


def test_check_github_format(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", str(conflicted_tree(tmp_path)), "--format", "github"])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "::error file=python/triton/language/core.py,line=2,title=FT014 conflict-markers::"
        + result.output.split("title=FT014 conflict-markers::", 1)[1].rstrip("\n")]


def test_drift_formats_on_the_demo(world) -> None:
    base = ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0", "--backend", "alpha"]
    sarif = CliRunner().invoke(cli, [*base, "--format", "sarif"])
    assert sarif.exit_code == 1, sarif.output
    results = json.loads(sarif.output)["runs"][0]["results"]
    kinds = {r["ruleId"] for r in results}
    assert {"overlay-conflicting", "overlay-orphan", "hijack-lost", "overlay-auto-mergeable"} <= kinds
    github = CliRunner().invoke(cli, [*base, "--format", "github"])
    assert github.exit_code == 1
    lines = github.output.splitlines()
    assert len(lines) == len(results) and all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    assert any(line.startswith("::error file=third_party/alpha/backend/spec/triton/runtime/cache.py,") for line in lines)


def test_sarif_uris_are_percent_encoded_paths() -> None:
    """'#' must not start a fragment, '%0A' not decode to a newline, ':' not make a scheme (issue 31.17)."""
    from urllib.parse import unquote_to_bytes, urlsplit
    paths = ["dir/a#b.py", "x%0A.py", "new\nline?.py", "sp ace/ü.py", "c:evil.py", "bad\udcff.py"]
    log = sarif_log([Finding("spec-unused", path, "m") for path in paths], "0.1.0")
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    for path, uri in zip(paths, uris):
        parts = urlsplit(uri)
        assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("", "", "", ""), uri
        assert unquote_to_bytes(parts.path) == path.encode("utf-8", errors="surrogateescape")
    assert uris[0] == "dir/a%23b.py" and uris[1] == "x%250A.py"


def test_sarif_lists_a_finding_per_upstream_change_s_other_sites_as_related_locations() -> None:
    finding = Finding("call-signature", "lib/A.cpp", "m", line=4, backend="alpha",
                      details={"sites": ["lib/A.cpp:4", "lib/A.cpp:9", "lib/B.cpp:3"]})
    (result,) = sarif_log([finding], "0.1.0")["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 4}  # the first site, as before
    assert [(r["physicalLocation"]["artifactLocation"]["uri"], r["physicalLocation"]["region"]["startLine"])
            for r in result["relatedLocations"]] == [("lib/A.cpp", 9), ("lib/B.cpp", 3)]
    (plain,) = sarif_log([Finding("spec-unused", "x.py", "m", line=1)], "0.1.0")["runs"][0]["results"]
    assert "relatedLocations" not in plain
