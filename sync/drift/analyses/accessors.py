"""Member calls through a name that left the whole tree (issue 50): `enc.getCTALayout()` after upstream renamed
the ODS parameter CTALayout to CGALayout (#8850), so every generated accessor getCTALayout became getCGALayout.

Symbol drift reports a member use only where it knows the receiver's type. This rule needs none: FlagTree's
added lines call `x.m(...)` or `x->m(...)`, and
- upstream's trunk declared m at the old tag (a C++ function or method, an ODS record's generated accessor, an
  interface method of a .td), and its new tree neither declares m (accessors included) nor spells it anywhere
  in code: no receiver of any type has such a member any more;
- a declaration of m at the old tag could be the call's: one in a header, a .td or the call's own file (a class
  local to another .cpp is no other compile unit's; seen on triton_v3.5.x onto 3.7, where MLIR's
  MemRefDescriptor::setOffset was taken for the member of a class in a deleted pass);
- FlagTree declares no m of its own where the call can see it (its trunk lines, or the backend of the call's
  file), and the call's backend does not compile its own copy of a file that declared m at the old tag
  (includedirs.compiled_copy: the directories its build puts on the include path).
Such a call will not build: kind member-removed, one finding per name and backend, every site listed.

The rename, where certain (`port` carries it out): the one upstream commit that removed m from every file
declaring it at the old tag, and put in each declaring place (the same ODS record, interface, or C++ scope and
class) one single new name n: the record's accessors or the interface's methods with m read as n are what they
were; a C++ declaration has n in its place in the same scope. Declarations that went different ways, or left
in different commits, leave the finding without a rename, with the reason.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

from tree_sitter import Node

from sync.git import GitTree, Repository, changes_with_renames, range_commits
from sync.facts.cmakebuilt import unbuilt
from sync.facts.cpp import node_text, nodes_of_types, parse_tree
from sync.facts.cppscope import UseContext, use_contexts
from sync.facts.declindex import CPP_SUFFIXES, TD_SUFFIXES, DeclarationIndex, declarations_of
from sync.facts.delta import backend_of, fork_lines_where
from sync.facts.includedirs import compiled_copy
from sync.facts.filekinds import CPP_CODE, CPP_HEADERS, CPP_SOURCES, PY_SUFFIXES, is_built
from sync.facts.layout import backend_dir, backend_root, is_third_party
from sync.facts.trees import FileTree, read_text
from sync.facts.upstreamlog import pr_of
from sync.drift.context import DriftContext
from sync.model import Finding

KIND = "member-removed"
_CODE = CPP_CODE
_TRUNK = ("include/", "lib/", "python/src/", "bin/")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MEMBER_CALL = re.compile(r"(?:\.|->)\s*(?:template\s+)?([A-Za-z_]\w*)\s*[(<]")
_INTERFACE_DEF = re.compile(r"^def\s+(\w+)\s*:\s*\w*Interface\s*<", re.MULTILINE)
# InterfaceMethod<description, return type, name, ...>: the description a string or a code block
_INTERFACE_METHOD = re.compile(r"\b(?:Static)?InterfaceMethod\s*<\s*(?:/\*.*?\*/\s*)?(?:\"(?:[^\"\\]|\\.)*\"|\[\{.*?\}\])"
                               r"\s*,\s*\"(?:[^\"\\]|\\.)*\"\s*,\s*\"(\w+)\"", re.DOTALL)


@dataclass(frozen=True)
class MemberRename:
    """What upstream's commit did to every declaration of a member name, or why that is not certain."""
    old: str
    new: str | None  # None: not certain (why)
    commit: str | None  # the full id of the one commit that removed it everywhere
    subject: str
    declarations: tuple[str, ...]  # `path: place` of each declaration at the old tag
    why: str = ""


# --- the declaring places of a name ----------------------------------------------------------------------------

