"""Revisions as the user named them, with the commit they resolved to: they travel together."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Rev:
    ref: str  # as given: a tag, a branch, a commit prefix
    oid: str  # the commit it resolved to (40 hex)

    @property
    def short(self) -> str:
        return self.oid[:9]

    def to_json(self) -> dict[str, str]:
        return {"ref": self.ref, "commit": self.oid}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Rev":
        return cls(str(data["ref"]), str(data["commit"]))


@dataclass(frozen=True)
class Range:
    """A FlagTree move: the commits old..source, based on upstream `old`, moved onto upstream `onto`."""

    old: Rev
    onto: Rev
    source: Rev

    def to_json(self) -> dict[str, dict[str, str]]:
        return {"from": self.old.to_json(), "onto": self.onto.to_json(), "source": self.source.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Range":
        return cls(Rev.from_json(data["from"]), Rev.from_json(data["onto"]), Rev.from_json(data["source"]))
