"""Provenance: drift merges from the recorded base; check keeps the manifest honest."""
from __future__ import annotations

import re

from click.testing import CliRunner

from sync.check.policy import check_tree
from sync.cli import cli
from sync.records.provenance import load_manifest
from sync.facts.trees import DiskTree
from tests.drift_helpers import alpha_findings
from tests.conftest import git

A = "third_party/alpha/backend/spec/triton/"
MANIFEST = "third_party/alpha/backend/spec/provenance.toml"


def record(world, tag: str = "v3.5.0") -> None:
    result = CliRunner().invoke(cli, ["provenance", "--repo", str(world.fork), "--tag", tag, "--backend", "alpha"])
    assert result.exit_code == 0, result.output
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "alpha: provenance")


def test_without_manifest_the_report_says_it_used_the_old_tag(world) -> None:
    finding = alpha_findings(world)[("overlay-auto-mergeable", A + "tools/compile.py")]
    assert finding.details["base"]["source"] == "old tag (no provenance manifest)"


def test_manifest_base_is_used_for_the_merge(world) -> None:
    record(world)
    text = (world.fork / MANIFEST).read_text()
    assert f'path = "{A}tools/compile.py"' in text and 'tag = "v3.5.0"' in text
    assert alpha_findings(world)[("overlay-auto-mergeable", A + "tools/compile.py")].details["base"]["source"] == \
        "provenance"
    # Say the overlay was in fact derived from 3.6.0's compile.py: then upstream has nothing it missed.
    new_blob = git(world.fork, "rev-parse", "v3.6.0:python/triton/tools/compile.py").strip()
    manifest = (world.fork / MANIFEST).read_text()
    manifest = re.sub(r'(path = "[^"]*tools/compile.py"\ntrunk = "[^"]*"\n)tag = "v3.5.0"\nblob = "[0-9a-f]+"',
                      rf'\1tag = "v3.6.0"\nblob = "{new_blob}"', manifest)
    (world.fork / MANIFEST).write_text(manifest)
    git(world.fork, "commit", "-qam", "alpha: compile.py came from 3.6.0")
    found = alpha_findings(world)
    assert ("overlay-in-sync", A + "tools/compile.py") in found
    assert ("overlay-auto-mergeable", A + "tools/compile.py") not in found


def test_check_reports_stale_and_missing_entries(world) -> None:
    record(world)
    assert [f.code for f in check_tree(DiskTree(world.fork)) if f.code in ("FT015", "FT016")] == []
    (world.fork / A / "runtime/cache.py").unlink()
    (world.fork / A / "tools/disasm.py").write_text("X = 1\n")
    codes = {(f.code, f.path) for f in check_tree(DiskTree(world.fork)) if f.code in ("FT015", "FT016")}
    assert codes == {("FT015", MANIFEST), ("FT016", A + "tools/disasm.py")}


def test_a_file_left_at_its_old_base_is_on_record_with_it(world) -> None:
    """Found on the 3.7 move (issue 48): provenance wrote a manifest without the files it left at their old
    base, and check then asked for each (FT016: "rerun provenance"), which could not add them. Such a file is
    recorded with its old base, what drift merges from anyway."""
    result = CliRunner().invoke(cli, ["provenance", "--repo", str(world.fork), "--tag", "v3.6.0", "--backend", "alpha",
                                      "--from", "v3.5.0"])
    left = result.output.split("left at their old base: ", 1)[1].split(":", 1)[0].split(", ")
    assert result.exit_code == 1 and A + "runtime/autotuner.py" in left, result.output
    manifest = load_manifest(DiskTree(world.fork), "alpha")
    assert manifest is not None and manifest[A + "runtime/autotuner.py"].tag == "v3.5.0"
    assert not [f for f in check_tree(DiskTree(world.fork)) if f.code == "FT016"]


def test_provenance_for_unknown_backend(world) -> None:
    result = CliRunner().invoke(cli, ["provenance", "--repo", str(world.fork), "--tag", "v3.5.0", "--backend", "x"])
    assert result.exit_code == 2 and "no spec tree for backend x" in result.output


def test_tag_with_a_quote_round_trips(world) -> None:
    git(world.fork, "tag", 'v3.5.0"q', "v3.5.0")
    record(world, 'v3.5.0"q')
    assert {entry.tag for entry in load_manifest(DiskTree(world.fork), "alpha").values()} == {'v3.5.0"q'}
    assert [f.code for f in check_tree(DiskTree(world.fork)) if f.code in ("FT015", "FT016", "FT017")] == []


def test_provenance_refuses_a_symlinked_manifest(world, tmp_path) -> None:
    victim = tmp_path / "victim.toml"
    victim.write_text("# not the repository's\n")
    (world.fork / MANIFEST).symlink_to(victim)
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "a planted symlink")
    result = CliRunner().invoke(cli, ["provenance", "--repo", str(world.fork), "--tag", "v3.5.0", "--backend", "alpha"])
    assert result.exit_code == 2 and "is a symlink" in result.output, result.output
    assert victim.read_text() == "# not the repository's\n"


