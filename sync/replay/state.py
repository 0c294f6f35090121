"""The shape of the upgrade state file and journal lines: every field, its type, nothing else, declared with the
schema types every reader of the tool uses (sync/support/schema.py).

A state that was edited by hand, truncated or written by another version fails here with the field
that is wrong (StateFormatError), before any of it is used.
"""
from __future__ import annotations

import re
from typing import Any

from sync.model.kinds import family
from sync.replay.commits import POLICIES
from sync.replay.options import GATE_AT, GATE_TIMEOUT
from sync.support.schema import (ArrayOf, Choice, Flag, Integer, Number, OrNull, Raw, Strings, Table, Text, Value,
                                 value_problem)

# 3: options keep the gate as one object (RunOptions); 2: params carry a Range of Revs and name target_branch.
# 1 and 2 are still read, so that a run interrupted by the previous release resumes.
STATE_VERSION = 3
_CONFLICT_KINDS = tuple(kind.id for kind in family("conflict"))
_RESOLUTIONS = ("markers", "ours", "theirs", "manual")

_COMMIT = Text(pattern=re.compile(r"[0-9a-f]{40}"), meaning="a full commit id")
_ANY_TEXT = Text(nonempty=False)
_REV = Table(fields={"ref": _ANY_TEXT, "commit": _COMMIT})
# params of the current format (2 and 3)
_PARAMS = Table(fields={"repo": _ANY_TEXT, "range": Table(fields={"from": _REV, "onto": _REV, "source": _REV}),
                        "target_branch": _ANY_TEXT, "policy": Choice(POLICIES),
                        "drop_orphan_reverts": Flag(required=False), "stop_on": Strings(required=False)})
# params of format 1: each revision as two parallel strings, the branches named src and branch
_PARAMS_1 = Table(fields={name: _ANY_TEXT for name in ("repo", "old", "onto", "src", "branch", "policy", "old_id",
                                                        "onto_id", "src_id")})
# the header; params and options take the shape of its version
_HEADER = Table(fields={"version": Raw(), "params": Raw(), "commits": Strings(item=_COMMIT), "head": _COMMIT,
                        "stopped": Flag(required=False), "options": Raw(required=False),
                        "target_was": OrNull(_COMMIT, required=False)})
# options of the current format (RunOptions.to_json), every key present
_OPTIONS = Table(fields={"out": OrNull(_ANY_TEXT),
                         "gate": OrNull(Table(fields={"command": _ANY_TEXT, "at": Choice(GATE_AT),
                                                      "timeout": Number(above_zero=True)})),  # as --exec-timeout
                         "backends": Strings(item=_ANY_TEXT)})
# options of formats 1 and 2: flat, each optional
_FLAT_OPTIONS = Table(fields={"out": OrNull(_ANY_TEXT, required=False),
                              "exec_command": OrNull(_ANY_TEXT, required=False),
                              "exec_at": Choice(GATE_AT, required=False), "exec_timeout": Number(required=False),
                              "backends": Strings(required=False, item=_ANY_TEXT)})
_HUNK = Table(fields={"line": Integer(), "ours": _ANY_TEXT, "base": _ANY_TEXT, "theirs": _ANY_TEXT})
_CONFLICT = Table(fields={"path": _ANY_TEXT, "kind": Choice(_CONFLICT_KINDS),  # else the report could not tell it
                          "resolution": Choice(_RESOLUTIONS), "hunks": ArrayOf(_HUNK, required=False),
                          "base_path": OrNull(_ANY_TEXT, required=False)})
_RESULT = Table(fields={"source": _COMMIT, "summary": _ANY_TEXT, "result": OrNull(_COMMIT),
                        "conflicts": ArrayOf(_CONFLICT)})
_JOURNAL_LINE = Table(fields={"result": _RESULT, "head": _COMMIT})


class StateFormatError(ValueError):
    """The state file or a journal line does not have the shape this version writes."""


def _checked(where: str, value: Any, shape: Value) -> Any:
    """value, when it has shape; else a StateFormatError naming the field (e.g. params.range.onto.commit)."""
    named, problem = value_problem(value, shape)
    if problem:
        raise StateFormatError(f"{where}{named} {problem}")
    return value


def _params_of_version_1(data: Any) -> dict[str, Any]:
    """Version 1 kept each revision as two parallel strings (old/old_id, ...) and named the branches
    src and branch: read it into the current shape, so that a run started by the previous release resumes."""
    params = _checked("params", data, _PARAMS_1)
    return _checked("params", {"repo": params["repo"], "target_branch": params["branch"], "policy": params["policy"],
                               "range": {"from": {"ref": params["old"], "commit": params["old_id"]},
                                         "onto": {"ref": params["onto"], "commit": params["onto_id"]},
                                         "source": {"ref": params["src"], "commit": params["src_id"]}}}, _PARAMS)


def parse_header(data: Any) -> dict[str, Any]:
    """The state header, in the current shape (versions 1 and 2 are read too); options default for a state
    of version 1 or 2 written before they were stored."""
    header = _checked("the state", data, _HEADER)
    found = header["version"]
    if type(found) is int and found == 1:  # type(): neither True nor 1.0 is a version
        params = _params_of_version_1(header["params"])
    elif type(found) is int and found in (2, STATE_VERSION):  # 2 differs only in its options
        params = _checked("params", header["params"], _PARAMS)
    else:
        raise StateFormatError(f"format version {header['version']!r}: this flagtree-sync reads 1 to {STATE_VERSION}")
    if header["head"] != params["range"]["onto"]["commit"]:
        raise StateFormatError("head is not the commit the replay starts on (params.range.onto)")
    if found == STATE_VERSION:
        options = _checked("options", header.get("options"), _OPTIONS)
    else:
        options = _options_of_version_2(header.get("options", {}))
    return {**header, "params": params, "stopped": header.get("stopped", False), "options": options,
            "target_was": header.get("target_was")}


def _options_of_version_2(data: Any) -> dict[str, Any]:
    """Formats 1 and 2 kept the options flat, each optional (a state written before they were stored has
    none): read them into the current shape, a gate only where a command was stored."""
    options = _checked("options", data, _FLAT_OPTIONS)
    command = options.get("exec_command")
    gate = None if command is None else {"command": command, "at": options.get("exec_at", "end"),
                                         "timeout": options.get("exec_timeout", GATE_TIMEOUT)}
    return _checked("options", {"out": options.get("out"), "gate": gate, "backends": options.get("backends", [])},
                    _OPTIONS)


def parse_journal_entry(data: Any) -> dict[str, Any]:
    """One journal line: {"result": a replayed commit, "head": the branch head after it}."""
    return _checked("journal line", data, _JOURNAL_LINE)
