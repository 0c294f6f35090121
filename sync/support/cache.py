"""A content-addressed cache of parsed facts in <git dir>/flagtree-sync/cache/facts.sqlite.

An entry is keyed by what was parsed (the git blob id of the text) and by the analysis that
parsed it (a kind and its version), so it can never be stale: a changed file has another id, a
changed analysis bumps its version. Deleting the directory only costs the next run its parses.
Values are JSON; one that does not read back is a miss, never an error, and so is a database
that cannot be opened or written (the run goes on without it).

One SQLite database, not a file per entry: a first run stores some 3,000 entries, and creating a
file cost 0.45 ms on the development machine's ext4 (1.2 s of a run) where a row costs 0.05 ms. Rows are
written in batches, one transaction each: a transaction of one row wrote at least a whole 64 KB page to the
log, 0.41 ms a row (1.3 s of the 3.7 move's first run). A process reads its own unwritten rows from the batch;
another process sees them once flush() ran (a worker flushes before it answers).
SQLite's write-ahead log lets the forked workers of a run write while the others read; each
process opens its own connection (one is never carried across a fork).

Writes stay under the cache directory and never go through a symlink: every directory is
opened relative to its parent with O_NOFOLLOW, the database is created O_EXCL|O_NOFOLLOW, and it
is opened through the directory's descriptor (/proc/self/fd) only when neither it nor SQLite's
companion files (-wal, -shm, -journal) is a symlink or anything but a plain file.
Set FLAGTREE_SYNC_CACHE=off to run without it.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TypeVar

from sync.support.parselimit import cache_tag

CACHE_DIR = ("flagtree-sync", "cache")
DATABASE = "facts.sqlite"
_COMPANIONS = ("-wal", "-shm", "-journal")  # the files SQLite makes beside a database
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_BUSY_MS = 30_000  # how long a write waits for another process's (each holds the lock for one batch)
_BATCH_ROWS = 256  # rows kept unwritten at most; a batch's transaction holds the write lock for a few ms
_BATCH_BYTES = 4 * 1024 * 1024
T = TypeVar("T")


def content_id(text: str) -> str:
    """The git blob id of the text's UTF-8 bytes (the file's own blob id when it was UTF-8)."""
    data = text.encode("utf-8", errors="surrogateescape")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class FactCache:
    """One repository's cache; the directories and the database are opened lazily, once per process,
    and kept open until close()."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = Path(git_dir)
        self._dirs: dict[tuple[str, ...], int | None] = {}
        self._pid = os.getpid()  # whose descriptors and connection these are
        self._database: sqlite3.Connection | None = None
        self._unusable = False  # opening failed: this process runs without the cache
        self._batch: dict[tuple[str, str], str] = {}  # (bucket, key) -> JSON not yet written
        self._batch_bytes = 0
        self.hits = self.misses = 0

    @classmethod
    def for_git_dir(cls, git_dir: str | Path) -> "FactCache | None":
        if os.environ.get("FLAGTREE_SYNC_CACHE", "").lower() in ("off", "0", "no"):
            return None
        return cls(Path(git_dir))

    def get(self, kind: str, version: int, key: str) -> Any | None:
        bucket = self._bucket(kind, version)
        pending = self._pending().get((bucket, key))
        row = (pending,) if pending is not None else self._query(
            "SELECT value FROM facts WHERE bucket = ? AND key = ?", (bucket, key), create=False)
        if row is not None:
            try:
                value = json.loads(row[0])
                self.hits += 1
                return value
            except (ValueError, TypeError, RecursionError):  # RecursionError: nested past json's limit
                pass
        self.misses += 1
        return None

    def holds(self, kind: str, version: int, key: str) -> bool:
        """Whether an entry is stored or waits in this process's batch (not read: an entry of the wrong shape
        still counts)."""
        bucket = self._bucket(kind, version)
        if (bucket, key) in self._pending():
            return True
        return self._query("SELECT 1 FROM facts WHERE bucket = ? AND key = ?", (bucket, key), create=False) is not None

    def put(self, kind: str, version: int, key: str, value: Any) -> None:
        if self._connection(create=True) is None:
            return  # not writable, or a symlink in the way: run without caching
        data = json.dumps(value, separators=(",", ":"))
        batch = self._pending()
        batch[(self._bucket(kind, version), key)] = data
        self._batch_bytes += len(data)
        if len(batch) >= _BATCH_ROWS or self._batch_bytes >= _BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        """Write this process's batch in one transaction; a batch that cannot be written is dropped (full,
        locked past the timeout, damaged: those entries are not kept, and a later run parses them again)."""
        batch = self._pending()
        if not batch:
            return
        rows = [(bucket, key, data) for (bucket, key), data in batch.items()]
        batch.clear()
        self._batch_bytes = 0
        database = self._connection(create=True)
        if database is None:
            return
        try:
            with database:  # one transaction (the connection is in autocommit mode otherwise)
                database.execute("BEGIN IMMEDIATE")
                database.executemany("INSERT OR REPLACE INTO facts (bucket, key, value) VALUES (?, ?, ?)", rows)
        except sqlite3.Error:
            pass

    def _pending(self) -> dict[tuple[str, str], str]:
        """This process's batch: a forked worker starts with none (its parent writes what it inherited)."""
        self._leave_the_parents()
        return self._batch

    def _leave_the_parents(self) -> None:
        """In a forked worker, drop what the parent opened and holds: its descriptors, connection and batch."""
        if self._pid != os.getpid():
            self._pid, self._dirs, self._database, self._unusable = os.getpid(), {}, None, False
            self._batch, self._batch_bytes = {}, 0

    def keys(self, kind: str, version: int) -> list[str]:
        """The keys stored for a kind and version, sorted."""
        self.flush()
        database = self._connection(create=False)
        if database is None:
            return []
        try:
            rows = database.execute("SELECT key FROM facts WHERE bucket = ? ORDER BY key",
                                    (self._bucket(kind, version),)).fetchall()
        except sqlite3.Error:
            return []
        return [row[0] for row in rows]

    @staticmethod
    def _bucket(kind: str, version: int) -> str:
        return f"{kind}-v{version}{cache_tag()}"

    def _query(self, sql: str, parameters: tuple[str, ...], create: bool) -> tuple[Any, ...] | None:
        database = self._connection(create)
        if database is None:
            return None
        try:
            row: tuple[Any, ...] | None = database.execute(sql, parameters).fetchone()
            return row
        except sqlite3.Error:
            return None

    def _connection(self, create: bool) -> sqlite3.Connection | None:
        """This process's connection to the database, opened on first use (None: absent, or unusable)."""
        self._leave_the_parents()
        if self._database is not None or self._unusable:
            return self._database
        directory = self._directory(CACHE_DIR, create)
        if directory is None:
            return None
        if not _plain_files_or_absent(directory, create):
            self._unusable = True
            return None
        try:
            database = sqlite3.connect(self._path(directory), timeout=_BUSY_MS / 1000, isolation_level=None,
                                       check_same_thread=False)
        except sqlite3.Error:
            self._unusable = True
            return None
        try:
            database.execute("PRAGMA page_size = 65536")  # before the first table: a fact is a few KB to 1 MB
            database.execute("PRAGMA journal_mode = WAL")
            database.execute("PRAGMA mmap_size = 1073741824")  # pages read from the mapping, not a pread each
            database.execute("PRAGMA synchronous = NORMAL")  # consistent after a crash; a lost entry is a miss
            database.execute("CREATE TABLE IF NOT EXISTS facts (bucket TEXT NOT NULL, key TEXT NOT NULL, "
                             "value TEXT NOT NULL, PRIMARY KEY (bucket, key)) WITHOUT ROWID")
        except sqlite3.Error:  # not a database, read-only, locked past the timeout
            database.close()
            self._unusable = True
            return None
        self._database = database
        return database

    def _path(self, directory: int) -> str:
        """The database's path through the directory's descriptor, where the system has one (Linux); else
        its path from the git directory, each level of which _directory opened without a symlink."""
        through = f"/proc/self/fd/{directory}"
        if os.path.isdir(through):
            return f"{through}/{DATABASE}"
        return str(self.git_dir.joinpath(*CACHE_DIR, DATABASE))

    def _directory(self, parts: tuple[str, ...], create: bool) -> int | None:
        """A descriptor of git_dir/parts, each level opened without following symlinks."""
        if parts in self._dirs and (self._dirs[parts] is not None or not create):
            return self._dirs[parts]
        if not parts:
            try:
                descriptor: int | None = os.open(self.git_dir, os.O_RDONLY | os.O_DIRECTORY)  # the user's own
            except OSError:
                descriptor = None
        else:
            parent = self._directory(parts[:-1], create)
            descriptor = None
            if parent is not None:
                try:
                    if create:
                        try:
                            os.mkdir(parts[-1], 0o755, dir_fd=parent)
                        except FileExistsError:
                            pass
                    descriptor = os.open(parts[-1], _DIR_FLAGS, dir_fd=parent)
                except OSError:  # absent, a symlink (ELOOP), a file, not writable
                    descriptor = None
        if descriptor is not None or not create:
            self._dirs[parts] = descriptor
        return descriptor

    def close(self) -> None:
        if self._pid != os.getpid():
            return  # a forked worker's copy: the parent closes what it opened
        self.flush()
        if self._database is not None:
            self._database.close()
            self._database = None
        for descriptor in self._dirs.values():
            if descriptor is not None:
                os.close(descriptor)
        self._dirs.clear()


