"""Override signatures: upstream changed the parameters of a trunk class's method, and a FlagTree class that
derives from that class still overrides the method with the old parameters. Trunk calls the method the new way,
so the override no longer fits the call (issue 33; seen on the 3.3 -> 3.4 move, which the rule was not developed
on: nvidia's and amd's add_stages gained `language`, trunk's compiler passes it, and aipu's and tsingmicro's
`add_stages(self, stages, options)` raise TypeError on every compile).

Upstream side: Python modules upstream changed; a method declared in a class body whose parameter list (names and
kinds; defaults and annotations aside) differs between the tags, in a class of the same qualified name at both.
Either the trunk class itself (python/triton/) changed it, or, where it kept its parameters, every one of
upstream's own subclasses of it that changed the method (its backends under third_party/) changed it the same way:
what trunk calls follows them (BaseBackend.add_stages still read (stages, options) at 3.4.0). FlagTree side: a class
on FlagTree's lines whose base, resolved through the file's imports (`from triton.x import C`, `import triton.x as
m` and `m.C`, a re-export of the package followed), is that trunk class, and that defines the method, on FlagTree's
lines, with exactly the old parameter list, and trunk calls the method (`.method(` in a trunk module at the new
tag) from a module the backend does not ship a copy or an overlay of itself (third_party/<b>/python/triton/...: its
build installs that copy; a spec overlay loads in trunk's place). An override FlagTree already changed, or one
taking `*args`, claims nothing; nor does a base reached only through another base, an import relative to the
backend's own package, or a method the trunk class does not declare (one upstream's subclasses call among
themselves).
The module still imports and builds. Where the new parameters require one that the override cannot take either
way a call may pass it (by its position: the override has fewer positional parameters; by its name: the override
has no parameter of that name and no `**kwargs`), every call of the override raises TypeError: kind
override-missing-argument, an error, like abstract-method-missing. Otherwise (a parameter renamed in place, one
with a default added) the calls may still fit: kind override-signature, a warning. One finding per changed
method, kind and backend, every overriding class a site.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from sync.drift.context import DriftContext, cached_function_table
from sync.facts.declindex import Decl, declarations_of
from sync.facts.delta import PY, backend_of, fork_added_lines, text_diff
from sync.facts.filekinds import is_built, not_built
from sync.facts.layout import is_third_party
from sync.facts.pymodules import MODULE_SUFFIX, TRUNK_PACKAGE, absolute, module_files, module_of, package_of
from sync.facts.trees import FileTree, read_text
from sync.facts.upstreamlog import Commits, changing_commits, one_per_change
from sync.git import changes_with_renames
from sync.model import Finding

_SIGNATURE = re.compile(r"\bdef\s+\w+\s*\(.*?\)\s*(?:->[^:]*)?:", re.DOTALL)
_REEXPORTS = 2  # `from triton.backends import BaseBackend` may name a class another module of the package declares


@dataclass(frozen=True)
class ChangedMethod:
    base: str  # the trunk class, dotted: triton.backends.compiler.BaseBackend
    method: str
    before: tuple[tuple[str, str], ...]  # (name, kind) of each parameter at the old tag
    after: tuple[tuple[str, str], ...]
    old_path: str  # the file whose change the finding shows: the base's, or the first implementation's
    new_path: str
    qualname: str  # the changed def's qualified name in that file
    required_after: tuple[tuple[str, str, int], ...]  # (name, kind, position) of each parameter a call must pass
    implementations: tuple[str, ...] = ()  # upstream's own subclasses that changed it, when the base did not


def _shape(decl: Decl) -> tuple[tuple[str, str], ...]:
    return tuple((param.name, param.kind) for param in decl.params or ())


def _required(decl: Decl) -> tuple[tuple[str, str, int], ...]:
    return tuple((param.name, param.kind, position) for position, param in enumerate(decl.params or ())
                 if param.kind in _NAMED and not param.has_default)


_POSITIONAL = ("positional-only", "positional")
_NAMED = (*_POSITIONAL, "keyword-only")


def cannot_take(required: tuple[tuple[str, str, int], ...], override: Decl) -> list[str]:
    """The required parameters a call passes that the override takes neither by position nor by name: each
    makes every call raise TypeError, however the caller passes it."""
    params = override.params or ()
    if any(param.kind == "vararg" for param in params):
        return []
    names = {param.name for param in params if param.kind in _NAMED}
    by_keyword = any(param.kind == "varkw" for param in params)
    slots = sum(param.kind in _POSITIONAL for param in params)
    return [name for name, kind, position in required
            if name not in names and not by_keyword and (kind == "keyword-only" or position >= slots)]


def _methods(path: str, text: str) -> dict[tuple[str, str], Decl]:
    """(class qualname, method) -> its def, for methods declared in class bodies."""
    return {(decl.scope, decl.name): decl for decl in declarations_of(path, text)
            if decl.kind == "def" and decl.owner is not None and decl.scope}


def changed_methods(context: DriftContext) -> dict[tuple[str, str], ChangedMethod]:
    """(module.Class, method) -> how upstream changed its parameters: in the trunk class itself, or, where the
    class kept them, in every one of upstream's own subclasses that changed them (trunk calls what they take:
    BaseBackend.add_stages kept (stages, options) at 3.4.0, while nvidia's and amd's gained `language`, which the
    compiler passes)."""
    out: dict[tuple[str, str], ChangedMethod] = {}
    implementations: dict[tuple[str, str], list[ChangedMethod]] = {}
    for change in changes_with_renames(context.upstream_old, context.upstream_new):
        if change.new_path is None or change.status == "added" or not change.old_path.endswith(MODULE_SUFFIX) \
                or not_built(change.old_path):
            continue
        text = read_text(context.upstream_old, change.old_path) or ""
        new_text = read_text(context.upstream_new, change.new_path) or ""
        if "class " not in text or Counter(_SIGNATURE.findall(text)) == Counter(_SIGNATURE.findall(new_text)):
            continue  # cheap: no def's parameter list changed (a signature's text runs from `def` to `):`)
        before = _methods(change.old_path, text)
        if not before:
            continue
        after = _methods(change.new_path, new_text)
        decls = declarations_of(change.old_path, text)
        classes = {f"{decl.scope}.{decl.name}" if decl.scope else decl.name: decl for decl in decls
                   if decl.kind == "class"}
        trunk = change.old_path.startswith(TRUNK_PACKAGE) and not is_third_party(change.old_path)
        for (klass, method), old_decl in before.items():
            new_decl = after.get((klass, method))
            if new_decl is None or _shape(old_decl) == _shape(new_decl):
                continue
            found = ChangedMethod(f"{module_of(change.old_path)}.{klass}" if trunk else "", method, _shape(old_decl),
                                  _shape(new_decl), change.old_path, change.new_path, f"{klass}.{method}",
                                  _required(new_decl))
            if trunk:
                out[(found.base, method)] = found
            if klass in classes:
                for base in class_bases(decls, classes[klass], _package_of(change.old_path)):
                    resolved = resolve_class(context.upstream_old, base)
                    if resolved is not None:
                        implementations.setdefault((resolved, method), []).append(replace(found, base=resolved))
    for key, changes in implementations.items():
        if key in out or len({(found.before, found.after) for found in changes}) != 1:
            continue  # the base changed itself, or upstream's subclasses do not agree on the new parameters
        if not _declares(context.upstream_old, *key):
            continue  # a method of the subclasses alone (nvidia's make_ttir): nothing trunk calls through the base
        out[key] = replace(changes[0], implementations=tuple(sorted(f"{found.qualname.rsplit('.', 1)[0]} "
                                                                     f"({found.old_path})" for found in changes)))
    return out


def _declares(tree: FileTree, base: str, method: str) -> bool:
    """Whether the trunk class (module.Class) declares the method in its own body."""
    module, _, klass = base.rpartition(".")
    for path in module_files(module):
        text = read_text(tree, path)
        if text is not None:
            return (klass, method) in _methods(path, text)
    return False


def trunk_callers(tree: FileTree, methods: set[str]) -> dict[str, list[str]]:
    """method -> trunk's modules (python/triton/, tests aside) that call `.method(` at the new tag."""
    found: dict[str, list[str]] = {method: [] for method in methods}
    spelled = re.compile(r"\.(" + "|".join(map(re.escape, sorted(methods))) + r")\s*\(")
    for path in tree.paths():
        if path.startswith(TRUNK_PACKAGE) and path.endswith(MODULE_SUFFIX) and not is_third_party(path) \
                and is_built(path):
            for method in set(spelled.findall(read_text(tree, path) or "")):
                found[method].append(path)
    return found


