"""Reviewed findings: suppressed while the trunk counterpart stays the same, counted again when it changes."""
from __future__ import annotations

import json

import pytest

from click.testing import CliRunner

from sync.cli import cli
from tests.conftest import git

A = "third_party/alpha/backend/spec/triton/"
SUPPRESS = ["suppress", "--from", "v3.5.0", "--onto", "v3.6.0", "--kind", "overlay-conflicting",
            "--path", A + "runtime/autotuner.py", "--reason", "we keep our own pruning"]


def drift_json(world, onto: str = "v3.6.0") -> dict:
    result = CliRunner().invoke(cli, ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", onto,
                                      "--backend", "alpha", "--json"])
    return json.loads(result.output)


def autotuner(document: dict) -> dict:
    group = next(g for g in document["groups"] if g["name"] == "alpha")
    return next(f for f in group["findings"] if f["path"] == A + "runtime/autotuner.py")


def test_suppressed_finding_stays_in_json_and_leaves_the_counts(world, monkeypatch) -> None:
    monkeypatch.chdir(world.fork)
    before = drift_json(world)
    result = CliRunner().invoke(cli, SUPPRESS)
    assert result.exit_code == 0, result.output
    entry = (world.fork / "third_party/alpha/backend/spec/suppressions.toml").read_text()
    assert 'reviewed_for = "v3.6.0"' in entry and 'trunk = "python/triton/runtime/autotuner.py"' in entry
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "alpha: reviewed the autotuner drift")
    after = drift_json(world)
    finding = autotuner(after)
    assert finding["suppressed"] == {"reason": "we keep our own pruning", "reviewed_for": "v3.6.0"}
    group_before = next(g for g in before["groups"] if g["name"] == "alpha")["counts"]
    group_after = next(g for g in after["groups"] if g["name"] == "alpha")["counts"]
    assert group_after["port"] == group_before["port"] - 1 and group_after["suppressed"] == 1
    again = CliRunner().invoke(cli, SUPPRESS)
    assert again.exit_code == 2 and "already suppressed" in again.output


def test_suppression_expires_when_trunk_changes_again(world, monkeypatch) -> None:
    monkeypatch.chdir(world.fork)
    assert CliRunner().invoke(cli, SUPPRESS).exit_code == 0
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "alpha: reviewed")
    # a later upstream release changes autotuner.py again
    upstream = world.upstream
    path = upstream / "python/triton/runtime/autotuner.py"
    path.write_text(path.read_text() + "\n\nAUTOTUNE_VERSION = 2\n")
    git(upstream, "commit", "-qam", "autotuner v2")
    git(upstream, "tag", "v3.7.0")
    git(world.fork, "fetch", "-q", "upstream", "--tags")
    finding = autotuner(drift_json(world, "v3.7.0"))
    assert "suppressed" not in finding
    assert finding["details"]["suppression_expired"]["reviewed_for"] == "v3.6.0"
    text = CliRunner().invoke(cli, ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.7.0",
                                    "--backend", "alpha"]).output  # the text lines say it too, not JSON alone
    line = next(line for line in text.splitlines() if "runtime/autotuner.py" in line)
    assert "(review for v3.6.0 expired: the trunk counterpart changed again; it said: we keep our own pruning)" in line


def test_suppress_unknown_finding_is_a_clear_error(world, monkeypatch) -> None:
    monkeypatch.chdir(world.fork)
    result = CliRunner().invoke(cli, [*SUPPRESS[:5], "--kind", "overlay-orphan", "--path", A + "runtime/autotuner.py",
                                      "--reason", "x"])
    assert result.exit_code == 2 and "no overlay-orphan finding" in result.output
    assert "overlay-conflicting" in result.output


SUPPRESSIONS = "third_party/alpha/backend/spec/suppressions.toml"


