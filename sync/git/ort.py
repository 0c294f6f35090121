"""git's own merge (merge-ort, through `git merge-tree --write-tree`) of one cherry-pick, with no work tree.

git 2.39 has no `merge-tree --merge-base`, so the pick is set up as a merge of two commits whose only common
ancestor is the picked commit's parent P: ours' (the upgraded tree, parent P) and theirs' (the picked tree,
parent P). That is what `git cherry-pick` merges: base P, ours HEAD, theirs the commit.

git runs with a scratch GIT_DIR (no work tree, no index, no info/attributes) whose objects are the
repository's (GIT_OBJECT_DIRECTORY), and with no system, global or XDG configuration or attributes file: the
merge reads no attributes at all, so what is checked out, or the user's settings, cannot change it. Its
tree and merged blobs land in the repository's object store, like every object the replay writes.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from sync.errors import SyncError
from sync.git.repo import common_git_dir
from sync.git.store import scratch_parent

_SIGNATURE = pygit2.Signature("flagtree-sync", "flagtree-sync@localhost", 0, 0)  # fixed: same objects each run


class OrtError(SyncError):
    """git merge-tree failed (not a conflict: git missing, or an object it could not read): exit 2, one line."""


@dataclass(frozen=True)
class Stage:
    mode: int
    oid: pygit2.Oid
    stage: int  # 1 base, 2 ours (upstream), 3 theirs (the picked commit)


@dataclass(frozen=True)
class Message:
    paths: tuple[str, ...]
    kind: str  # git's conflict type, e.g. "CONFLICT (modify/delete)", "Auto-merging"
    text: str


@dataclass
class OrtMerge:
    tree: pygit2.Oid
    stages: dict[str, list[Stage]] = field(default_factory=dict)  # conflicted path -> its index stages
    messages: list[Message] = field(default_factory=list)

    def kinds_of(self, path: str) -> list[str]:
        return [message.kind for message in self.messages if path in message.paths]


def _scratch_git_dir(repo: pygit2.Repository, head: pygit2.Oid) -> Path:
    """The least git accepts as a repository: HEAD (detached at head), refs/, objects/ (objects come from
    GIT_OBJECT_DIRECTORY). It lives where the scratch object stores do (store.py), so one a killed run left
    behind is swept by the next run."""
    parent = scratch_parent(repo)
    directory = Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=parent) if parent is not None
                     else tempfile.mkdtemp(prefix="flagtree-sync-ort-"))
    (directory / "refs").mkdir()
    (directory / "objects").mkdir()
    (directory / "HEAD").write_text(f"{head}\n", encoding="utf-8")
    (directory / "config").write_text("[core]\n\tbare = true\n\trepositoryformatversion = 0\n", encoding="utf-8")
    return directory


def settings_free_environment(**extra: str) -> dict[str, str]:
    """This process's environment less every GIT_ variable, with no system or global git configuration, C
    messages and no prompt; then extra."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C", GIT_TERMINAL_PROMPT="0", **extra)
    return env


def git_environment(git_dir: Path, objects: Path) -> dict[str, str]:
    """The environment of a git that reads neither the user's configuration nor any attributes file."""
    return settings_free_environment(GIT_DIR=str(git_dir), GIT_OBJECT_DIRECTORY=str(objects), HOME=str(git_dir),
                                     XDG_CONFIG_HOME=str(git_dir), LANGUAGE="C")


def merge_pick(repo: pygit2.Repository, parent: pygit2.Commit | None, ours_tree: pygit2.Oid,
               theirs_tree: pygit2.Oid) -> OrtMerge:
    """merge(parent's tree, ours_tree, theirs_tree) as git cherry-pick computes it (renames, directory
    renames, every conflict type); conflicted paths keep their stages, the tree holds git's own result."""
    parents = [parent.id] if parent is not None else []
    ours = repo.create_commit(None, _SIGNATURE, _SIGNATURE, "ours\n", ours_tree, parents)
    theirs = repo.create_commit(None, _SIGNATURE, _SIGNATURE, "theirs\n", theirs_tree, parents)
    git_dir = _scratch_git_dir(repo, ours)
    try:
        # ours is named HEAD, as in git cherry-pick: a file git moves aside for a file/directory clash is
        # path~HEAD in both (FlagTree's side is path~<commit id> here, path~<short id>... <subject> there)
        command = ["git", "-c", "core.attributesFile=" + os.devnull, "merge-tree", "--write-tree", "--messages",
                   "-z", *(["--allow-unrelated-histories"] if parent is None else []), "HEAD", str(theirs)]
        done = subprocess.run(command, env=git_environment(git_dir, common_git_dir(repo) / "objects"),
                              capture_output=True, check=False)
    except OSError as exc:
        raise OrtError(f"git merge-tree cannot run: {exc}") from exc
    finally:
        shutil.rmtree(git_dir, ignore_errors=True)
    if done.returncode not in (0, 1):
        raise OrtError(f"git merge-tree failed ({done.returncode}): "
                       f"{done.stderr.decode('utf-8', 'replace').strip()}")
    return parse_output(done.stdout, conflicted=done.returncode == 1)


def parse_output(out: bytes, conflicted: bool) -> OrtMerge:
    """The -z output: tree NUL, (mode SP oid SP stage TAB path NUL)*, NUL, messages (count NUL paths.. type NUL
    text NUL)*. Paths are bytes; they travel as str with surrogateescape (os.fsdecode), byte for byte."""
    fields = out.split(b"\0")
    merged = OrtMerge(pygit2.Oid(hex=fields[0].decode("ascii")))
    if not conflicted:
        return merged
    index = 1
    while index < len(fields) and fields[index]:
        info, path = fields[index].split(b"\t", 1)
        mode, oid, stage = info.split(b" ")
        merged.stages.setdefault(os.fsdecode(path), []).append(
            Stage(int(mode, 8), pygit2.Oid(hex=oid.decode("ascii")), int(stage)))
        index += 1
    index += 1  # the empty field that ends the conflicted file info
    while index + 1 < len(fields) and fields[index]:
        count = int(fields[index])
        paths = tuple(os.fsdecode(path) for path in fields[index + 1:index + 1 + count])
        kind, text = fields[index + 1 + count], fields[index + 2 + count]
        merged.messages.append(Message(paths, kind.decode("utf-8", "replace"), text.decode("utf-8", "replace")))
        index += count + 3
    return merged
