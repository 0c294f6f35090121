"""A backend's own C++ (third_party/<b>/), for the symbol analysis (symbols.py): the words on the lines FlagTree
adds there, its #includes of headers upstream deleted or moved, and what the backend declares itself."""
from __future__ import annotations

import re
from functools import lru_cache
from posixpath import basename, dirname
from typing import Callable

from sync.drift.analyses.symboldecls import declared_names
from sync.drift.analyses.symbolterms import CPP, Drift, TD, Use, _TOKEN, _header
from sync.facts.cppcalls import (CPP_NAMESPACE, backend_include_roots, dialect_namespaces, include_dir,
                                  include_target)
from sync.facts.delta import fork_added_lines, fork_lines_where
from sync.facts.filekinds import is_built
from sync.facts.includes import spelled_includes, spelled_td_includes
from sync.facts.layout import is_spec_path, is_third_party, third_party_owner
from sync.facts.names import significant_name
from sync.facts.trees import read_text
from sync.git import GitTree
from sync.support.cache import memoized_by
from sync.support.parselimit import oversized




def backend_uses(old: GitTree, fork: GitTree) -> dict[str, list[str]]:
    """The words on FlagTree's added C++ lines under third_party/<b>/ (backends compile against trunk's
    headers too), in the order they first occur. Words, not a parse: a cheap superset; symbol_join parses
    only the files where one of them names a header declaration upstream removed, and resolves each use
    there (cppscope). Through the fact cache by the two trees: the parts of the split analysis and its join
    read it once."""
    return memoized_by("backend-words", 2, [str(old.tree.id), str(fork.tree.id)], lambda: _backend_uses(old, fork),
                       encode=lambda found: found,
                       decode=lambda stored: {str(path): [str(name) for name in names] for path, names in stored.items()})


def _backend_lines(old: GitTree, fork: GitTree) -> dict[str, set[int]]:
    return fork_lines_where(old, fork, lambda path: is_third_party(path) and path.endswith(CPP) and is_built(path))


def _backend_uses(old: GitTree, fork: GitTree) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path, lines in sorted(_backend_lines(old, fork).items()):
        text = read_text(fork, path) or ""
        if oversized(text):  # parsed as empty everywhere (parselimit): its words would cost memory by the file
            continue
        # One scan of the added lines joined, comments cut (a backend adds half a million lines: a scan per
        # line cost a first run a second); the line of a word is looked up only where it hits (_first_use).
        added = _COMMENT.sub("", "\n".join(_added_source(text, lines)))
        out[path] = [name for name in dict.fromkeys(_TOKEN.findall(added)) if significant_name(name)]
    return out


_COMMENT = re.compile(r"//[^\n]*")


def _added_source(text: str, lines: set[int]) -> list[str]:
    source = text.splitlines()
    return [source[line - 1] for line in sorted(lines) if 0 < line <= len(source)]


def _backend_header_hits(old: GitTree, fork: GitTree, gone: dict[str, str], own_trunk: set[str]
                         ) -> dict[str, list[tuple[Use, Drift]]]:
    """#includes on FlagTree's added lines of backend C++ (TableGen includes of its own .td too; a spec overlay's are
    tdoverlays') that reach a header or .td upstream deleted or moved (anywhere in upstream's tree: its own
    third_party/proton too). An include reaches the first file that exists
    of: the including file's directory, the backend's own include trees, the repository root, trunk's include/;
    one the backend provides itself is its own. Issue 33, the 3.4.x -> 3.6.0 move: sunrise's ir.cc and
    tsingmicro's RegisterTritonDialects.h include proton's Dialect.h from the directory 3.6 renamed."""
    if not gone:
        return {}
    gone_names = {basename(path) for path in gone}
    found: dict[str, list[tuple[Use, Drift]]] = {}
    # TableGen's `include "x.td"` too (the 3.2 line onto 3.4: tle's TleOps.td includes TritonTypeInterfaces.td,
    # which upstream moved to TritonGPU): TableGen searches the same way, and stops on a file it does not find
    td_lines = fork_lines_where(old, fork, lambda path: is_third_party(path) and path.endswith(TD) and is_built(path)
                                and not is_spec_path(path))
    for path, lines in sorted({**_backend_lines(old, fork), **td_lines}.items()):
        if third_party_owner(path) in own_trunk:
            continue
        text = read_text(fork, path) or ""
        owned = "/".join(path.split("/")[:2]) + "/"
        for line, spelled in spelled_td_includes(text) if path.endswith(TD) else spelled_includes(text):
            if basename(spelled) not in gone_names or line not in lines:
                continue  # an include reaches a gone header only where it spells its file name
            reached = include_target(fork, path, spelled, _include_roots(fork, owned))
            if reached is not None and not reached.startswith(owned) and reached in gone:
                found.setdefault(path, []).append((Use(spelled, line), Drift(spelled, "header", reached,
                                                                               gone[reached])))
    return found