def _plain_files_or_absent(directory: int, create: bool) -> bool:
    """Whether the database and its companions are plain files or absent; with create, the database is
    made here (O_EXCL, no symlink followed) so that SQLite opens a file this process made or found plain."""
    for name in (DATABASE, *(DATABASE + suffix for suffix in _COMPANIONS)):
        try:
            mode = os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode
        except FileNotFoundError:
            if name == DATABASE and not create:
                return False  # nothing stored yet: every read is a miss
            continue
        except OSError:
            return False
        if not stat.S_ISREG(mode):
            return False
    if create:
        try:
            os.close(os.open(DATABASE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=directory))
        except FileExistsError:
            pass  # checked above: a plain file
        except OSError:
            return False
    return True


_active: ContextVar[FactCache | None] = ContextVar("flagtree_sync_fact_cache", default=None)


def active() -> FactCache | None:
    return _active.get()


@contextmanager
def using(cache: FactCache | None, close: bool = True) -> Iterator[FactCache | None]:
    """Make cache the one the parsers consult in this context (None: no cache); close it on leaving
    unless told not to (a worker's cache serves all its tasks)."""
    token = _active.set(cache)
    try:
        yield cache
    finally:
        _active.reset(token)
        if cache is not None and close:
            cache.close()


def memoized(kind: str, version: int, text: str, compute: Callable[[str], T], encode: Callable[[T], Any],
             decode: Callable[[Any], T], extra: str = "") -> T:
    """compute(text), through the active cache when there is one; extra distinguishes other inputs."""
    if _active.get() is None:
        return compute(text)
    key = content_id(text)
    if extra:
        key = hashlib.sha1(f"{key}\0{extra}".encode("utf-8")).hexdigest()
    return _through(kind, version, key, lambda: compute(text), encode, decode)