def _package_of(path: str) -> str:
    """The package a module file's relative imports start from (trunk's python/ tree only)."""
    return package_of(path) if path.startswith(TRUNK_PACKAGE) and not is_third_party(path) else ""


def resolve_class(tree: FileTree, dotted: str, depth: int = 0) -> str | None:
    """module.Class where a dotted name that an import gives (triton.backends.BaseBackend) is declared in the
    tree's trunk package, following a re-export of the module it names; None when it is not a trunk class."""
    return resolve_declared(tree, dotted, "class", depth)


def resolve_declared(tree: FileTree, dotted: str, kind: str, depth: int = 0) -> str | None:
    """module.name where a dotted name is a top-level declaration of that kind (class, def) in the tree's trunk
    package, following a re-export of the module it names; None otherwise."""
    module, _, name = dotted.rpartition(".")
    if not module or module.startswith("."):
        return None  # a relative import in FlagTree's file: the backend's own package
    for path in module_files(module):
        text = read_text(tree, path)
        if text is None:
            continue
        for decl in declarations_of(path, text):
            if decl.name == name and not decl.scope:
                if decl.kind == kind:
                    return dotted
                if decl.kind == "import" and depth < _REEXPORTS:
                    return resolve_declared(tree, absolute(decl.target, package_of(path)), kind, depth + 1)
        return None
    return None


