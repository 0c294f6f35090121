"""Facts about the FlagTree tree layout: where trunk, backends and their spec trees live."""
from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, replace
from collections.abc import Callable
from pathlib import Path
from typing import Any
from posixpath import basename, dirname, join, normpath

from sync.facts.astwalk import last_name, walk_nodes
# is_test_path and not_built are the vocabulary's (facts/filekinds.py), also imported from here
from sync.facts.filekinds import SPEC_TREE_CODE, is_test_path, not_built  # noqa: F401
from sync.facts.setupconditions import backend_condition
from sync.facts.trees import FileTree, read_text
from sync.git.readlog import TreeMemo
from sync.support.schema import Mapping, Strings, Table, Text, load_table, load_toml

TRUNK = "python/triton"
SPEC_HOOK_MODULE = "flagtree_spec"
HOOK_NAMES = ("spec_path", "spec", "spec_func")
# Older FlagTree branches (main) import spec/spec_func from the runtime driver instead.
LEGACY_HOOK_MODULES = ("triton.runtime.driver",)

# The seed's directory policy is data: seed_policy.toml next to this module, read once by seed_policy().
POLICY_FILE = Path(__file__).with_name("seed_policy.toml")
_DIRECTORY = Text(nonempty=False, pattern=re.compile(r"(?:[^/]+(?:/[^/]+)*)?"), meaning="a directory below "
                  "python/triton (no leading or trailing /)")
_FILE = Text(pattern=re.compile(r"[^/]+"), meaning="a file name")
_POLICY_SCHEMA = Table(fields={"spec_path_allowed": Strings(item=_DIRECTORY),
                               "spec_path_forbidden": Strings(item=_DIRECTORY),
                               "spec_path_forbidden_below": Strings(item=_DIRECTORY),
                               "no_specialization": _DIRECTORY, "protected_files": Strings(item=_FILE),
                               "direct_edit_files": Strings(item=_FILE)})


@dataclass(frozen=True)
class SeedPolicy:
    """The seed's directory policy; directories are relative to python/triton ("" is python/triton itself)."""

    spec_path_allowed: frozenset[str]  # packages whose __init__.py may call spec_path
    spec_path_forbidden: frozenset[str]  # packages where spec_path is forbidden outright
    spec_path_forbidden_below: tuple[str, ...]  # packages whose every sub-package is forbidden too
    no_specialization: str  # this package and everything below it: no specialization of any kind
    protected_files: frozenset[str]  # root files backends may never shadow or provide
    direct_edit_files: frozenset[str]  # root files specialized by editing them in trunk


def load_seed_policy(path: Path) -> SeedPolicy:
    """The policy file at path, checked against its schema (a TomlFileError, exit 2, names the key)."""
    data = load_toml(path.read_text(encoding="utf-8"), str(path), _POLICY_SCHEMA).data
    return SeedPolicy(frozenset(data["spec_path_allowed"]), frozenset(data["spec_path_forbidden"]),
                      tuple(data["spec_path_forbidden_below"]), data["no_specialization"],
                      frozenset(data["protected_files"]), frozenset(data["direct_edit_files"]))


@functools.cache
def seed_policy() -> SeedPolicy:
    """The policy shipped with the tool (POLICY_FILE); read at first use, by every reader the same."""
    return load_seed_policy(POLICY_FILE)

# \A and \Z with DOTALL: a git path may hold a newline, and "$" would also match before a trailing one
# The layouts FlagTree has used for a backend's spec tree (read from its history):
# - third_party/<b>/backend/spec/{triton,include,lib}/...: the seed's layout (main, 3.6 branches);
# - python/triton/spec/<b>/...: the Python mirror inside trunk's package (triton_v3.5.x, ascend).
# A repository may name more in pyproject.toml: [tool.flagtree-sync] spec_roots = ["x/{backend}/py"].
THIRD_PARTY = "third_party"


def backend_dir(backend: str) -> str:
    """third_party/<b>: everything below it is backend b's."""
    return f"{THIRD_PARTY}/{backend}"


def binding_source_dir(backend: str) -> str:
    """Where a backend keeps the binding library sources its build compiles instead of trunk's python/src/ (the
    root CMakeLists.txt takes third_party/<b>/python/src where it exists)."""
    return f"{backend_dir(backend)}/python/src"


def own_trunk_backends(tree: FileTree) -> set[str]:
    """The backends that carry their own copy of trunk's headers (third_party/<b>/include/triton/), which their
    build puts first on the include path: each compiles its own tree, not trunk's, and upstream's changes reach
    it only when it takes them."""
    return {path.split("/", 2)[1] for path in tree.paths() if in_own_trunk_copy(path)}


