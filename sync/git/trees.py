"""GitTree: a commit's tree read in-process through libgit2, behind the FileTree interface of sync.facts.trees."""
from __future__ import annotations

import weakref

import pygit2

from sync.errors import SyncError
from sync.git.readlog import Entry, listing_digest, note_entry, note_listing, note_whole

SYMLINK_MODE = 0o120000
GITLINK_MODE = 0o160000  # a submodule's commit: in the submodule's store, never in this one
_SHOWN = 5


class MissingObjects(SyncError):
    """Files of a tree whose blobs the object store lacks: reading them as empty would give a wrong answer."""

    def __init__(self, label: str, paths: list[str]) -> None:
        more = f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
        super().__init__(f"{label} cannot be read: this clone lacks the objects of {len(paths)} file(s): "
                         f"{', '.join(paths[:_SHOWN])}{more} (a partial clone whose promisor remote cannot be "
                         "reached, or a pruned store); fetch them (git fetch --refetch, or a full clone), then rerun")


# Blob ids known to be in each open repository's store: trees of one run share most of their files.
_PRESENT: "weakref.WeakKeyDictionary[pygit2.Repository, set[pygit2.Oid]]" = weakref.WeakKeyDictionary()


def _missing_paths(repo: pygit2.Repository, entries: dict[str, tuple[pygit2.Oid, int]]) -> list[str]:
    present = _PRESENT.get(repo)
    if present is None:
        present = _PRESENT[repo] = set()
    missing = []
    for path, (oid, mode) in entries.items():
        if mode == GITLINK_MODE or oid in present:
            continue
        if repo.odb.exists(oid):  # `oid in repo` reads the whole object: 60x slower through alternates
            present.add(oid)
        else:
            missing.append(path)
    return sorted(missing)


# Blob contents by id, per open repository: the trees of a run (old tag, new tag, fork, target) share most of
# their files, and a first run of the 3.7 move read 3,233 distinct blobs 7,372 times through them.
_BLOBS: "weakref.WeakKeyDictionary[pygit2.Repository, dict[pygit2.Oid, bytes]]" = weakref.WeakKeyDictionary()


def _blobs_of(repo: pygit2.Repository) -> dict[pygit2.Oid, bytes]:
    blobs = _BLOBS.get(repo)
    if blobs is None:
        blobs = _BLOBS[repo] = {}
    return blobs


# The listing of the trees read last, per open repository: a run reads the same few trees (old, new, fork,
# branch) many times over, and each listing costs a walk of some 25,000 entries (0.05 s on the 3.7 move).
_LISTED = 8
_LISTINGS: "weakref.WeakKeyDictionary[pygit2.Repository, dict[pygit2.Oid, dict[str, tuple[pygit2.Oid, int]]]]" = \
    weakref.WeakKeyDictionary()


def _entries_of(repo: pygit2.Repository, tree: pygit2.Tree, label: str) -> dict[str, tuple[pygit2.Oid, int]]:
    """path -> (blob id, mode) of every file of the tree (shared: never changed once made)."""
    listings = _LISTINGS.get(repo)
    if listings is None:
        listings = _LISTINGS[repo] = {}
    entries = listings.pop(tree.id, None)
    if entries is None:
        entries = _listing(repo, tree, label)
    listings[tree.id] = entries  # the newest last
    while len(listings) > _LISTED:
        del listings[next(iter(listings))]
    return entries


def _listing(repo: pygit2.Repository, tree: pygit2.Tree, label: str) -> dict[str, tuple[pygit2.Oid, int]]:
    index = pygit2.Index()
    try:
        index.read_tree(tree)
    except KeyError:  # a subtree is not in the store (a tree-filtered partial clone)
        raise MissingObjects(label, ["(a directory's tree)"]) from None
    except pygit2.GitError as exc:  # libgit2 validates every path: a '..' or '.git' component is refused
        if "not found" in str(exc):
            raise MissingObjects(label, ["(a directory's tree)"]) from None
        raise SyncError(f"{label} cannot be read: {exc} (a path with a '.', '..' or '.git' component, which git "
                        "refuses to check out); fix the repository (rewrite the commit that added it), then rerun"
                        ) from None
    entries = {entry.path: (entry.id, entry.mode) for entry in index}
    missing = _missing_paths(repo, entries)
    if missing:  # never read as empty: a finding judged on an absent file would be a wrong answer
        raise MissingObjects(label, missing)
    return entries


class GitTree:
    """A tree of a commit, read in-process through libgit2: no process per file.

    A watched tree notes what it is asked into the read logs open where it is asked (git/readlog.py)."""

    def __init__(self, repo: pygit2.Repository, tree: pygit2.Tree, label: str) -> None:
        self.repo = repo
        self._tree = tree
        self.label = label
        self._entries = _entries_of(repo, tree, label)
        self._cache: dict[str, bytes] = {}
        self.missing: set[str] = set()  # paths whose blob is not in the object store
        self.watched = False

    @property
    def tree(self) -> pygit2.Tree:
        if self.watched:
            note_whole()  # its id or its diff: an answer about every path
        return self._tree

    def __hash__(self) -> int:
        if self.watched:
            note_whole()  # a key of a memo (lru_cache, a weak dictionary): what it holds came from any path
        return object.__hash__(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def unnoted_id(self) -> str:
        """The tree's id, not noted: for a read log's own checks (drift/analysis_cache.py)."""
        return str(self._tree.id)

    def listing_digest(self) -> str:
        return listing_digest(sorted(self._entries))

    def entry(self, path: str) -> Entry:
        """(blob id, mode) of a path, or None: what a read log keeps of it."""
        found = self._entries.get(path)
        return (str(found[0]), found[1]) if found else None

    def _asked(self, path: str) -> None:
        note_entry(path, self.entry(path))

    @classmethod
    def of_commit(cls, repo: pygit2.Repository, commit_id: str | pygit2.Oid, label: str) -> "GitTree":
        return cls(repo, repo[commit_id].peel(pygit2.Commit).tree, label)

    def paths(self) -> list[str]:
        if self.watched:
            note_listing()
        return sorted(self._entries)

    def exists(self, path: str) -> bool:
        if self.watched:
            self._asked(path)
        return path in self._entries

    def is_symlink(self, path: str) -> bool:
        if self.watched:
            self._asked(path)
        entry = self._entries.get(path)
        return entry is not None and entry[1] == SYMLINK_MODE

    def is_regular_file(self, path: str) -> bool:
        """A plain, non-executable file: what a rewrite may replace without changing its mode."""
        if self.watched:
            self._asked(path)
        entry = self._entries.get(path)
        return entry is not None and entry[1] == pygit2.enums.FileMode.BLOB

    def blob_id(self, path: str) -> pygit2.Oid | None:
        if self.watched:
            self._asked(path)
        entry = self._entries.get(path)
        return entry[0] if entry else None

    def read(self, path: str) -> bytes | None:
        if self.watched:
            self._asked(path)
        entry = self._entries.get(path)
        if entry is None or entry[1] == SYMLINK_MODE:
            return None
        if path not in self._cache:
            blobs = _blobs_of(self.repo)
            data = blobs.get(entry[0])
            if data is None:
                try:
                    data = blobs[entry[0]] = self.repo[entry[0]].peel(pygit2.Blob).data
                except KeyError:  # a partial clone or a snapshot without its large blobs: unreadable, and said so
                    self.missing.add(path)
                    return None
            self._cache[path] = data
        return self._cache[path]