def test_reason_with_quotes_and_newlines_round_trips(world, monkeypatch) -> None:
    monkeypatch.chdir(world.fork)
    reason = 'we keep "our" pruning\nsee [[suppress]] below\\n'
    result = CliRunner().invoke(cli, [*SUPPRESS[:-1], reason])
    assert result.exit_code == 0, result.output
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "alpha: reviewed")
    assert autotuner(drift_json(world))["suppressed"]["reason"] == reason


def test_suppress_appends_to_a_reviewed_file_keeping_its_comments(world, monkeypatch) -> None:
    monkeypatch.chdir(world.fork)
    reviewed = ("# alpha's reviews: keep this header\n\n[[suppress]]  # the first review\n"
                'kind = "overlay-orphan"\npath = "x.py"\nreviewed_for = "v3.5.0"\ntrunk = "python/triton/x.py"\n'
                f'trunk_blob = "{"0" * 40}"\nreason = "gone upstream"  # until 3.7\n')
    (world.fork / SUPPRESSIONS).write_text(reviewed)
    assert CliRunner().invoke(cli, SUPPRESS).exit_code == 0
    text = (world.fork / SUPPRESSIONS).read_text()
    assert text.startswith(reviewed) and text.count("[[suppress]]") == 2
    assert text.rstrip().endswith('reason = "we keep our own pruning"')


def test_suppress_refuses_a_symlinked_file(world, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(world.fork)
    victim = tmp_path / "victim.toml"
    victim.write_text("# not the repository's\n")
    (world.fork / SUPPRESSIONS).symlink_to(victim)
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "a planted symlink")
    result = CliRunner().invoke(cli, SUPPRESS)
    assert result.exit_code == 2 and "is a symlink" in result.output, result.output
    assert victim.read_text() == "# not the repository's\n"


def test_suppress_refuses_a_symlinked_directory(world, monkeypatch, tmp_path) -> None:
    monkeypatch.chdir(world.fork)
    spec = world.fork / "third_party/alpha/backend/spec"
    outside = tmp_path / "elsewhere"
    spec.rename(outside)  # the work tree's spec directory now leads out of the repository
    spec.symlink_to(outside, target_is_directory=True)
    result = CliRunner().invoke(cli, SUPPRESS)
    assert result.exit_code == 2 and "is a symlink" in result.output, result.output
    assert not (outside / "suppressions.toml").exists()


@pytest.mark.parametrize("text, line, problem", [
    ('suppress = "x"\n', 1, "suppress must be an array of tables"),
    ('[[suppress]]\nkind = "overlay-conflicting"\npath = "p"\nreviewed_for = "v"\ntrunk = "t"\n'
     f'trunk_blob = "{"0" * 40}"\nreason = 3\n', 7, "[[suppress]] entry 1: reason must be a string, not an integer"),
])
def test_malformed_suppressions_stop_drift_and_upgrade_with_exit_2(world, text, line, problem) -> None:
    (world.fork / SUPPRESSIONS).write_text(text)
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "alpha: a hand-edited review")
    for command in (["drift", "--backend", "alpha"], ["upgrade", "--out", str(world.root / "out")]):
        result = CliRunner().invoke(cli, [command[0], "--repo", str(world.fork), "--from", "v3.5.0", "--onto",
                                          "v3.6.0", *command[1:]])
        assert result.exit_code == 2, (command, result.output)
        assert f"{SUPPRESSIONS}:{line}: {problem}" in result.output


def test_an_empty_reason_is_refused_before_anything_is_written(world, monkeypatch) -> None:
    monkeypatch.chdir(world.fork)
    result = CliRunner().invoke(cli, [*SUPPRESS[:-1], " "])
    assert result.exit_code == 2 and "--reason must say why" in result.output
    assert not (world.fork / SUPPRESSIONS).exists()


