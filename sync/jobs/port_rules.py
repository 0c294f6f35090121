"""Which upstream renames `port` may carry out: read from upstream's own commit, never guessed from spelling.

Rule `renamed-declaration`: the one commit a symbol-removed finding names (sync/facts/upstreamlog.py) removed the
declaration OLD from its file and added, in the same file (or the file it renamed it to), exactly one declaration
NEW of the same kind, scope and signature, OLD's spelling mapped to NEW's. Both sides come from the declaration
index (sync/facts/declindex.py) of the commit's parent and of the commit; the signature is compared through the
rename pairs of the same commit (a function whose return type the commit renamed along still matches).

Rule `renamed-member` (a member call `x.old()`, whatever the receiver): the finding member-removed says
(sync/drift/analyses/accessors.py) that the name left upstream's whole tree and that one upstream commit renamed
every declaration of it (ODS accessors, interface methods, C++ methods) to one single new name; port takes it
from the finding's details.

Refused, with the reason, and left a finding: a commit that is not one known commit (several, or more than the
finding lists), OLD overloaded (two signatures in its file, or two overloads by its qualified name in the parent's
tree), OLD still declared after the commit, no declaration or several of the same signature in its place
(ambiguous), NEW overloaded, or a candidate other than the one the analysis named from spelling.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from sync.facts.cppscope import declaration_scopes
from sync.facts.declindex import Decl, DeclarationIndex, declarations_of
from sync.facts.trees import read_text
from sync.git import GitTree, Repository, changes_with_renames

RULE = "renamed-declaration"
MEMBER_RULE = "renamed-member"
MEMBER_KIND = "member-call"  # a Rename of every `x.old()` / `x->old()`: the name left the whole tree
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RECORD_KINDS = ("attr", "type", "op")
_TRUNK = ("include/", "lib/", "python/", "bin/")
# TableGen text that does not make the C++ interface: documentation, and the mnemonic strings
_TD_PROSE = re.compile(r"let\s+(?:description|summary)\s*=\s*\[\{.*?\}\]\s*;|//[^\n]*|\"[^\"\n]*\"", re.DOTALL)


@dataclass(frozen=True)
class Rename:
    """A certain rename: what upstream's commit did, and what the sites of the old name resolve to."""
    old: str
    new: str
    path: str  # the declaring file at the commit's parent
    new_path: str  # the file declaring NEW after the commit
    kind: str  # the declaration's kind (declindex)
    scope: str  # where it is declared (declindex): namespaces and classes, or a Python class
    scopes: frozenset[str]  # cppscope's scopes of OLD: what a C++ use must resolve to
    upstream_uses: tuple[int, int]  # (lines of the commit that dropped OLD, lines that added NEW): its own port

    @property
    def key(self) -> str:
        """What the change's sites are filed under: a member call's rename apart from a declaration's of the same
        old name (`getCTALayout` the free function, `.getCTALayout` the accessor)."""
        return f".{self.old}" if self.kind == MEMBER_KIND else f"cmake:{self.old}" if self.kind == "cmake-target" \
            else self.old


@dataclass(frozen=True)
class Refusal:
    old: str
    reason: str


def certain_rename(repo: Repository, commit_id: str, old: str, path: str, hint: str | None,
                   hints: dict[str, str]) -> Rename | Refusal:
    """Whether the commit renamed the declaration old of path; hint: the name the analysis read from spelling,
    hints: every such pair of the same commit (the signature is compared through them)."""
    commit = repo[commit_id]
    if len(commit.parents) != 1:  # type: ignore[attr-defined]
        return Refusal(old, "the upstream change is a merge commit")
    before = GitTree.of_commit(repo, commit.parents[0].id, "parent")  # type: ignore[attr-defined]
    after = GitTree.of_commit(repo, commit.id, "commit")
    text_before = read_text(before, path)
    if text_before is None:
        return Refusal(old, f"{path} is not in the commit's parent")
    new_path = path if after.exists(path) else _renamed_to(before, after, path)
    if new_path is None:
        return Refusal(old, f"the commit deleted {path}")
    text_after = read_text(after, new_path) or ""
    olds = [decl for decl in declarations_of(path, text_before) if decl.name == old and decl.kind != "builder"]
    if not olds:
        return Refusal(old, f"{path} declares no {old} of its own at the commit's parent (a generated name or "
                            "accessor, or declared elsewhere): not ported")
    if len({_signature(decl, {}) for decl in olds}) > 1 or _overloaded(before, olds[0]):
        return Refusal(old, "overloaded: more than one signature declares it")
    declared_after = declarations_of(new_path, text_after)
    if any(decl.name == old and decl.kind != "builder" for decl in declared_after):
        return Refusal(old, f"the commit did not remove it from {new_path}")
    known = {decl.name for decl in declarations_of(path, text_before)}
    before_decl = olds[0]
    fits = sorted({decl.name for decl in declared_after if decl.name not in known and decl.kind == before_decl.kind
                   and _same(before_decl, decl, text_before, text_after, path, {**hints, old: decl.name})})
    if not fits:
        return Refusal(old, "no declaration of the same signature took its place in the same commit")
    if len(fits) > 1:
        return Refusal(old, f"ambiguous rename: {', '.join(fits)} each fit")
    new = fits[0]
    if hint and hint != new:
        return Refusal(old, f"ambiguous rename: the declarations say {new}, the spelling {hint}")
    news = [decl for decl in declared_after if decl.name == new and decl.kind != "builder"]
    if len({_signature(decl, {}) for decl in news}) > 1 or _overloaded(after, news[0]):
        return Refusal(old, f"overloaded target: {new} has more than one signature")
    scopes = frozenset(declaration_scopes(text_before, {old}).get(old, set())) if before_decl.kind not in \
        _RECORD_KINDS else frozenset({"type:"})
    return Rename(old, new, path, new_path, before_decl.kind, before_decl.scope, scopes,
                  upstream_uses(before, after, old, new))