def in_own_trunk_copy(path: str) -> bool:
    """Whether a file is part of a backend's own copy of trunk (third_party/<b>/include/triton/...: its headers,
    or a whole Triton tree vendored there). The backend builds the copy against itself, so upstream's changes
    reach none of its lines, and what they say of trunk's names is the copy's affair (issue 33, the 3.3.x ->
    3.5.1 move: 22 findings in enflame's vendored Triton, all false)."""
    parts = path.split("/", 4)
    return len(parts) == 5 and parts[0] == THIRD_PARTY and parts[2:4] == ["include", "triton"]


def backend_spec_dir(backend: str) -> str:
    """third_party/<b>/backend/spec: the seed's spec tree (triton/, include/, lib/) and the backend's records."""
    return f"{backend_dir(backend)}/backend/spec"


def is_third_party(path: str) -> bool:
    """Whether a path is some backend's (or third-party code's), not trunk's."""
    return path.startswith(THIRD_PARTY + "/")


_THIRD_PARTY_SPEC = re.compile(r"\Athird_party/(?P<backend>[^/]+)/backend/spec/(?P<rest>.+)\Z", re.S)
_OWNED = re.compile(r"\Athird_party/(?P<backend>[^/]+)/.", re.S)
PYTHON_SPEC_HOME = f"{TRUNK}/spec"
_PYTHON_SPEC = re.compile(rf"\A{re.escape(PYTHON_SPEC_HOME)}/(?P<backend>[^/]+)/(?P<rel>.+)\Z", re.S)
CONFIG_FILE = "pyproject.toml"


@dataclass(frozen=True)
class SpecFile:
    """A file of a backend's spec tree, with its trunk counterpart if it mirrors one."""

    backend: str
    path: str  # full repository path
    area: str  # "triton" (Python), "include", "lib" or "other"
    rel: str  # path below spec/<area>/ (for "triton": relative to python/triton)
    layout: str = "third-party"  # third-party | python-spec | configured | setup-copy | package-copy
    counterpart: str | None = None  # the trunk file it copies when that is not its mirror path (a renamed copy)
    via: str | None = None  # the setup helper whose copy call or package_dir installs it

    @property
    def trunk_path(self) -> str | None:
        if self.counterpart is not None:
            return self.counterpart
        if self.area == "triton":
            return f"{TRUNK}/{self.rel}"
        if self.area in ("include", "lib"):
            return f"{self.area}/{self.rel}"
        return None

    @property
    def is_python(self) -> bool:
        return self.area in ("triton", "copy") and self.path.endswith(".py")

    @property
    def is_cpp(self) -> bool:
        return self.area in ("include", "lib") and self.rel.endswith(SPEC_TREE_CODE)

    @property
    def is_tablegen(self) -> bool:
        return self.area in ("include", "lib") and self.rel.endswith(".td")

    @property
    def root_level(self) -> bool:
        """A module directly in the mirror of python/triton: never a legal overlay (the root is every package's parent)."""
        return self.area == "triton" and "/" not in self.rel


def configured_roots(tree: FileTree) -> tuple[re.Pattern[str], ...]:
    """Extra Python spec roots named in the repository's pyproject.toml ([tool.flagtree-sync] spec_roots)."""
    patterns = []
    for root in tool_config(tree).get("spec_roots", []):
        head, _, tail = root.strip("/").partition("{backend}")
        patterns.append(re.compile(rf"\A{re.escape(head)}(?P<backend>[^/]+){re.escape(tail)}/(?P<rel>.+)\Z", re.S))
    return tuple(patterns)


def parse_spec_file(path: str, extra: tuple[re.Pattern[str], ...] = ()) -> SpecFile | None:
    match = _THIRD_PARTY_SPEC.match(path)
    if match:
        area, _, rel = match["rest"].partition("/")
        if not rel:
            return SpecFile(match["backend"], path, "other", area)
        if area not in ("triton", "include", "lib"):
            return SpecFile(match["backend"], path, "other", match["rest"])
        return SpecFile(match["backend"], path, area, rel)
    match = _PYTHON_SPEC.match(path)
    if match:
        return SpecFile(match["backend"], path, "triton", match["rel"], "python-spec")
    for pattern in extra:
        match = pattern.match(path)
        if match:
            return SpecFile(match["backend"], path, "triton", match["rel"], "configured")
    return None


def owning_backend(path: str, extra: tuple[re.Pattern[str], ...] = ()) -> str | None:
    """The backend a path belongs to: everything under third_party/<b>/, and every spec tree."""
    spec_file = parse_spec_file(path, extra)
    if spec_file is not None:
        return spec_file.backend
    return third_party_owner(path)


def third_party_owner(path: str) -> str | None:
    """b for a file under third_party/<b>/ (whose build reads b's own copies first); None elsewhere."""
    match = _OWNED.match(path)
    return match["backend"] if match else None


def backend_root(path: str) -> str | None:
    """third_party/<b>/ for a file of backend b's tree, or of its Python mirror inside trunk's package
    (python/triton/spec/<b>/): what its uses can reach of its own, its C++ and the extension it builds; None
    elsewhere (issue 33, the 3.5.x -> 3.7 move: ascend's spec Python calls names its own ir.cc binds)."""
    backend = third_party_owner(path)
    if backend is None and (mirror := _PYTHON_SPEC.match(path)) is not None:
        backend = mirror["backend"]
    return f"{backend_dir(backend)}/" if backend is not None else None


