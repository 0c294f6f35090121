"""The options of an upgrade run, as typed values, each keyword-only (no two str fields can be swapped).

RunOptions is what matters after the replay (where the report goes, the test gate, the backends reported):
the part kept in the state's "options", so that upgrade --continue finishes the run the way it was started.
ReplayChoices is what the user chose that shapes the replay itself; resolved against the repository it becomes
the engine's UpgradeParams, kept in the state's "params". ContinueOverrides is what --continue was given: its
merge into the stored run is `merged` (options) and `policy` (the replay's conflict policy from the stopped
commit on), and nowhere else. state.py checks the stored shape before from_json reads it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

GATE_AT = ("end", "each")  # end: at the head, bisect on failure; each: after every replayed commit
GATE_TIMEOUT = 600  # seconds, the default of --exec-timeout
POLICY = "markers"  # the default of --on-conflict


@dataclass(frozen=True, kw_only=True)
class GateOptions:
    command: str
    at: str = "end"
    timeout: float = GATE_TIMEOUT

    def to_json(self) -> dict[str, Any]:
        return {"command": self.command, "at": self.at, "timeout": self.timeout}


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    out: Path | None = None  # the report directory
    gate: GateOptions | None = None
    backends: frozenset[str] = frozenset()  # empty: every backend

    def kept(self) -> RunOptions:
        """These options as the state keeps them: --out as an absolute path (--continue may run from another
        directory, the stop worktree)."""
        return RunOptions(out=self.out.resolve() if self.out is not None else None, gate=self.gate,
                          backends=frozenset(self.backends))

    def to_json(self) -> dict[str, Any]:
        return {"out": str(self.out) if self.out is not None else None,
                "gate": self.gate.to_json() if self.gate is not None else None, "backends": sorted(self.backends)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunOptions:
        """data as state.parse_header checked it."""
        gate = data["gate"]
        return cls(out=Path(data["out"]) if data["out"] is not None else None,
                   gate=GateOptions(command=gate["command"], at=gate["at"], timeout=gate["timeout"])
                   if gate is not None else None,
                   backends=frozenset(data["backends"]))


@dataclass(frozen=True, kw_only=True)
class ConflictPolicy:
    """--on-conflict and --stop-on: how a conflict is settled (stop_on: stop only on files these globs match)."""

    policy: str = POLICY
    stop_on: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ReplayChoices:
    """What the user chose that shapes the replay (None: the default)."""

    target_branch: str | None = None  # default sync/<NEW>
    conflicts: ConflictPolicy = ConflictPolicy()
    drop_orphan_reverts: bool = False  # leave out reverts of commits the run does not replay


@dataclass(frozen=True, kw_only=True)
class ContinueOverrides:
    """What upgrade --continue was given (None or empty: not given, the stored value holds)."""

    out: Path | None = None
    exec_command: str | None = None
    exec_at: str | None = None
    exec_timeout: float | None = None
    backends: frozenset[str] = frozenset()
    conflicts: ConflictPolicy | None = None  # replaces the run's from the commit it stopped at

    def merged(self, stored: RunOptions) -> tuple[RunOptions, list[str]]:
        """The options of the continued run, and the stored ones it uses, as the flags that would give them
        (the user did not type them this time)."""
        used = []
        out = self.out
        if out is None and stored.out is not None:
            out = stored.out
            used.append(f"--out {stored.out}")
        kept = stored.gate
        command = self.exec_command
        if command is None and kept is not None:
            command = kept.command
            used.append(f"--exec {kept.command!r}")
        gate = None
        if command is not None:
            kept = kept or GateOptions(command=command)  # a gate first asked for now: the defaults
            if self.exec_at is None and kept.at != "end":
                used.append(f"--exec-at {kept.at}")
            if self.exec_timeout is None and kept.timeout != GATE_TIMEOUT:
                used.append(f"--exec-timeout {kept.timeout:g}")
            gate = GateOptions(command=command, at=self.exec_at or kept.at,
                               timeout=kept.timeout if self.exec_timeout is None else self.exec_timeout)
        backends = self.backends
        if not backends and stored.backends:
            backends = stored.backends
            used.extend(f"--backend {name}" for name in sorted(stored.backends))
        return RunOptions(out=out, gate=gate, backends=backends), used
