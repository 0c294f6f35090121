"""The third attack round (issue 47): nothing of the user's is touched, whatever the environment, and what the
tool cannot do is a one-line error (exit 2), never a crash or a wrong answer."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import sync
from sync.cli import cli
from tests.conftest import git, snapshot
from tests.test_hardening_state import ARGS, resolve_every_stop, state_dir, stop_at_first_conflict, upgrade

CODE = str(Path(sync.__file__).parents[1])  # the code under test, for the subprocesses
TARGET = "sync/v3.6.0"


def rev(repo: Path, name: str) -> str:
    return git(repo, "rev-parse", name).strip()


def tool(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI in a process of its own, with extra environment variables (as a git hook would have them)."""
    done = subprocess.run([sys.executable, "-m", "sync", *args], env={**os.environ, "PYTHONPATH": CODE, **(env or {})},
                          capture_output=True, text=True, cwd=cwd)
    assert "Traceback" not in done.stderr and done.returncode != 3, done.stderr
    return done


def other_checkout(tmp_path: Path) -> Path:
    """A repository of the user's with a staged file and an uncommitted edit."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    (other / "a.txt").write_text("committed\n")
    git(other, "add", "a.txt")
    git(other, "commit", "-qm", "first")
    (other / "a.txt").write_text("my uncommitted edit\n")
    (other / "staged.txt").write_text("staged\n")
    git(other, "add", "staged.txt")
    return other


# 1. git's repository variables

@pytest.mark.parametrize("variable", ["GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_DIR", "GIT_OBJECT_DIRECTORY",
                                      "GIT_COMMON_DIR"])
def test_a_repository_variable_naming_another_repository_is_refused(world, tmp_path: Path, variable: str) -> None:
    other = other_checkout(tmp_path)
    value = {"GIT_WORK_TREE": other, "GIT_INDEX_FILE": other / ".git" / "index", "GIT_DIR": other / ".git",
             "GIT_OBJECT_DIRECTORY": other / ".git" / "objects", "GIT_COMMON_DIR": other / ".git"}[variable]
    before, status = snapshot(other), git(other, "status", "--porcelain")
    done = tool(*ARGS, "--repo", str(world.fork), "--on-conflict", "stop", env={variable: str(value)})
    assert done.returncode == 2 and variable in done.stderr, done.stderr
    assert snapshot(other) == before and git(other, "status", "--porcelain") == status
    assert not (state_dir(world) / "upgrade.json").exists()


def test_repository_variables_naming_the_repository_are_followed_and_never_inherited(world, tmp_path: Path) -> None:
    """As inside a hook of the fork itself: the tool works as git would, and neither its own git processes
    (the stop worktree's cherry-pick and checkout) nor the gate's command see the variables."""
    dot_git = world.fork / ".git"
    env = {"GIT_DIR": str(dot_git), "GIT_WORK_TREE": str(world.fork), "GIT_INDEX_FILE": str(dot_git / "index"),
           "GIT_OBJECT_DIRECTORY": str(dot_git / "objects"), "GIT_COMMON_DIR": str(dot_git)}
    (world.fork / "mine.txt").write_text("an uncommitted file of mine\n")
    git(world.fork, "add", "mine.txt")
    before = snapshot(world.fork)
    seen = tmp_path / "seen"
    done = tool(*ARGS, "--repo", str(world.fork), "--on-conflict", "stop", "--exec",
                f"git rev-parse --show-toplevel > {seen}; env | grep '^GIT_DIR=' >> {seen}; true", env=env)
    assert done.returncode == 4, done.stderr
    assert {key: value for key, value in snapshot(world.fork).items() if "flagtree-sync" not in key} == \
        {key: value for key, value in before.items() if "flagtree-sync" not in key}
    assert git(world.fork, "diff", "--cached", "--name-only") == "mine.txt\n"
    stop = state_dir(world) / "worktree"
    assert git(stop, "diff", "--name-only", "--diff-filter=U") != ""  # the conflict is in the tool's worktree
    for path in git(stop, "diff", "--name-only", "--diff-filter=U").split():
        git(stop, "checkout", "--theirs", "--", path)
    git(stop, "add", "-A")
    done = tool("upgrade", "--repo", str(world.fork), "--continue", "-q", "--on-conflict", "markers", env=env)
    assert done.returncode == 1, done.stderr
    assert seen.read_text().splitlines()[0] != str(world.fork)  # the gate's git found the gate's worktree
    assert "GIT_DIR=" not in seen.read_text()
    assert git(world.fork, "diff", "--cached", "--name-only") == "mine.txt\n"


# 3. hooks

def hooks_that_log(world, tmp_path: Path) -> Path:
    """Hooks for every git operation the tool runs (core.hooksPath, as a relative one naming the replayed tree's
    directory would be), each writing its name to a log."""
    hooks, log = tmp_path / "hooks", tmp_path / "hooks.log"
    hooks.mkdir()
    for name in ("post-checkout", "post-index-change", "reference-transaction", "post-merge", "pre-commit",
                 "post-commit", "pre-auto-gc", "post-rewrite"):
        (hooks / name).write_text(f"#!/bin/sh\necho {name} >> {log}\n")
        (hooks / name).chmod(0o755)
    git(world.fork, "config", "core.hooksPath", str(hooks))
    return log


def test_the_tools_own_git_operations_run_no_hook(world, tmp_path: Path) -> None:
    log = hooks_that_log(world, tmp_path)
    stop_at_first_conflict(world, "--exec", "true", "--exec-at", "each")
    worktree = state_dir(world) / "worktree"
    while True:  # FlagTree's side of each conflict, taken with hooks off: the test's git is not the tool's
        quiet = ["-c", f"core.hooksPath={os.devnull}"]
        for path in git(worktree, *quiet, "diff", "--name-only", "--diff-filter=U").split():
            if subprocess.run(["git", *quiet, "checkout", "--theirs", "--", path], cwd=worktree).returncode != 0:
                git(worktree, *quiet, "rm", "-q", "--", path)
        git(worktree, *quiet, "add", "-A")
        result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--continue", "-q"])
        if result.exit_code != 4:
            break
    assert result.exit_code == 1, result.output
    stop_at_first_conflict(world, "--target-branch", "again")
    assert upgrade(world, "--abort").exit_code == 0
    assert not log.exists(), log.read_text()


# 2. refs the tool does not own

@pytest.mark.parametrize("spelling", ["main~0", "main@{0}", "main^{commit}", "main^0", "heads/main~0", "ID"])
def test_the_source_is_never_the_target_however_it_is_spelled(world, spelling: str) -> None:
    git(world.fork, "checkout", "-q", "--detach", "main")  # main checked out would be refused for that alone
    before = rev(world.fork, "main")
    result = upgrade(world, "--branch", before if spelling == "ID" else spelling, "--target-branch", "main", "--force")
    assert result.exit_code == 2 and "source branch" in result.output, result.output
    assert rev(world.fork, "main") == before


def test_an_edited_state_naming_a_branch_and_its_tip_moves_nothing(world) -> None:
    git(world.fork, "checkout", "-q", "--detach", "main")  # main is in no worktree: only the state protects it
    stop_at_first_conflict(world, "--branch", "main")
    header = json.loads((state_dir(world) / "upgrade.json").read_text())
    git(world.fork, "branch", "keep", "main")
    header["params"]["target_branch"] = "keep"
    header["target_was"] = rev(world.fork, "keep")  # as if --force had accepted it
    (state_dir(world) / "upgrade.json").write_text(json.dumps(header))
    before = rev(world.fork, "keep")
    result = resolve_every_stop(world, "-q")
    assert result.exit_code == 2 and "left as it is" in result.output, result.output
    assert rev(world.fork, "keep") == before


def test_force_still_replaces_the_branch_it_accepted(world) -> None:
    git(world.fork, "branch", TARGET, "v3.6.0")
    stop_at_first_conflict(world, "--force")
    assert resolve_every_stop(world, "-q").exit_code == 1
    assert rev(world.fork, TARGET) != rev(world.fork, "v3.6.0^{commit}")
    assert git(world.fork, "for-each-ref", "refs/flagtree-sync/") == ""


@pytest.mark.parametrize("how", ["made while stopped", "named in an edited state"])
def test_abort_deletes_no_branch_the_user_made(world, how: str) -> None:
    stop_at_first_conflict(world)
    wip = rev(world.fork, "refs/flagtree-sync/wip")
    name = TARGET if how == "made while stopped" else "mine"
    git(world.fork, "branch", name, wip)  # at exactly what the run would have made
    if name != TARGET:
        header = json.loads((state_dir(world) / "upgrade.json").read_text())
        header["params"]["target_branch"] = name
        (state_dir(world) / "upgrade.json").write_text(json.dumps(header))
    result = upgrade(world, "--abort")
    assert result.exit_code == 0 and "deleted" not in result.output, result.output
    assert rev(world.fork, name) == wip


def test_abort_deletes_the_branch_the_run_wrote(world, monkeypatch) -> None:
    """Killed after the branch was written, before the state went: --abort takes the branch with it."""
    from sync.replay import engine
    monkeypatch.setattr(engine, "finish_upgrade", lambda repo: None)  # the state outlives the run
    assert upgrade(world).exit_code == 1
    assert TARGET in git(world.fork, "branch")
    result = upgrade(world, "--abort")
    assert result.exit_code == 0 and TARGET not in git(world.fork, "branch"), result.output


# 4. missing objects

@pytest.fixture
def promisor_gone(world, tmp_path: Path) -> Path:
    """A blobless partial clone of the fork (tags included) whose promisor remote is gone."""
    git(world.fork, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", "--no-checkout", f"file://{world.fork}", str(clone)],
                   check=True, capture_output=True)
    git(clone, "fetch", "-q", "--filter=blob:none", "origin", "refs/tags/*:refs/tags/*")
    world.fork.rename(tmp_path / "gone")
    return clone


@pytest.mark.parametrize("args", [["drift", "--from", "v3.5.0", "--onto", "v3.6.0"],
                                  ["drift", "--from", "v3.5.0", "--onto", "v3.6.0", "--fast"],
                                  ["describe"]])
def test_missing_objects_are_an_error_naming_them(promisor_gone: Path, args: list[str]) -> None:
    result = CliRunner().invoke(cli, [*args, "--repo", str(promisor_gone)])
    assert result.exit_code == 2, result.output
    assert "lacks the objects" in result.output and "CMakeLists.txt" in result.output, result.output


# 5. target names git reads otherwise

@pytest.mark.parametrize("name", ["v3.6.0", "tags/v3.6.0", "heads/main", "remotes/x", "0" * 40, "a" * 64,
                                  "FETCH_HEAD", "ORIG_HEAD"])
def test_a_target_name_git_resolves_to_something_else_is_refused(world, name: str) -> None:
    result = upgrade(world, "--target-branch", name)
    assert result.exit_code == 2 and "refusing branch name" in result.output, result.output
    assert not (state_dir(world) / "upgrade.json").exists()
    assert git(world.fork, "for-each-ref", "--format=%(refname)", "refs/heads") == "refs/heads/main\n"


def test_a_target_name_a_ref_shadows_is_refused(world) -> None:
    git(world.fork, "update-ref", "refs/mine", "main")  # `git rev-parse mine` reads refs/mine first
    result = upgrade(world, "--target-branch", "mine")
    assert result.exit_code == 2 and "refs/mine exists" in result.output, result.output


# 7. overlays committed as Git LFS pointers

LFS_POINTER = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")


def test_an_overlay_committed_as_an_lfs_pointer_is_said_unread(world) -> None:
    overlays = ["third_party/alpha/backend/spec/triton/ops/matmul.py",
                "third_party/beta/backend/spec/lib/Analysis/Alias.cpp"]
    for path in overlays:
        (world.fork / path).write_text(LFS_POINTER)
    git(world.fork, "commit", "-qam", "overlays moved to LFS")
    result = CliRunner().invoke(cli, ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0",
                                      "--json"])
    assert result.exit_code == 1, result.output
    findings = [f for group in json.loads(result.output)["groups"] for f in group["findings"]]
    unread = sorted(f["path"] for f in findings if f["kind"] == "overlay-unreadable")
    assert unread == sorted(overlays)
    assert not [f for f in findings if f["path"] in overlays and f["kind"].startswith("overlay-")
                and f["kind"] != "overlay-unreadable"]


# 8. what a worktree cannot hold, in the middle of the range

def long_name_in_between(world) -> None:
    """A FlagTree commit adds a file of an over-long name; the next one deletes it: neither end holds it."""
    from tests.test_hardening_names import LONG, commit_long_name
    commit_long_name(world, conflicting=False)
    index = {**os.environ, "GIT_INDEX_FILE": str(world.root / "gone.index")}
    def plumb(*args: str) -> str:
        return subprocess.run(["git", "-C", str(world.fork), *args], env=index, capture_output=True, check=True,
                              text=True).stdout.strip()
    plumb("read-tree", "main")
    plumb("update-index", "--remove", "--force-remove", LONG)
    git(world.fork, "update-ref", "refs/heads/main", plumb("commit-tree", plumb("write-tree"), "-p", "main", "-m",
                                                          "[alpha] drop the long name"))
    git(world.fork, "reset", "-q", "--hard")


@pytest.mark.parametrize("needs", [["--on-conflict", "stop"], ["--exec", "true", "--exec-at", "each"]])
def test_a_name_too_long_in_an_intermediate_commit_is_refused_up_front(world, needs: list[str]) -> None:
    long_name_in_between(world)
    result = upgrade(world, *needs)
    assert result.exit_code == 2 and "needs a worktree" in result.output and "writes" in result.output, result.output
    assert not (state_dir(world) / "upgrade.json").exists()
    assert upgrade(world).exit_code == 1  # the replay in memory takes it


def test_a_gate_checkout_git_cannot_write_is_an_error_not_a_crash(world, monkeypatch) -> None:
    """Where the up-front check cannot see it (a name limit that differs), the gate says what failed."""
    from sync.replay import engine
    long_name_in_between(world)
    monkeypatch.setattr(engine, "require_checkoutable", lambda *args: None)
    for _ in range(2):  # the run, then the same command again: explained each time
        result = upgrade(world, "--exec", "true", "--exec-at", "each")
        assert result.exit_code == 2 and "File name too long" in result.output and "--abort" in result.output, \
            result.output
    assert upgrade(world, "--abort").exit_code == 0


def test_a_conflict_resolved_as_a_submodule_continues(world) -> None:
    """A gitlink's commit is in the submodule's store, not the repository's: reading it as a file was a KeyError."""
    stop_at_first_conflict(world)
    worktree = state_dir(world) / "worktree"
    conflicted = git(worktree, "diff", "--name-only", "--diff-filter=U").split()
    for path in conflicted[1:]:
        git(worktree, "checkout", "--theirs", "--", path)
        git(worktree, "add", "--", path)
    submodule = conflicted[0]
    git(worktree, "rm", "-q", "--cached", "--", submodule)
    (worktree / submodule).unlink()
    git(worktree, "update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},{submodule}")
    (worktree / submodule).mkdir()
    result = resolve_every_stop(world, "-q")
    assert result.exit_code == 1, result.output
    assert git(world.fork, "ls-tree", f"{TARGET}~1", "--", submodule).startswith("160000 commit 1111111111")


# 9. gate children that left the process group

@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("signal_number", [2, 15, 1, 9])  # SIGINT (Ctrl-C), SIGTERM, SIGHUP, SIGKILL
@pytest.mark.parametrize("escape", ["setsid sleep 300 & echo $! > {pid}; wait",
                                    "setsid sh -c 'sleep 300 & echo $! > {pid}; wait' & wait"])
def test_ending_the_tool_during_the_gate_ends_what_left_the_gates_group(world, tmp_path: Path, signal_number: int,
                                                                         escape: str) -> None:
    from tests.test_gate import gone_soon
    pid_file = tmp_path / "pid"
    tool_process = subprocess.Popen([sys.executable, "-m", "sync", "upgrade", "-q", "--repo", str(world.fork),
                                     "--onto", "v3.6.0", "--exec", escape.format(pid=pid_file)],
                                    env={**os.environ, "PYTHONPATH": CODE}, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
    try:
        for _ in range(2400):
            if (pid_file.exists() and pid_file.read_text().strip()) or tool_process.poll() is not None:
                break
            time.sleep(0.05)
        child = int(pid_file.read_text())
        os.kill(tool_process.pid, signal_number)
        tool_process.wait(60)
        assert gone_soon(child), f"pid {child} outlived the tool"
    finally:
        if tool_process.poll() is None:
            tool_process.kill()


# 10. what the environment refuses: exit 2 and one line, never a crash

def test_a_sha256_repository_is_said_unsupported(tmp_path: Path) -> None:
    repo = tmp_path / "sha256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(repo)], check=True)
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    for args in (["drift", "--from", "HEAD", "--onto", "HEAD"], ["describe"], ["upgrade", "--onto", "HEAD"]):
        done = tool(*args, "--repo", str(repo))
        assert done.returncode == 2 and "SHA-256" in done.stderr, done.stderr
    assert not (repo / ".git" / "flagtree-sync").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a repository to another user needs root")
def test_a_repository_of_another_user_is_exit_2_and_gets_no_file_of_ours(world) -> None:
    subprocess.run(["chown", "-R", "65534:65534", str(world.fork)], check=True)
    done = tool("drift", "--from", "v3.5.0", "--onto", "v3.6.0", "--repo", str(world.fork))
    assert done.returncode == 2 and "owned by another user" in done.stderr, done.stderr
    assert not (world.fork / ".git" / "flagtree-sync").exists()


@pytest.fixture
def mounted(tmp_path: Path):
    """A tmpfs of its own (root only), unmounted afterwards."""
    mount = tmp_path / "mount"
    mount.mkdir()
    made: list[Path] = []

    def make(size: str) -> Path:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        made.append(mount)
        return mount
    yield make
    for path in made:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def test_a_read_only_repository_is_exit_2(world, mounted) -> None:
    disk = mounted("64m")
    subprocess.run(["cp", "-a", str(world.fork), str(disk / "repo")], check=True)
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    for args in (ARGS, ["upgrade", "--continue"], ["upgrade", "--abort"]):
        done = tool(*args, "--repo", str(disk / "repo"))
        assert done.returncode == 2 and "Read-only file system" in done.stderr, done.stderr


def test_demo_on_a_full_disk_is_exit_2(mounted) -> None:
    disk = mounted("300k")  # full while git commits the demo's upstream
    done = tool("demo", str(disk / "demo"))
    assert done.returncode == 2 and "no space left on device" in done.stderr, done.stderr


def test_a_closed_stdout_is_no_crash(world) -> None:
    for args in (["drift", "--from", "v3.5.0", "--onto", "v3.6.0"], ["describe"], ["--help"]):
        done = subprocess.run(["sh", "-c", '"$@" >&-', "sh", sys.executable, "-m", "sync", *args,
                               *(["--repo", str(world.fork)] if args[0] != "--help" else [])],
                              env={**os.environ, "PYTHONPATH": CODE}, capture_output=True, text=True)
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr and "error" not in done.stderr, done.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--help"], ["drift", "--help"], ["--version"]])
def test_help_into_a_full_device_is_one_line(args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "sync", *args], env={**os.environ, "PYTHONPATH": CODE},
                              stdout=full, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines() == ["flagtree-sync: error: cannot write the output: No space left on device"]


def test_a_non_ascii_repository_path_under_a_c_locale(world, tmp_path: Path) -> None:
    moved = tmp_path / "dépôt"
    world.fork.rename(moved)
    env = {"PYTHONUTF8": "0", "LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0"}
    done = tool(*ARGS, "--repo", str(moved), env=env)
    assert done.returncode == 1, done.stderr
    done = tool(*ARGS, "--target-branch", "stops", "--on-conflict", "stop", "--exec", "true", "--repo", str(moved),
                env=env)
    assert done.returncode == 4, done.stderr
    assert tool("upgrade", "--abort", "--repo", str(moved), env=env).returncode == 0


# 11. commit messages keep the bytes git keeps

def raw_commit(world, name: str, body: bytes, author: bytes, encoding: bytes | None) -> str:
    """A commit on main, written byte for byte, adding a file of its own (no conflict)."""
    blob = subprocess.run(["git", "-C", str(world.fork), "hash-object", "-w", "--stdin"], input=name.encode(),
                          capture_output=True, check=True).stdout.decode().strip()
    parent = rev(world.fork, "main")
    index = {**os.environ, "GIT_INDEX_FILE": str(world.root / f"{name}.index")}
    subprocess.run(["git", "-C", str(world.fork), "read-tree", "main"], env=index, check=True)
    subprocess.run(["git", "-C", str(world.fork), "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}"],
                   env=index, check=True)
    tree = subprocess.run(["git", "-C", str(world.fork), "write-tree"], env=index, capture_output=True,
                          check=True).stdout.decode().strip()
    who = author + b" <a@example.com> 1700000000 +0100"
    raw = (f"tree {tree}\nparent {parent}\n".encode() + b"author " + who + b"\ncommitter " + who + b"\n"
           + (b"encoding " + encoding + b"\n" if encoding else b"") + b"\n" + body)
    commit = subprocess.run(["git", "-C", str(world.fork), "hash-object", "-t", "commit", "-w", "--stdin"], input=raw,
                            capture_output=True, check=True).stdout.decode().strip()
    git(world.fork, "update-ref", "refs/heads/main", commit)
    git(world.fork, "reset", "-q", "--hard")
    return commit


def body_and_header(repo: Path, commit: str) -> tuple[bytes, bytes]:
    raw = subprocess.run(["git", "-C", str(repo), "cat-file", "commit", commit], capture_output=True,
                         check=True).stdout
    header, _, body = raw.partition(b"\n\n")
    return b"\n".join(line for line in header.split(b"\n") if line.startswith((b"author", b"encoding"))), \
        body.split(b"\n\n(cherry picked from commit")[0]


def test_replayed_messages_keep_the_bytes_git_cherry_pick_keeps(world, tmp_path: Path) -> None:
    sources = [raw_commit(world, "invalid.txt", b"[alpha] caf\xe9 \xff\xfe not UTF-8\n\nbody \xc3\n", b"A. Uthor",
                          None),
               raw_commit(world, "latin.txt", b"[alpha] Jos\xe9's fix\n", b"Jos\xe9", b"ISO-8859-1")]
    assert upgrade(world, "--on-conflict", "ours").exit_code == 1
    replayed = git(world.fork, "log", "--format=%H", "-n", "3", f"{TARGET}~1").split()[:2][::-1]
    git(world.fork, "worktree", "add", "-q", "--detach", str(tmp_path / "pick"), "v3.6.0")
    for source, ours in zip(sources, replayed):
        subprocess.run(["git", "-C", str(tmp_path / "pick"), "-c", f"core.hooksPath={os.devnull}", "cherry-pick",
                        "-x", "--allow-empty", source], capture_output=True, check=True)
        assert body_and_header(world.fork, ours) == body_and_header(tmp_path / "pick", "HEAD")
    git(world.fork, "worktree", "remove", "--force", str(tmp_path / "pick"))
    result = upgrade(world, "--on-conflict", "ours", "--force")  # the tool knows these commits for its own
    assert result.exit_code == 1, result.output


# 13. smaller

@pytest.mark.parametrize("name", ["flagtree-core", "shared-trunk", "ci"])
def test_a_backend_named_like_a_built_in_group_is_refused(world, name: str) -> None:
    spec = world.fork / "third_party" / name / "backend" / "spec" / "triton"
    spec.mkdir(parents=True)
    (spec / "__init__.py").write_text("")
    git(world.fork, "add", "-A")
    git(world.fork, "commit", "-qm", f"[{name}] a backend")
    result = CliRunner().invoke(cli, ["drift", "--repo", str(world.fork), "--from", "v3.5.0", "--onto", "v3.6.0"])
    assert result.exit_code == 2 and f"built-in group {name}" in result.output, result.output


APPLY = ["drift", "--from", "v3.5.0", "--onto", "v3.6.0", "--target", TARGET, "--apply", "-q"]


def test_a_second_drift_apply_while_one_runs_exits_2(world) -> None:
    import fcntl
    assert upgrade(world).exit_code == 1
    state_dir(world).mkdir(exist_ok=True)
    descriptor = os.open(state_dir(world) / "apply.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)  # what a running drift --apply holds
        before = rev(world.fork, TARGET)
        result = CliRunner().invoke(cli, [*APPLY, "--repo", str(world.fork)])
        assert result.exit_code == 2 and "another drift --apply is in progress" in result.output, result.output
        assert rev(world.fork, TARGET) == before
    finally:
        os.close(descriptor)
    assert CliRunner().invoke(cli, [*APPLY, "--repo", str(world.fork)]).exit_code == 1


def test_a_branch_moved_under_drift_apply_loses_nothing(world, monkeypatch) -> None:
    """The other run's commit lands between reading the branch and writing it: exit 2, the other commit kept."""
    from sync.jobs import drift
    assert upgrade(world).exit_code == 1
    write = drift.commit_files
    moved: list[str] = []

    def moved_first(*args, **kwargs):
        other = git(world.fork, "commit-tree", "-p", TARGET, "-m", "made meanwhile", f"{TARGET}^{{tree}}").strip()
        git(world.fork, "update-ref", f"refs/heads/{TARGET}", other)
        moved.append(other)
        return write(*args, **kwargs)
    monkeypatch.setattr(drift, "commit_files", moved_first)
    result = CliRunner().invoke(cli, [*APPLY, "--repo", str(world.fork)])
    assert result.exit_code == 2 and "moved while drift --apply ran" in result.output, result.output
    assert rev(world.fork, TARGET) == moved[0]


@pytest.mark.parametrize("old", ["HEAD", "main", "main^{commit}"])
def test_status_from_a_commit_that_drops_the_delta_is_an_error(world, old: str) -> None:
    assert upgrade(world).exit_code == 1
    result = CliRunner().invoke(cli, ["status", "--repo", str(world.fork), "--target", TARGET, "--from", old, "-q"])
    assert result.exit_code == 2 and "--from" in result.output, result.output


def test_a_python_overlay_of_short_statements_under_the_byte_limit_is_bounded(tmp_path: Path) -> None:
    """2 MB of `x = 1` lines, under the 2 MiB parse limit in bytes, took 506 MB in drift (822 MB through
    ast.parse alone): its million tokens are over the limit's token budget, so no parser sees it."""
    from sync.demo.world import build_world
    from sync.support.parselimit import DEFAULT
    from tests.test_hardening_resources import OVERLAY, peak_rss_bytes
    tiny, big = build_world(tmp_path / "tiny"), build_world(tmp_path / "big")
    data = b"x = 1\n" * ((DEFAULT - 100_000) // 6)
    (big.fork / OVERLAY).write_bytes(data)
    git(big.fork, "commit", "-qam", "[alpha] a long overlay")
    args = ["drift", *["--from", "v3.5.0", "--onto", "v3.6.0"]]
    baseline = peak_rss_bytes(tmp_path, "tiny", [*args, "--repo", str(tiny.fork), "--out", str(tmp_path / "t")])
    peak = peak_rss_bytes(tmp_path, "big", [*args, "--repo", str(big.fork), "--out", str(tmp_path / "b")])
    assert peak <= baseline + 40 * len(data), (peak, baseline, len(data))
    document = json.loads((tmp_path / "b" / "report.json").read_text())
    assert [f for g in document["groups"] for f in g["findings"]
            if f["kind"] == "analysis-skipped" and f["path"] == OVERLAY and "tokens" in f["message"]]


# 10. a git prune racing the run

def test_objects_pruned_under_the_run_never_make_a_branch(world, monkeypatch) -> None:
    """A blob the replay wrote (a file with its conflict markers) is gone when the branch is to be written."""
    from sync.replay import engine
    write = engine.write_target

    def pruned_first(repo, state, tip) -> None:
        blob = git(world.fork, "rev-parse", f"{state.results[0].result}:CMakeLists.txt").strip()
        (world.fork / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # loose: the run wrote it just now
        write(repo, state, tip)
    monkeypatch.setattr(engine, "write_target", pruned_first)
    result = upgrade(world)
    assert result.exit_code == 2 and "gone from the object store" in result.output, result.output
    assert TARGET not in git(world.fork, "branch")
