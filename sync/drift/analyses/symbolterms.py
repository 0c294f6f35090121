"""The words of the symbol analysis (symbols.py): the file kinds it reads, a use of a name on a FlagTree line
(Use), and what upstream did to a name (Drift)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from sync.facts.filekinds import CPP_CODE, CPP_HEADERS, INC_SUFFIXES, PY_SUFFIXES, TD_SUFFIXES


PY, CPP, TD = PY_SUFFIXES, CPP_CODE, TD_SUFFIXES
CODE = PY + CPP + TD
TRUNK_PREFIXES = ("python/triton/", "python/src/", "include/", "lib/", "bin/")
# Too generic to stand for one trunk symbol: they appear and vanish all over a release.
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PY_DEF_LINE = re.compile(r"^(\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Use:
    name: str
    line: int


@dataclass(frozen=True)
class Drift:
    name: str  # the identifier as FlagTree writes it
    change: str  # removed | signature | header
    path: str  # the upstream file where it changed (old tag)
    detail: str = ""
    python: bool = True  # Python lines can mean it: a Python module declared it (see the module docstring)
    native: bool = True  # C++ and TableGen lines can mean it: the first removal found, whatever its language
    scopes: tuple[str, ...] = ()  # where the removed C++/TableGen declarations lived (cppscope); () unknown
    replacement: str = ""  # the declaration the same upstream change added in its place, when exactly one fits


def _header(path: str) -> bool:
    """A declaration other files can reach: a header, or TableGen (its generated .inc is included)."""
    return path.endswith(CPP_HEADERS + INC_SUFFIXES + TD)
