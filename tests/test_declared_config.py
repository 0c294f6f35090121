"""Issue 49.5: configuration and state are read one declarative way (sync/support/schema.py), and a malformed
entry is a clear error naming where, which key and what was expected: the state file and journal here,
[tool.flagtree-sync] through the CLI (tests/test_owners_gates.py has each of its keys), the records in
tests/test_tomlfiles.py, the seed policy in tests/test_seed_policy.py."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sync.cli import cli
from sync.replay.state import StateFormatError, parse_header, parse_journal_entry
from tests.test_check import CLEAN, write_tree
from tests.test_state_options import GATED, header

COMMIT = "d" * 40
LINE = {"head": COMMIT, "result": {"source": COMMIT, "summary": "s", "result": None, "conflicts": [
    {"path": "a.py", "kind": "content", "resolution": "markers", "hunks": [{"line": 3, "ours": "a", "base": "b",
                                                                            "theirs": "c"}]}]}}


def edited(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(data)
    place = data
    for step in path[:-1]:
        place = place[step]
    place[path[-1]] = value
    return data


@pytest.mark.parametrize("path, value, message", [
    (("options", "gate", "timeout"), -1, "options.gate.timeout must be a number above 0, not -1"),
    (("options", "gate", "at"), "never", "options.gate.at must be one of end, each, not 'never'"),
    (("params", "range", "onto", "commit"), "abc", "params.range.onto.commit must be a full commit id, not 'abc'"),
    (("params", "policy"), "mine", "params.policy must be one of markers, ours, theirs, stop, not 'mine'"),
    (("commits",), ["d" * 40, 7], "the state.commits[1] must be a string, not an integer"),
    (("stopped",), "no", "the state.stopped must be a boolean, not a string"),
    (("params", "extra"), 1, "params has unknown key(s) 'extra' (known: repo, range, target_branch, policy, "
                             "drop_orphan_reverts, stop_on)"),
])
def test_a_malformed_state_entry_names_the_field_and_what_was_expected(path: tuple[Any, ...], value: Any,
                                                                        message: str) -> None:
    good = header(3, GATED.to_json())
    parse_header(good)
    with pytest.raises(StateFormatError) as raised:
        parse_header(edited(good, path, value))
    assert str(raised.value) == message


@pytest.mark.parametrize("path, value, message", [
    (("result", "conflicts", 0, "kind"), "odd", "journal line.result.conflicts[0].kind must be one of "),
    (("result", "conflicts", 0, "hunks", 0, "line"), True, "journal line.result.conflicts[0].hunks[0].line must be "
                                                           "an integer, not a boolean"),
    (("head",), None, "journal line.head must be a string, not null"),
])
def test_a_malformed_journal_line_names_the_field(path: tuple[Any, ...], value: Any, message: str) -> None:
    parse_journal_entry(LINE)
    with pytest.raises(StateFormatError) as raised:
        parse_journal_entry(edited(LINE, path, value))
    assert str(raised.value).startswith(message)


def test_a_malformed_tool_table_is_exit_2_naming_file_line_and_key(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "tree", {**CLEAN, "pyproject.toml": '[tool.flagtree-sync]\nspec_roots = "x"\n'})
    result = CliRunner().invoke(cli, ["check", str(root)])
    assert result.exit_code == 2
    assert result.output == (f"flagtree-sync: error: pyproject.toml ({root}):2: [tool.flagtree-sync] spec_roots "
                             "must be an array of strings, not a string\n")
