"""Input that real repositories contain: broken, binary, CRLF, symlinked and non-UTF-8 files, backends
without spec/, long histories. The run goes on and says what it could not analyse."""
from __future__ import annotations

import subprocess
import tracemalloc

from click.testing import CliRunner

from sync.cli import cli
from tests.drift_helpers import drift_of
from tests.conftest import git

A = "third_party/alpha/backend/spec/triton/"


def fork_commit(world, files: dict[str, bytes], message: str = "odd files", links: dict[str, str] | None = None) -> None:
    for path, data in files.items():
        target = world.fork / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    for path, destination in (links or {}).items():
        (world.fork / path).unlink(missing_ok=True)
        (world.fork / path).symlink_to(destination)
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", message)


def drift(world) -> dict[tuple[str, str], str]:
    return {(f.kind, f.path): f.message for f in drift_of(world, symbols=True).findings}


def test_broken_binary_symlinked_and_crlf_overlays(world) -> None:
    compile_text = (world.fork / A / "tools/compile.py").read_text()
    fork_commit(world, {
        A + "runtime/jit.py": b"def broken(:\n    pass\n",
        A + "tools/disasm.py": b"\x7fELF\x00\x01binary overlay",
        A + "tools/compile.py": compile_text.replace("\n", "\r\n").encode(),
    }, links={A + "runtime/autotuner.py": "../../../../../../python/triton/runtime/autotuner.py"})
    found = drift(world)
    assert "not valid Python" in found[("overlay-unparsable", A + "runtime/jit.py")]
    assert ("overlay-binary", A + "tools/disasm.py") in found
    assert ("overlay-symlink", A + "runtime/autotuner.py") in found
    # Issue 45: a link the analysis did not read is no evidence of a break (three on 3.3 -> 3.4): a look
    assert {f.severity for f in drift_of(world, symbols=True).findings if f.kind == "overlay-symlink"} == {"info"}
    assert ("overlay-conflicting", A + "runtime/autotuner.py") not in found  # a link is not merged
    # CRLF against LF trunk: every line differs, so the merge conflicts instead of silently mixing endings
    assert ("overlay-conflicting", A + "tools/compile.py") in found
    assert ("overlay-orphan", A + "runtime/cache.py") in found  # the rest is still analysed


def test_non_utf8_contents_and_paths(world) -> None:
    fork_commit(world, {
        A + "runtime/driver.py": "# caf\u00e9\n".encode("latin-1") + (world.fork / A / "runtime/driver.py").read_bytes(),
        "python/triton/tools/na\u00efve.py": b"X = '\xff\xfe'\n",
    })
    found = drift(world)
    assert ("overlay-in-sync", A + "runtime/driver.py") in found
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                                      "-q", "--out", str(world.root / "r")])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "na\u00efve.py" in git(world.fork, "-c", "core.quotePath=false", "ls-tree", "-r", "--name-only", "sync/v3.6.0")


def test_backend_without_spec_directory(world) -> None:
    fork_commit(world, {"third_party/gamma/backend/compiler.py": b"NAME = 'gamma'\n"})
    found = drift(world)
    assert ("backend-without-spec", "third_party/gamma/backend") in found


def test_thousands_of_commits_in_range_with_bounded_memory(world) -> None:
    # 3000 small FlagTree commits in one fast-import batch
    stream = []
    parent = git(world.fork, "rev-parse", "main").strip()
    for number in range(3000):
        body = f"VALUE = {number}\n"
        message = f"commit {number}\n"
        stream.append(f"commit refs/heads/main\ncommitter T <t@e> {1700200000 + number} +0000\n"
                      f"data {len(message)}\n{message}" + (f"from {parent}\n" if number == 0 else "")
                      + f"M 100644 inline third_party/gamma/backend/counter.py\ndata {len(body)}\n{body}\n")
    subprocess.run(["git", "-C", str(world.fork), "fast-import", "--quiet"], input="".join(stream), text=True,
                   check=True)
    git(world.fork, "reset", "-q", "--hard", "main")
    tracemalloc.start()
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                                      "-q", "--on-conflict", "theirs"])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result.exit_code == 1, result.output
    assert int(git(world.fork, "rev-list", "--count", "v3.6.0..sync/v3.6.0")) == 3006 + 1  # + the pin commit
    assert peak < 64 * 1024 * 1024  # the state grows with the range, the replay itself holds one commit
    assert git(world.fork, "show", "sync/v3.6.0:third_party/gamma/backend/counter.py") == "VALUE = 2999\n"


def test_drift_on_a_tree_without_flagtree_says_so(world) -> None:
    """An upstream clone used to print nothing and exit 0, which reads as `clean`."""
    result = CliRunner().invoke(cli, ["drift", "--repo", str(world.upstream), "--from", "v3.5.0", "--onto", "v3.6.0"])
    assert result.exit_code == 2
    assert "no FlagTree backend" in result.output and "Traceback" not in result.output


def test_upgrade_onto_the_base_itself_is_refused(world) -> None:
    """--onto equal to --from used to copy the branch under a new name and call it an upgrade."""
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.5.0"])
    assert result.exit_code == 2, result.output
    assert "nothing to upgrade" in result.output and "Traceback" not in result.output
    assert "sync/v3.5.0" not in git(world.fork, "branch", "--list")


def test_a_range_that_runs_backwards_or_is_empty_is_refused(world) -> None:
    """--onto older than --from reported every file upstream added since as deleted; --from X --onto X reported
    the fork's own consistency findings as drift (found by a sweep over real branches)."""
    first_flagtree = git(world.fork, "rev-list", "--reverse", "v3.5.0..main").split()[0]
    for command in ("drift", "upgrade"):
        backwards = CliRunner().invoke(cli, [command, "--repo", str(world.fork), "--from", first_flagtree[:9],
                                             "--onto", "v3.5.0"])
        assert backwards.exit_code == 2, backwards.output
        assert "is older than --from" in backwards.output and "Traceback" not in backwards.output
    empty = CliRunner().invoke(cli, ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.5.0"])
    assert empty.exit_code == 2 and "nothing to drift" in empty.output, empty.output
    assert not [line for line in git(world.fork, "branch", "--list").splitlines() if "sync/" in line]


def test_a_blob_missing_from_the_store_is_named_with_what_to_do(world) -> None:
    """Seen on a FlagTree mirror without its large files: libgit2's 'invalid object specified' said neither
    which file nor what to do."""
    (world.fork / "third_party/alpha/libfast.a").write_bytes(b"\x7fELF large binary the mirror left out\n")
    git(world.fork, "add", "third_party/alpha/libfast.a")
    git(world.fork, "commit", "-qm", "[alpha] a prebuilt library")
    blob = git(world.fork, "rev-parse", "HEAD:third_party/alpha/libfast.a").strip()
    (world.fork / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # loose: the commit was just made
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                                      "-q"])
    assert result.exit_code == 2, result.output
    assert "lacks the blob of third_party/alpha/libfast.a" in result.output
    assert "upgrade --abort" in result.output and "Traceback" not in result.output