def interface_methods(text: str) -> dict[str, list[str]]:
    """interface def -> its methods' names, in order, of a .td text."""
    found: dict[str, list[str]] = {}
    starts = list(_INTERFACE_DEF.finditer(text))
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        found[match[1]] = _INTERFACE_METHOD.findall(text, match.end(), _record_end(text, match.end(), end))
    return found


def _record_end(text: str, start: int, limit: int) -> int:
    opening = text.find("{", start, limit)
    if opening < 0:
        return limit
    depth = 0
    for index in range(opening, limit):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return index + 1
    return limit


def places(path: str, text: str) -> dict[tuple[str, ...], list[str]]:
    """Where names are declared in a file, each place with its names in order: an ODS record's accessors
    ("accessor", def), an interface's methods ("interface", def), a C++ scope's declarations ("cpp", kind,
    scope, class)."""
    found: dict[tuple[str, ...], list[str]] = {}
    if path.endswith(TD_SUFFIXES):
        for decl in declarations_of(path, text):
            if decl.kind in ("attr", "type", "op") and decl.members:
                found[("accessor", decl.name)] = list(decl.members)
        for interface, methods in interface_methods(text).items():
            found[("interface", interface)] = methods
    elif path.endswith(CPP_SUFFIXES):
        for decl in declarations_of(path, text):
            if decl.kind != "builder":
                found.setdefault(("cpp", decl.kind, decl.scope, decl.owner or ""), []).append(decl.name)
    return found


def place_text(place: tuple[str, ...]) -> str:
    """`BlockedEncodingAttr (ODS accessor)`, `LayoutEncodingTrait (interface method)`, `mlir::gpu::X`."""
    if place[0] == "cpp":
        where = "::".join(part for part in place[2:] if part) or "(global)"
        return f"function {where}" if place[1] == "function" and not place[3] else where
    return f"{place[1]} ({'ODS accessor' if place[0] == 'accessor' else 'interface method'})"


def _declaring(path: str, text: str, name: str) -> list[tuple[str, ...]]:
    return [place for place, names in places(path, text).items() if name in names]


def declared_at(tree: FileTree, names: set[str], under: tuple[str, ...] = ()) -> dict[str, list[tuple[str, str]]]:
    """name -> (path, place) of each declaration of the names in the tree's C++ and TableGen files."""
    found: dict[str, list[tuple[str, str]]] = {}
    index = DeclarationIndex.of(tree)
    for path in index.paths(under, _CODE + TD_SUFFIXES):
        text = index.text(path)
        if not path.endswith(TD_SUFFIXES) and names.isdisjoint(_WORD.findall(text)):
            continue  # a C++ file that declares a name spells it as a word
        for place, declared in places(path, text).items():
            for name in names.intersection(declared):
                found.setdefault(name, []).append((path, place_text(place)))
    return found


def spelled_in(tree: FileTree, names: set[str]) -> set[str]:
    """Which names any code file of the tree spells as a word (C++, TableGen, Python)."""
    left, seen = set(names), set()
    index = DeclarationIndex.of(tree)
    for path in index.paths((), _CODE + TD_SUFFIXES + PY_SUFFIXES):
        found = left.intersection(_WORD.findall(index.text(path)))  # one pass over the text, whatever |left|
        seen |= found
        left -= found
        if not left:
            break
    return seen


# --- the rename, read from upstream's commit --------------------------------------------------------------------

@lru_cache(maxsize=4)
def _commits(repo: Repository, old: str, new: str) -> tuple[Any, ...]:
    return tuple(commit for commit in range_commits(repo, repo[old], repo[new])  # type: ignore[arg-type]
                 if len(commit.parents) == 1)


def _entry(tree: Any, path: str) -> Any:
    try:
        return tree[path].id
    except KeyError:
        return None


def _blob_text(repo: Repository, tree: Any, path: str) -> str | None:
    try:
        blob: Any = repo[tree[path].id]
    except KeyError:
        return None
    return blob.data.decode("utf-8", errors="replace") if blob.type_str == "blob" else None


