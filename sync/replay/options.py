"""The options of an upgrade run that matter after the replay: where the report goes, the test gate, the
backends reported. The job's UpgradeOptions extends RunOptions with what shapes the replay itself (kept in
the state as its params); RunOptions is the part kept in the state's "options", so that upgrade --continue
finishes the run the way it was started. state.py checks the stored shape before from_json reads it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

GATE_AT = ("end", "each")  # end: at the head, bisect on failure; each: after every replayed commit
GATE_TIMEOUT = 600  # seconds, the default of --exec-timeout


@dataclass(frozen=True)
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
        """These options as the state keeps them: only RunOptions' fields, and --out as an absolute path
        (--continue may run from another directory, the stop worktree)."""
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
                   gate=GateOptions(gate["command"], gate["at"], gate["timeout"]) if gate is not None else None,
                   backends=frozenset(data["backends"]))
