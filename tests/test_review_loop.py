"""The review loop on the upgraded branch converges: fixes, applied merges and committed reviews there
leave what needs a person, visibly; every backend finding can be reviewed."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from sync.errors import SyncError
from sync.jobs.review import SuppressRequest, _the_finding
from sync.model import Finding

from tests.conftest import git, invoke

A = "third_party/alpha/backend/spec/triton/"
B = "third_party/beta/backend/spec/"
RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]
TARGET = ["--target", "sync/v3.6.0"]


def upgraded_checkout(world, tmp_path: Path) -> Path:
    assert invoke("upgrade", "--repo", str(world.fork), "--onto", "v3.6.0", "-q").exit_code == 1
    checkout = tmp_path / "sync"
    git(world.fork, "worktree", "add", "-q", str(checkout), "sync/v3.6.0")
    return checkout


def drift(repo: Path, *extra: str) -> dict:
    result = invoke("drift", "--repo", str(repo), *RANGE, *TARGET, "--json", *extra)
    return json.loads(result.stdout)


def findings(document: dict) -> dict[tuple[str, str], dict]:
    return {(f["kind"], f["path"]): f for group in document["groups"] for f in group["findings"]}


def test_apply_converges_and_the_checked_out_branch_moves_with_its_files(world, tmp_path: Path) -> None:
    checkout = upgraded_checkout(world, tmp_path)
    before = findings(drift(checkout))
    assert ("overlay-auto-mergeable", A + "tools/compile.py") in before
    result = invoke("drift", "--repo", str(checkout), *RANGE, *TARGET, "--apply")
    assert "committed the merged overlay(s) on sync/v3.6.0" in result.output
    assert git(checkout, "status", "--porcelain") == ""  # index and files follow the commit
    assert git(checkout, "log", "-1", "--format=%s").strip() == "Auto-merge drifted overlays"
    assert (checkout / A / "tools/compile.py").read_text() == git(checkout, "show", f"HEAD:{A}tools/compile.py")
    after = findings(drift(checkout))
    assert ("overlay-auto-mergeable", A + "tools/compile.py") not in after
    assert ("overlay-in-sync", A + "tools/compile.py") in after
    assert not [key for key in after if key[0] == "overlay-auto-mergeable"]


def test_apply_refuses_to_overwrite_a_local_change_and_keeps_an_unrelated_one(world, tmp_path: Path) -> None:
    checkout = upgraded_checkout(world, tmp_path)
    tip = git(checkout, "rev-parse", "HEAD")
    (checkout / A / "tools/compile.py").write_text("# my own edit\n")
    result = invoke("drift", "--repo", str(checkout), *RANGE, *TARGET, "--apply")
    assert result.exit_code == 2 and result.output.startswith("flagtree-sync: error:")
    assert "checked out in" in result.output and "nothing was changed" in result.output
    assert f"local changes to {A}tools/compile.py would be overwritten" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert git(checkout, "rev-parse", "HEAD") == tip
    assert (checkout / A / "tools/compile.py").read_text() == "# my own edit\n"
    git(checkout, "checkout", "--", A + "tools/compile.py")
    (checkout / "NOTES.txt").write_text("mine\n")
    (checkout / "python/triton/errors.py").write_text("# unrelated local change\n")
    assert invoke("drift", "--repo", str(checkout), *RANGE, *TARGET, "--apply").exit_code == 1
    assert git(checkout, "rev-parse", "HEAD") != tip
    assert (checkout / "NOTES.txt").read_text() == "mine\n"
    assert (checkout / "python/triton/errors.py").read_text() == "# unrelated local change\n"
    assert git(checkout, "status", "--porcelain").splitlines() == [" M python/triton/errors.py", "?? NOTES.txt"]


def test_apply_on_a_branch_not_checked_out_still_commits_in_memory(world) -> None:
    assert invoke("upgrade", "--repo", str(world.fork), "--onto", "v3.6.0", "-q").exit_code == 1
    tip = git(world.fork, "rev-parse", "sync/v3.6.0")
    result = invoke("drift", "--repo", str(world.fork), *RANGE, *TARGET, "--apply")
    assert "committed the merged overlay(s)" in result.output
    assert git(world.fork, "rev-parse", "sync/v3.6.0^") == tip
    assert git(world.fork, "status", "--porcelain") == ""


def test_a_review_is_hinted_at_until_committed_then_shows_as_reviewed(world, tmp_path: Path) -> None:
    checkout = upgraded_checkout(world, tmp_path)
    key = ("guard-default-changed", B + "include/flagtree_spec.h")
    result = invoke("suppress", "--repo", str(checkout), *RANGE, *TARGET, "--kind", key[0], "--path", key[1],
                    "--reason", "our fence covers it")
    assert result.exit_code == 0 and "commit it on sync/v3.6.0" in result.output, result.output
    text = invoke("drift", "--repo", str(checkout), *RANGE, *TARGET, "--backend", "beta").output
    assert "hint: third_party/beta/backend/spec/suppressions.toml in the work tree differs from sync/v3.6.0" in text
    assert "suppressed" not in findings(drift(checkout))[key]
    git(checkout, "add", B + "suppressions.toml")
    git(checkout, "commit", "-qm", "beta: reviewed")
    text = invoke("drift", "--repo", str(checkout), *RANGE, *TARGET, "--backend", "beta").output
    assert "hint:" not in text
    line = next(line for line in text.splitlines() if key[0] in line)
    assert line.lstrip().startswith("reviewed") and "(reviewed: our fence covers it)" in line
    document = drift(checkout)
    assert findings(document)[key]["suppressed"]["reason"] == "our fence covers it"
    beta = next(group for group in document["groups"] if group["name"] == "beta")
    assert beta["counts"]["suppressed"] == 1


def test_fixes_committed_on_the_branch_clear_spec_guard_and_symbol_findings(world, tmp_path: Path) -> None:
    checkout = upgraded_checkout(world, tmp_path)
    before = findings(drift(checkout, "--symbols"))
    for key in [("spec-dead", B + "triton/_matmul.py"), ("spec-signature-mismatch", B + "triton/testing.py"),
                ("guard-unused", B + "include/flagtree_spec.h"), ("symbol-removed", "python/triton/compiler/compiler.py")]:
        assert key in before
    git(checkout, "rm", "-q", B + "triton/_matmul.py")
    for path, old, new in [
            (B + "triton/__init__.py", "from ._matmul import matmul_heuristics\n", ""),
            (B + "triton/testing.py", "rep=50):", "rep=50, quantiles=None):"),
            (B + "include/flagtree_spec.h", "#define FLAGTREE_SPEC_Utility_legacyHelper\n", ""),
            ("python/triton/compiler/compiler.py", "    get_cache_manager(str(src))\n", ""),
            ("python/triton/compiler/compiler.py", "from triton.runtime.cache import get_cache_manager\n", "")]:
        file = checkout / path
        file.write_text(file.read_text().replace(old, new))
    git(checkout, "commit", "-qam", "fix the drift on the branch")
    after = findings(drift(checkout, "--symbols"))
    assert ("spec-dead", B + "triton/_matmul.py") not in after
    assert ("spec-signature-mismatch", B + "triton/testing.py") not in after
    assert ("guard-unused", B + "include/flagtree_spec.h") not in after
    assert ("symbol-removed", "python/triton/compiler/compiler.py") not in after
    assert ("guard-default-changed", B + "include/flagtree_spec.h") in after  # upstream's change stays to review
    fork_view = findings(json.loads(invoke("drift", "--repo", str(world.fork), *RANGE, "--json").stdout))
    assert ("spec-dead", B + "triton/_matmul.py") in fork_view  # without --target: the FlagTree branch


def test_a_hand_merged_overlay_is_in_sync_once_its_new_base_is_recorded(world, tmp_path: Path) -> None:
    checkout = upgraded_checkout(world, tmp_path)
    overlay = checkout / A / "runtime/autotuner.py"
    overlay.write_text(overlay.read_text().replace("<= 16]", '<= 16 and config.get("num_stages", 2) <= 4]'))
    git(checkout, "commit", "-qam", "alpha: merge the autotuner by hand")
    assert ("overlay-conflicting", A + "runtime/autotuner.py") in findings(drift(checkout))
    # tools/compile.py still lacks v3.6.0's change (auto-mergeable, not applied): it keeps its old base, so drift
    # still shows it; recording v3.6.0 for it would have made it "in sync" with the change missing (a trial user).
    for given in ([], ["--from", "v3.5.0"]):  # the old tag read from the branch's pins, or given
        recorded = invoke("provenance", "--repo", str(checkout), "--tag", "v3.6.0", "--backend", "alpha", *given)
        assert recorded.exit_code == 1 and f"left at their old base: {A}tools/compile.py:" in recorded.output
    git(checkout, "add", "third_party/alpha")
    git(checkout, "commit", "-qm", "alpha: record the v3.6.0 bases")
    after = findings(drift(checkout))
    assert ("overlay-in-sync", A + "runtime/autotuner.py") in after
    assert ("overlay-auto-mergeable", A + "tools/compile.py") in after
    assert invoke("drift", "--repo", str(checkout), *RANGE, *TARGET, "--apply").exit_code == 1
    again = invoke("provenance", "--repo", str(checkout), "--tag", "v3.6.0", "--backend", "alpha")
    assert again.exit_code == 0 and "left at" not in again.output, again.output


@pytest.mark.parametrize("kind, path, symbols", [
    ("spec-dead", B + "triton/_matmul.py", False),  # its call site's file is deleted upstream
    ("guard-unused", B + "include/flagtree_spec.h", False),  # no trunk file at all
    ("symbol-removed", "python/triton/compiler/compiler.py", True),  # the symbol's file is deleted upstream
    ("key-string-review", "python/triton/ops/matmul.py", True),  # the finding's own file is deleted upstream
    ("co-change-review", "python/triton/compiler/compiler.py", True),
    ("spec-signature-mismatch", B + "triton/testing.py", False),
])
def test_every_backend_kind_can_be_reviewed_and_the_review_expires_with_the_release(
        world, monkeypatch, kind: str, path: str, symbols: bool) -> None:
    monkeypatch.chdir(world.fork)
    result = invoke("suppress", *RANGE, "--kind", kind, "--path", path, "--reason", "reviewed")
    assert result.exit_code == 0, result.output
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "beta: reviewed")
    extra = ["--symbols"] if symbols else []
    document = json.loads(invoke("drift", *RANGE, "--json", *extra).stdout)
    assert findings(document)[(kind, path)]["suppressed"] == {"reason": "reviewed", "reviewed_for": "v3.6.0"}
    again = invoke("suppress", *RANGE, "--kind", kind, "--path", path, "--reason", "again")
    assert again.exit_code == 2 and "already suppressed" in again.output
    # the next upstream release: an entry without a trunk file holds for its release only
    upstream = world.upstream
    (upstream / "NEWS").write_text("3.7.0\n")
    git(upstream, "add", "NEWS")
    git(upstream, "commit", "-qm", "3.7.0")
    git(upstream, "tag", "v3.7.0")
    git(world.fork, "fetch", "-q", "upstream", "--tags")
    later = findings(json.loads(invoke("drift", "--from", "v3.5.0", "--onto", "v3.7.0", "--json", *extra).stdout))
    entry = (world.fork / B / "suppressions.toml").read_text()
    if "upstream_tree" in entry:
        assert "suppressed" not in later[(kind, path)]
        assert later[(kind, path)]["details"]["suppression_expired"]["reviewed_for"] == "v3.6.0"
    else:  # a trunk file's blob: still the same at 3.7.0, so still reviewed
        assert later[(kind, path)]["suppressed"]["reason"] == "reviewed"


def test_the_entry_names_its_subject_and_what_it_expires_on(world, monkeypatch) -> None:
    monkeypatch.chdir(world.fork)
    assert invoke("suppress", *RANGE, "--kind", "guard-unused", "--path", B + "include/flagtree_spec.h",
                  "--reason", "kept for 3.7").exit_code == 0
    entry = (world.fork / B / "suppressions.toml").read_text()
    assert 'subject = "FLAGTREE_SPEC_Utility_legacyHelper"' in entry
    assert "upstream_tree = " in entry and "trunk_blob" not in entry
    new_tree = git(world.fork, "rev-parse", "v3.6.0^{tree}").strip()
    assert f'upstream_tree = "{new_tree}"' in entry


def _finding(subject: str) -> Finding:
    return Finding("guard-default-changed", "h.h", "m", backend="beta", details={"macro": subject})


def _review(reason: str, subject: str | None = None) -> SuppressRequest:
    return SuppressRequest(kind="guard-default-changed", path="h.h", reason=reason, subject=subject)


def test_several_findings_of_a_kind_on_one_path_need_a_subject() -> None:
    found = [_finding("FLAGTREE_SPEC_A"), _finding("FLAGTREE_SPEC_B")]
    with pytest.raises(SyncError, match="2 guard-default-changed findings on h.h: pass --subject "
                                        r"\(one of: FLAGTREE_SPEC_A, FLAGTREE_SPEC_B;"):
        _the_finding(found, _review("r"))
    # a trial user counted 4 findings where the message said 3: it counted subjects
    with pytest.raises(SyncError, match="3 guard-default-changed findings on h.h about 2 subjects: pass --subject"):
        _the_finding([*found, _finding("FLAGTREE_SPEC_B")], _review("r"))
    chosen = _the_finding(found, _review("r", subject="FLAGTREE_SPEC_B"))
    assert chosen.details["macro"] == "FLAGTREE_SPEC_B"
    with pytest.raises(SyncError, match="about FLAGTREE_SPEC_C"):
        _the_finding(found, _review("r", subject="FLAGTREE_SPEC_C"))


def test_a_finding_of_no_backend_is_reviewed_in_the_trunk_file(world, monkeypatch) -> None:
    """Issue 48: a shared-trunk warning that asks for a check (op-verifier-changed, a key string) had nowhere
    to be recorded once checked (suppress refused: no backend), so drift could never exit 0. Its review goes to
    .flagtree-sync/suppressions.toml, beside check's baseline, and counts as a backend's does."""
    monkeypatch.chdir(world.fork)
    result = invoke("suppress", *RANGE, "--kind", "spec-unimplemented", "--path", "python/triton/errors.py",
                    "--reason", "checked: the hook is optional")
    assert result.exit_code == 0, result.output
    assert "spec-unimplemented" in (world.fork / ".flagtree-sync/suppressions.toml").read_text()
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", "Review the optional hook")
    report = json.loads(invoke("drift", "--repo", str(world.fork), *RANGE, "--json").output)
    reviewed = [f for group in report["groups"] for f in group["findings"]
                if (f["kind"], f["path"]) == ("spec-unimplemented", "python/triton/errors.py")]
    assert reviewed and all(f.get("suppressed") for f in reviewed), reviewed
    (world.fork / ".flagtree-sync/suppressions.toml").write_text("[[suppress]]\nkind = 1\n")
    checked = invoke("check", str(world.fork))
    assert "FT017" in checked.output and ".flagtree-sync/suppressions.toml" in checked.output, checked.output


def test_an_overlay_still_in_conflict_keeps_its_old_base(world, tmp_path: Path) -> None:
    """Every hunk of the autotuner conflicts, and each resolved to the file's side is the file: that is no sign
    that it holds v3.6.0's change (it does not), so recording v3.6.0 as its base would hide the change for good."""
    checkout = upgraded_checkout(world, tmp_path)
    assert ("overlay-conflicting", A + "runtime/autotuner.py") in findings(drift(checkout))
    recorded = invoke("provenance", "--repo", str(checkout), "--tag", "v3.6.0", "--backend", "alpha")
    assert recorded.exit_code == 1 and A + "runtime/autotuner.py" in recorded.output.split("left at their old base")[-1]
    git(checkout, "add", "third_party/alpha")
    git(checkout, "commit", "-qm", "alpha: record the v3.6.0 bases")
    after = findings(drift(checkout))
    assert ("overlay-in-sync", A + "runtime/autotuner.py") not in after
    assert ("overlay-conflicting", A + "runtime/autotuner.py") in after
