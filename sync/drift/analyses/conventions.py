"""Keywords every function under a trunk decorator gained, which a FlagTree function under it lacks (issue 33;
the 3.3 -> 3.4 move: upstream ae6d4641d made every `@builtin` and `@extern` function take `_semantic=None`
instead of `_builder=None`, because the code generator now passes `_semantic=` to each; FlagTree's own builtins
and libdevice wrappers that still take `_builder` raise TypeError when a kernel calls them).

Upstream side: for a trunk decorator D (a def in python/triton/, as the decorated function's module imports
it), the functions under D in the trunk modules upstream changed between the tags, at each tag. A keyword that
at least 90% of them take at the new tag and at most 10% took at the old one, with at least 8 of them at each
tag, is a convention upstream added: whatever calls D's functions now passes it. The keyword the same share
dropped is named as its predecessor where there is one.

FlagTree side: a def on FlagTree's lines (at any depth: aipu's libdevice defines its wrappers in a factory
function) under a decorator that resolves, through its module's imports, to such a D, taking neither the keyword
nor **kwargs. No claim where the backend ships its own copy of D's module (its
build installs that copy, which still calls the old way). Kind decorated-keyword-missing, an error: one finding
per decorator change and backend with every site under it.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass, replace

from sync.drift.analyses.overrides import resolve_declared
from sync.drift.context import DriftContext
from sync.facts.declindex import Decl, declarations_of, python_def
from sync.facts.pyblobs import Extractor, python_fact
from sync.facts.delta import PY, backend_of, fork_added_lines
from sync.facts.filekinds import not_built
from sync.facts.layout import is_third_party
from sync.facts.pymodules import MODULE_SUFFIX, TRUNK_PACKAGE, absolute, module_files, module_of, package_of
from sync.facts.trees import read_text
from sync.facts.upstreamlog import Commits, changing_commits, one_per_change
from sync.git import changes_with_renames
from sync.model import Finding

KIND = "decorated-keyword-missing"
_MOST_BEFORE, _LEAST_AFTER = 0.10, 0.90  # the share of D's functions taking the keyword at the old and new tag
_FEWEST = 8  # functions under D at each tag, for a share to mean a convention
_BY_NAME = ("positional", "keyword-only")  # the parameters a caller can pass by name


@dataclass(frozen=True)
class Convention:
    decorator: str  # module.name of the trunk decorator
    keyword: str  # what its functions take at the new tag
    replaced: str | None  # what they took at the old tag instead, if one keyword went as this one came
    counts: tuple[int, int, int]  # functions under it at the new tag, how many take the keyword, at the old tag
    modules: tuple[tuple[str, str], ...] = ()  # (old path, new path) of the modules holding most of them


def convention_findings(context: DriftContext) -> list[Finding]:
    candidates = _fork_candidates(context)
    if not candidates:
        return []
    conventions = _conventions(context, {decorator for _, _, decorators in candidates for decorator in decorators})
    if not conventions:
        return []
    sited: list[tuple[tuple[str, ...], list[str], Finding]] = []
    for path, decl, decorators in candidates:
        convention = next((conventions[decorator] for decorator in decorators if decorator in conventions), None)
        if convention is None or _takes(decl, convention.keyword):
            continue  # one site a def, under its first decorator that has a convention
        if any(context.own_copy(path, module_path)
               for module_path in module_files(convention.decorator.rpartition(".")[0])):
            continue  # the backend installs or loads its own version of the decorator's module
        sited.append(((convention.decorator, convention.keyword), [f"{path}:{decl.line}"],
                      _finding(context, path, decl, convention)))
    return one_per_change(sited, _changing_commits(context, conventions))


def _finding(context: DriftContext, path: str, decl: Decl, convention: Convention) -> Finding:
    total, taking, before = convention.counts
    instead = f" instead of `{convention.replaced}`" if convention.replaced else ""
    still = f" still takes `{convention.replaced}` and" if convention.replaced and _takes(decl, convention.replaced) \
        else ""
    short = convention.decorator.rpartition(".")[2]
    return Finding(
        KIND, path,
        f"{decl.name} is a @{short} function ({convention.decorator}); upstream's @{short} functions now take "
        f"`{convention.keyword}`{instead} ({taking} of the {total} in the trunk modules upstream changed; "
        f"{before} before), because what calls them passes it; {decl.name}{still} does not take "
        f"`{convention.keyword}`, so calling it raises TypeError (will not run as is)",
        line=decl.line, backend=backend_of(context.owners.owners, path),
        related_path=module_files(convention.decorator.rpartition(".")[0])[0],
        details={"declaration": f"@{convention.decorator}", "function": decl.name, "keyword": convention.keyword,
                 "replaced": convention.replaced, "upstream_functions": total, "upstream_taking": taking})


def _takes(decl: Decl, keyword: str) -> bool:
    return any(param.kind == "varkw" or (param.name == keyword and param.kind in _BY_NAME)
               for param in decl.params or ())


def _fork_candidates(context: DriftContext) -> list[tuple[str, Decl, list[str]]]:
    """(path, def, the trunk decorators it has, in order) for each def on FlagTree's Python lines under a
    decorator that resolves to a def in trunk's package at the new tag."""
    found: list[tuple[str, Decl, list[str]]] = []
    resolved: dict[str, str | None] = {}
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if not path.endswith(PY):
            continue
        text = read_text(context.fork, path) or ""
        if "@" not in text:
            continue
        names = _top_level(declarations_of(path, text))
        for decl in python_fact(DECORATED.name, text) or ():
            if decl.line not in lines:
                continue
            trunk = []
            for spelled in _decorators(decl):
                dotted = _dotted(names, spelled, path)
                if dotted is not None and dotted not in resolved:
                    resolved[dotted] = resolve_declared(context.upstream_new, dotted, "def")
                if dotted is not None and resolved[dotted] is not None:
                    trunk.append(str(resolved[dotted]))
            if trunk:
                found.append((path, decl, trunk))
    return found