def _removal(repo: Repository, old: str, new: str, path: str, name: str) -> Any | None:
    """The first commit old..new after which the file (under its name at the old tag) declares no `name`."""
    for commit in _commits(repo, old, new):
        if _entry(commit.parents[0].tree, path) == _entry(commit.tree, path):
            continue  # the commit left the file alone: no blob read
        before = _blob_text(repo, commit.parents[0].tree, path)
        if before is None or (name not in before and not path.endswith(TD_SUFFIXES)):
            continue  # a C++ file that declares the name spells it; a record's accessor is not spelled
        after = _blob_text(repo, commit.tree, path)
        if after == before or not _declaring(path, before, name):
            continue
        if after is None or not _declaring(path, after, name):
            return commit
    return None


def member_rename(repo: Repository, old: str, new: str, old_tree: FileTree, name: str,
                  declared: list[tuple[str, str]]) -> MemberRename:
    """Whether one upstream commit renamed every declaration of name (declared: (path, place) at the old tag)
    to one single new name."""
    described = tuple(f"{path}: {place}" for path, place in declared)
    paths = sorted({path for path, _ in declared})
    commits = {path: _removal(repo, old, new, path, name) for path in paths}
    ids = sorted({str(commit.id)[:9] for commit in commits.values() if commit is not None})
    stayed = [path for path, commit in commits.items() if commit is None]
    if stayed:
        return MemberRename(name, None, None, "", described, f"no single upstream commit removed it from {stayed[0]}")
    if len(ids) != 1:
        return MemberRename(name, None, None, "", described, "its declarations left in different upstream commits "
                            f"({', '.join(ids)})")
    commit: Any = next(iter(commits.values()))
    subject = commit.message.splitlines()[0] if commit.message else ""
    parent = GitTree.of_commit(repo, commit.parents[0].id, "parent")
    after = GitTree.of_commit(repo, commit.id, "commit")
    renamed = {change.old_path: change.new_path for change in changes_with_renames(parent, after) if change.renamed}
    chosen: set[str] | None = None
    exact = False
    for path in paths:
        before_text = read_text(parent, path) or ""
        after_text = read_text(after, renamed.get(path) or path) or ""
        before_places, after_places = places(path, before_text), places(path, after_text)
        for place in _declaring(path, before_text, name):
            fits, certain = _in_its_place(place, name, before_places[place], after_places.get(place))
            exact |= certain
            chosen = fits if chosen is None else chosen & fits
            if not chosen:
                where = place_text(place)
                return MemberRename(name, None, str(commit.id), subject, described,
                                    f"its declarations went different ways in the commit ({where} in {path})")
    if chosen is None or len(chosen) != 1 or not exact:
        return MemberRename(name, None, str(commit.id), subject, described,
                            "no single name took its place in every declaring record or class")
    return MemberRename(name, chosen.pop(), str(commit.id), subject, described)


def _in_its_place(place: tuple[str, ...], name: str, before: list[str], after: list[str] | None
                  ) -> tuple[set[str], bool]:
    """The names that may have taken name's place (the commit's names that were not there before), and whether
    the place says so alone: an ODS record's accessors or an interface's methods, the others unchanged, name
    read as that one (a parameter or method renamed). A C++ scope never says so alone: its other declarations
    may come and go in the same commit, so it only has to agree."""
    if after is None:
        return set(), False
    added = {other for other in after if other not in before}
    if place[0] == "cpp":
        return added, False
    exact = {other for other in added if [other if item == name else item for item in before] == after}
    return exact, len(exact) == 1


# --- FlagTree's calls -------------------------------------------------------------------------------------------