def test_malformed_manifest_is_exit_2_for_drift_and_a_finding_for_check(world) -> None:
    record(world)
    text = (world.fork / MANIFEST).read_text()
    (world.fork / MANIFEST).write_text(text.replace('tag = "v3.5.0"', "tag = 350", 1))
    git(world.fork, "commit", "-qam", "alpha: a hand-edited manifest")
    line = next(n for n, row in enumerate((world.fork / MANIFEST).read_text().splitlines(), 1) if row == "tag = 350")
    result = CliRunner().invoke(cli, ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0"])
    assert result.exit_code == 2 and f"{MANIFEST}:{line}: [[file]] entry 1: tag must be a string" in result.output
    found = [(f.code, f.path, f.line) for f in check_tree(DiskTree(world.fork)) if f.code.startswith("FT01")]
    assert ("FT017", MANIFEST, line) in found and not any(code in ("FT015", "FT016") for code, _, _ in found)


def test_recording_the_same_bases_again_changes_nothing(world) -> None:
    record(world, "v3.6.0")
    again = CliRunner().invoke(cli, ["provenance", "--repo", str(world.fork), "--tag", "v3.6.0", "--backend", "alpha"])
    assert again.exit_code == 0 and "nothing changed" in again.output and "commit it" not in again.output
    assert git(world.fork, "status", "--porcelain") == ""
    other = CliRunner().invoke(cli, ["provenance", "--repo", str(world.fork), "--tag", "v3.5.0", "--backend", "alpha"])
    assert "commit it with the backend" in other.output  # a real change still asks for the commit


def test_a_redundant_overlay_is_advised_deletion_not_a_merge(world) -> None:
    """An overlay identical to its trunk file at its base holds nothing of FlagTree's: once upstream changes
    that file, the fix is to delete the overlay (drift: overlay-redundant), never to merge upstream into it."""
    autotuner = A + "runtime/autotuner.py"
    (world.fork / autotuner).write_text(git(world.fork, "show", "v3.5.0:python/triton/runtime/autotuner.py"))
    git(world.fork, "commit", "-qam", "alpha: autotuner back to trunk's")
    result = CliRunner().invoke(cli, ["provenance", "--repo", str(world.fork), "--tag", "v3.6.0", "--backend", "alpha",
                                      "--from", "v3.5.0"])
    assert result.exit_code == 1, result.output
    advice = [line for line in result.output.splitlines() if autotuner in line]
    assert len(advice) == 1 and "delete them (git rm)" in advice[0] and "drift --apply" not in advice[0], advice


def test_advice_that_provenance_reads_the_commit_not_the_work_tree(world) -> None:
    """Found on the 3.7 move (issue 48): the advice "delete them (git rm), then run provenance again", followed
    to the letter, failed again, because provenance reads the branch's commit. The advice says to commit, and
    a named file whose change is only in the work tree is named as such; once committed, provenance passes."""
    autotuner = A + "runtime/autotuner.py"
    (world.fork / autotuner).write_text(git(world.fork, "show", "v3.5.0:python/triton/runtime/autotuner.py"))
    git(world.fork, "commit", "-qam", "alpha: autotuner back to trunk's")
    args = ["provenance", "--repo", str(world.fork), "--tag", "v3.6.0", "--backend", "alpha", "--from", "v3.5.0"]
    first = CliRunner().invoke(cli, args)
    assert "git rm" in first.output and "commit" in first.output.split("git rm", 1)[1], first.output
    git(world.fork, "rm", "-q", autotuner)
    staged = CliRunner().invoke(cli, args)
    assert staged.exit_code == 1, staged.output
    uncommitted = [line for line in staged.output.splitlines() if "not committed" in line]
    assert len(uncommitted) == 1 and autotuner in uncommitted[0], staged.output
    git(world.fork, "commit", "-qm", "alpha: drop the redundant autotuner")
    done = CliRunner().invoke(cli, args)
    assert autotuner not in done.output and "not committed" not in done.output, done.output


def test_provenance_with_nothing_to_record_is_one_line_and_exit_0(world) -> None:
    """Issue 48.4: a backend of the tree with no file that stands in for trunk (no spec tree at all, or only
    files of its own) has nothing to record: not an error. A name that is no backend still is."""
    (world.fork / "third_party/gamma/backend").mkdir(parents=True)
    (world.fork / "third_party/gamma/backend/driver.py").write_text("X = 1\n")
    (world.fork / "third_party/delta/backend/spec/triton").mkdir(parents=True)
    (world.fork / "third_party/delta/backend/spec/triton/own_module.py").write_text("Y = 1\n")
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "gamma and delta: nothing over trunk")
    for backend in ("gamma", "delta"):
        result = CliRunner().invoke(cli, ["provenance", "--repo", str(world.fork), "--tag", "v3.6.0",
                                          "--backend", backend])
        assert result.exit_code == 0, result.output
        assert result.output.count("\n") == 1 and "nothing to record" in result.output
        assert not (world.fork / f"third_party/{backend}/backend/spec/provenance.toml").exists()
