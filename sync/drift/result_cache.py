"""The whole drift analysis, memoized in the fact cache's directory (kind "drift-result").

analyse_drift is a function of git content: the commits of the range, the target's tree, the backend
filter and the symbols flag. The key holds those and everything else a result could depend on: this
tool's own code and the libraries that parse (a fingerprint computed once per process), the
repository's configuration and the files libgit2 reads besides objects (attributes, shallow, grafts),
the labels the revisions were given (they appear in findings). A partial clone bypasses it (a blob
may be missing now and fetched later), and so does a result that met a missing blob.

Object presence the analyses judged (a provenance entry's blob, which may be fetched or pruned later)
is stored with the entry and checked again on a hit. An entry that does not decode to the same
types as were stored is a miss: the analysis runs again and overwrites it.
FLAGTREE_SYNC_CACHE=off disables it with the fact cache; FLAGTREE_SYNC_RESULT_CACHE=off alone.
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
from typing import Any

from sync.support.cache import FactCache
from sync.support.parselimit import parse_limit
from sync.git import Repository
from sync.git.inputs import code_fingerprint, repository_inputs
from sync.git.repo import commit_tree_id, has_object
from sync.model import Finding, MergedOverlay, Range, Rev, Review


KIND = "drift-result"
VERSION = 1
SWITCH = "FLAGTREE_SYNC_RESULT_CACHE"
_CLASSES: dict[str, type] = {"Finding": Finding, "Review": Review}


class Unencodable(Exception):
    """A value this encoding could not give back exactly: the result is not stored."""


def enabled() -> bool:
    return os.environ.get(SWITCH, "").lower() not in ("off", "0", "no")


def result_key(repo: Repository, rng: Range, target: Rev | None, backends: set[str] | None,
               symbols: bool) -> str | None:
    """The entry's key, or None: run without the result cache."""
    document = run_inputs(repo, rng, target, backends, symbols)
    if document is None:
        return None
    # the analysis reads the target's tree only: a re-made commit of the same tree is the same input
    target_tree = None if target is None else commit_tree_id(repo, target.oid)
    if target is not None and target_tree is None:
        return None
    document["target"] = None if target is None else {"ref": target.ref, "tree": target_tree}
    return hashlib.sha1(json.dumps(document, sort_keys=True).encode("utf-8")).hexdigest()


def run_inputs(repo: Repository, rng: Range, target: Rev | None, backends: set[str] | None,
               symbols: bool) -> dict[str, Any] | None:
    """Every input of a drift but the target's tree, as JSON; None: run without the caches of results."""
    if not enabled():
        return None
    inputs = repository_inputs(repo)
    if inputs is None:
        return None
    return {"code": code_fingerprint(), "parse_limit": parse_limit(), "range": rng.to_json(),
            "target": None if target is None else {"ref": target.ref},
            "backends": sorted(backends) if backends else None, "symbols": symbols, "repository": inputs}


def load(cache: FactCache, key: str,
         repo: Repository) -> tuple[list[Finding], list[tuple[str, bytes]], list[str]] | None:
    """The stored result (findings, each merged overlay's path and bytes, the fork's backends), or None."""
    stored = cache.get(KIND, VERSION, key)
    try:
        if not isinstance(stored, dict):
            return None
        present = stored["present"]
        if not isinstance(present, dict) or any(has_object(repo, blob) != bool(was) for blob, was in present.items()):
            return None  # a blob the analyses judged came or went since
        findings = decode_findings(stored["findings"])
        backends = stored["backends"]
        if not isinstance(backends, list) \
                or not all(isinstance(backend, str) for backend in backends):
            return None
        merged = decode_merged(stored["merged"])
    except Exception:  # noqa: BLE001 - any entry that does not decode is a miss, never an error
        return None
    return findings, merged, backends


def store(cache: FactCache, key: str, findings: list[Finding], merged: list[MergedOverlay], backends: list[str],
          present: dict[str, bool]) -> bool:
    """Write the entry when its findings decode back to exactly these; False when it was left out.
    Overlay bytes go in as base64 (exact by construction, and never held as JSON twice: they may be large)."""
    encoded = encode_findings(findings)
    if encoded is None:
        return False
    cache.put(KIND, VERSION, key, {
        "findings": encoded, "backends": list(backends), "present": dict(present),
        "merged": encode_merged(merged)})
    return True


def encode_findings(findings: list[Finding]) -> list[Any] | None:
    """The findings as JSON that decodes back to exactly them; None when some value would not."""
    try:
        encoded = json.loads(json.dumps([_encode(finding) for finding in findings]))
        return encoded if [_decode(item) for item in encoded] == findings else None
    except (Unencodable, TypeError, ValueError, KeyError):
        return None


def decode_findings(items: Any) -> list[Finding]:
    """encode_findings's findings back; ValueError (or another exception) when items are not such."""
    findings = [_decode(item) for item in items]
    if not all(isinstance(finding, Finding) for finding in findings):
        raise ValueError("not a finding")
    return findings


def encode_merged(merged: list[MergedOverlay]) -> list[list[str]]:
    """Overlay bytes as base64 (exact by construction, and never held as JSON twice: they may be large)."""
    return [[overlay.path, base64.b64encode(overlay.data).decode("ascii")] for overlay in merged]


def decode_merged(items: list[Any]) -> list[tuple[str, bytes]]:
    """(path, bytes) of each merged overlay: drift makes the MergedOverlay objects when they are used."""
    if not all(isinstance(path, str) and isinstance(data, str) for path, data in items):
        raise ValueError("not a merged overlay")
    return [(path, base64.b64decode(data, validate=True)) for path, data in items]


def _encode(value: Any) -> Any:
    """JSON that _decode turns back into an equal value of the same types; Unencodable otherwise."""
    kind = type(value)
    if value is None or kind in (str, int, bool, float):
        return value
    if kind is list:
        return [_encode(item) for item in value]
    if kind is tuple:
        return {"t": [_encode(item) for item in value]}
    if kind in (set, frozenset):
        return {"s" if kind is set else "f": [_encode(item) for item in value]}
    if kind is dict:
        return {"d": [[_encode(key), _encode(item)] for key, item in value.items()]}
    if kind is bytes:
        return {"b": base64.b64encode(value).decode("ascii")}
    if dataclasses.is_dataclass(value) and _CLASSES.get(kind.__name__) is kind:
        return {"c": kind.__name__, "v": {field.name: _encode(getattr(value, field.name))
                                          for field in dataclasses.fields(value)}}
    raise Unencodable(kind.__name__)


def _decode(value: Any) -> Any:
    if value is None or type(value) in (str, int, bool, float):
        return value
    if type(value) is list:
        return [_decode(item) for item in value]
    if type(value) is not dict or len(value) != 1 and set(value) != {"c", "v"}:
        raise ValueError("not an encoded value")
    if "c" in value:
        return _CLASSES[value["c"]](**{name: _decode(item) for name, item in value["v"].items()})
    (tag, items), = value.items()
    if tag == "t":
        return tuple(_decode(item) for item in items)
    if tag == "s":
        return {_decode(item) for item in items}
    if tag == "f":
        return frozenset(_decode(item) for item in items)
    if tag == "d":
        return {_decode(key): _decode(item) for key, item in items}
    if tag == "b":
        return base64.b64decode(items, validate=True)
    raise ValueError(f"unknown tag {tag!r}")