def member_calls(text: str, lines: set[int], names: set[str] | None = None) -> list[tuple[str, int, Node]]:
    """(name, line, the name's node) of each `x.name(...)`, `x->name(...)`, `x.name<T>(...)` on the lines."""
    if names is not None and not any(name in text for name in names):
        return []
    found = []
    root = parse_tree(text).root_node
    for call in nodes_of_types(root, ("call_expression",)):
        function = call.child_by_field_name("function")
        if function is None or function.type != "field_expression":
            continue
        field = function.child_by_field_name("field")
        if field is not None and field.type == "template_method":
            field = field.child_by_field_name("name")
        if field is None or field.type != "field_identifier":
            continue
        name, line = node_text(field), field.start_point[0] + 1
        if line in lines and (names is None or name in names):
            found.append((name, line, field))
    return found


def _flagtree_declarations(context: DriftContext, names: set[str]) -> dict[str, set[str]]:
    """name -> where FlagTree declares one of its own: '' for trunk (every call sees it), else a backend's
    directory (its own calls see it)."""
    changed = fork_lines_where(context.upstream_old, context.fork,
                               lambda path: path.endswith(_CODE + TD_SUFFIXES))
    found: dict[str, set[str]] = {}
    for path in changed:
        text = read_text(context.fork, path) or ""
        spelled = set(names) if path.endswith(TD_SUFFIXES) else names.intersection(_WORD.findall(text))
        if not spelled:
            continue
        ours, theirs = places(path, text), places(path, read_text(context.upstream_old, path) or "")
        for name in spelled:
            count = sum(names_here.count(name) for names_here in ours.values())
            if count > sum(names_here.count(name) for names_here in theirs.values()):
                found.setdefault(name, set()).add(backend_root(path) or "")
    # A backend's own copy of trunk's headers (third_party/<b>/include/triton/) is on its include path: a member
    # its copy declares, on any class, may take the backend's calls. Its lines are not FlagTree's added lines
    # (delta.py), so they are read here, for the names in question only.
    copies = tuple(f"{backend_dir(backend)}/include/triton/" for backend in sorted(context.own_trunk_backends))
    if copies:  # (no prefix would read the whole tree)
        for name, declared in declared_at(context.fork, names, copies).items():
            found.setdefault(name, set()).update(backend_root(path) or "" for path, _ in declared)
    return found


def member_findings(context: DriftContext) -> list[Finding]:
    if context.range is None:
        return []
    lines_by_path = fork_lines_where(context.upstream_old, context.fork, lambda path: path.endswith(CPP_SUFFIXES)
                                     and (path.startswith(_TRUNK) or is_third_party(path))
                                     and is_built(path)
                                     and not unbuilt(context.fork, path))
    texts: dict[str, str] = {}
    called: set[str] = set()
    for path, lines in lines_by_path.items():
        text = read_text(context.fork, path) or ""
        numbered = text.splitlines()
        if any(_MEMBER_CALL.search(numbered[line - 1]) for line in lines if 0 < line <= len(numbered)):
            texts[path] = text
            called |= {match[1] for line in lines if 0 < line <= len(numbered)
                       for match in _MEMBER_CALL.finditer(numbered[line - 1])}
    gone = called - spelled_in(context.upstream_new, called)
    if not gone:
        return []
    declared = declared_at(context.upstream_old, gone)
    gone &= set(declared)
    gone -= _new_accessors(context.upstream_new, gone)
    if not gone:
        return []
    own = _flagtree_declarations(context, gone)
    sites: dict[tuple[str, str | None], list[str]] = {}
    branch = context.backend_files
    still = (lambda path, name: True) if branch is context.fork else (
        lambda path, name: bool(member_calls(read_text(branch, path) or "", _all_lines, {name})))
    owners = {name: {part for _, place in places_of for part in re.split(r"::| ", place)}
              for name, places_of in declared.items()}
    free = {name for name, places_of in declared.items()  # a free function a header declares
            if any(path.endswith(CPP_HEADERS) and place.startswith("function ") for path, place in places_of)}
    for path, text in sorted(texts.items()):
        calls = member_calls(text, lines_by_path[path], gone)
        contexts = use_contexts(text, {name for name, _, _ in calls}) if calls else {}
        for name, line, _ in calls:
            seen = own.get(name, set())
            if "" in seen or (backend_root(path) or "") in seen:
                continue  # a declaration of FlagTree's own may take the call
            if not any(declaring == path or not declaring.endswith(CPP_SOURCES) for declaring, _ in declared[name]):
                continue  # declared only inside other compile units (a class local to a .cpp): not this call's
            if any(compiled_copy(branch, path, declaring) is not None for declaring, _ in declared[name]):
                continue  # the backend compiles its own copy of the declaring file (its include path): not trunk's
            if name not in free and _typed_receiver(contexts.get((name, line), []), owners[name]):
                continue  # symbol drift resolves it through the receiver's type, and reports it
            if not still(path, name):
                continue  # the upgraded branch calls it no more in this file (ported, or rewritten by hand)
            sites.setdefault((name, backend_of(context.owners.owners, path)), [])
            site = f"{path}:{line}"
            if site not in sites[(name, backend_of(context.owners.owners, path))]:
                sites[(name, backend_of(context.owners.owners, path))].append(site)
    renames = {name: member_rename(context.repo, str(context.range.old.oid), str(context.range.onto.oid),
                                   context.upstream_old, name, declared[name])
               for name in sorted({name for name, _ in sites})}
    return [_finding(renames[name], backend, found, context.range.onto.ref)
            for (name, backend), found in sorted(sites.items(), key=lambda item: (item[0][0], item[0][1] or ""))]


