"""The kinds catalogue drives severities, the kinds command, check --list-rules and the README tables."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from sync.cli import cli
from sync.model.kinds import BY_ID, CATALOGUE, CONFIDENCES, FAMILIES, SEVERITIES, rules

REPO = Path(__file__).resolve().parents[1]


def test_catalogue_entries_are_complete_and_unique() -> None:
    assert len(BY_ID) == len(CATALOGUE)
    for kind in CATALOGUE:
        assert kind.family in FAMILIES and kind.severity in SEVERITIES and kind.confidence in CONFIDENCES
        assert kind.meaning and (kind.action or kind.severity == "info"), kind.id
    codes = [kind.code for kind in rules()]
    assert codes == sorted(set(codes)) and all(re.fullmatch(r"FT\d{3}", code or "") for code in codes)


def test_every_kind_the_code_raises_is_catalogued() -> None:
    raised = set()
    for path in (REPO / "sync").rglob("*.py"):
        raised |= set(re.findall(r'\b(?:Finding|add|finding)\(\s*"([a-z][a-z/-]+)"', path.read_text()))
    assert raised and raised <= set(BY_ID), sorted(raised - set(BY_ID))


def test_kinds_command_prints_the_catalogue() -> None:
    result = CliRunner().invoke(cli, ["kinds", "--format", "json"])
    assert result.exit_code == 0
    assert [entry["id"] for entry in json.loads(result.output)] == [kind.id for kind in CATALOGUE]
    text = CliRunner().invoke(cli, ["kinds"]).output
    assert "overlay-orphan" in text and "FT014" in text


def test_list_rules_needs_no_path() -> None:
    result = CliRunner().invoke(cli, ["check", "--list-rules"])
    assert result.exit_code == 0 and result.output.count("\n") == len(rules())
    missing = CliRunner().invoke(cli, ["check"])
    assert missing.exit_code == 2 and "PATH is required" in missing.output


def test_readme_tables_and_kinds_doc_are_generated_from_the_catalogue() -> None:
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "update_kinds_docs.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = (REPO / "docs" / "KINDS.md").read_text()
    assert all(f'id="{kind.anchor}"' in doc for kind in CATALOGUE)