def class_bases(decls: tuple[Decl, ...], klass: Decl, package: str = "") -> list[str]:
    """The dotted names the class's bases resolve to through the module's top-level imports (a relative one
    from package, a trunk module's; none from a backend's own package)."""
    imports = {decl.name: absolute(decl.target, package) if package else decl.target
               for decl in decls if decl.kind == "import" and not decl.scope}
    out = []
    for base in (part.strip() for part in klass.target.split(",") if part.strip()):
        head, _, rest = base.partition(".")
        if head in imports and "=" not in base:
            out.append(imports[head] + ("." + rest if rest else ""))
    return out


def override_findings(context: DriftContext) -> list[Finding]:
    changed = changed_methods(context)
    if not changed:
        return []
    class_names = {klass.rsplit(".", 1)[-1] for klass, _ in changed}
    methods = {method for _, method in changed}
    callers: dict[str, list[str]] | None = None  # read once, when a FlagTree override is found
    sited: list[tuple[tuple[str, ...], list[str], Finding]] = []
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if not path.endswith(PY):
            continue
        text = read_text(context.fork, path) or ""
        if not any(name in text for name in class_names) or not any(f"def {method}" in text for method in methods):
            continue  # cheap: a subclass names its base, an override spells its def
        decls = declarations_of(path, text)
        for klass in (decl for decl in decls if decl.kind == "class" and decl.target):
            for base in class_bases(decls, klass):
                resolved = resolve_class(context.upstream_old, base)
                qualified_class = f"{klass.scope}.{klass.name}" if klass.scope else klass.name
                for decl in decls:
                    key = (resolved or "", decl.name)
                    if decl.kind != "def" or decl.scope != qualified_class or key not in changed \
                            or decl.line not in lines or _shape(decl) != changed[key].before:
                        continue  # an override FlagTree already changed claims nothing about what it takes
                    if callers is None:
                        callers = trunk_callers(context.upstream_new, methods)
                    # A backend that ships its own copy of a calling module (third_party/<b>/python/triton/...),
                    # or an overlay of it, loads that, which still calls the old way (callsigs reads imports
                    # alike; 3.2 -> 3.4: ascend's spec compiler.py calls its add_stages with two arguments).
                    reaching = [caller for caller in callers[decl.name] if not context.own_copy(path, caller)]
                    if reaching:
                        sited += _sited(context, path, klass.name, decl, changed[key], reaching)
    return one_per_change(sited, _changing_commits(context))


def _sited(context: DriftContext, path: str, klass: str, decl: Decl, change: ChangedMethod,
           callers: list[str]) -> list[tuple[tuple[str, ...], list[str], Finding]]:
    before = (context.function_table(context.upstream_old, change.old_path) or {}).get(change.qualname)
    after = (context.function_table(context.upstream_new, change.new_path) or {}).get(change.qualname)
    diff = text_diff(before.source, after.source, change.old_path, change.new_path) if before and after else None
    signature = lambda shape: ", ".join(name for name, _ in shape)
    missing = cannot_take(change.required_after, decl)
    calls = f"trunk's calls of it ({', '.join(callers)})"
    kind, outcome = ("override-missing-argument", f"the override cannot take {', '.join(missing)}, which {calls} "
                     "pass: each call raises TypeError") if missing else \
        ("override-signature", f"the override still takes the old ones, so {calls} no longer fit")
    changed = (f"upstream's own implementations of it ({', '.join(change.implementations)}) changed their "
               "parameters, and trunk calls them so" if change.implementations else
               "upstream changed its parameters")
    details: dict[str, object] = {"declaration": f"{change.base}.{change.method}", "override": f"{klass}.{change.method}",
                                  "callers": callers}
    if change.implementations:
        details["implementations"] = list(change.implementations)
    if missing:
        details["cannot_take"] = missing
    return [((kind, change.old_path, change.new_path, change.qualname), [f"{path}:{decl.line}"], Finding(
        kind, path,
        f"{klass}.{change.method} overrides {change.base}.{change.method}; {changed}: "
        f"({signature(change.before)}) -> ({signature(change.after)}); {outcome}",
        line=decl.line, backend=backend_of(context.owners.owners, path), related_path=change.new_path, diff=diff,
        details=details))]


def _changing_commits(context: DriftContext) -> Commits | None:
    """The upstream commits that changed the base method's parameters, with the tags' commits."""
    if context.range is None:
        return None
    old, new = context.range.old.oid, context.range.onto.oid

    def of(change: tuple[str, ...]) -> tuple[list[tuple[str, str]], int]:
        _, old_path, new_path, qualname = change
        return changing_commits(context.repo, old, new, (old_path, new_path),
                                lambda text: getattr((cached_function_table(text) or {}).get(qualname), "params", None))
    return of