def _decorated_items(nodes: list[ast.AST]) -> list[Decl]:
    """Every decorated def among some nodes of the shared walk, at any depth: a wrapper a factory function
    defines and returns is called as one at the top would be."""
    return [python_def(node) for node in nodes
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list]


# The fork's decorated defs, from the walk of its Python the analyses share (made beside the replay).
DECORATED = Extractor("decorated-defs", 2, _decorated_items, lambda decls: None if decls is None else list(decls),
                      encode=lambda decls: None if decls is None else [decl.encode() for decl in decls],
                      decode=lambda stored: None if stored is None else [Decl.decode(item) for item in stored],
                      reads=frozenset({ast.FunctionDef, ast.AsyncFunctionDef}))


def _decorators(decl: Decl) -> list[str]:
    return [part.strip() for part in decl.target.split(",") if part.strip()]


def _top_level(decls: tuple[Decl, ...]) -> dict[str, Decl]:
    """The first import or def binding each name at a module's top level."""
    found: dict[str, Decl] = {}
    for decl in decls:
        if not decl.scope and decl.kind in ("import", "def"):
            found.setdefault(decl.name, decl)
    return found


def _dotted(names: dict[str, Decl], spelled: str, path: str) -> str | None:
    """The dotted name a decorator spelled in a file names through the file's top-level imports, or the file's
    own top-level def (a trunk module's); None otherwise (a name of the backend's own package, a local)."""
    head, _, rest = spelled.partition(".")
    trunk_module = path.startswith(TRUNK_PACKAGE) and not is_third_party(path)
    package = package_of(path) if trunk_module else ""
    decl = names.get(head)
    if decl is not None:
        if decl.kind == "import":
            target = absolute(decl.target, package) if package else decl.target
            if target.startswith("."):
                return None  # relative to a backend's own package
            return target + ("." + rest if rest else "")
        if trunk_module and not rest:
            return f"{module_of(path)}.{head}"
    return None