def memoized_by(kind: str, version: int, inputs: Iterable[str], compute: Callable[[], T], encode: Callable[[T], Any],
                decode: Callable[[Any], T], keep: Callable[[], bool] = lambda: True) -> T:
    """compute(), through the active cache, keyed by what it reads (tree ids, names); keep() says after it
    ran whether the value may be stored (not when it met an object missing from the store)."""
    if _active.get() is None:
        return compute()
    return _through(kind, version, _key_of(inputs), compute, encode, decode, keep)


def stored_by(kind: str, version: int, inputs: Iterable[str]) -> bool:
    """Whether the active cache holds what memoized_by would store for these inputs."""
    cache = _active.get()
    return cache is not None and cache.holds(kind, version, _key_of(inputs))


def _key_of(inputs: Iterable[str]) -> str:
    return hashlib.sha1("\0".join(inputs).encode("utf-8")).hexdigest()


def _through(kind: str, version: int, key: str, compute: Callable[[], T], encode: Callable[[T], Any],
             decode: Callable[[Any], T], keep: Callable[[], bool] = lambda: True) -> T:
    cache = _active.get()
    assert cache is not None
    stored = cache.get(kind, version, key)  # [value]: a stored None is a hit too
    if isinstance(stored, list) and len(stored) == 1:
        try:
            return decode(stored[0])
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            pass  # an entry of an unexpected shape: compute again and overwrite it
    value = compute()
    if keep():
        cache.put(kind, version, key, [encode(value)])
    return value
