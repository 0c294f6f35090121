"""The shape of the upgrade state file and journal lines: every field, its type, nothing else.

A state that was edited by hand, truncated or written by another version fails here with the field
that is wrong (StateFormatError), before any of it is used.
"""
from __future__ import annotations

import math
import re
from typing import Any

from sync.model.kinds import family
from sync.replay.commits import POLICIES
from sync.replay.options import GATE_AT, GATE_TIMEOUT

# 3: options keep the gate as one object (RunOptions); 2: params carry a Range of Revs and name target_branch.
# 1 and 2 are still read, so that a run interrupted by the previous release resumes.
STATE_VERSION = 3
_COMMIT_ID = re.compile(r"[0-9a-f]{40}")
# options of formats 1 and 2: flat, each optional
_FLAT_OPTION_TYPES: dict[str, tuple[type, ...]] = {"out": (str, type(None)), "exec_command": (str, type(None)),
                                                   "exec_at": (str,), "exec_timeout": (int, float), "backends": (list,)}
_HUNK_FIELDS = {"line": int, "ours": str, "base": str, "theirs": str}
_CONFLICT_KINDS = tuple(kind.id for kind in family("conflict"))
_RESOLUTIONS = ("markers", "ours", "theirs", "manual")


class StateFormatError(ValueError):
    """The state file or a journal line does not have the shape this version writes."""


