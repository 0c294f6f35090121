"""What upstream did between the tags to the names FlagTree uses, for the symbol analysis (symbols.py):
UpstreamIndex reads only the upstream-changed files where a name it is asked about occurs less often, in shares
(ChangeNames) that the split analysis computes apart and combines."""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from posixpath import commonprefix
from typing import Iterable

from sync.drift.analyses.symboldecls import (_accessor_aliases, _fewer_occurrences, _looks_declared, _signature,
                                             declared_names, pass_functions, python_shape)
from sync.drift.analyses.symbolterms import CODE, CPP, Drift, PY, TD, TRUNK_PREFIXES, _PY_DEF_LINE, _TOKEN, _header
from sync.facts.cppcalls import dialect_namespaces, include_dir
from sync.facts.cppscope import declaration_scopes
from sync.facts.filekinds import is_built
from sync.facts.layout import is_third_party
from sync.facts.trees import read_text
from sync.git import GitTree, Repository, changes_with_renames


def _indexed(upstream_path: str) -> bool:
    """Whether upstream's declarations in a file of its tree are indexed: trunk's code, and the TableGen of
    upstream's own backends (third_party/amd/...: a FlagTree backend registers the passes their Passes.td
    declares). Not their C++: they vendor toolkit headers (HIP's) whose std names would stand for removals, and
    their deleted headers are read as any header (removed_headers). Not their Python: a name is read by its token."""
    if upstream_path.startswith(TRUNK_PREFIXES):
        return upstream_path.endswith(CODE)
    return is_third_party(upstream_path) and upstream_path.endswith(TD) and is_built(upstream_path)


class UpstreamIndex:
    """What upstream did to a given set of names between the two tags; reads only what it must."""

    def __init__(self, repo: Repository, old: GitTree, new: GitTree) -> None:
        self.repo, self.old, self.new = repo, old, new
        self.changed = []  # (old path, new path or None)
        self.added: list[str] = []  # files upstream added: a declaration moved there is not gone
        self.removed_files: dict[str, str] = {}
        self.removed_headers: dict[str, str] = {}  # any header upstream deleted or moved, its own third_party/ too
        for change in changes_with_renames(old, new):  # the renames drift's context found, not a second pass
            old_path = change.old_path
            if change.status in ("deleted", "renamed") and _header(old_path):
                self.removed_headers[old_path] = _gone_note(change.new_path)
            if not _indexed(old_path):
                continue
            if change.status == "added":
                if change.new_path is not None and _indexed(change.new_path):
                    self.added.append(change.new_path)
                continue
            gone = change.status in ("deleted", "renamed")
            new_path = change.new_path
            self.changed.append((old_path, new_path))
            if gone:
                self.removed_files[old_path] = _gone_note(new_path)

    def drifts(self, names: set[str]) -> dict[str, list[Drift]]:
        return self.combine(self.changes_part(names, 0, 1))

    def changes_part(self, names: set[str], part: int, parts: int) -> list[ChangeNames]:
        """What every changed file of part `part` of `parts` (every parts-th one) did to names: the shares of
        the split analysis, which combine() makes whole in any grouping."""
        found = []
        for number, (old_path, new_path) in enumerate(self.changed):
            if number % parts == part:
                found.append(self._change_names(number, old_path, new_path, names))
        for offset, path in enumerate(self.added):
            number = len(self.changed) + offset
            if number % parts == part:
                after = read_text(self.new, path) or ""
                present = names & set(_TOKEN.findall(after)) if path.endswith(CPP + PY) else \
                    {alias for token in set(_TOKEN.findall(after)) for alias in _accessor_aliases(token)} & names
                declared = sorted(declared_names(path, after) & present) if present else []
                if declared:  # moved here from a file that no longer declares it: not removed
                    found.append(ChangeNames(number, path, path.endswith(PY), [], declared, []))
        return found

    def _change_names(self, number: int, old_path: str, new_path: str | None, names: set[str]) -> ChangeNames:
        before = read_text(self.old, old_path) or ""
        after = (read_text(self.new, new_path) or "") if new_path else ""
        removed: list[str] = []
        declared_after: list[str] = []
        # A declaration that goes away takes at least one occurrence of its name with it: parse
        # only files where a name FlagTree uses (for TableGen, a stem of one) occurs less often.
        fewer = _fewer_occurrences(before, after, names, old_path.endswith(TD))
        if old_path.endswith(PY):  # parse only where a declaration seems to have gone
            fewer = {name for name in fewer if _looks_declared(before, name) and not _looks_declared(after, name)}
        scopes: dict[str, list[str]] = {}
        replacements: dict[str, str] = {}
        if fewer:
            old_names, new_names = declared_names(old_path, before), declared_names(new_path or old_path, after)
            declared_after = sorted(new_names & names)
            removed = sorted((old_names - new_names) & fewer)
            if removed and not old_path.endswith(PY):
                namespaces = dialect_namespaces(self.old).get(include_dir(old_path), frozenset()) \
                    if old_path.endswith(TD) else frozenset()
                scopes = {name: sorted(found) for name, found in
                          _scopes(old_path, before, set(removed), namespaces).items()}
                replacements = _replacements(removed, new_names - old_names)
        signatures = self._python_signatures(old_path, new_path, before, after, names)
        return ChangeNames(number, old_path, (new_path or old_path).endswith(PY), removed, declared_after, signatures,
                           scopes, replacements)

    @staticmethod
    def combine(shares: Iterable[ChangeNames]) -> dict[str, list[Drift]]:
        """The drifts of names from every changed file's share, taken in the order of the changes."""
        changes = sorted(shares, key=lambda change: change.number)
        found: dict[str, list[Drift]] = defaultdict(list)
        removed: dict[str, str] = {}  # name as used -> upstream file that no longer declares it
        scopes: dict[str, set[str]] = defaultdict(set)
        replacements: dict[str, str] = {}
        declared_after: set[str] = set()
        # The same for Python lines: only Python modules count, to remove a name and to declare it again.
        removed_python: dict[str, str] = {}
        declared_after_python: set[str] = set()
        for change in changes:
            declared_after.update(change.declared_after)
            if change.python_after:
                declared_after_python.update(change.declared_after)
            for name, where in change.scopes.items():
                scopes[name].update(where)
            for name, replacement in change.replacements.items():
                replacements.setdefault(name, replacement)
            for name in change.removed:
                removed.setdefault(name, change.old_path)
                if change.old_path.endswith(PY):
                    removed_python.setdefault(name, change.old_path)
        for name in dict.fromkeys([*removed, *removed_python]):  # in the order found
            native = removed.get(name) if name not in declared_after else None  # declared again: moved
            python = removed_python.get(name) if name not in declared_after_python else None
            shape = {"scopes": tuple(sorted(scopes.get(name, ()))), "replacement": replacements.get(name, "")}
            if native is not None and native == python:
                found[name].append(Drift(name, "removed", native, **shape))  # type: ignore[arg-type]
            else:
                if native is not None:
                    found[name].append(Drift(name, "removed", native, python=False, **shape))  # type: ignore[arg-type]
                if python is not None:
                    found[name].append(Drift(name, "removed", python, native=False))
        for change in changes:
            for name, drift in change.signatures:
                found[name].append(drift)
        return found

    @staticmethod
    def _python_signatures(old_path: str, new_path: str | None, before: str, after_text: str,
                           names: set[str]) -> list[tuple[str, Drift]]:
        if not old_path.endswith(PY) or new_path is None:
            return []
        # Parse only where the first line of a def FlagTree calls is not found unchanged at the new tag.
        kept = set(after_text.splitlines())
        if not any(match[1] in names and match[0] not in kept for match in _PY_DEF_LINE.findall(before)):
            return []
        old_shape = python_shape(before)
        new_shape = python_shape(after_text)
        out = []
        for qualname, params in old_shape.functions.items():
            name = qualname.rsplit(".", 1)[-1]
            after = new_shape.functions.get(qualname)
            if name in names and after is not None and after != params:
                out.append((name, Drift(name, "signature", old_path,
                                        f"{qualname}({_signature(params)}) -> ({_signature(after)})")))
        return out


