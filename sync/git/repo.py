"""Open a repository, resolve user-given revisions, walk ranges and move refs (pygit2)."""
from __future__ import annotations

import difflib
import email.utils
import os
import re
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any, Callable, Sequence
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, ReferenceType, SortMode

from sync.errors import NotARepository, SyncError, UnknownRef
from sync.support.cache import FactCache
from sync.git.environment import adopt, tool_git

_SUGGESTIONS = 3
_RELEASE_TAG = re.compile(r"v?\d+(\.\d+)+(-?rc\d*)?")


class UnknownRevision(UnknownRef):
    """An unknown revision, with the closest tag and branch names when some are close."""

    def __init__(self, ref: str, repo: str, close: list[str]) -> None:
        super().__init__(ref, repo)
        if close:
            self.args = (f"{self.args[0]}; did you mean {' or '.join(close)}?",)
        if _RELEASE_TAG.fullmatch(ref):  # the close names may be the fork's own tags, not upstream's
            self.args = (f"{self.args[0]} (if it is an upstream Triton tag this clone lacks, fetch upstream's tags: "
                         "git fetch <upstream remote> --tags)",)


def open_repo(path: Path | str) -> pygit2.Repository:
    path = Path(path)
    if not path.exists():
        raise SyncError(f"{path} does not exist")
    found = pygit2.discover_repository(str(path))
    if found is None:
        raise NotARepository(str(path))
    try:
        repo = pygit2.Repository(found)
    except pygit2.GitError as exc:
        raise SyncError(_unopenable(path, str(exc))) from None
    adopt(Path(repo.path), common_git_dir(repo), Path(repo.workdir) if repo.workdir else None)
    if repo.is_shallow:
        raise SyncError(f"{path} is a shallow clone: the range cannot be read; run git fetch --unshallow first")
    return repo


def _unopenable(path: Path, why: str) -> str:
    """Why libgit2 will not open a repository git found, and what to do."""
    if "object format" in why:
        return (f"{path} is a SHA-256 repository (extensions.objectFormat), which flagtree-sync does not support: "
                "it reads SHA-1 repositories only")
    if "owned by current user" in why or "not owned" in why:
        return (f"{path} is owned by another user, so git will not work in it (safe.directory): run as its owner, "
                "or git config --global --add safe.directory <path> if you trust it")
    return f"{path} cannot be opened as a git repository: {why}"


LIBRARY_VERSIONS = f"pygit2 {pygit2.__version__}, libgit2 {pygit2.LIBGIT2_VERSION}"


def config_entries(repo: pygit2.Repository) -> list[list[str]]:
    """Every configuration entry the repository sees (its own, the user's, the system's), in order."""
    return [[str(entry.name), str(entry.value)] for entry in repo.config]


