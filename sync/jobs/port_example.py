"""Upstream's worked example for a finding port leaves (issue 50): how upstream's own code migrated in the commit
that removed or renamed the name, as one before/after at one of upstream's call sites, read from the commit's
diff. A person porting FlagTree's sites by hand sees what upstream wrote in place of the old use.

A call site is a changed line of a source file (C++ sources, then Python, then headers, TableGen and CMake) that
the commit rewrote: a line spelling the old name as a word on the removed side, the new one (where known) on the
added side; the declaring file's own lines come last, since they show the declaration, not a use.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from sync.facts.filekinds import CMAKE_SUFFIXES, CPP_HEADERS, CPP_SOURCES, INC_SUFFIXES, PY_SUFFIXES, TD_SUFFIXES
from sync.facts.trees import read_text
from sync.git import GitTree, Repository, changes_with_renames

_ORDER = (CPP_SOURCES, PY_SUFFIXES, CPP_HEADERS + INC_SUFFIXES, TD_SUFFIXES, CMAKE_SUFFIXES)
_CONTEXT = 1  # unchanged lines shown around the change


@dataclass(frozen=True)
class Example:
    commit: str
    path: str
    line: int  # the first changed line, in the commit's version of the file
    before: tuple[str, ...]
    after: tuple[str, ...]
    diff: str  # the hunk as a unified diff, headed by the path

    def details(self) -> dict[str, Any]:
        return {"commit": self.commit[:9], "path": self.path, "line": self.line, "before": list(self.before),
                "after": list(self.after)}


def upstream_example(repo: Repository, commit_id: str, old: str, new: str | None, declared_in: str = ""
                     ) -> Example | None:
    """One before/after of upstream's own code in the commit for old (-> new), or None when it rewrote no use."""
    commit: Any = repo[commit_id]
    if len(commit.parents) != 1:
        return None
    before = GitTree.of_commit(repo, commit.parents[0].id, "parent")
    after = GitTree.of_commit(repo, commit.id, "commit")
    changes = [change for change in changes_with_renames(before, after)
               if change.new_path and change.status != "added" and _rank(change.new_path) < len(_ORDER)]
    changes.sort(key=lambda change: (change.old_path == declared_in, _rank(change.new_path or ""),
                                     change.new_path or ""))
    old_word = re.compile(rf"(?<![\w$]){re.escape(old)}(?!\w)")
    new_word = re.compile(rf"(?<![\w$]){re.escape(new)}(?!\w)") if new else None
    for change in changes:
        was = read_text(before, change.old_path) or ""
        if old not in was:
            continue
        now = read_text(after, change.new_path or "") or ""
        found = _hunk(was.splitlines(), now.splitlines(), old_word, new_word)
        if found is not None:
            start, first, changed, removed, added, shown = found
            path = change.new_path or change.old_path
            kept = sum(line.startswith(" ") for line in shown)
            diff = (f"--- a/{change.old_path} (upstream {commit_id[:9]})\n+++ b/{path}\n"
                    f"@@ -{start},{kept + len(removed)} +{first},{kept + len(added)} @@\n"
                    + "".join(line + "\n" for line in shown))
            return Example(commit_id, path, changed, tuple(removed), tuple(added), diff)
    return None


def _rank(path: str) -> int:
    return next((index for index, ends in enumerate(_ORDER) if path.endswith(ends)), len(_ORDER))


def _hunk(was: list[str], now: list[str], old_word: re.Pattern[str], new_word: re.Pattern[str] | None
          ) -> tuple[int, int, int, list[str], list[str], list[str]] | None:
    """(old start, new start: the hunk's, context included; the first changed line of the new side; removed
    lines, added lines, the hunk's lines) of the first replaced
    block whose removed side spells old and whose added side spells new (any added line when new is unknown)."""
    matcher = difflib.SequenceMatcher(a=was, b=now, autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        removed, added = was[a1:a2], now[b1:b2]
        if len(removed) > 6 or len(added) > 6:
            continue  # a rewrite, not a use migrated
        if not any(old_word.search(line) for line in removed):
            continue
        if new_word is not None and not any(new_word.search(line) for line in added):
            continue
        start = max(0, a1 - _CONTEXT)
        shown = ([" " + line for line in was[start:a1]] + ["-" + line for line in removed]
                 + ["+" + line for line in added] + [" " + line for line in was[a2:a2 + _CONTEXT]])
        return start + 1, b1 - (a1 - start) + 1, b1 + 1, removed, added, shown
    return None