_include_roots = backend_include_roots  # the backend's own include trees (facts.cppcalls)


def _first_use(old: GitTree, fork: GitTree, path: str, name: str) -> Use:
    """The first added line of path where the word name occurs outside a // comment (one backend_uses found)."""
    found = _first_added_line(old, fork, path, lambda code: name in code and name in _TOKEN.findall(code))
    if found is None:
        raise AssertionError(f"{name} is not a word of {path}'s added lines")
    return Use(name, found)


def _first_added_line(old: GitTree, fork: GitTree, path: str, wanted: Callable[[str], bool]) -> int | None:
    """The first FlagTree-added line of path whose code before any // comment wanted() keeps."""
    source = (read_text(fork, path) or "").splitlines()
    return next((line for line in sorted(fork_added_lines(old, fork).get(path, frozenset()))
                 if 0 < line <= len(source) and wanted(source[line - 1].split("//", 1)[0])), None)


@lru_cache(maxsize=64)
def _backend_headers(fork: GitTree, backend_dir: str) -> tuple[str, ...]:
    return tuple(path for path in fork.paths() if path.startswith(backend_dir) and _header(path))


def _qualified_as_upstreams(old: GitTree, fork: GitTree, backend_dir: str, path: str, name: str,
                            drift: Drift) -> Use | None:
    """The first added line where a backend file that also has its own declaration of name spells upstream's by
    its dialect's namespace (`triton::MakeTensorPtrOp` beside triton-shared's `tts::MakeTensorPtrOp`, tsingmicro
    on the 3.5.x -> 3.7 move), a namespace the backend's own TableGen that declares name does not use."""
    if not drift.path.endswith(TD):
        return None
    upstream = {namespace.split("::")[-1] for namespace in dialect_namespaces(old).get(include_dir(drift.path), ())}
    own = {namespace.split("::")[-1] for namespace in _backend_namespaces(fork, backend_dir, name)}
    if not upstream - own:
        return None
    spelled = re.compile(rf"\b(?:{'|'.join(map(re.escape, sorted(upstream - own)))})\s*::\s*{re.escape(name)}\b")
    line = _first_added_line(old, fork, path, lambda code: spelled.search(code) is not None)
    return Use(name, line) if line is not None else None


@lru_cache(maxsize=64)
def _backend_namespaces(fork: GitTree, backend_dir: str, name: str) -> frozenset[str]:
    """The namespaces (cppNamespace) of the backend's own TableGen directories that declare name."""
    declaring = {dirname(path) for path in fork.paths() if path.startswith(backend_dir) and path.endswith(TD)
                 and name in (text := read_text(fork, path) or "") and name in declared_names(path, text)}
    return frozenset(namespace.lstrip(":") for path in fork.paths() if path.endswith(TD) and dirname(path) in declaring
                     for namespace in CPP_NAMESPACE.findall(read_text(fork, path) or ""))


def _backend_declares(fork: GitTree, backend_dir: str, names: set[str]) -> set[str]:
    """Which of the names the backend's own headers or TableGen declare: the nearest declaration, which its
    uses mean (a backend's own helper of an upstream name is not upstream's removed one)."""
    found: set[str] = set()
    for path in _backend_headers(fork, backend_dir):
        text = read_text(fork, path) or ""
        present = {name for name in names - found if name in text}
        if present:
            found |= declared_names(path, text) & present
    return found