def test_reviews_of_a_backend_without_a_spec_tree_are_read(tmp_path) -> None:
    """Seen on FlagTree: no backend there has a spec tree, so `suppress` wrote entries drift never read."""
    from types import SimpleNamespace
    from sync.model import Finding
    from sync.records.suppressions import apply_suppressions
    from sync.facts.trees import DiskTree
    blob = "a" * 40
    toml = tmp_path / "third_party/zeta/backend/spec/suppressions.toml"
    toml.parent.mkdir(parents=True)
    toml.write_text('[[suppress]]\nkind = "op-verifier-changed"\npath = "third_party/zeta/lib/P.cpp"\n'
                    f'reviewed_for = "v2"\ntrunk = "lib/Ops.cpp"\ntrunk_blob = "{blob}"\nreason = "checked"\n')
    finding = Finding("op-verifier-changed", "third_party/zeta/lib/P.cpp", "m", line=3, backend="zeta",
                      related_path="lib/Ops.cpp")
    new = SimpleNamespace(blob_id=lambda path: blob if path == "lib/Ops.cpp" else None)
    (out,) = apply_suppressions([finding], DiskTree(tmp_path), new, backends=[])  # the spec backends: none
    assert out.suppressed is not None and out.suppressed.reason == "checked"


def _grouped_finding():
    from sync.model import Finding
    return Finding("call-signature", "third_party/zeta/lib/A.cpp", "m", line=3, backend="zeta",
                   related_path="include/Attrs.td",
                   details={"callee": "x::FooAttr::get (attr FooAttr)", "sites": [
                       "third_party/zeta/lib/A.cpp:3", "third_party/zeta/lib/A.cpp:9", "third_party/zeta/lib/B.cpp:4"],
                       "callees": ["FooAttr::get (attr FooAttr)", "x::FooAttr::get (attr FooAttr)"]})


def _entry(path: str, callee: str, blob: str) -> str:
    return (f'[[suppress]]\nkind = "call-signature"\npath = "{path}"\nsubject = "{callee}"\nreviewed_for = "v2"\n'
            f'trunk = "include/Attrs.td"\ntrunk_blob = "{blob}"\nreason = "checked {path}"\n')


def test_a_finding_per_upstream_change_is_reviewed_when_every_file_of_its_sites_is(tmp_path) -> None:
    """Issue 33: the per-call findings' entries still count for the finding that groups them; a site in a
    file nobody reviewed opens it again; `suppress` writes an entry for each file among its sites."""
    from types import SimpleNamespace
    from sync.records.suppressions import apply_suppressions, parse_suppressions, with_suppression
    from sync.facts.trees import DiskTree
    blob = "a" * 40
    toml = tmp_path / "third_party/zeta/backend/spec/suppressions.toml"
    toml.parent.mkdir(parents=True)
    new = SimpleNamespace(blob_id=lambda path: blob if path == "include/Attrs.td" else None)
    # old per-call entries, each with the callee as that call spelled it
    toml.write_text(_entry("third_party/zeta/lib/A.cpp", "x::FooAttr::get (attr FooAttr)", blob))
    (out,) = apply_suppressions([_grouped_finding()], DiskTree(tmp_path), new, backends=[])
    assert out.suppressed is None  # B.cpp's call was never reviewed
    toml.write_text(toml.read_text() + _entry("third_party/zeta/lib/B.cpp", "FooAttr::get (attr FooAttr)", blob))
    (out,) = apply_suppressions([_grouped_finding()], DiskTree(tmp_path), new, backends=[])
    assert out.suppressed is not None and out.suppressed.reason == "checked third_party/zeta/lib/A.cpp"
    # suppress on the grouped finding: one entry per file of its sites
    written = with_suppression(None, _grouped_finding(), new, "v2", "ok")  # type: ignore[arg-type]
    entries = parse_suppressions(written, "x")
    assert [entry.path for entry in entries] == ["third_party/zeta/lib/A.cpp", "third_party/zeta/lib/B.cpp"]
    toml.write_text(written)
    (out,) = apply_suppressions([_grouped_finding()], DiskTree(tmp_path), new, backends=[])
    assert out.suppressed is not None
    with pytest.raises(Exception, match="already suppressed"):
        with_suppression(written, _grouped_finding(), new, "v2", "again")  # type: ignore[arg-type]
