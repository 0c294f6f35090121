"""A toolchain pin upstream moved that FlagTree's build still names (issue 45, class 1: the build's own
dependencies). Upstream pins what its tree compiles against in small files (`cmake/llvm-hash.txt` holds the
LLVM commit; 3.7 moved it to `cmake/llvm-info.json`'s `llvm_hash`); when a pin of one name goes from one commit
hash to another, trunk's C++ at the new tag is written for the new one. A FlagTree line of a code or build file
(a setup helper's download name, a CMake variable) that
spells the old hash (its first eight hex digits or more) and not the new one keeps fetching or checking the old
toolchain, which the new trunk no longer compiles against. The 3.3.x -> 3.4.0 move: the setup helper downloads
`llvm-a66376b0-...` while 3.4.0 pins LLVM 8957e64a. A backend that pins its own toolchain spells another hash and
is not asked. Kind pin-stale, an error.
"""
from __future__ import annotations

import json
import re

from sync.drift.context import DriftContext
from sync.facts.delta import backend_of, fork_added_lines
from sync.facts.filekinds import PIN_SUFFIXES
from sync.facts.trees import FileTree, read_text
from sync.git import changes_with_renames
from sync.model import Finding

_HASH = re.compile(r"\A\s*([0-9a-f]{12,40})\s*\Z")  # a pin file holds one commit hash and nothing else
_HEX = re.compile(r"\A[0-9a-f]{12,40}\Z")
_SPELLED = 8  # hex digits of a hash a name must carry to stand for it (as git's short ids, never fewer)
_LARGEST = 65536  # a pin file is small; larger files are not read for pins


def pins_in(path: str, text: str) -> dict[str, str]:
    """Pin name -> commit hash a file holds: a one-hash file is the pin of its stem (cmake/llvm-hash.txt:
    llvm_hash); a JSON object gives each top-level key naming a hash with a hash for its value (llvm_hash)."""
    stem = path.rpartition("/")[2].partition(".")[0].replace("-", "_").lower()
    whole = _HASH.match(text)
    if whole:
        return {stem: whole[1]}
    if not path.endswith(".json"):
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return {key.replace("-", "_").lower(): value for key, value in data.items()
            if "hash" in key.lower() and isinstance(value, str) and _HEX.match(value)} if isinstance(data, dict) else {}


def moved_pins(context: DriftContext) -> list[tuple[str, str, str]]:
    """(where the new tag pins it, old hash, new hash) of each pin upstream moved between the tags: a pin of one
    name in a file upstream changed, deleted or added (cmake/llvm-hash.txt became cmake/llvm-info.json's
    llvm_hash in 3.7), one hash at each tag."""
    before: dict[str, set[str]] = {}
    after: dict[str, dict[str, str]] = {}
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if change.status != "added":
            for name, value in _read_pins(context.upstream_old, change.old_path).items():
                before.setdefault(name, set()).add(value)
        if change.new_path is not None:
            for name, value in _read_pins(context.upstream_new, change.new_path).items():
                after.setdefault(name, {})[value] = change.new_path
    found = []
    for name, olds in sorted(before.items()):
        news = after.get(name, {})
        if len(olds) == 1 and len(news) == 1 and olds != news.keys():
            (new, where), = news.items()
            found.append((where, next(iter(olds)), new))
    return found


def _read_pins(tree: FileTree, path: str) -> dict[str, str]:
    if not (path.endswith(PIN_SUFFIXES) or "." not in path.rpartition("/")[2]):
        return {}
    text = read_text(tree, path) or ""
    return pins_in(path, text) if len(text) <= _LARGEST else {}


def pin_findings(context: DriftContext) -> list[Finding]:
    pins = moved_pins(context)
    if not pins:
        return []
    findings: list[Finding] = []
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        text = read_text(context.fork, path) or ""
        for pin, old, new in pins:
            if old[:_SPELLED] not in text:
                continue
            spelled = re.compile(rf"(?<![0-9a-f]){old[:_SPELLED]}[0-9a-f]*")
            for number, line in enumerate(text.splitlines(), 1):
                match = spelled.search(line)
                if number in lines and match and old.startswith(match[0]) and new[:_SPELLED] not in line:
                    findings.append(Finding(
                        "pin-stale", path,
                        f"FlagTree names {old[:_SPELLED]}, the commit upstream's {pin} pinned at the old tag; the new "
                        f"tag pins {new[:_SPELLED]}, which trunk's code is now written for (will not build as is)",
                        f"move the pin to {new[:_SPELLED]} (and the toolchain it downloads or checks), as {pin} did",
                        number, backend_of(context.owners.owners, path), related_path=pin,
                        details={"declaration": old, "replacement": new, "sites": [f"{path}:{number}"]}))
    return findings
