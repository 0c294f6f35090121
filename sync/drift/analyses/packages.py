"""What a backend's build installs, after upstream changed the package list (issue 33, the 3.4.x -> 3.5.1 move;
issue 45, the 3.1 line -> 3.3.0).

FlagTree's shared setup helper gives setuptools a package_dir that installs every package setup.py names (the
packages find_packages finds, and those its list spells) from the building backend's own third_party/<b>/python/
tree (layout.generic_package_roots, the helper beside setup.py included), except the ones its skip_package_dir
leaves to trunk. Two questions per backend configuration, each on what upstream changed between the tags:
- `package-dir-missing`: a package upstream now installs (found under python/triton/, or added to setup.py's
  list: `triton/tools/extra`, #5411) that the backend's tree has no directory for: setuptools stops.
- `import-not-installed`: a package the old build installed and upstream's list drops (`triton/language/extra/
  cuda`, #4503) while a module the backend's build still installs imports it (absolute or relative): the wheel
  lacks it, and importing that module fails.
"""
from __future__ import annotations

from posixpath import basename, dirname

from sync.drift.context import DriftContext
from sync.facts.layout import TRUNK, PackageRoot, generic_package_roots, listed_packages, module_imports
from sync.facts.trees import FileTree, read_text
from sync.model import Finding

_PACKAGES = f"{TRUNK}/"
_TOP = basename(TRUNK)  # triton


def packages(tree: FileTree) -> set[str]:
    """The packages under python/triton/ (directories with an __init__.py), as paths below it."""
    return {dirname(path)[len(_PACKAGES):] for path in tree.paths()
            if path.startswith(_PACKAGES) and path.endswith("/__init__.py") and dirname(path) != TRUNK}


def _found(tree: FileTree) -> set[str]:
    """find_packages' packages of a tree, as triton/x/y, triton itself included."""
    top = {_TOP} if tree.exists(f"{TRUNK}/__init__.py") else set()
    return top | {f"{_TOP}/{package}" for package in packages(tree)}


def _listed(tree: FileTree) -> frozenset[str]:
    """The packages a tree's setup script spells in its list."""
    listed = listed_packages(tree)
    return listed.packages if listed is not None else frozenset()


def _installed(tree: FileTree) -> frozenset[str] | None:
    """Every package a tree's setup script installs: those it lists, and find_packages' where it takes them too;
    None where no setup script says."""
    listed = listed_packages(tree)
    if listed is None:
        return None
    return listed.packages | (frozenset(_found(tree)) if listed.discovers else frozenset())


def _roots(context: DriftContext) -> list[PackageRoot]:
    """The package mappings of the backends this run reads that ship a python tree of their own."""
    paths = context.fork.paths()
    return [root for root in generic_package_roots(context.fork, beside_setup=True)
            if (not context.filtered or root.backend in context.backends)
            and any(path.startswith(f"{root.root}/") for path in paths)]


def _dotted(package: str) -> str:
    return package.replace("/", ".")


def _where_listed(context: DriftContext) -> str:
    listed = listed_packages(context.upstream_new)
    if listed is None:
        return "find_packages"
    return f"{listed.script} {listed.function or 'setup(packages=...)'}"


def missing_package_findings(context: DriftContext) -> list[Finding]:
    roots = _roots(context)
    if not roots:
        return []
    listed = _listed(context.upstream_new) - (_installed(context.upstream_old) or frozenset())
    on_branch = listed_packages(context.branch)  # a setup script the user resolved says what it still lists
    if on_branch is not None:
        listed &= on_branch.packages
    found = _found(context.upstream_new) - _found(context.upstream_old)
    tree = context.backend_files
    findings = []
    for mapped in roots:
        added = sorted(listed | (found if mapped.discovered else set()))
        missing = [package for package in added if not any(word in package for word in mapped.skipped)
                   and not any(path.startswith(f"{mapped.source_dir(package)}/") for path in tree.paths())]
        if not missing:
            continue
        names = [_dotted(package) for package in missing]
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        how = " and ".join(part for part, there in ((_where_listed(context), bool(listed & set(missing))),
                                                    ("find_packages", bool(found & set(missing)))) if there)
        findings.append(Finding(
            "package-dir-missing", mapped.root,
            f"setup installs every triton package from {mapped.root} ({mapped.via} gives package_dir), and upstream's "
            f"build at the new tag installs {len(missing)} package(s) it has no directory for: {shown} (from {how}; "
            "will not build as is: setuptools stops on a package directory that does not exist)",
            backend=mapped.backend, related_path=f"{dirname(TRUNK)}/{missing[0]}",
            details={"packages": names, "via": mapped.via, "listed_by": how,
                     "sites": [f"{mapped.via}:{mapped.line}"] if mapped.line else []}))
    return findings


