"""-q/--quiet: every command that has it says what it silences and what it never does, and does just that."""
from __future__ import annotations

from click.testing import CliRunner

from sync.cli import cli


def test_every_quiet_option_says_what_it_suppresses_and_what_is_still_printed() -> None:
    having = []
    for name, command in cli.commands.items():
        for option in command.params:
            if "-q" in getattr(option, "opts", ()):
                having.append(name)
                text = option.help or ""
                assert "progress" in text and "still printed" in text and "errors" in text, (name, text)
    assert sorted(having) == ["drift", "port", "status", "upgrade"]


def test_quiet_drops_the_conflict_lines_and_keeps_the_summary(world) -> None:
    args = ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0"]
    loud = CliRunner().invoke(cli, args)
    assert "[1/6]" in loud.output and "conflicts: CMakeLists.txt" in loud.output
    quiet = CliRunner().invoke(cli, [*args, "--force", "-q"])
    assert quiet.exit_code == loud.exit_code == 1
    assert "conflicts: CMakeLists.txt" not in quiet.output and "[1/6]" not in quiet.output
    assert "branch sync/v3.6.0 at" in quiet.output and "alpha" in quiet.output


def test_drift_quiet_keeps_the_report_lines(world) -> None:
    args = ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0"]
    loud, quiet = CliRunner().invoke(cli, args), CliRunner().invoke(cli, [*args, "-q"])
    assert quiet.exit_code == loud.exit_code == 1 and quiet.output == loud.output and "alpha:" in quiet.output