def _conventions(context: DriftContext, decorators: set[str]) -> dict[str, Convention]:
    """Each decorator's keyword convention upstream added between the tags, if any."""
    short = {decorator.rpartition(".")[2] for decorator in decorators}
    spelled = re.compile(r"^\s*@[\w.]*\b(" + "|".join(map(re.escape, sorted(short))) + r")\b", re.MULTILINE)
    before: dict[str, list[Decl]] = {decorator: [] for decorator in decorators}
    after: dict[str, list[Decl]] = {decorator: [] for decorator in decorators}
    resolved: dict[tuple[bool, str], str | None] = {}  # (at the new tag, dotted) -> the trunk def, once each
    where: dict[str, Counter[tuple[str, str]]] = {decorator: Counter() for decorator in decorators}
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        for tree, path, into in ((context.upstream_old, change.old_path, before),
                                 (context.upstream_new, change.new_path, after)):
            if path is None or not path.endswith(MODULE_SUFFIX) or not_built(path):
                continue  # every module of upstream's tree: its own backends' (third_party/nvidia/...) too
            text = read_text(tree, path) or ""
            if not spelled.search(text):
                continue
            decls = declarations_of(path, text)
            names = _top_level(decls)
            for decl in decls:
                if decl.kind != "def" or not decl.target or not short & _short_names(decl):
                    continue
                for name in _decorators(decl):
                    dotted = _dotted(names, name, path)
                    if dotted is None:
                        continue
                    key = (into is after, dotted)
                    if key not in resolved:
                        resolved[key] = resolve_declared(tree, dotted, "def")
                    trunk = resolved[key]
                    if trunk in into:
                        into[trunk].append(decl)
                        if into is after and change.old_path is not None and change.new_path is not None:
                            where[trunk][(change.old_path, change.new_path)] += 1
    found: dict[str, Convention] = {}
    for decorator in sorted(decorators):
        convention = _convention(decorator, before[decorator], after[decorator])
        if convention is not None:
            found[decorator] = replace(convention, modules=tuple(pair for pair, _ in where[decorator].most_common(2)))
    return found


def _convention(decorator: str, before: list[Decl], after: list[Decl]) -> Convention | None:
    if len(before) < _FEWEST or len(after) < _FEWEST:
        return None
    was, now = _shares(before), _shares(after)
    added = [keyword for keyword, count in now.items()
             if count >= _LEAST_AFTER * len(after) and was.get(keyword, 0) <= _MOST_BEFORE * len(before)]
    if len(added) != 1:
        return None  # none, or several at once: no one keyword to name
    dropped = [keyword for keyword, count in was.items()
               if count >= _LEAST_AFTER * len(before) and now.get(keyword, 0) <= _MOST_BEFORE * len(after)]
    keyword = added[0]
    return Convention(decorator, keyword, dropped[0] if len(dropped) == 1 else None,
                      (len(after), now[keyword], was.get(keyword, 0)))


def _shares(decls: list[Decl]) -> Counter[str]:
    """How many of the functions take each keyword a caller can pass by name."""
    return Counter(param.name for decl in decls for param in decl.params or ()
                   if param.kind in _BY_NAME and param.name)


def _changing_commits(context: DriftContext, conventions: dict[str, Convention]) -> Commits | None:
    """The upstream commits that turned most functions under the decorator to the keyword, in the modules that
    hold most of them (a commit that adds or drops a function changes no convention)."""
    if context.range is None:
        return None
    old, new = context.range.old.oid, context.range.onto.oid

    def of(change: tuple[str, ...]) -> tuple[list[tuple[str, str]], int]:
        convention = conventions[change[0]]
        short = convention.decorator.rpartition(".")[2]

        def mostly_taking(text: str) -> bool:
            under = [decl for decl in declarations_of("module.py", text)
                     if decl.kind == "def" and short in _short_names(decl)]
            return 2 * sum(_takes(decl, convention.keyword) for decl in under) > len(under)
        paths = tuple(path for pair in convention.modules for path in pair)
        return changing_commits(context.repo, old, new, paths, mostly_taking)
    return of


def _short_names(decl: Decl) -> set[str]:
    return {spelled.rpartition(".")[2] for spelled in _decorators(decl)}
