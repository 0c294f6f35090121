"""Every option of every command says what it does in --help."""
from __future__ import annotations

import shlex
import textwrap
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from sync.cli import cli
from sync.model import Finding, Group, Range, Report, Rev
from sync.report.document import render_json


def walk(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found = [(path, command)]
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            found += walk(sub, (*path, name))
    return found


def test_every_option_has_help_text() -> None:
    missing = [f"{' '.join(path) or 'flagtree-sync'} {param.opts[0]}"
               for path, command in walk(cli) for param in command.params
               if isinstance(param, click.Option) and not (param.help or "").strip()
               and param.name not in ("help", "version")]
    assert missing == []


def test_every_command_has_a_description_and_help_runs() -> None:
    for path, command in walk(cli):
        assert (command.help or "").strip(), path
        result = CliRunner().invoke(cli, [*path, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output, path


def test_drift_from_help_promises_no_default_upgrade_does() -> None:
    drift = CliRunner().invoke(cli, ["drift", "--help"]).output
    upgrade = CliRunner().invoke(cli, ["upgrade", "--help"]).output
    assert "flagtree-upstream.toml" not in drift.split("--onto")[0].split("--from")[1]
    assert "flagtree-upstream.toml" in upgrade.split("--onto")[0].split("--from")[1]


WORKFLOW = Path(__file__).resolve().parents[1] / "docs" / "ci" / "flagtree-upgrade.yml"


def workflow_scripts() -> list[str]:
    """The run: scripts of the example workflow (parsed as YAML when PyYAML is there)."""
    text = WORKFLOW.read_text(encoding="utf-8")
    try:
        import yaml
    except ImportError:  # the text itself: every line that calls the tool
        return [line for line in text.splitlines() if "flagtree-sync " in line and not line.lstrip().startswith("#")]
    document = yaml.safe_load(text)
    triggers = document.get("on", document.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["schedule"][0]["cron"]
    steps = document["jobs"]["upgrade"]["steps"]
    assert any(step.get("uses", "").startswith("actions/upload-artifact") and step["with"]["path"] == "upgrade-report/"
               for step in steps)
    return [step["run"] for step in steps if "run" in step]


def test_ci_workflow_runs_commands_and_options_the_cli_has() -> None:
    calls = [shlex.split(line.split("flagtree-sync ", 1)[1].split("||")[0].split(">")[0])
             for script in workflow_scripts() for line in script.splitlines()
             if line.strip().startswith("flagtree-sync ")]
    assert {call[0] for call in calls} >= {"upgrade", "check", "drift"}
    for call in calls:
        command = cli.commands[call[0]]
        known = {opt for param in command.params for opt in param.opts}
        for word in call[1:]:
            if word.startswith("--"):
                assert word in known, f"{call[0]} has no option {word}"
        for param, value in zip(call, call[1:]):
            option = next((p for p in command.params if param in p.opts), None)
            if option is not None and isinstance(option.type, click.Choice):
                assert value in option.type.choices, (call, value)
    upgrade = next(call for call in calls if call[0] == "upgrade")
    assert "--onto" in upgrade and "--exec" in upgrade and "--out" in upgrade


def test_ci_workflow_fails_on_a_blocked_backend_from_the_report_document(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    script = WORKFLOW.read_text(encoding="utf-8").split("python - <<'PY'\n", 1)[1].split("PY\n", 1)[0]
    code = compile(textwrap.dedent(script), "workflow-step", "exec")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "upgrade-report").mkdir()
    groups = [Group("alpha", "backend"), Group("flagtree-core", "core", findings=(
        Finding("overlay-orphan", "x.py", "m", backend="flagtree-core"),))]
    report = Report(Range(Rev("a", "0" * 40), Rev("b", "1" * 40), Rev("c", "2" * 40)), tuple(groups))
    (tmp_path / "upgrade-report" / "report.json").write_text(render_json(report))
    exec(code, {})  # only the core group is blocked: no backend is, the job passes
    blocked = Report(report.range, (Group("alpha", "backend", findings=(
        Finding("overlay-orphan", "x.py", "m", backend="alpha"),)),))
    (tmp_path / "upgrade-report" / "report.json").write_text(render_json(blocked))
    with pytest.raises(SystemExit, match="blocked: alpha"):
        exec(code, {})
