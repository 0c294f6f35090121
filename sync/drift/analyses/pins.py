"""A toolchain pin upstream moved that FlagTree's build still names (issue 45, class 1: the build's own
dependencies). Upstream pins what its tree compiles against in small files (`cmake/llvm-hash.txt` holds the
LLVM commit; 3.7 moved it to `cmake/llvm-info.json`'s `llvm_hash`); when a pin of one name goes from one commit
hash to another, trunk's C++ at the new tag is written for the new one. A FlagTree line of a code or build file
(a setup helper's download name, a CMake variable) that
spells the old hash (its first eight hex digits or more) and not the new one keeps fetching or checking the old
toolchain, which the new trunk no longer compiles against. The 3.3.x -> 3.4.0 move: the setup helper downloads
`llvm-a66376b0-...` while 3.4.0 pins LLVM 8957e64a. A backend that pins its own toolchain spells another hash and
is not asked. Kind pin-stale, an error.

What the toolchain took away: the commit that moved a pin rewrote upstream's own uses of the toolchain's API (the
3.5.1 -> 3.6.0 move's LLVM bump #8299: `NVVM::NVVMMemorySpace::kSharedMemorySpace` became `...::Shared`). A
name on lines that commit removed and on none it added, spelled nowhere in upstream's C/C++ at the new tag, that
FlagTree's compiled C++ lines still spell (as written, or by a qualified tail) is most likely gone from the new
toolchain. Upstream's own migration is the evidence; the toolchain's source is not read. Kind toolchain-name-gone,
an error, one per name, listing every site and upstream's replacement where one line became another.

Where the bump renamed a member of a scope (an enum, a class: `NVVMMemorySpace::kSharedMemorySpace` became
`NVVMMemorySpace::Shared`), FlagTree's use of another member of that scope that upstream spells nowhere at either
tag has no evidence of its own: nothing in the tree says it survived, and the toolchain renamed its siblings
(the 3.5 matmul line onto 3.6.0: `kSharedClusterMemorySpace`, now `SharedCluster`). Kind toolchain-sibling-renamed,
a warning, one per member, with the name upstream's rename pattern gives it (the prefix and suffix the renamed
member lost) where that pattern fits.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Callable

from sync.drift.context import DriftContext
from sync.facts.cmakebuilt import unbuilt
from sync.facts.delta import backend_of, fork_added_lines
from sync.facts.cpp import comment_spans
from sync.facts.filekinds import C_SUFFIXES, COMPILED, CPP_CODE, PIN_SUFFIXES, PY_SUFFIXES, is_built
from sync.facts.pyfacts import comment_spans as python_comment_spans
from sync.facts.layout import third_party_owner
from sync.facts.upstreamlog import commits_changing, pr_of
from sync.facts.trees import FileTree, read_text
from sync.git import GitTree, changes_with_renames, commit_hunks
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


@dataclass(frozen=True)
class MovedPin:
    name: str  # llvm_hash
    old: str
    new: str
    old_path: str  # the file that pinned it at the old tag
    new_path: str  # ... and at the new one


def moved_pins(context: DriftContext) -> list[MovedPin]:
    """Each pin upstream moved between the tags: a pin of one name in a file upstream changed, deleted or added
    (cmake/llvm-hash.txt became cmake/llvm-info.json's llvm_hash in 3.7), one hash at each tag."""
    before: dict[str, dict[str, str]] = {}
    after: dict[str, dict[str, str]] = {}
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if change.status != "added":
            for name, value in _read_pins(context.upstream_old, change.old_path).items():
                before.setdefault(name, {})[value] = change.old_path
        if change.new_path is not None:
            for name, value in _read_pins(context.upstream_new, change.new_path).items():
                after.setdefault(name, {})[value] = change.new_path
    found = []
    for name, olds in sorted(before.items()):
        news = after.get(name, {})
        if len(olds) == 1 and len(news) == 1 and olds.keys() != news.keys():
            (old, old_path), = olds.items()
            (new, new_path), = news.items()
            found.append(MovedPin(name, old, new, old_path, new_path))
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
        for moved in pins:
            pin, old, new = moved.new_path, moved.old, moved.new
            if old[:_SPELLED] not in text:
                continue
            spelled = re.compile(rf"(?<![0-9a-f]){old[:_SPELLED]}[0-9a-f]*")
            commented = None
            for number, line in enumerate(text.splitlines(), 1):
                match = spelled.search(line)
                if number in lines and match and old.startswith(match[0]) and new[:_SPELLED] not in line:
                    commented = commented or _in_comment(path, text)
                    if commented(number, match.start()):
                        continue  # a comment builds nothing against the pin (ir.cc's note, triton_v3.3.x)
                    findings.append(Finding(
                        "pin-stale", path,
                        f"FlagTree names {old[:_SPELLED]}, the commit upstream's {pin} pinned at the old tag; the new "
                        f"tag pins {new[:_SPELLED]}, which trunk's code is now written for (will not build as is)",
                        f"move the pin to {new[:_SPELLED]} (and the toolchain it downloads or checks), as {pin} did",
                        number, backend_of(context.owners.owners, path), related_path=pin,
                        details={"declaration": match[0], "pin": old, "replacement": new,
                                 "sites": [f"{path}:{number}"]}))
    return findings


def _in_comment(path: str, text: str) -> Callable[[int, int], bool]:
    """Whether (line, column) of a C/C++ or Python file stands in a comment, as its language's reader says;
    other files have none here."""
    if path.endswith(CPP_CODE + C_SUFFIXES):
        spans, in_bytes = comment_spans(text), True  # tree-sitter counts columns in bytes
    elif path.endswith(PY_SUFFIXES):
        spans, in_bytes = python_comment_spans(text), False
    else:
        return lambda line, column: False
    lines = text.splitlines()

    def inside(line: int, column: int) -> bool:
        at = len(lines[line - 1][:column].encode("utf-8")) if in_bytes else column
        return any(start <= (line, at) < end for start, end in spans)
    return inside


# ---------------------------------------------------------------- names the toolchain bump took away

_NAME = re.compile(r"[A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)*")
_SHORTEST = 6  # a name this short is too common to stand for one declaration of the toolchain


@dataclass(frozen=True)
class Migrated:
    """A name upstream stopped using in the commit that moved a toolchain pin, and what it wrote instead."""

    name: str  # as upstream spelled it: `NVVM::NVVMMemorySpace::kSharedMemorySpace`
    replacement: str | None
    commit: str  # short id
    subject: str
    path: str  # a file where upstream rewrote it (new tag)


def _names(line: str) -> set[str]:
    """Names a C++ line spells (qualified as written, blanks around `::` dropped), without // comments and
    string literals."""
    code = re.sub(r'"(?:\\.|[^"\\])*"', '""', line.split("//", 1)[0])
    return {re.sub(r"\s+", "", match) for match in _NAME.findall(code)}


def bump_migrations(context: DriftContext, pins: list[MovedPin]) -> list[Migrated]:
    """Names each commit that moved a pin stopped using in C++: on the lines it removed and on none it added,
    with the replacement where a removed line and an added line of one hunk differ in that name alone."""
    if context.range is None or not pins:
        return []
    repo, old, onto = context.repo, context.range.old.oid, context.range.onto.oid
    paths = tuple(sorted({pin.old_path for pin in pins} | {pin.new_path for pin in pins}))
    found: dict[str, Migrated] = {}
    for commit in commits_changing(repo, old, onto, paths):
        subject = commit.message.splitlines()[0] if commit.message else ""
        for path, hunk in commit_hunks(repo, commit, lambda name: name.endswith(CPP_CODE)):
            removed = [_names(line) for line in hunk.removed]
            added = [_names(line) for line in hunk.added]
            gone = set().union(*removed) - set().union(*added) if removed else set()
            for name in sorted(gone):
                if len(name.rpartition("::")[2]) < _SHORTEST or name in found:
                    continue
                swaps = {next(iter(now - was)) for was in removed if name in was for now in added
                         if was - now == {name} and len(now - was) == 1}
                found[name] = Migrated(name, next(iter(swaps)) if len(swaps) == 1 else None, str(commit.id)[:9],
                                       subject, path)
    return list(found.values())


def _used_anywhere(tree: GitTree, names: set[str]) -> set[str]:
    """Which of the names (by their last component, a word) a C/C++ file of the tree still spells."""
    lasts = {name: name.rpartition("::")[2] for name in names}
    words = {last: re.compile(rf"\b{re.escape(last)}\b") for last in lasts.values()}
    seen: set[str] = set()
    for path in tree.paths():
        if not path.endswith(COMPILED) or len(seen) == len(words):
            continue
        text = read_text(tree, path) or ""
        seen |= {last for last, word in words.items() if last not in seen and last in text and word.search(text)}
    return {name for name, last in lasts.items() if last in seen}


def toolchain_name_findings(context: DriftContext) -> list[Finding]:
    """FlagTree's compiled C++ lines that spell a name the toolchain bump took away (see the module's text)."""
    migrated = bump_migrations(context, moved_pins(context))
    if not migrated:
        return []
    own_trunk = context.own_trunk_backends
    by_last: dict[str, list[Migrated]] = {}
    for item in migrated:
        by_last.setdefault(item.name.rpartition("::")[2], []).append(item)
    by_member = {_member(item.name) for item in migrated}  # Scope::member of each name upstream migrated
    renamed_scopes = _renamed_scopes(migrated)
    # one pass per file and line for every name: a line is split into names only where one of them is a word
    spelled = re.compile(r"\b(" + "|".join(map(re.escape, sorted(set(by_last) | set(renamed_scopes),
                                                                   key=len, reverse=True))) + r")\b")
    sites: dict[str, list[tuple[str, int]]] = {}
    siblings: dict[str, list[tuple[str, int]]] = {}  # Scope::member -> sites
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if not path.endswith(CPP_CODE) or third_party_owner(path) in own_trunk or not is_built(path):
            continue
        text = read_text(context.fork, path) or ""
        if not spelled.search(text) or unbuilt(context.fork, path):
            continue  # a file under a directory the CMake adds only in a comment builds nothing (3.4 -> 3.7)
        source = text.splitlines()
        for line in sorted(lines):
            words = set(spelled.findall(source[line - 1])) if 0 < line <= len(source) else set()
            if not words:
                continue
            names = _names(source[line - 1])
            for word in sorted(words):
                for item in by_last.get(word, ()):
                    if any(_same_name(name, item.name) for name in names):
                        sites.setdefault(item.name, []).append((path, line))
            for name in sorted(names):
                scope, _, member = name.rpartition("::")
                last_scope = scope.rpartition("::")[2]
                if last_scope in renamed_scopes and member and f"{last_scope}::{member}" not in by_member:
                    siblings.setdefault(f"{last_scope}::{member}", []).append((path, line))
    if not sites and not siblings:
        return []
    still = _used_anywhere(context.upstream_new, set(sites) | set(siblings))  # upstream still spells it: no claim
    findings = _sibling_findings(context, renamed_scopes, {name: where for name, where in siblings.items()
                                                           if name not in still})
    for item in migrated:
        where = sites.get(item.name)
        if not where or item.name in still:
            continue
        path, line = where[0]
        instead = f", now {item.replacement}" if item.replacement else ""
        findings.append(Finding(
            "toolchain-name-gone", path,
            f"FlagTree uses {item.name}, which upstream stopped using in the commit that moved its toolchain pin "
            f"({item.commit} {item.subject}; {item.path}{instead}) and spells nowhere at the new tag: the new "
            f"toolchain most likely no longer offers it (will not build as is); {len(where)} site(s)",
            f"write it as upstream's own code does after {item.commit}"
            + (f" ({item.replacement})" if item.replacement else ""),
            line, backend_of(context.owners.owners, path), related_path=item.path,
            details={"declaration": item.name, "replacement": item.replacement, "commits": [f"{item.commit} {item.subject}"],
                     "prs": [pr] if (pr := pr_of(item.subject)) else [],
                     "sites": [f"{site_path}:{site_line}" for site_path, site_line in where]}))
    return findings


def _member(name: str) -> str:
    """`Scope::member` of a qualified name (the last two components)."""
    return "::".join(name.split("::")[-2:])


def _renamed_scopes(migrated: list[Migrated]) -> dict[str, Migrated]:
    """Scope (its last component) -> a member the bump renamed within it: the replacement keeps the scope and
    changes the member's name."""
    found: dict[str, Migrated] = {}
    for item in migrated:
        if item.replacement is None or "::" not in item.name or "::" not in item.replacement:
            continue
        scope, _, member = item.name.rpartition("::")
        new_scope, _, new_member = item.replacement.rpartition("::")
        last = scope.rpartition("::")[2]
        if new_scope.rpartition("::")[2] == last and new_member != member and len(last) >= _SHORTEST:
            found.setdefault(last, item)
    return found


def _renamed_like(member: str, item: Migrated) -> str | None:
    """The name a sibling gets by the renamed member's pattern: the prefix and suffix the member lost around its
    new name (kSharedMemorySpace -> Shared gives kSharedClusterMemorySpace -> SharedCluster); None where the
    pattern does not fit."""
    old = item.name.rpartition("::")[2]
    new = (item.replacement or "").rpartition("::")[2]
    at = old.find(new) if new else -1
    if at < 0:
        return None
    prefix, suffix = old[:at], old[at + len(new):]
    if not (prefix or suffix) or not member.startswith(prefix) or not member.endswith(suffix) \
            or len(member) <= len(prefix) + len(suffix):
        return None
    return member[len(prefix):len(member) - len(suffix)]


def _sibling_findings(context: DriftContext, scopes: dict[str, Migrated],
                      siblings: dict[str, list[tuple[str, int]]]) -> list[Finding]:
    findings = []
    for name, where in sorted(siblings.items()):
        scope, _, member = name.rpartition("::")
        item = scopes[scope]
        guess = _renamed_like(member, item)
        likely = f"; by the same pattern it would now be {scope}::{guess}" if guess else ""
        path, line = where[0]
        findings.append(Finding(
            "toolchain-sibling-renamed", path,
            f"FlagTree uses {name}, a member of {scope}, whose member {item.name} the commit that moved the toolchain "
            f"pin renamed to {item.replacement} ({item.commit} {item.subject}); upstream spells {member} at neither "
            f"tag, so nothing in the tree says the new toolchain kept it{likely} (likely will not build as is); "
            f"{len(where)} site(s)",
            f"check {name} against the new toolchain's {scope}" + (f" (likely {scope}::{guess})" if guess else ""),
            line, backend_of(context.owners.owners, path), related_path=item.path,
            details={"declaration": name, "renamed": item.name, "replacement": item.replacement,
                     "likely": f"{scope}::{guess}" if guess else None,
                     "commits": [f"{item.commit} {item.subject}"],
                     "sites": [f"{site_path}:{site_line}" for site_path, site_line in where]}))
    return findings


def _same_name(spelled: str, name: str) -> bool:
    """Whether a name as a line spells it is the migrated one: equal, or one of them a qualified tail of the
    other (`NVVMMemorySpace::kSharedMemorySpace` for `NVVM::NVVMMemorySpace::kSharedMemorySpace`)."""
    a, b = spelled.split("::"), name.split("::")
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    return longer[-len(shorter):] == shorter
