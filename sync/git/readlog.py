"""What a piece of work read of a watched tree: the ground on which one analysis's result is kept for the
next run (drift/analysis_cache.py) and reused while the upgraded branch still holds the same answers.

A watched GitTree notes every question into each ReadLog that is open in the current context:
- a path's entry (its blob id and mode, or absent): read, exists, blob_id, is_symlink, is_regular_file;
- its listing (paths()): the set of paths, whatever their contents;
- the tree whole: its pygit2 tree (an id, a diff) or the GitTree itself as a key (a memo keyed by the tree,
  lru_cache included, hands out what an earlier piece of work read; so does anything hashing it).
Values kept across pieces of work that read a watched tree (a cached property of the run's context) replay
the log of their making on every use (`logged_once`)."""
from __future__ import annotations

import hashlib
import weakref
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Generic, TypeVar, cast, overload

Entry = tuple[str, int] | None  # (blob id, mode), or None: no such file

T = TypeVar("T")


class ReadLog:
    """The answers one piece of work was given by the watched trees (one tree per log in practice)."""

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.listed = False
        self.whole = False
        # the kept logs merged in already (a memo's, replayed on every use), held so that no id is reused
        self._merged: dict[int, ReadLog] = {}

    def merge(self, other: "ReadLog") -> None:
        self.entries.update(other.entries)
        self.listed |= other.listed
        self.whole |= other.whole

    def merge_kept(self, other: "ReadLog") -> None:
        """merge a log that no longer changes (a made value's): merged once, however often the value is used."""
        if id(other) not in self._merged:
            self.merge(other)
            self._merged[id(other)] = other

    def to_json(self) -> dict[str, Any]:
        return {"entries": {path: list(entry) if entry else None for path, entry in sorted(self.entries.items())},
                "listed": self.listed, "whole": self.whole}

    @classmethod
    def from_json(cls, data: Any) -> "ReadLog":
        """The log stored by to_json; ValueError when it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("entries"), dict) \
                or not isinstance(data.get("listed"), bool) or not isinstance(data.get("whole"), bool):
            raise ValueError("not a read log")
        log = cls()
        for path, entry in data["entries"].items():
            if entry is not None and not (isinstance(entry, list) and len(entry) == 2
                                          and isinstance(entry[0], str) and isinstance(entry[1], int)):
                raise ValueError("not a read log entry")
            log.entries[path] = (entry[0], entry[1]) if entry is not None else None
        log.listed, log.whole = data["listed"], data["whole"]
        return log


_OPEN: ContextVar[tuple[ReadLog, ...]] = ContextVar("open_read_logs", default=())


@contextmanager
def logging_reads(log: ReadLog) -> Iterator[ReadLog]:
    """Note what watched trees are asked in this context into log (and into any log already open)."""
    token = _OPEN.set(_OPEN.get() + (log,))
    try:
        yield log
    finally:
        _OPEN.reset(token)


@contextmanager
def unlogged() -> Iterator[None]:
    """Nothing is noted here: the caller notes what the work's answer rests on itself (e.g. the paths of a diff
    of two whole trees that it reads, where no rename detection joins one path's answer to another's)."""
    token = _OPEN.set(())
    try:
        yield
    finally:
        _OPEN.reset(token)


def note_entry(path: str, entry: Entry) -> None:
    for log in _OPEN.get():
        log.entries.setdefault(path, entry)


def note_listing() -> None:
    for log in _OPEN.get():
        log.listed = True


def note_whole() -> None:
    for log in _OPEN.get():
        log.whole = True


def replay(log: ReadLog) -> None:
    """Note into the open logs what log holds: a value made from those answers is being used."""
    for open_log in _OPEN.get():
        if open_log is not log:
            open_log.merge_kept(log)


def listing_digest(paths: list[str]) -> str:
    """One short id of a tree's set of paths (sorted)."""
    return hashlib.sha1("\0".join(paths).encode("utf-8", "surrogateescape")).hexdigest()


def _slot(name: str) -> str:
    return f"_{name}_logged"  # (not the property's own name: the instance's entry would hide it)


def made_value(instance: object, name: str) -> Any:
    """The value of a logged_once property where it was made, else None; its log is not replayed."""
    kept = vars(instance).get(_slot(name))
    return kept[0] if kept is not None else None


def kept_value(store: dict[Hashable, tuple[T, ReadLog]], key: Hashable, make: Callable[[], T]) -> T:
    """store's value for key, made on first use with the log of what its making read; every later use replays it."""
    kept = store.get(key)
    if kept is None:
        with logging_reads(ReadLog()) as log:
            value = make()
        kept = store[key] = (value, log)
    else:
        replay(kept[1])
    return kept[0]


class TreeMemo(Generic[T]):
    """Values made from one tree, by key, kept while the tree lives; each keeps the log of what its making read of
    a watched tree, replayed on every use (kept_value). Keyed by the tree's identity, not its hash (which notes the
    whole tree)."""

    def __init__(self) -> None:
        self._by_tree: dict[int, dict[Hashable, tuple[T, ReadLog]]] = {}

    def clear(self) -> None:
        self._by_tree.clear()

    def get(self, tree: object, key: Hashable, make: Callable[[], T]) -> T:
        kept_here = self._by_tree.get(id(tree))
        if kept_here is None:
            kept_here = self._by_tree[id(tree)] = {}
            weakref.finalize(tree, self._by_tree.pop, id(tree), None)
        return kept_value(kept_here, key, make)


class logged_once(Generic[T]):
    """A cached property whose making may read watched trees: made once, and each use replays what the making
    read, so every piece of work that uses the value logs the answers it rests on."""

    def __init__(self, make: Callable[[Any], T]) -> None:
        self.make = make
        self.name = make.__name__
        self.__doc__ = make.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @property
    def _slot(self) -> str:
        return _slot(self.name)

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> "logged_once[T]": ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> "T | logged_once[T]":
        if instance is None:
            return self
        kept = cast("dict[Hashable, tuple[T, ReadLog]]", vars(instance))  # the instance's dict, by its slot
        return kept_value(kept, self._slot, lambda: self.make(instance))