@dataclass(frozen=True)
class ChangeNames:
    """What one upstream-changed file did to the names asked about (a share of UpstreamIndex.drifts)."""
    number: int  # its place among the index's changes
    old_path: str
    python_after: bool  # its new version is a Python module
    removed: list[str]  # names it declared at the old tag and not at the new one, and occur less often
    declared_after: list[str]  # names it declares at the new tag
    signatures: list[tuple[str, Drift]]  # Python functions of those names whose parameters changed
    scopes: dict[str, list[str]] = field(default_factory=dict)  # removed C++/TableGen name -> its scopes (cppscope)
    replacements: dict[str, str] = field(default_factory=dict)  # removed name -> what the change declared instead


_TD_DEF = re.compile(r"^(?:def|class)\s+(\w+)\b[^{;]*\{", re.MULTILINE)


def _scopes(path: str, text: str, names: set[str], namespaces: frozenset[str] = frozenset()) -> dict[str, set[str]]:
    """Where a C++ or TableGen file declares these names (cppscope): TableGen records are types the dialect
    generates, in the C++ namespaces its dialect's `cppNamespace` names (namespaces; none known: any qualifier
    can name them), their `$parameters`' accessors members of the record's class."""
    if path.endswith(CPP):
        return declaration_scopes(text, names)
    found: dict[str, set[str]] = defaultdict(set)
    for function in set(pass_functions(text)) & names:
        found[function].add("type:")  # generated in whatever namespace the dialect's Passes.h opens: any qualifier
    for match in _TD_DEF.finditer(text):
        for alias in _accessor_aliases(match[1]) & names:
            found[alias].update({f"type:{namespace}" for namespace in namespaces} or {"type:"})
        end = text.find("\n}", match.end())
        body = text[match.end():end if end >= 0 else len(text)]
        classes = sorted(_accessor_aliases(match[1]) - {match[1]} - {a for a in _accessor_aliases(match[1])
                                                                    if a.startswith(("get", "set"))}) or [match[1]]
        for param in set(re.findall(r"\$([A-Za-z_]\w*)", body)):
            for alias in _accessor_aliases(param) & names:
                found[alias].update(f"member:{klass}" for klass in classes)
    return dict(found)


def _replacements(removed: list[str], added: set[str]) -> dict[str, str]:
    """A removed name -> the one name the same change declared that differs from it only in a short run of
    characters (CTAEncodingAttr -> CGAEncodingAttr): a rename, named so the maintainer need not search."""
    out: dict[str, str] = {}
    for name in removed:
        fits = [new for new in added if len(new) >= 5 and _short_edit(name, new)]
        if len(fits) == 1:
            out[name] = fits[0]
    return out


def _short_edit(old: str, new: str) -> bool:
    prefix = len(commonprefix([old, new]))
    suffix = len(commonprefix([old[prefix:][::-1], new[prefix:][::-1]]))
    changed = max(len(old), len(new)) - prefix - suffix
    return 0 < changed <= 3 and prefix + suffix >= max(len(old), len(new)) - 3 and prefix + suffix >= 4


def _gone_note(new_path: str | None) -> str:
    return "deleted" if new_path is None else f"renamed to {new_path}"