def spec_files(tree: FileTree, backends: set[str] | None = None) -> list[SpecFile]:
    extra = configured_roots(tree)
    found = []
    for path in tree.paths():
        if not path.startswith(("third_party/", PYTHON_SPEC_HOME + "/")) and not extra:
            continue
        spec_file = parse_spec_file(path, extra)
        if spec_file and (not backends or spec_file.backend in backends):
            found.append(spec_file)
    return found


def is_spec_path(path: str, extra: tuple[re.Pattern[str], ...] = ()) -> bool:
    """A file of some backend's spec tree (so never trunk, even when it lies under python/triton)."""
    return parse_spec_file(path, extra) is not None


def backend_names(tree: FileTree) -> list[str]:
    """Backends that have a spec tree (third_party/<b>/backend/spec/...) or files their setup helper installs in
    trunk's place."""
    return sorted({spec_file.backend for spec_file in spec_files(tree)} | {copy.backend for copy in copy_files(tree)})


def third_party_backends(tree: FileTree) -> list[str]:
    """Every third_party/<b>/backend directory, with or without spec/."""
    names = set()
    for path in tree.paths():
        parts = path.split("/")
        if len(parts) > 3 and parts[0] == "third_party" and parts[2] == "backend":
            names.add(parts[1])
    return sorted(names)


def third_party_groups(tree: FileTree) -> list[str]:
    """Every directory third_party/<b>/ that holds a file: each is a group of the report (it owns its files)."""
    return sorted({owner for path in tree.paths() if (owner := third_party_owner(path)) is not None})


def require_backends(tree: FileTree, wanted: set[str] | frozenset[str]) -> None:
    """Refuse --backend names that are no group of the tree's: a backend (third_party/<b>/backend, with or
    without spec/, or a spec tree elsewhere) or any third_party/<b>/ directory, which the report groups too."""
    known = sorted(set(backend_names(tree)) | set(third_party_groups(tree)))
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        from sync.errors import SyncError  # layout stays importable without the error module's dependents
        raise SyncError(f"no backend {', '.join(unknown)} (third_party/<backend>/) on this branch; "
                        f"known: {', '.join(known) or 'none'}")


def trunk_rel(path: str) -> str | None:
    """python/triton/a/b.py -> a/b.py; None outside trunk (a backend's python/triton/spec/<b>/ is not trunk)."""
    prefix = TRUNK + "/"
    if not path.startswith(prefix) or _PYTHON_SPEC.match(path):
        return None
    return path[len(prefix):]


def package_init(rel_dir: str) -> str:
    """The trunk __init__.py of a package directory relative to python/triton ("" is python/triton itself)."""
    return f"{TRUNK}/{rel_dir}/__init__.py" if rel_dir else f"{TRUNK}/__init__.py"


def package_of(rel: str) -> str:
    """The package directory (relative to python/triton) that holds a module."""
    return dirname(rel)


def is_under(rel_dir: str, top: str) -> bool:
    """rel_dir is top or below it; everything is below the root package ("")."""
    return top == "" or rel_dir == top or rel_dir.startswith(top + "/")


def spec_path_verdict(rel_dir: str) -> str:
    """'allowed', 'forbidden' or 'unlisted' for a spec_path call in python/triton/<rel_dir>."""
    policy = seed_policy()
    if rel_dir in policy.spec_path_allowed:
        return "allowed"
    if rel_dir in policy.spec_path_forbidden or is_under(rel_dir, policy.no_specialization):
        return "forbidden"
    if any(rel_dir.startswith(top + "/") for top in policy.spec_path_forbidden_below):
        return "forbidden"
    return "unlisted"