def commit_tree_id(repo: pygit2.Repository, commit_id: str | pygit2.Oid) -> str | None:
    """The tree id of a commit; None when the object is absent or not a commit."""
    try:
        return str(repo[commit_id].peel(pygit2.Commit).tree_id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def common_git_dir(repo: pygit2.Repository) -> Path:
    """The repository's own git directory, also from a linked worktree (whose repo.path is
    .git/worktrees/<name>/ and whose `commondir` file names the shared one): the tool keeps its state,
    lock and cache there, so that every worktree of a repository sees the same upgrade."""
    common = Path(repo.path) / "commondir"
    if common.is_file():
        return (Path(repo.path) / os.fsdecode(common.read_bytes().strip())).resolve()  # a path: bytes as the kernel's
    return Path(repo.path)


def fact_cache(repo: pygit2.Repository) -> FactCache | None:
    """The repository's fact cache, in its common git directory: `status` in a worktree of the upgraded
    branch reads what `upgrade` stored (None: FLAGTREE_SYNC_CACHE=off)."""
    return FactCache.for_git_dir(common_git_dir(repo))


def tool_dir(repo: pygit2.Repository) -> Path:
    """<common git dir>/flagtree-sync: the upgrade's state, journal, lock, worktrees and crash logs."""
    return common_git_dir(repo) / "flagtree-sync"


def close_names(repo: pygit2.Repository, ref: str) -> list[str]:
    """Tags and branches whose names are close to ref (difflib), best first."""
    names = set()
    for name in repo.references:
        for prefix in ("refs/tags/", "refs/heads/", "refs/remotes/"):
            if name.startswith(prefix):
                names.add(name[len(prefix):])
    return difflib.get_close_matches(ref, sorted(names), n=_SUGGESTIONS, cutoff=0.6)


def resolve_commit(repo: pygit2.Repository, ref: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(ref).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise UnknownRevision(ref, repo.workdir or repo.path, close_names(repo, ref)) from exc


def resolves(repo: pygit2.Repository, ref: str) -> bool:
    try:
        resolve_commit(repo, ref)
        return True
    except SyncError:
        return False


def commit_of(repo: pygit2.Repository, commit_id: str | pygit2.Oid) -> pygit2.Commit:
    """A commit by its full id (what the state and the report carry)."""
    return repo[commit_id].peel(pygit2.Commit)


def tree_of(repo: pygit2.Repository, object_id: str | pygit2.Oid) -> pygit2.Tree:
    """The tree of a commit id, or the tree a tree id names."""
    return repo[object_id].peel(pygit2.Tree)


def current_branch(repo: pygit2.Repository) -> str:
    if repo.head_is_unborn:  # "not on a branch" would send the user looking for the wrong problem
        raise SyncError(f"{repo.workdir or repo.path} has no commits yet: nothing to read")
    if repo.head_is_detached:
        raise SyncError("HEAD is not on a branch: name the FlagTree branch with --branch")
    return repo.head.shorthand


def checked_out_branch(repo: pygit2.Repository) -> str | None:
    """The branch HEAD is on, or None when detached or unborn."""
    if repo.head_is_detached or repo.head_is_unborn:
        return None
    return repo.head.shorthand


def commit_range(repo: pygit2.Repository, old: pygit2.Commit, src: pygit2.Commit) -> list[pygit2.Oid]:
    """Non-merge commits old..src, oldest first (what git rebase would replay)."""
    return [commit.id for commit in _walk_range(repo, old, src) if len(commit.parents) <= 1]


def merges_in_range(repo: pygit2.Repository, old: pygit2.Commit, src: pygit2.Commit) -> list[pygit2.Commit]:
    """The merge commits old..src, oldest first: what commit_range leaves out."""
    return [commit for commit in _walk_range(repo, old, src) if len(commit.parents) > 1]


def _walk_range(repo: pygit2.Repository, old: pygit2.Commit, src: pygit2.Commit,
                also_hide: pygit2.Commit | None = None) -> Iterator[pygit2.Commit]:
    walker = repo.walk(src.id, SortMode.TOPOLOGICAL | SortMode.REVERSE)
    walker.hide(old.id)
    if also_hide is not None:
        walker.hide(also_hide.id)
    return iter(walker)


REACHABLE = "reachable"  # the commit is in NEW's history
SAME_PATCH = "same-patch"  # a commit of NEW's history makes the same change (git patch-id)


def upstream_in_range(repo: pygit2.Repository, old: pygit2.Commit, onto: pygit2.Commit,
                      src: pygit2.Commit) -> dict[pygit2.Oid, str]:
    """The non-merge commits of old..src that are upstream's, not the fork's, as git rebase and git cherry
    decide: those onto already has (REACHABLE; e.g. brought in by a merge of upstream) and those whose
    patch-id equals that of a commit of src..onto (SAME_PATCH; e.g. an upstream release-branch cherry-pick)."""
    return UpstreamScan(repo, old, onto, src).result()


class UpstreamScan:
    """upstream_in_range begun: one revwalk (milliseconds) now, and `git cherry onto src old` in the
    background (40-90 ms on FlagTree's real ranges: git compares changed paths first and diffs only commits
    whose paths match; never a process per commit), so that a caller can prepare its replay meanwhile."""

    def __init__(self, repo: pygit2.Repository, old: pygit2.Commit, onto: pygit2.Commit, src: pygit2.Commit) -> None:
        own = {commit.id for commit in _walk_range(repo, old, src, also_hide=onto) if len(commit.parents) <= 1}
        self._upstream = {commit.id: REACHABLE for commit in _walk_range(repo, old, src)
                          if len(commit.parents) <= 1 and commit.id not in own}
        self._cherry: Any = None  # GitPython's handle: it ends git cherry if dropped unfinished
        self.unchecked: str | None = None  # why patch-ids could not be compared (then only REACHABLE is known)
        if own:  # else nothing is left that a patch-id could match
            # GitPython drives the git binary: patch-ids exactly as git computes them
            command = ["git", "--git-dir", repo.path, "cherry", str(onto.id), str(src.id), str(old.id)]
            self._cherry = tool_git(repo.workdir or repo.path).execute(command, as_process=True)

    def result(self) -> dict[pygit2.Oid, str]:
        if self._cherry is not None:
            process = self._cherry.proc
            listed, error = process.communicate()
            if process.returncode != 0:
                # A partial or trimmed clone lacks upstream's trees: the replay goes on without this one check.
                lines = error.decode(errors="replace").strip().splitlines()
                self.unchecked = f"git cherry failed: {lines[-1] if lines else 'no message'}"
                listed = b""
            for line in listed.decode().splitlines():
                sign, _, oid = line.partition(" ")
                if sign == "-":  # git cherry's mark for "an equivalent change is in upstream"
                    self._upstream[pygit2.Oid(hex=oid.strip())] = SAME_PATCH
            self._cherry = None
        return self._upstream


def range_commits(repo: pygit2.Repository, old: pygit2.Commit, src: pygit2.Commit) -> list[pygit2.Commit]:
    """Every commit old..src, merges included, oldest first."""
    return list(_walk_range(repo, old, src))


def first_parent_line(repo: pygit2.Repository, tip: str | pygit2.Oid, stop: str | pygit2.Oid) -> set[pygit2.Oid]:
    """The commits of tip's first-parent chain down to stop (excluded): the branch's own line."""
    walker = repo.walk(as_oid(tip), SortMode.NONE)
    walker.simplify_first_parent()
    walker.hide(as_oid(stop))
    return {commit.id for commit in walker}


def merge_base(repo: pygit2.Repository, a: str | pygit2.Oid, b: str | pygit2.Oid) -> pygit2.Oid | None:
    """The best common ancestor of a and b; None for unrelated histories."""
    return repo.merge_base(as_oid(a), as_oid(b))


def author_emails(repo: pygit2.Repository, tip: str | pygit2.Oid, limit: int) -> set[str]:
    """The author emails of tip's history, of its newest `limit` commits at most."""
    walker = repo.walk(as_oid(tip), SortMode.TIME)  # newest first, yielded as read (a topological sort reads all)
    found: set[str] = set()
    for count, commit in enumerate(walker):
        if count >= limit:
            break
        found.add(commit.author.email.lower())
    return found


def as_oid(commit_id: str | pygit2.Oid) -> pygit2.Oid:
    return commit_id if isinstance(commit_id, pygit2.Oid) else pygit2.Oid(hex=commit_id)


def is_ancestor(repo: pygit2.Repository, ancestor: str | pygit2.Oid, descendant: str | pygit2.Oid) -> bool:
    ancestor, descendant = as_oid(ancestor), as_oid(descendant)
    return ancestor == descendant or repo.descendant_of(descendant, ancestor)


def has_object(repo: pygit2.Repository, object_id: str) -> bool:
    try:  # odb.exists reads no object (`in repo` inflates it)
        return bool(repo.odb.exists(pygit2.Oid(hex=object_id)))
    except ValueError:
        return False


def commit_files(repo: pygit2.Repository, head: pygit2.Commit, files: dict[str, bytes],
                 message: str | Callable[[str], str], ref: str | None = None, by_user: bool = False) -> pygit2.Oid:
    """A commit on top of head that writes files (in memory, no checkout); head itself when nothing changes.

    Signed by flagtree-sync and dated like head, so that doing the same twice gives the same commit; by_user:
    signed by the user, now, as git commit would. message may be a function of the new tree's id.
    """
    index = pygit2.Index()
    index.read_tree(head.tree)
    for path, data in files.items():
        index.add(pygit2.IndexEntry(path, repo.create_blob(data), FileMode.BLOB))
    tree = index.write_tree(repo)
    if tree == head.tree.id:
        return head.id
    if by_user:
        author, committer = user_signature(repo), user_signature(repo, "COMMITTER")
    else:
        author = committer = pygit2.Signature("flagtree-sync", "flagtree-sync@localhost", head.committer.time,
                                              head.committer.offset)
    text = message(str(tree)) if callable(message) else message
    return repo.create_commit(ref, author, committer, text, tree, [head.id])


def user_signature(repo: pygit2.Repository, role: str = "AUTHOR") -> pygit2.Signature:
    """Who git commit would sign as (role AUTHOR or COMMITTER): GIT_<role>_NAME/EMAIL, else user.name/user.email
    of the configuration."""
    found = {}
    for key, variable in (("name", f"GIT_{role}_NAME"), ("email", f"GIT_{role}_EMAIL")):
        value = os.environ.get(variable)
        for setting in (f"{role.lower()}.{key}", f"user.{key}"):  # author.name before user.name, as git reads them
            if not value:
                try:
                    value = str(repo.config[setting])
                except KeyError:
                    value = None
        if not value:
            raise SyncError(f"git knows no user.{key} here, and the commit must be yours: "
                            f"git config --global user.{key} ..., then rerun")
        found[key] = value
    when = _signature_date(f"GIT_{role}_DATE")
    if when is None:
        return pygit2.Signature(found["name"], found["email"])
    return pygit2.Signature(found["name"], found["email"], *when)


def _signature_date(variable: str) -> tuple[int, int] | None:
    """(seconds, offset in minutes) of GIT_<role>_DATE, as git reads it: '@<seconds> <+hhmm>' or '<seconds>
    <+hhmm>' (git's own), RFC 2822 or ISO 8601 (a date without a zone is UTC); None when unset (now)."""
    given = os.environ.get(variable, "").strip()
    if not given:
        return None
    raw = re.fullmatch(r"@?(\d+) ([+-])(\d\d)(\d\d)", given)
    if raw:
        offset = (int(raw[3]) * 60 + int(raw[4])) * (-1 if raw[2] == "-" else 1)
        return int(raw[1]), offset
    try:
        moment = datetime.fromisoformat(given)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(given)
        except (TypeError, ValueError):
            raise SyncError(f"{variable}={given!r} is not a date git reads (e.g. 2026-01-05T12:00:00+00:00)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    shift = moment.utcoffset()
    return int(moment.timestamp()), int(shift.total_seconds() // 60) if shift is not None else 0


def branch_exists(repo: pygit2.Repository, name: str) -> bool:
    return f"refs/heads/{name}" in repo.references


def branch_head(repo: pygit2.Repository, name: str) -> pygit2.Commit | None:
    ref = f"refs/heads/{name}"
    return repo.references[ref].peel(pygit2.Commit) if ref in repo.references else None


def valid_branch_name(name: str) -> bool:
    """Whether git would create a branch of this name (git check-ref-format --branch, git branch): libgit2's
    ref rules, and what git adds for branches: not HEAD or @ (they name the checked-out commit), no leading
    dash (it reads as an option). A name under refs/ is refused too: refs/heads/refs/heads/x is legal but
    names another branch than the one the user meant."""
    if name in ("HEAD", "@") or name.startswith(("-", "refs/")):
        return False
    return pygit2.reference_is_valid_name(f"refs/heads/{name}")


_OBJECT_ID = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
_PSEUDO_REF = re.compile(r"[A-Z_]*HEAD")  # HEAD, FETCH_HEAD, ORIG_HEAD, ...: files of the git directory
_NAMESPACES = ("heads", "tags", "remotes")


def branch_name_shadowed(repo: pygit2.Repository, name: str) -> str | None:
    """Why git would resolve the spelling `name` to something other than the branch refs/heads/name (git's
    lookup order: an object id, a file of the git directory, refs/<name>, refs/tags/<name>, then the branch);
    None when the name means the branch."""
    if _OBJECT_ID.fullmatch(name):
        return "it reads as a commit id"
    if _PSEUDO_REF.fullmatch(name) or (Path(repo.path) / name).is_file():
        return f"git reads {name} from the git directory first"
    if name.split("/", 1)[0] in _NAMESPACES:
        return f"git reads {name} as refs/{name}, not as a branch"
    for shadow in (f"refs/{name}", f"refs/tags/{name}"):
        if shadow in repo.references:
            return f"{shadow} exists and git reads {name} as that"
    return None


def full_ref_name(repo: pygit2.Repository, spelled: str) -> str | None:
    """The ref a spelling names after git's lookup rules and every symbolic ref is followed (main,
    heads/main, refs/heads/main and HEAD on main are all refs/heads/main); None when it names no ref."""
    try:
        return str(repo.lookup_reference_dwim(spelled).resolve().name)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return None


def direct_target(repo: pygit2.Repository, name: str) -> tuple[str | None, bool]:
    """The commit id the ref name holds itself (None: absent), and whether it is a symbolic ref."""
    try:
        ref = repo.references[name]
    except (KeyError, ValueError, pygit2.InvalidSpecError):
        return None, False
    if ref.type == ReferenceType.SYMBOLIC:
        return None, True
    return str(ref.target), False


def is_commit(repo: pygit2.Repository, object_id: str) -> bool:
    """Whether object_id names a commit of the repository (a ref written by hand may hold a blob or a tree)."""
    try:
        return isinstance(repo[as_oid(object_id)], pygit2.Commit)
    except (KeyError, ValueError):
        return False


def update_ref(repo: pygit2.Repository, name: str, new: str | None, old: str | None, message: str) -> str | None:
    """Compare-and-swap through git update-ref: set name to new (None: delete it) only while it is still old
    (None: absent), under git's ref lock, so that a change made since the caller looked loses nothing.
    None when done, else git's message."""
    import git  # GitPython drives the git binary: its update-ref is the atomic check-and-write libgit2 lacks

    zero = "0" * 40
    # --create-reflog: the log says the tool wrote it (last_written_by), also where reflogs are off (bare)
    args = ["-d", name, old or zero] if new is None else ["--create-reflog", name, new, old or zero]
    try:
        # The reflog line is dated now: a GIT_COMMITTER_DATE meant for commits (even one git refuses) is not ours.
        tool_git(repo.workdir or repo.path).update_ref("--no-deref", "-m", message, *args,
                                           env={"GIT_COMMITTER_DATE": f"{int(time.time())} +0000"})
    except git.GitCommandError as exc:
        return str(exc.stderr or exc).strip().removeprefix("stderr:").strip().strip("'").strip()
    return None


def last_written_by(repo: pygit2.Repository, name: str, message_prefix: str) -> bool:
    """Whether the ref's newest reflog entry is a write whose message starts with message_prefix and that set it
    to the value it holds now: the tool wrote it, and nobody has moved, deleted or recreated it since (each
    writes a reflog entry of its own; a deleted ref loses its log)."""
    try:
        ref = repo.references[name]
        if ref.type == ReferenceType.SYMBOLIC:
            return False
        newest = next(iter(ref.log()), None)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return False
    return newest is not None and newest.oid_new == ref.target and (newest.message or "").startswith(message_prefix)


_REVISION_SUFFIX = re.compile(r"(?:~\d*|\^\d*|\^\{[^{}]*\}|@\{[^{}]*\})+\Z")


def branch_spelled(repo: pygit2.Repository, spelling: str) -> str | None:
    """The branch (refs/heads/...) a revision spelling starts from, after git's lookup rules and symbolic refs:
    main, heads/main, main~0, main^0, main^{commit}, main@{0} and HEAD~0 (HEAD on main) all start from
    refs/heads/main. None when it starts from no branch (a commit id, a tag, a remote-tracking branch)."""
    base = _REVISION_SUFFIX.sub("", spelling) if not spelling.startswith(":") else ""
    base = "HEAD" if base in ("", "@") and spelling not in ("", ":") else base
    name = full_ref_name(repo, base) if base else None
    return name if name is not None and name.startswith("refs/heads/") else None


def has_ref(repo: pygit2.Repository, name: str) -> bool:
    return name in repo.references


def set_ref(repo: pygit2.Repository, name: str, target: str | pygit2.Oid) -> None:
    """Create or move a ref (force): the caller decided it may."""
    repo.references.create(name, as_oid(target), force=True)


def delete_ref(repo: pygit2.Repository, name: str) -> None:
    if name in repo.references:
        repo.references.delete(name)


def blob_text(repo: pygit2.Repository, blob_id: str | pygit2.Oid) -> str:
    """A blob's text; undecodable bytes are replaced, never raised."""
    return repo[as_oid(blob_id)].peel(pygit2.Blob).data.decode("utf-8", errors="replace")


def file_in_tree(repo: pygit2.Repository, tree_id: str | pygit2.Oid, path: str) -> bytes | None:
    """The content of a file of a tree; None when the tree has no file there."""
    try:
        entry = repo[as_oid(tree_id)].peel(pygit2.Tree)[path]
    except KeyError:
        return None
    if entry.filemode == FileMode.COMMIT:  # a submodule: its commit is in the submodule's store, not this one
        return None
    found = repo[entry.id]
    return found.data if isinstance(found, pygit2.Blob) else None


def ref_conflict(repo: pygit2.Repository, name: str) -> str | None:
    """An existing ref that keeps name from being created (git stores refs as paths: refs/heads/sync
    blocks refs/heads/sync/v1 and the other way round); None when name can be created or exists."""
    parts = name.split("/")
    for length in range(3, len(parts)):
        prefix = "/".join(parts[:length])
        if prefix in repo.references:
            return prefix
    below = name + "/"
    return next((ref for ref in repo.references if ref.startswith(below)), None)


def commits_only_on(repo: pygit2.Repository, ref: str, ignore_prefix: str,
                    kept: Sequence[str] = ()) -> list[pygit2.Commit]:
    """The commits that moving ref would leave unreachable: reachable from ref and from no other ref
    (ignoring refs under ignore_prefix), nor a detached HEAD, nor a commit of kept (what the move keeps
    reachable anyway); newest first."""
    walker = repo.walk(repo.references[ref].peel(pygit2.Commit).id, SortMode.TOPOLOGICAL)
    for oid in kept:
        walker.hide(pygit2.Oid(hex=oid))
    for name in repo.references:
        if name == ref or name.startswith(ignore_prefix):
            continue
        try:
            walker.hide(repo.references[name].peel(pygit2.Commit).id)
        except (pygit2.GitError, pygit2.InvalidSpecError, ValueError, KeyError):
            continue  # a ref to a tree or blob, or a dangling symbolic ref: it keeps no commit alive
    if repo.head_is_detached:
        walker.hide(repo.head.target)
    return list(walker)


def paths_written_longer_than(repo: pygit2.Repository, old: pygit2.Commit, src: pygit2.Commit, limit: int,
                              path_limit: int) -> Iterator[tuple[pygit2.Commit, str]]:
    """(commit, path) for each path a commit of old..src writes (against its first parent) with a component of
    more than limit bytes or more than path_limit bytes in all: a replayed tree between the two ends holds it
    even when the last one no longer does."""
    for commit in _walk_range(repo, old, src):
        diff = (commit.parents[0].tree.diff_to_tree(commit.tree) if commit.parents
                else commit.tree.diff_to_tree(swap=True))
        for delta in diff.deltas:
            if delta.status == pygit2.enums.DeltaStatus.DELETED:
                continue
            raw = os.fsencode(delta.new_file.path)
            if len(raw) > path_limit or any(len(part) > limit for part in raw.split(b"/")):
                yield commit, delta.new_file.path


def missing_in_history(repo: pygit2.Repository, tip: str | pygit2.Oid, stop: str | pygit2.Oid) -> list[str]:
    """What the commits stop..tip lack of their own objects (commits, trees, the blobs each writes against its
    first parent), as "<commit> <path>": a run's objects a `git prune` or gc removed while it ran."""
    found: list[str] = []
    try:
        walker = repo.walk(as_oid(tip), SortMode.TOPOLOGICAL)
        walker.hide(as_oid(stop))
        commits = list(walker)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        return [f"{str(tip)[:9]} (its history cannot be walked: {exc})"]
    for commit in commits:
        try:
            tree = commit.tree
            diff = commit.parents[0].tree.diff_to_tree(tree) if commit.parents else tree.diff_to_tree(swap=True)
        except (KeyError, ValueError, pygit2.GitError):
            found.append(f"{str(commit.id)[:9]} (a tree)")
            continue
        found.extend(f"{str(commit.id)[:9]} {delta.new_file.path}" for delta in diff.deltas
                     if delta.status != pygit2.enums.DeltaStatus.DELETED
                     and delta.new_file.mode != FileMode.COMMIT and not repo.odb.exists(delta.new_file.id))
    return found


def names_longer_than(repo: pygit2.Repository, tree_id: str | pygit2.Oid, limit: int,
                      path_limit: int = 1 << 30) -> Iterator[str]:
    """The paths of a tree with a component of more than limit bytes, or of more than path_limit bytes in all
    (git stores them; a file system of such NAME_MAX / PATH_MAX limits cannot check them out)."""
    stack: list[tuple[bytes, pygit2.Tree]] = [(b"", repo[as_oid(tree_id)].peel(pygit2.Tree))]
    while stack:
        prefix, tree = stack.pop()
        for entry in tree:
            name = entry.raw_name or b""  # bytes: a name that is no UTF-8 has a length too
            if len(name) > limit or len(prefix) + len(name) > path_limit:
                yield (prefix + name).decode("utf-8", "replace")
            elif entry.type_str == "tree":
                stack.append((prefix + name + b"/", repo[entry.id].peel(pygit2.Tree)))
