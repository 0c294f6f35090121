"""Which identifiers are specific enough that two trees using one mean the same thing."""
from __future__ import annotations

import builtins

# Words every codebase uses for its own things: a match on one of them says nothing.
GENERIC = frozenset("""
value values result results index shape layout order name names type types other input output offset
encoding encodings options config attrs attributes builder context module function kernel
insert append erase remove clear contains lookup create build print dump parse apply visit update
offsets block blocks number count first second start begin end size sizes rank kind mode state
""".split())
_BUILTINS = frozenset(dir(builtins))


def significant_name(name: str) -> bool:
    return len(name) >= 5 and name.lower() not in GENERIC and not name.startswith("__") and name not in _BUILTINS