# --- Specialization outside the seed's hooks (issue 34): the build installs a backend's copy in trunk's place ---
# A backend's setup helper (python/setup_tools/utils/<b>.py) is read, never run: its shutil copy calls
# (setup-copy) and its package_dir mappings (package-copy) are evaluated where their paths are literal enough.
SETUP_HELPERS = "python/setup_tools/utils"
SETUP_SCRIPTS = ("setup.py", "python/setup.py")  # relative paths in a helper are relative to setup.py's directory
SETUP_COPY = "setup-copy"
PACKAGE_COPY = "package-copy"
RENAMED_COPY = "renamed-copy"
_COPY_FUNCTIONS = frozenset({"copy", "copy2", "copyfile", "copytree"})
_PATH_TYPES = frozenset({"Path", "PurePath", "PosixPath", "PurePosixPath"})
_SAME_PATH = frozenset({"resolve", "absolute", "abspath", "normpath", "realpath", "expanduser", "fspath", "str"})
class _HelperPaths:
    """Evaluates the path expressions of one setup helper to repository paths; None where a value is not
    literal (a function's result, an environment variable): such a copy is not guessed at."""

    def __init__(self, helper: str, module: ast.Module, setup_dir: str) -> None:
        self.helper, self.setup_dir = helper, setup_dir
        self.bound: dict[str, list[ast.expr]] = {}
        for node in walk_nodes(module):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.bound.setdefault(node.targets[0].id, []).append(node.value)
        self._active: set[str] = set()

    def value(self, node: ast.expr) -> str | None:
        found = self._value(node)
        if found is None:
            return None
        found = normpath(found)
        return None if found.startswith("..") or found.startswith("/") else ("" if found == "." else found)

    def _value(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return join(self.setup_dir, node.value) if self.setup_dir else node.value or "."
        if isinstance(node, ast.Name):
            if node.id == "__file__":
                return self.helper
            values = self.bound.get(node.id, [])
            if len(values) != 1 or node.id in self._active:  # rebound or recursive: not one literal path
                return None
            self._active.add(node.id)
            try:
                return self._value(values[0])
            finally:
                self._active.discard(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self._value(node.left), self._relative(node.right)
            return join(left, right) if left is not None and right is not None else None
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            inner = self._value(node.value)
            return dirname(normpath(inner)) or "." if inner is not None else None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents" \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
            inner = self._value(node.value.value)
            if inner is None:
                return None
            inner = normpath(inner)
            for _ in range(node.slice.value + 1):
                inner = dirname(inner) or "."
            return inner
        if isinstance(node, ast.Call):
            name = _called(node)
            if name in _PATH_TYPES or name in _SAME_PATH:
                if len(node.args) == 1 and not node.keywords:
                    return self._value(node.args[0])
                if isinstance(node.func, ast.Attribute) and not node.args and name in _SAME_PATH:
                    return self._value(node.func.value)  # Path(...).resolve()
                return None
            if name == "dirname" and len(node.args) == 1:
                inner = self._value(node.args[0])
                return dirname(normpath(inner)) or "." if inner is not None else None
            if name == "join" and node.args and not node.keywords:
                parts = [self._value(node.args[0])] + [self._relative(arg) for arg in node.args[1:]]
                return join(*parts) if all(part is not None for part in parts) else None  # type: ignore[arg-type]
        return None

    def _relative(self, node: ast.expr) -> str | None:
        """A path part joined onto another: a literal string, or a name bound to one."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and not node.value.startswith("/"):
            return node.value
        if isinstance(node, ast.Name) and len(self.bound.get(node.id, [])) == 1:
            return self._relative(self.bound[node.id][0])
        return None


def _called(call: ast.Call) -> str | None:
    return last_name(call.func)


def _setup_dir(tree: FileTree) -> str:
    return next((dirname(script) for script in SETUP_SCRIPTS if tree.exists(script)), "")


def _parsed(tree: FileTree, path: str) -> ast.Module | None:
    """A setup module's syntax tree; None where it does not parse (check reports that as FT013 where it looks)."""
    from sync.facts.parsing import cpython_tree  # here: a reused result imports no parser (libcst)
    try:
        return cpython_tree(read_text(tree, path) or "")
    except (SyntaxError, ValueError, RecursionError):
        return None


def setup_helpers(tree: FileTree) -> list[tuple[str, str, ast.Module]]:
    """(backend, path, parsed module) of each backend's setup helper that parses."""
    return [(basename(path)[:-3], path, module) for path in tree.paths()
            if dirname(path) == SETUP_HELPERS and path.endswith(".py") and not basename(path).startswith("_")
            and (module := _parsed(tree, path)) is not None]


def _files_below(tree: FileTree, directory: str) -> list[str]:
    prefix = directory.rstrip("/") + "/" if directory else ""
    return [path for path in tree.paths() if path.startswith(prefix)]


def _copy_pairs(tree: FileTree, helpers: "_HelperPaths", call: ast.Call) -> list[tuple[str, str]]:
    """(source, destination) file pairs of one shutil copy call; none where a path is not literal."""
    if len(call.args) < 2:
        return []
    source, destination = helpers.value(call.args[0]), helpers.value(call.args[1])
    if source is None or destination is None:
        return []
    if _called(call) == "copytree":
        return [(path, join(destination, path[len(source) + 1:])) for path in _files_below(tree, source)]
    if not tree.exists(source):
        return []  # a build output (a .so, a binary): nothing in the tree to drift
    if _files_below(tree, destination) and not tree.exists(destination):
        destination = join(destination, basename(source))  # copied into a directory
    return [(source, destination)]




def _package_dirs(module: ast.Module) -> list[tuple[ast.expr, ast.expr]]:
    """(package key, directory) pairs a helper gives setuptools' package_dir: dict displays in a function
    named *package_dir*, and item assignments to a *package_dir* mapping."""
    pairs: list[tuple[ast.expr, ast.expr]] = []
    for node in walk_nodes(module):
        if isinstance(node, ast.FunctionDef) and "package_dir" in node.name:
            for inner in walk_nodes(node):
                if isinstance(inner, ast.Dict):
                    pairs.extend((key, value) for key, value in zip(inner.keys, inner.values) if key is not None)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            target = node.targets[0]
            if isinstance(target.value, ast.Name) and "package_dir" in target.value.id:
                pairs.append((target.slice, node.value))
    return pairs




def _backend_template(node: ast.JoinedStr) -> str | None:
    """f"../third_party/{backend}/python/" -> "../third_party/{}/python/": a literal head ending in third_party/,
    one placeholder (the backend being built), then the literal text up to the next placeholder."""
    head = ""
    for index, part in enumerate(node.values):
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            head += part.value
            continue
        if not head.endswith("third_party/"):
            return None
        rest = node.values[index + 1] if index + 1 < len(node.values) else None
        tail = rest.value if isinstance(rest, ast.Constant) and isinstance(rest.value, str) else ""
        return head + "{}" + tail
    return None


def _constant(function: ast.FunctionDef) -> object:
    """What a function returns when its body is one `return <constant>`; ... otherwise."""
    body = function.body
    if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Constant):
        return body[0].value.value
    return ...


@dataclass(frozen=True)
class PackageRoot:
    """Where a shared setup helper's *package_dir* function sends every triton package for one backend."""
    backend: str
    root: str  # third_party/<b>/python/triton: the package `triton.x.y` is installed from root/x/y
    skipped: frozenset[str]  # words of package names its skip_package_dir leaves to trunk (`"x" in package`)
    via: str  # the setup module
    discovered: bool = False  # the setup script finds its packages (find_packages), not from a list of its own
    line: int = 0  # the line of via that builds the backend's directory

    def source_dir(self, package: str) -> str:
        """Where the backend's build takes a package (triton/x/y) from: below root, or trunk's where the helper's
        skip test leaves it to trunk."""
        if any(word in package for word in self.skipped):
            return f"{dirname(TRUNK)}/{package}"
        rest = package.partition("/")[2]
        return f"{self.root}/{rest}" if rest else self.root


def _shared_setup_modules(tree: FileTree, beside_setup: bool) -> list[str]:
    """The setup modules every backend's build shares: python/setup_tools/<module>.py, and with beside_setup the
    modules beside setup.py it imports (the 3.1 line's python/setup_helper.py)."""
    found = [path for path in tree.paths() if dirname(path) == dirname(SETUP_HELPERS) and path.endswith(".py")]
    if beside_setup:
        setup_dir = _setup_dir(tree)
        imported = {alias.name for script in SETUP_SCRIPTS if (module := _parsed(tree, script)) is not None
                    for node in walk_nodes(module) if isinstance(node, ast.Import) for alias in node.names}
        found += [path for name in sorted(imported) if "." not in name
                  and tree.exists(path := join(setup_dir, f"{name}.py")) and path not in SETUP_SCRIPTS]
    return found


def generic_package_roots(tree: FileTree, beside_setup: bool = False) -> list[PackageRoot]:
    """A shared setup module's *package_dir* function that maps packages to f"third_party/{backend}/python/...":
    it counts where setup.py calls it, for every backend whose own helper does not opt out (a skip_package_dir
    that is not the constant True leaves the backend undecided: no claim). Package names its skip_package_dir
    tests with `"x" in package` are left out. beside_setup: read the modules beside setup.py too (what a build
    installs; the copies the seed's roles read stay those of python/setup_tools/)."""
    setup_dir = _setup_dir(tree)
    called = {name for script in SETUP_SCRIPTS if (module := _parsed(tree, script)) is not None
              for node in walk_nodes(module) if isinstance(node, ast.Call) and (name := _called(node))}
    discovered = "find_packages" in called
    opted_out = {backend for backend, _, module in setup_helpers(tree) for node in module.body
                 if isinstance(node, ast.FunctionDef) and node.name == "skip_package_dir" and _constant(node) is not False}
    found = []
    for path in _shared_setup_modules(tree, beside_setup):
        module = _parsed(tree, path)
        if module is None:
            continue
        functions = [node for node in walk_nodes(module) if isinstance(node, ast.FunctionDef)]
        skipped = frozenset(node.left.value for function in functions if "skip_package_dir" in function.name
                            for node in walk_nodes(function) if isinstance(node, ast.Compare)
                            and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
                            and any(isinstance(op, ast.In) for op in node.ops))
        for function in functions:
            if "package_dir" not in function.name or function.name not in called:
                continue
            for node in walk_nodes(function):
                template = _backend_template(node) if isinstance(node, ast.JoinedStr) else None
                if template is None:
                    continue
                admits = _backend_condition(tree, module, function, node)
                found += [PackageRoot(backend, normpath(join(setup_dir, template.format(backend), "triton")), skipped,
                                      path, discovered, getattr(node, "lineno", 0))
                          for backend in third_party_groups(tree) if backend not in opted_out and admits(backend)]
    return found


def _backend_condition(tree: FileTree, module: ast.Module, function: ast.FunctionDef,
                       node: ast.AST) -> Callable[[str], bool]:
    """Which backends reach node through the `if` tests around it in function (`if flagtree_backend not in
    configs.plugin_backends:`, 3.2's helper, whose plugin backends keep trunk's packages), each read as the build
    configurations read the entry script's (facts/setupconditions); a test read nowhere decides nothing."""
    wanted: list[tuple[ast.expr, bool]] = []
    for test in walk_nodes(function):
        if isinstance(test, ast.If):
            if any(child is node for branch in test.body for child in walk_nodes(branch)):
                wanted.append((test.test, True))
            elif any(child is node for branch in test.orelse for child in walk_nodes(branch)):
                wanted.append((test.test, False))
    if not wanted:
        return lambda backend: True  # no test around it: the setup modules need not be read
    holds = backend_condition(tree, module)
    return lambda backend: all(holds(test, backend) in (None, value) for test, value in wanted)


# --- What a setup script installs: the packages it lists, and the modules a package's files import ---

def _string_items(node: ast.AST) -> list[str]:
    """The string constants of a list or tuple display (f-strings and other values are no literal package)."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [item.value for item in node.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return []


def _listed_in(function: ast.FunctionDef,
               holds: Callable[[ast.expr], bool | None] = lambda test: None) -> tuple[set[str], bool]:
    """The literal packages a function builds its list of (displays assigned, added or returned, append/extend
    arguments, values it yields), and whether it takes find_packages' packages too; holds: how an `if` test of
    the function decides (True, False, None for unknown: both branches count)."""
    found: set[str] = set()
    discovers = False
    for node in _taken_nodes(function, holds):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Return)) and node.value is not None:
            for part in walk_nodes(node.value):
                found.update(_string_items(part))
        if isinstance(node, ast.Yield) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            found.add(node.value.value)
        if isinstance(node, ast.Call) and _called(node) in ("append", "extend") and node.args:
            argument = node.args[0]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                found.add(argument.value)
            found.update(_string_items(argument))
        discovers |= isinstance(node, ast.Call) and _called(node) == "find_packages"
    return found, discovers


def _taken_nodes(root: ast.AST, holds: Callable[[ast.expr], bool | None]) -> list[ast.AST]:
    """The nodes under root outside the branches of an `if` whose test holds says are not taken."""
    found: list[ast.AST] = []
    pending = [root]
    while pending:
        node = pending.pop()
        found.append(node)
        if isinstance(node, ast.If):
            taken = holds(node.test)
            pending += [*(node.body if taken is not False else []), *(node.orelse if taken is not True else [])]
        else:
            pending += ast.iter_child_nodes(node)
    return found


_SAME_LIST = frozenset({"list", "tuple", "sorted", "set"})


@dataclass(frozen=True)
class ListedPackages:
    """The packages a setup script names itself (`triton/x/y`), and where; discovers: find_packages' packages
    are installed too (what python/triton holds as packages)."""
    packages: frozenset[str]
    script: str
    function: str  # the function whose list setup() takes ("" for a display in the call itself)
    discovers: bool = False


def listed_packages(tree: FileTree) -> ListedPackages | None:
    """The packages setup.py's setup(packages=...) lists: a display in the call, or the literals of the list the
    local function it calls there builds (upstream's get_packages; through list(...) too). None where no setup
    script says."""
    return _packages_listed(tree, None)


def backend_packages(tree: FileTree, backend: str) -> ListedPackages | None:
    """listed_packages for the build of one backend ('' for the build without one): a package the list function
    adds only under an `if` that does not hold for the backend (setupconditions) is left out; a test not read
    keeps it (FlagTree's get_packages appends triton/language/extra/xpu only `if helper.flagtree_backend ==
    "xpu"`)."""
    return _packages_listed(tree, backend)


_script_conditions: "TreeMemo[Callable[[ast.expr, str], bool | None]]" = TreeMemo()  # one reading per script


def _packages_listed(tree: FileTree, backend: str | None) -> ListedPackages | None:
    for script in SETUP_SCRIPTS:
        module = _parsed(tree, script)
        if module is None:
            continue
        functions = {node.name: node for node in module.body if isinstance(node, ast.FunctionDef)}
        for node in walk_nodes(module):
            if not isinstance(node, ast.Call) or _called(node) != "setup":
                continue
            value = next((keyword.value for keyword in node.keywords if keyword.arg == "packages"), None)
            while isinstance(value, ast.Call) and _called(value) in _SAME_LIST and len(value.args) == 1:
                value = value.args[0]
            if value is None:
                continue
            names: set[str]
            if isinstance(value, ast.Call) and (name := _called(value)) in functions:
                holds: Callable[[ast.expr], bool | None] = lambda test: None
                if backend is not None:
                    condition = _script_conditions.get(tree, script, lambda: backend_condition(tree, module))
                    holds = lambda test: condition(test, backend)  # noqa: E731
                (names, discovers), where = _listed_in(functions[name], holds), name
            else:
                names, where = set(_string_items(value)), ""
                discovers = isinstance(value, ast.Call) and _called(value) == "find_packages"
            return ListedPackages(frozenset(name.replace(".", "/") for name in names
                                            if name.replace(".", "/").split("/")[0] == "triton"), script, where,
                                  discovers)
    return None


def module_imports(text: str) -> list[tuple[str, int, str, int]] | None:
    """(module, level, imported name or "", line) of each import a module makes outside a try block (an import
    a try guards may fail): `import a.b` is ("a.b", 0, "", line); `from ..x import y` is ("x", 2, "y", line).
    None where the text does not parse."""
    from sync.facts.parsing import cpython_tree
    try:
        module = cpython_tree(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    guarded = {id(inner) for node in walk_nodes(module) if isinstance(node, ast.Try)
               for statement in node.body for inner in walk_nodes(statement)}
    found: list[tuple[str, int, str, int]] = []
    for node in walk_nodes(module):
        if id(node) in guarded:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, 0, "", node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found += [(node.module or "", node.level, alias.name, node.lineno) for alias in node.names
                      if alias.name != "*"]
            if any(alias.name == "*" for alias in node.names):
                found.append((node.module or "", node.level, "", node.lineno))
    return found


def _generic_package_copies(tree: FileTree) -> list[SpecFile]:
    """The files below each generic package root (generic_package_roots), as copies of trunk's python/triton."""
    found = []
    for mapped in generic_package_roots(tree):
        for file in _files_below(tree, mapped.root):
            rel = file[len(mapped.root) + 1:]
            if is_spec_path(file) or is_test_path(file) or any(word in dirname(rel) for word in mapped.skipped):
                continue
            found.append(SpecFile(mapped.backend, file, "triton", rel, PACKAGE_COPY, via=mapped.via))
    return found


def copy_files(tree: FileTree, backends: set[str] | None = None) -> list[SpecFile]:
    """The backends' files a setup helper installs in trunk's place: copied over python/triton at build time
    (setup-copy) or shipped as the triton package itself through package_dir (package-copy). Files of a
    spec tree are left to spec_files."""
    found: dict[str, SpecFile] = {}
    setup_dir = _setup_dir(tree)
    prefix = TRUNK + "/"
    for spec_file in _generic_package_copies(tree):
        found.setdefault(spec_file.path, spec_file)
    for helper_backend, helper, module in setup_helpers(tree):
        paths = _HelperPaths(helper, module, setup_dir)
        for node in walk_nodes(module):
            if isinstance(node, ast.Call) and _called(node) in _COPY_FUNCTIONS:
                for source, destination in _copy_pairs(tree, paths, node):
                    if destination.startswith(prefix) and not is_spec_path(source):
                        backend = third_party_owner(source) or helper_backend
                        found.setdefault(source, SpecFile(backend, source, "triton", destination[len(prefix):],
                                                          SETUP_COPY, via=helper))
        for key, value in _package_dirs(module):
            package = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
            directory = paths.value(value)
            if package is None or directory is None or not (package == "" or package.split(".")[0] == "triton"):
                continue
            root = join(directory, "triton") if package == "" else directory
            below = package.partition(".")[2].replace(".", "/")  # the package's place under python/triton
            for path in _files_below(tree, root):
                if is_spec_path(path) or is_test_path(path) or path == root:
                    continue
                backend = third_party_owner(path) or helper_backend
                rel = join(below, path[len(root) + 1:]) if below else path[len(root) + 1:]
                found.setdefault(path, SpecFile(backend, path, "triton", rel, PACKAGE_COPY, via=helper))
    return [spec_file for _, spec_file in sorted(found.items())
            if not backends or spec_file.backend in backends]


def renamed(spec_file: SpecFile, counterpart: str) -> SpecFile:
    """The same backend file seen as a copy of another trunk file (a copy under another name)."""
    return replace(spec_file, counterpart=counterpart)


def copy_candidate(backend: str, path: str) -> SpecFile:
    """A backend file outside any spec tree, to be measured against trunk as a possible copy."""
    return SpecFile(backend, path, "copy", path, RENAMED_COPY)


# --- Who owns a trunk file besides its hooks: gates, and the repository's own map (issue 34) ---
# Groups a path belongs to unless pyproject.toml says otherwise: CI is its own group, not FlagTree core.
DEFAULT_OWNERS: dict[str, tuple[str, ...]] = {"ci": (".github/workflows/*",)}
_GATE_LINE = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b(.*)$", re.M)
_GATE_MACRO = re.compile(r"\b__([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*)__\b")
# The names a FLAGTREE_BACKEND test compares with, and only those (the line may quote other names, e.g. an __all__):
# == / != / STREQUAL "x" either way round, `in ("x", "y")`, CMake's MATCHES "^(x|y)$".
_BACKEND = r"\$?\{?\bFLAGTREE_BACKEND\b\}?"
_COMPARED = re.compile(rf"""{_BACKEND}\s*(?:==|!=|STREQUAL)\s*["']([A-Za-z][\w-]*)["']|"""
                       rf"""["']([A-Za-z][\w-]*)["']\s*(?:==|!=)\s*{_BACKEND}""")
_IN_SET = re.compile(rf"{_BACKEND}\s+(?:not\s+)?in\s*[(\[{{]([^)\]}}]*)[)\]}}]")
_MATCHES = re.compile(rf'{_BACKEND}\s+MATCHES\s+"([^"]*)"')
_QUOTED_NAME = re.compile(r"""["']([A-Za-z][\w-]*)["']""")
_WORD = re.compile(r"[A-Za-z][\w-]*")


# [tool.flagtree-sync] of the repository's pyproject.toml: every key and value declared here; a malformed one is a
# TomlFileError (exit 2) naming the file, the key and what was expected, never an entry dropped in silence.
_SPEC_ROOT = Text(pattern=re.compile(r"(?!/)(?!\.\.)(?:(?!\{backend\}).)*\{backend\}(?:(?!\{backend\}).)*", re.S),
                  meaning='a path below the repository root holding "{backend}" once, e.g. "x/{backend}/py"')
TOOL_SCHEMA = Table(fields={"spec_roots": Strings(required=False, item=_SPEC_ROOT),
                            "owners": Mapping(Strings(item=Text(nonempty=False)), required=False),
                            "commit_tags": Mapping(Text(), required=False)})


def tool_config(tree: FileTree) -> dict[str, Any]:
    """The repository's [tool.flagtree-sync] table of pyproject.toml, as TOOL_SCHEMA declares it; {} where the
    file or the table is absent."""
    text = read_text(tree, CONFIG_FILE)
    if not text or "flagtree-sync" not in text:
        return {}
    return load_table(text, f"{CONFIG_FILE} ({tree.label})", ("tool", "flagtree-sync"), TOOL_SCHEMA)


def configured_owners(tree: FileTree) -> dict[str, tuple[str, ...]]:
    """group -> path globs: DEFAULT_OWNERS, then [tool.flagtree-sync] owners = {group = ["glob", ...]} (a group
    named there replaces its default)."""
    owners = dict(DEFAULT_OWNERS)
    for group, globs in tool_config(tree).get("owners", {}).items():
        owners[group] = tuple(globs)
    return owners


def commit_tag_owners(tree: FileTree) -> dict[str, str]:
    """[tool.flagtree-sync] commit_tags = {"[TLE]" = "tle"}: a commit whose subject carries the tag is that
    group's too."""
    return dict(tool_config(tree).get("commit_tags", {}))


def gate_groups(text: str, groups: set[str] | frozenset[str]) -> set[str]:
    """Groups whose gate the FlagTree side of a file holds: a preprocessor conditional on __<GROUP>__ (the feature
    or backend macro, e.g. #ifdef __TLE__), or a FLAGTREE_BACKEND test naming the group (Python, CMake)."""
    found = set()
    for condition in _GATE_LINE.findall(text):
        found |= {name.lower() for name in _GATE_MACRO.findall(condition)}
    if "FLAGTREE_BACKEND" in text:
        found |= {name for pair in _COMPARED.findall(text) for name in pair if name}
        found |= {name for names in _IN_SET.findall(text) for name in _QUOTED_NAME.findall(names)}
        found |= {name for pattern in _MATCHES.findall(text) for name in _WORD.findall(pattern)}
    return found & set(groups)


_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")


def enclosing_gate_groups(text: str, side: list[str], groups: set[str] | frozenset[str]) -> set[str]:
    """Groups whose gate encloses or sits in the given lines of a file (a conflict's FlagTree side): the
    preprocessor conditionals open where those lines stand in `text`, and the gates within the lines themselves.
    The lines are found as one contiguous block; where they are not found, only the gates within them count."""
    found = gate_groups("\n".join(side), groups)
    wanted = [line.strip() for line in side]
    lines = text.splitlines()
    if not wanted or not any(wanted):
        return found
    stripped = [line.strip() for line in lines]
    stack: list[str] = []  # the condition text of each open #if
    for index, line in enumerate(lines):
        if stripped[index] == wanted[0] and stripped[index:index + len(wanted)] == wanted:
            found |= gate_groups("\n".join(f"#if {condition}" for condition in stack), groups)
            break
        directive = _DIRECTIVE.match(line)
        if directive is None:
            continue
        kind, condition = directive.groups()
        if kind in ("if", "ifdef", "ifndef"):
            stack.append(condition)
        elif kind == "elif" and stack:
            stack[-1] = condition
        elif kind == "endif" and stack:
            stack.pop()
    return found
