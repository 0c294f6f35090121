"""Each command gets one typed, keyword-only request: cli.py hands the parsed options over by name, so two
options of one type can never be swapped by position, and the request names every option click parses."""
from __future__ import annotations

from dataclasses import fields, is_dataclass
from pathlib import Path

import click
import pytest

from sync import cli
from sync.commands.check import CheckRequest
from sync.commands.demo import DemoRequest
from sync.commands.describe import DescribeRequest
from sync.commands.drift import DriftRequest
from sync.commands.hookset_check import HooksRequest
from sync.commands.port import PortRequest
from sync.commands.provenance import ProvenanceRequest
from sync.commands.resolve import ResolveRequest
from sync.commands.status import StatusRequest
from sync.commands.suppress import SuppressCommandRequest
from sync.commands.upgrade import UpgradeRequest

REQUESTS = {"check": CheckRequest, "demo": DemoRequest, "describe": DescribeRequest, "drift": DriftRequest,
            "port": PortRequest,
            "hooks": HooksRequest, "provenance": ProvenanceRequest, "resolve": ResolveRequest, "status": StatusRequest,
            "suppress": SuppressCommandRequest, "upgrade": UpgradeRequest}
ROOT = Path(__file__).resolve().parent.parent / "sync"


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_the_request_names_exactly_the_options_click_parses(name: str) -> None:
    command = cli.cli.commands[name]
    parsed = {param.name for param in command.params if not (isinstance(param, click.Option) and param.is_eager)}
    request = REQUESTS[name]
    assert is_dataclass(request) and request.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert all(field.kw_only for field in fields(request))
    assert {field.name for field in fields(request)} == parsed


def test_every_command_but_kinds_has_a_request() -> None:
    assert set(cli.cli.commands) - set(REQUESTS) == {"kinds"}  # one option: run_kinds takes it by keyword


def test_a_request_refuses_positional_arguments() -> None:
    with pytest.raises(TypeError):
        UpgradeRequest(".", "v1", "v2")  # type: ignore[misc]


def test_revisions_are_resolved_in_one_place() -> None:
    """The 'OLD is not an ancestor of SRC' refusal is written once (jobs/revs.py), for upgrade and drift alike."""
    text = "pass the upstream tag the FlagTree branch is based on as --from"
    holders = [path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*.py") if text in path.read_text()]
    assert holders == ["jobs/revs.py"]


def test_the_gate_timeout_default_is_the_named_constant() -> None:
    from sync.replay.options import GATE_TIMEOUT

    request = UpgradeRequest(onto="v2", exec_command="make")
    assert request.options().run.gate is not None and request.options().run.gate.timeout == GATE_TIMEOUT
    option = next(p for p in cli.cli.commands["upgrade"].params if p.name == "exec_timeout")
    assert isinstance(option, click.Option) and option.show_default == str(GATE_TIMEOUT)


def test_jobs_take_revisions_and_options_by_keyword() -> None:
    """Below the commands too: a job's --from, --onto and --branch (all str | None) cannot be swapped by position."""
    import inspect

    from sync.jobs.drift import DriftOptions, run_drift
    from sync.jobs.review import SuppressRequest, record_provenance, record_suppression
    from sync.jobs.status import StatusOptions
    from sync.jobs.upgrade import run_upgrade

    for job in (run_upgrade, run_drift, record_suppression, record_provenance):
        parameters = list(inspect.signature(job).parameters.values())
        assert [p.name for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY] == ["repo_path"], job
    for options in (DriftOptions, StatusOptions, SuppressRequest):
        assert all(field.kw_only for field in fields(options)), options