# --- imports of what the build no longer installs ---------------------------------------------------------------

def _installs(tree: FileTree, mapped: PackageRoot, installed: frozenset[str], module: str) -> bool:
    """Whether a build installing these packages (with the backend's mapping) ships the dotted module: a
    package it installs from a directory with an __init__.py, or a module file of one."""
    package = module.replace(".", "/")
    if package in installed and tree.exists(f"{mapped.source_dir(package)}/__init__.py"):
        return True
    parent, _, name = package.rpartition("/")
    return parent in installed and tree.exists(f"{mapped.source_dir(parent)}/{name}.py")


def _imported(package: str, module: str, level: int, name: str) -> list[str]:
    """The dotted modules an import statement of a module of `package` (its __init__.py or a module file in it)
    needs: the module it names, and a name it imports from it (which may be a submodule)."""
    if level:
        parts = package.split("/")
        keep = len(parts) - (level - 1)  # `.` is the package itself, `..` its parent
        base = ".".join(parts[:keep]) if keep > 0 else ""
        module = f"{base}.{module}" if module and base else module or base
    needed = [module] if module else []
    if name:
        needed.append(f"{module}.{name}")
    return needed


def not_installed_import_findings(context: DriftContext) -> list[Finding]:
    roots = _roots(context)
    if not roots:
        return []
    old_list, new_list = _installed(context.upstream_old), _installed(context.upstream_new)
    if old_list is None or new_list is None:
        return []  # no list read at one of the tags: nothing said of what upstream dropped
    ours = _installed(context.fork)
    own = (ours - old_list) if ours is not None else frozenset()  # FlagTree's entries go with the merge
    before = ours if ours is not None else old_list
    after = new_list | own
    dropped = before - after
    if not dropped:
        return []
    tree = context.backend_files
    by_dir: dict[str, list[str]] = {}
    for path in tree.paths():
        if path.endswith(".py"):
            by_dir.setdefault(dirname(path), []).append(path)
    findings = []
    for mapped in roots:
        old_build = frozenset(before | (_found(context.upstream_old) if mapped.discovered else set()))
        new_build = frozenset(after | (_found(context.upstream_new) if mapped.discovered else set()))
        sites: list[str] = []
        gone: set[str] = set()
        for package in sorted(new_build):
            for path in by_dir.get(mapped.source_dir(package), []):  # setuptools installs a package's own modules
                text = read_text(tree, path)
                imports = module_imports(text) if text is not None else None
                for module, level, name, line in imports or []:
                    needed = [item for item in _imported(package, module, level, name) if item.split(".")[0] == _TOP]
                    lost = [item for item in needed if _installs(tree, mapped, old_build, item)
                            and not _installs(tree, mapped, new_build, item)]
                    if lost:
                        gone.update(lost)
                        if f"{path}:{line}" not in sites:
                            sites.append(f"{path}:{line}")
        if not sites:
            continue
        names = sorted(gone)
        first, _, number = sites[0].rpartition(":")
        findings.append(Finding(
            "import-not-installed", first,
            f"{len(sites)} import(s) of {mapped.backend}'s installed Python need {', '.join(names)}, which upstream's "
            f"build installed at the old tag and no longer lists ({_where_listed(context)}): the wheel built for "
            f"{mapped.backend} lacks it, and importing the module fails",
            line=int(number), backend=mapped.backend,
            related_path=f"{dirname(TRUNK)}/{names[0].replace('.', '/')}",
            details={"modules": names, "sites": sites, "dropped": sorted(_dotted(p) for p in dropped),
                     "via": mapped.via}))
    return findings

