"""The run's options in the upgrade state: format 3 keeps RunOptions as it is (the gate one object, every key
present), formats 1 and 2 (flat, each optional) are read into the same shape, and a bad value is refused."""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from sync.jobs.upgrade import UpgradeOptions
from sync.replay.options import (GATE_TIMEOUT, ConflictPolicy, ContinueOverrides, GateOptions, ReplayChoices,
                                 RunOptions)
from sync.replay.state import STATE_VERSION, StateFormatError, parse_header

ONTO = "b" * 40


def header(version: int, options: Any) -> dict[str, Any]:
    rng = {name: {"ref": name, "commit": (letter * 40)} for name, letter in (("from", "a"), ("onto", "b"),
                                                                             ("source", "c"))}
    value: dict[str, Any] = {"version": version, "commits": ["d" * 40], "head": ONTO, "stopped": False,
                             "params": {"repo": ".", "range": rng, "target_branch": "sync/x", "policy": "markers"}}
    if options is not None:
        value["options"] = options
    return value


GATED = RunOptions(out=Path("/tmp/report"), gate=GateOptions(command="make test", at="each", timeout=30),
                   backends=frozenset({"b", "a"}))


def test_the_current_format_is_3_and_keeps_run_options_as_they_are() -> None:
    assert STATE_VERSION == 3
    stored = GATED.to_json()
    assert stored == {"out": "/tmp/report", "gate": {"command": "make test", "at": "each", "timeout": 30},
                      "backends": ["a", "b"]}
    assert RunOptions.from_json(parse_header(header(3, stored))["options"]) == GATED
    plain = RunOptions()
    assert RunOptions.from_json(parse_header(header(3, plain.to_json()))["options"]) == plain


@pytest.mark.parametrize("version", [1, 2])
def test_flat_options_of_formats_1_and_2_read_as_the_same_run_options(version: int) -> None:
    flat = {"out": "/tmp/report", "exec_command": "make test", "exec_at": "each", "exec_timeout": 30,
            "backends": ["a", "b"]}
    data = header(2, flat)
    if version == 1:
        params, rng = data["params"], data["params"]["range"]
        data["params"] = {"repo": ".", "old": "from", "onto": "onto", "src": "source", "branch": params["target_branch"],
                          "policy": "markers", "old_id": rng["from"]["commit"], "onto_id": rng["onto"]["commit"],
                          "src_id": rng["source"]["commit"]}
        data["version"] = 1
    assert RunOptions.from_json(parse_header(data)["options"]) == GATED
    # no command stored: no gate, whatever exec_at and exec_timeout say; no options at all: the defaults
    no_gate = {"out": None, "exec_command": None, "exec_at": "end", "exec_timeout": 600, "backends": []}
    assert RunOptions.from_json(parse_header({**data, "options": no_gate})["options"]) == RunOptions()
    assert RunOptions.from_json(parse_header({k: v for k, v in data.items() if k != "options"})["options"]) == \
        RunOptions()


@pytest.mark.parametrize("options", [
    None,  # format 3 always writes them
    {"out": None, "gate": None},
    {"out": None, "gate": None, "backends": [], "exec_command": "x"},  # a flat key in format 3
    {"out": None, "exec_command": "x", "exec_at": "end", "exec_timeout": 600, "backends": []},
    {"out": 7, "gate": None, "backends": []},
    {"out": None, "gate": None, "backends": [1]},
    {"out": None, "gate": "make", "backends": []},
    {"out": None, "gate": {"command": "make", "at": "end"}, "backends": []},
    {"out": None, "gate": {"command": "make", "at": "sometimes", "timeout": 1}, "backends": []},
    {"out": None, "gate": {"command": "make", "at": "end", "timeout": 0}, "backends": []},
    {"out": None, "gate": {"command": "make", "at": "end", "timeout": float("nan")}, "backends": []},
    {"out": None, "gate": {"command": "make", "at": "end", "timeout": True}, "backends": []},
    {"out": None, "gate": {"command": None, "at": "end", "timeout": 1}, "backends": []},
])
def test_bad_options_of_format_3_are_refused(options: Any) -> None:
    with pytest.raises(StateFormatError, match="options"):
        parse_header(header(3, options))


@pytest.mark.parametrize("options", [
    {"out": None, "gate": None, "backends": []},  # format 3's shape in a state of format 2
    {"exec_at": "sometimes"},
    {"exec_timeout": "600"},
    {"exec_command": 7},
])
def test_bad_options_of_format_2_are_refused(options: Any) -> None:
    with pytest.raises(StateFormatError, match="options"):
        parse_header(header(2, options))


def test_upgrade_options_compose_run_options_and_the_state_keeps_only_those() -> None:
    """UpgradeOptions holds RunOptions (what the state's options keep) and ReplayChoices (what the params keep),
    repeating no field of either; kept() is the one conversion to what is stored."""
    options = UpgradeOptions(run=RunOptions(out=Path("report"), gate=GateOptions(command="make"),
                                            backends=frozenset({"a"})),
                             replay=ReplayChoices(target_branch="sync/x",
                                                  conflicts=ConflictPolicy(policy="theirs", stop_on=("*.py",))),
                             force=True)
    assert not isinstance(options, RunOptions)
    names = {f.name for f in fields(UpgradeOptions)}
    assert not names & ({f.name for f in fields(RunOptions)} | {f.name for f in fields(ReplayChoices)})
    kept = options.run.kept()
    assert type(kept) is RunOptions and kept.out is not None and kept.out.is_absolute()
    assert kept == RunOptions(out=Path("report").resolve(), gate=GateOptions(command="make"), backends=frozenset({"a"}))


@pytest.mark.parametrize("kind", [GateOptions, RunOptions, ReplayChoices, ConflictPolicy, ContinueOverrides,
                                  UpgradeOptions])
def test_options_are_keyword_only(kind: type) -> None:
    """Two str fields side by side cannot be swapped by position: every options type takes keywords only."""
    with pytest.raises(TypeError):
        kind("x")


def test_continue_merges_overrides_into_the_stored_run_in_one_place() -> None:
    """ContinueOverrides.merged: the flags given win, the stored ones fill in and are named."""
    stored = RunOptions(out=Path("/r"), gate=GateOptions(command="make", at="each", timeout=30),
                        backends=frozenset({"a"}))
    merged, used = ContinueOverrides().merged(stored)
    assert merged == stored
    assert used == ["--out /r", "--exec 'make'", "--exec-at each", "--exec-timeout 30", "--backend a"]
    merged, used = ContinueOverrides(exec_timeout=5, backends=frozenset({"b"})).merged(stored)
    assert merged == RunOptions(out=Path("/r"), gate=GateOptions(command="make", at="each", timeout=5),
                                backends=frozenset({"b"}))
    assert used == ["--out /r", "--exec 'make'", "--exec-at each"]
    merged, _ = ContinueOverrides(exec_command="test").merged(RunOptions())  # a gate first asked for now
    assert merged.gate == GateOptions(command="test", at="end", timeout=GATE_TIMEOUT)