def member_rename(repo: Repository, commit_id: str, old: str, new: str, path: str, kind: str = MEMBER_KIND) -> Rename:
    """A rename read elsewhere from upstream's commit (a member call's, a CMake target's), with upstream's own
    use counts."""
    commit = repo[commit_id]
    before = GitTree.of_commit(repo, commit.parents[0].id, "parent")  # type: ignore[attr-defined]
    after = GitTree.of_commit(repo, commit.id, "commit")
    return Rename(old, new, path, path, kind, "", frozenset(), upstream_uses(before, after, old, new))


def _renamed_to(before: GitTree, after: GitTree, path: str) -> str | None:
    return next((change.new_path for change in changes_with_renames(before, after)
                 if change.old_path == path and change.renamed), None)


def _overloaded(tree: GitTree, decl: Decl) -> bool:
    """More than one signature of a function's qualified name across the tree's trunk code."""
    if decl.kind not in ("function", "method", "def"):
        return False
    found = DeclarationIndex.of(tree).overloads(decl.qualified, under=_TRUNK)
    return len({_signature(other, {}) for _, other in found if other.kind == decl.kind}) > 1


def _mapped(text: str, pairs: dict[str, str]) -> str:
    return _TOKEN.sub(lambda match: pairs.get(match[0], match[0]), text)


def _signature(decl: Decl, pairs: dict[str, str]) -> tuple[object, ...]:
    """What a caller relies on: kind, scope, owner, parameters (C++: types and defaults; Python: names and kinds
    too), flags but `definition`, members (an ODS record's accessors), and the target (bases, decorators)."""
    python = "python" in decl.flags
    params = None if decl.params is None else tuple(
        (_mapped(param.type, pairs), param.has_default) + ((param.name, param.kind) if python else ())
        for param in decl.params)
    return (decl.kind, _mapped(decl.scope, pairs), _mapped(decl.owner or "", pairs), params,
            frozenset(decl.flags - {"definition"}), tuple(_mapped(member, pairs) for member in decl.members),
            _mapped(decl.target, pairs))


def _same(old: Decl, new: Decl, text_before: str, text_after: str, path: str, pairs: dict[str, str]) -> bool:
    """The same declaration but for the rename: its signature, and the text that declares it (a C++ return type,
    an ODS record's parameters, builders and extra declarations), the commit's renames applied to the old."""
    if _signature(old, pairs) != _signature(new, {}):
        return False
    if path.endswith(".td"):
        return _record_text(text_before, old.target, pairs) == _record_text(text_after, new.target, {})
    if "python" in old.flags:
        return True  # parameters, decorators and bases compared above: a Python def has no more signature
    return _statement(text_before, old.line, pairs) == _statement(text_after, new.line, {})


def _statement(text: str, line: int, pairs: dict[str, str]) -> str:
    """A C++ declaration from its line up to its first `;` or `{`, tokens mapped, blanks folded."""
    rest = "\n".join(text.splitlines()[line - 1:line + 20])
    end = min((at for at in (rest.find(";"), rest.find("{")) if at >= 0), default=len(rest))
    return " ".join(_mapped(rest[:end], pairs).split())


def _record_text(text: str, def_name: str, pairs: dict[str, str]) -> str | None:
    """An ODS record's body without its prose (description, summary, comments, strings), tokens mapped."""
    start = re.search(rf"^def\s+{re.escape(def_name)}\b", text, re.MULTILINE) if def_name else None
    if start is None:
        return None
    depth, end = 0, len(text)
    for index in range(text.find("{", start.end()), len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            end = index + 1
            break
    body = _TD_PROSE.sub(" ", text[start.end():end])
    return " ".join(_mapped(body, pairs).split())


def upstream_uses(before: GitTree, after: GitTree, old: str, new: str) -> tuple[int, int]:
    """How upstream ported its own code in the commit: occurrences of old it dropped, of new it added."""
    old_word, new_word = re.compile(rf"\b{re.escape(old)}\b"), re.compile(rf"\b{re.escape(new)}\b")
    dropped = added = 0
    for change in changes_with_renames(before, after):
        was = read_text(before, change.old_path) or "" if change.status != "added" else ""
        now = read_text(after, change.new_path) or "" if change.new_path else ""
        dropped += max(0, len(old_word.findall(was)) - len(old_word.findall(now)))
        added += max(0, len(new_word.findall(now)) - len(new_word.findall(was)))
    return dropped, added
