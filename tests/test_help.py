"""Every option of every command says what it does in --help."""
from __future__ import annotations

import click
from click.testing import CliRunner

from sync.cli import cli


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