class _AllLines(set[int]):
    """Every line: a file's calls wherever they stand."""
    def __contains__(self, item: object) -> bool:
        return True


_all_lines: set[int] = _AllLines()


def _typed_receiver(contexts: list[UseContext], owners: set[str]) -> bool:
    """A member use whose receiver's declared type is a class that declared the name: symbol drift resolves it
    and reports it, where the name was no free function too (whose removal it reports alone)."""
    return any(context.form == "member" and context.scope is not None
               and {kind.split("::")[-1] for kind in context.scope.split("|")} & owners for context in contexts)


def _new_accessors(tree: FileTree, names: set[str]) -> set[str]:
    """The names a .td of the tree generates as accessors (no file spells them)."""
    index = DeclarationIndex.of(tree)
    return {name for _, decls in index.files((), TD_SUFFIXES) for decl in decls for name in names
            if name in decl.members}


def _finding(rename: MemberRename, backend: str | None, sites: list[str], new_label: str) -> Finding:
    path, _, line = sites[0].rpartition(":")
    declared = rename.declarations
    details: dict[str, Any] = {"declaration": rename.old, "sites": sites, "declared_at": list(declared)}
    message = (f"`.{rename.old}()` is called on {len(sites)} line(s); upstream declares no member of that name at "
               f"{new_label}")
    if rename.commit:
        pr = pr_of(rename.subject)
        details.update(commits=[f"{rename.commit[:9]} {rename.subject}"], prs=[pr] if pr else [])
        message += f"; upstream change: {rename.commit[:9]}{f' (#{pr})' if pr else ''}"
    if rename.new:
        details["renamed_to"] = rename.new
        message += f", which renamed it to {rename.new} in every declaring record"
    else:
        details["not_certain"] = rename.why
    # the trunk file to read: an ODS record's or interface's, which generates the member, before a C++ file
    first = next((item for item in declared if item.endswith(")")), declared[0] if declared else None)
    return Finding(KIND, path, message, line=int(line), backend=backend,
                   related_path=first.split(": ", 1)[0] if first else None, details=details)


def member_names(findings: Iterable[Finding]) -> set[str]:
    """The member names the findings say left the tree (for tests and port)."""
    return {str(finding.details.get("declaration")) for finding in findings if finding.kind == KIND}