def _keys(where: str, value: Any, required: set[str], optional: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise StateFormatError(f"{where} is not an object")
    missing, unknown = required - value.keys(), value.keys() - required - optional
    if missing or unknown:
        raise StateFormatError(f"{where}: " + "; ".join(
            part for part in (f"missing {', '.join(sorted(missing))}" if missing else "",
                              f"unknown {', '.join(sorted(unknown))}" if unknown else "") if part))
    return value


def _typed(where: str, value: Any, types: tuple[type, ...]) -> Any:
    if isinstance(value, bool) and bool not in types or not isinstance(value, types):
        raise StateFormatError(f"{where} has the wrong type ({type(value).__name__})")
    return value


def commit_id(where: str, value: Any) -> str:
    if not isinstance(value, str) or not _COMMIT_ID.fullmatch(value):
        raise StateFormatError(f"{where} is not a full commit id")
    return value


_V1_PARAMS = {"repo", "old", "onto", "src", "branch", "policy", "old_id", "onto_id", "src_id"}


def _rev(where: str, value: Any) -> dict[str, str]:
    rev = _keys(where, value, {"ref", "commit"})
    _typed(f"{where}.ref", rev["ref"], (str,))
    commit_id(f"{where}.commit", rev["commit"])
    return rev


def _params(data: Any) -> dict[str, Any]:
    """params of the current format: {"repo", "range": {"from", "onto", "source"} of {"ref", "commit"},
    "target_branch", "policy"}."""
    params = _keys("params", data, {"repo", "range", "target_branch", "policy"}, {"drop_orphan_reverts", "stop_on"})
    stop_on = _typed("params.stop_on", params.get("stop_on", []), (list,))
    if not all(isinstance(glob, str) and glob for glob in stop_on):
        raise StateFormatError("params.stop_on holds a value that is no glob")
    for name in ("repo", "target_branch", "policy"):
        _typed(f"params.{name}", params[name], (str,))
    _typed("params.drop_orphan_reverts", params.get("drop_orphan_reverts", False), (bool,))
    if params["policy"] not in POLICIES:
        raise StateFormatError(f"params.policy is {params['policy']!r}, not one of {', '.join(POLICIES)}")
    rng = _keys("params.range", params["range"], {"from", "onto", "source"})
    for name in ("from", "onto", "source"):
        _rev(f"params.range.{name}", rng[name])
    return params


def _params_of_version_1(data: Any) -> dict[str, Any]:
    """Version 1 kept each revision as two parallel strings (old/old_id, ...) and named the branches
    src and branch: read it into the current shape, so that a run started by the previous release resumes."""
    params = _keys("params", data, _V1_PARAMS)
    for name, value in params.items():
        _typed(f"params.{name}", value, (str,))
    return _params({"repo": params["repo"], "target_branch": params["branch"], "policy": params["policy"],
                    "range": {"from": {"ref": params["old"], "commit": params["old_id"]},
                              "onto": {"ref": params["onto"], "commit": params["onto_id"]},
                              "source": {"ref": params["src"], "commit": params["src_id"]}}})


def parse_header(data: Any) -> dict[str, Any]:
    """The state header, in the current shape (versions 1 and 2 are read too); options default for a state
    of version 1 or 2 written before they were stored."""
    header = _keys("the state", data, {"version", "params", "commits", "head"}, {"stopped", "options", "target_was"})
    found = header["version"]
    if type(found) is int and found == 1:  # type(): neither True nor 1.0 is a version
        params = _params_of_version_1(header["params"])
    elif type(found) is int and found in (2, STATE_VERSION):  # 2 differs only in its options
        params = _params(header["params"])
    else:
        raise StateFormatError(f"format version {header['version']!r}: this flagtree-sync reads 1 to {STATE_VERSION}")
    commits = _typed("commits", header["commits"], (list,))
    for number, value in enumerate(commits, start=1):
        commit_id(f"commits[{number}]", value)
    commit_id("head", header["head"])
    if header["head"] != params["range"]["onto"]["commit"]:
        raise StateFormatError("head is not the commit the replay starts on (params.range.onto)")
    if header.get("target_was") is not None:  # the branch --force was allowed to replace, as it was then
        commit_id("target_was", header["target_was"])
    stopped = _typed("stopped", header.get("stopped", False), (bool,))
    if found == STATE_VERSION:
        options = _options(header.get("options"))
    else:
        options = _options(_options_of_version_2(header.get("options", {})))
    return {**header, "params": params, "stopped": stopped, "options": options,
            "target_was": header.get("target_was")}


def _options(data: Any) -> dict[str, Any]:
    """options of the current format (RunOptions.to_json): {"out": a path or null, "gate": null or
    {"command", "at", "timeout"}, "backends": [names]}, every key present."""
    options = _keys("options", data, {"out", "gate", "backends"})
    _typed("options.out", options["out"], (str, type(None)))
    backends = _typed("options.backends", options["backends"], (list,))
    if not all(isinstance(name, str) for name in backends):
        raise StateFormatError("options.backends holds a value that is not a name")
    if options["gate"] is not None:
        gate = _keys("options.gate", options["gate"], {"command", "at", "timeout"})
        _typed("options.gate.command", gate["command"], (str,))
        if _typed("options.gate.at", gate["at"], (str,)) not in GATE_AT:
            raise StateFormatError(f"options.gate.at is {gate['at']!r}, not {' or '.join(GATE_AT)}")
        timeout = _typed("options.gate.timeout", gate["timeout"], (int, float))
        if not math.isfinite(timeout) or timeout <= 0:  # what --exec-timeout takes
            raise StateFormatError(f"options.gate.timeout is {timeout!r}, not a number of seconds above 0")
    return options


def _options_of_version_2(data: Any) -> dict[str, Any]:
    """Formats 1 and 2 kept the options flat, each optional (a state written before they were stored has
    none): read them into the current shape, a gate only where a command was stored."""
    options = _keys("options", data, set(), set(_FLAT_OPTION_TYPES))
    for name, value in options.items():
        _typed(f"options.{name}", value, _FLAT_OPTION_TYPES[name])
    if options.get("exec_at", "end") not in GATE_AT:
        raise StateFormatError(f"options.exec_at is {options['exec_at']!r}, not end or each")
    command = options.get("exec_command")
    gate = None if command is None else {"command": command, "at": options.get("exec_at", "end"),
                                         "timeout": options.get("exec_timeout", GATE_TIMEOUT)}
    return {"out": options.get("out"), "gate": gate, "backends": options.get("backends", [])}


def parse_journal_entry(data: Any) -> dict[str, Any]:
    """One journal line: {"result": a replayed commit, "head": the branch head after it}."""
    entry = _keys("journal line", data, {"result", "head"})
    commit_id("journal head", entry["head"])
    result = _keys("journal result", entry["result"], {"source", "summary", "result", "conflicts"})
    commit_id("journal source", result["source"])
    _typed("journal summary", result["summary"], (str,))
    if result["result"] is not None:
        commit_id("journal result", result["result"])
    for conflict in _typed("journal conflicts", result["conflicts"], (list,)):
        conflict = _keys("journal conflict", conflict, {"path", "kind", "resolution"}, {"hunks", "base_path"})
        for name in ("path", "kind", "resolution"):
            _typed(f"conflict {name}", conflict[name], (str,))
        if conflict["kind"] not in _CONFLICT_KINDS:  # the report would not know what to tell the user
            raise StateFormatError(f"conflict kind {conflict['kind']!r} is not one of {', '.join(_CONFLICT_KINDS)}")
        if conflict["resolution"] not in _RESOLUTIONS:
            raise StateFormatError(f"conflict resolution {conflict['resolution']!r} is not one of "
                                   f"{', '.join(_RESOLUTIONS)}")
        _typed("conflict base_path", conflict.get("base_path"), (str, type(None)))
        for hunk in _typed("conflict hunks", conflict.get("hunks", []), (list,)):
            hunk = _keys("conflict hunk", hunk, set(_HUNK_FIELDS))
            for name, kind in _HUNK_FIELDS.items():
                _typed(f"hunk {name}", hunk[name], (kind,))
    return entry
