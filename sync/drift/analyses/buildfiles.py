"""Build files: FlagTree-added CMake entries whose referents upstream removed, renamed or moved, and
FlagTree files added to a directory whose CMakeLists.txt upstream restructured.

An entry is a word of a command's argument (facts/cmake.py) that starts on a FlagTree-added line of a
CMakeLists.txt or *.cmake file. A word that names a
path (relative to the CMake file's directory or, after ${...SOURCE_DIR}, to the root) and existed at the
old tag but not at the new one is reported (build-file); so is a word that is a target some CMake file
defines at the old tag (add_*library, add_public_tablegen_target, add_mlir_dialect's MLIR<X>IncGen) and
none defines at the new tag. A backend's CMake file (third_party/<b>/) is read for trunk's files only: words
from the root, and objects of a build of the repository (`${bin}/lib/X/CMakeFiles/T.dir/Y.cpp.o`, where the
backend configures ${bin} with `cmake -S` of the root; facts/cmake.configured_sources).
Directories where FlagTree adds code files and whose CMakeLists.txt upstream
changed the sources, targets or subdirectories of get a low-confidence note (build-restructured). Targets
FlagTree builds differently whose sources upstream made need undeclared TableGen output are builddeps.py's own analysis."""
from __future__ import annotations

import re
from itertools import combinations
from posixpath import dirname, join, normpath

from sync.git import GitTree
from sync.model import Finding
from sync.facts.trees import read_text
from sync.drift.context import DriftContext
from sync.facts.cmake import ROOT_VARIABLES, Rule, commands, configured_sources, generated_rules, in_conflict
from sync.facts.delta import CPP, PY, TD, backend_of, fork_added_lines, is_cmake, text_diff
from sync.facts.filekinds import OBJECT_SUFFIXES
from sync.facts.layout import backend_dir, is_third_party, third_party_owner
from sync.facts.upstreamlog import deleting_commits, one_per_change

_WORD = re.compile(r"[\w${}./+-]+")  # the words of an argument: `$<TARGET_OBJECTS:obj>` names obj
_TARGET_NAME = re.compile(r"[\w-]+\Z")
_DEFINERS = frozenset({"add_public_tablegen_target", "add_executable", "add_custom_target", "add_mlir_dialect"})
_ROOT_VARS = re.compile(rf"^\$\{{(?:{'|'.join(ROOT_VARIABLES)})\}}/")
_HERE_VARS = re.compile(r"^\$\{CMAKE_CURRENT_SOURCE_DIR\}/")
_STRUCTURE = frozenset({"add_subdirectory", "add_public_tablegen_target", "mlir_tablegen"})


def defined_targets(tree: GitTree, under: str | None = None) -> set[str]:
    """Targets the CMake files of a tree define: an upstream tag's every file (its own third_party/amd, nvidia
    and proton included), or the files below under alone."""
    targets: set[str] = set()
    for path in tree.paths():
        if is_cmake(path) and (path.startswith(under) if under is not None else True):
            for command in commands(read_text(tree, path) or ""):
                name = command.name
                if not (name in _DEFINERS or _library(name)) or not command.args \
                        or command.args[0].quoted or not _TARGET_NAME.match(command.args[0].text):
                    continue
                target = command.args[0].text
                targets.add(f"MLIR{target}IncGen" if name == "add_mlir_dialect" else target)
    return targets


def _object_in_build(word: str) -> tuple[str, str] | None:
    """The build tree (its variable, as spelled) and the source below that tree's source directory of an object
    file named by its path (`${bin}/lib/X/CMakeFiles/T.dir/Y.cpp.o` -> ${bin}, lib/X/Y.cpp)."""
    head, found, tail = word.partition("/CMakeFiles/")
    target_dir, slash, obj = tail.partition("/")
    if not found or not slash or not target_dir.endswith(".dir") or not obj.endswith(OBJECT_SUFFIXES) \
            or "}/" not in head:
        return None
    cut = head.rfind("}/") + 1
    below = head[cut + 1:]  # below the variable that names the build tree
    if "$" in below or "$" in obj or not below:
        return None
    return head[:cut], normpath(join(below, obj.rsplit(".", 1)[0]))


def _object_source(word: str, builds: dict[str, str | None]) -> str | None:
    """The repository source of an object file of a build tree that the backend's CMake configures from the
    repository's root (`cmake -S ${CMAKE_SOURCE_DIR} -B ${bin}`): a backend that links trunk's objects by hand
    (enflame's triton_gcu*.cmake on the 3.5.x -> 3.7 move) names trunk's sources that way. A build of another
    source tree (enflame's own copy of Triton on triton_v3.3.x), or one whose source is not known, names no file
    of trunk's."""
    found = _object_in_build(word)
    if found is None or builds.get(found[0]) != "":
        return None
    return found[1]


def _path_of(word: str, cmake_dir: str, builds: dict[str, str | None]) -> str | None:
    if _object_in_build(word) is not None:
        return _object_source(word, builds)
    if "$" in word and not (_ROOT_VARS.match(word) or _HERE_VARS.match(word)):
        return None
    if _ROOT_VARS.match(word):
        return normpath(_ROOT_VARS.sub("", word))
    word = _HERE_VARS.sub("", word)
    if "/" not in word and "." not in word:
        return None
    return normpath(join(cmake_dir, word)) if cmake_dir else normpath(word)


def _exists(tree: GitTree, path: str) -> bool:
    return tree.exists(path) or any(p.startswith(path.rstrip("/") + "/") for p in tree.paths())


def _library(name: str) -> bool:
    return name.startswith("add_") and name.endswith("library")


def _structure(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """The commands that lay out a CMake file's build: its subdirectories, libraries and TableGen steps."""
    return sorted((command.name, tuple(argument.text for argument in command.args)) for command in commands(text)
                  if command.name in _STRUCTURE or _library(command.name) or command.name.startswith("add_mlir_")
                  or command.name == "set" and command.args and command.args[0].text == "LLVM_TARGET_DEFINITIONS")


def _words_by_line(text: str) -> dict[int, list[str]]:
    """Line -> the words of the arguments that start on it, in order. CMake never splits a quoted argument:
    it is one word, a name or a path only where it holds no blank (`option(X "Build the Proton profiler")`
    names no target Proton)."""
    found: dict[int, list[str]] = {}
    for command in commands(text):
        for argument in command.args:
            if not argument.quoted:
                found.setdefault(argument.line, []).extend(_WORD.findall(argument.text))
            elif _WORD.fullmatch(argument.text):
                found.setdefault(argument.line, []).append(argument.text)
    return found


def build_file_findings(context: DriftContext) -> list[Finding]:
    """One finding per referent and backend, with every FlagTree line that names it (a backend that links
    trunk's objects by hand names each in two files), and the upstream commits that deleted a file."""
    old, new, fork = context.upstream_old, context.upstream_new, context.fork
    added = fork_added_lines(old, fork)
    sited: list[tuple[tuple[str, ...], list[str], Finding]] = []
    old_targets: set[str] | None = None
    new_targets: set[str] = set()
    own: dict[str | None, set[str]] = {}

    trees: dict[str | None, dict[str, str | None]] = {}

    def build_trees(backend: str | None) -> dict[str, str | None]:
        """The build trees a backend's CMake files configure by hand, and their source directories."""
        if backend not in trees:
            under = backend_dir(backend) + "/" if backend else None
            trees[backend] = configured_sources({path: read_text(fork, path) or "" for path in fork.paths()
                                                 if under and path.startswith(under) and is_cmake(path)})
        return trees[backend]

    def own_targets(backend: str | None) -> set[str]:
        """What a backend's own CMake files define: a name of its own, whatever trunk calls its targets."""
        if backend not in own:
            own[backend] = defined_targets(fork, backend_dir(backend) + "/") if backend else set()
        return own[backend]
    for path, lines in sorted(added.items()):
        if not is_cmake(path):
            continue
        # A backend's CMake file names its own files and targets, and trunk's files only from the root (or
        # through the objects of a build of the root)
        backend = is_third_party(path)
        whole = read_text(fork, path) or ""
        source, words = whole.splitlines(), _words_by_line(whole)
        if old_targets is None:
            old_targets, new_targets = defined_targets(old), defined_targets(new)
        owner = third_party_owner(path) if backend else None
        builds = build_trees(owner)
        for line in sorted(lines):
            text = source[line - 1].split("#", 1)[0] if line <= len(source) else ""
            for word in words.get(line, []):
                why = None
                if backend and not (_ROOT_VARS.match(word) or _object_source(word, builds)) \
                        and not (word in old_targets and word not in new_targets
                                 and word not in own_targets(owner)):
                    continue  # a backend names its own files and targets, and trunk's targets by their names
                target_path = _path_of(word, dirname(path), builds)
                if target_path and _exists(old, target_path) and not _exists(new, target_path):
                    moved = context.renames.get(target_path)
                    why = f"{target_path} was {'renamed to ' + moved if moved else 'removed'} upstream"
                elif word in old_targets and word not in new_targets:
                    why = f"target {word} is defined by no CMake file at the new tag"
                if why:
                    removed_path = target_path if target_path and _exists(old, target_path) else None
                    key = ("path", removed_path) if removed_path else ("target", word)
                    sited.append((key, [f"{path}:{line}"], Finding(
                        "build-file", path, f"FlagTree's CMake entry {word!r}: {why} (will not build as is)",
                        line=line, backend=backend_of(context.owners.owners, path), related_path=target_path,
                        details={"entry": word, "flagtree_line": text.strip(), "declaration": key[1]})))
    rng = context.range
    deleting = (lambda key: deleting_commits(context.repo, rng.old.oid, rng.onto.oid, key[1]) if key[0] == "path"
                else ([], 0)) if rng is not None else None
    return one_per_change(sited, deleting) + _restructured(context, added)


def _restructured(context: DriftContext, added: dict[str, frozenset[int]]) -> list[Finding]:
    old, new = context.upstream_old, context.upstream_new
    new_files: dict[str, list[str]] = {}
    for path in added:
        if path.endswith(PY + CPP + TD) and not old.exists(path) and not is_third_party(path):
            new_files.setdefault(dirname(path), []).append(path)
    findings = []
    for directory, files in sorted(new_files.items()):
        cmake = join(directory, "CMakeLists.txt") if directory else "CMakeLists.txt"
        before, after = read_text(old, cmake), read_text(new, cmake)
        if before is None or after is None or _structure(before) == _structure(after):
            continue
        findings.append(Finding(
            "build-restructured", cmake, f"FlagTree adds {len(files)} file(s) here ({', '.join(sorted(files)[:3])}); "
            "upstream restructured this CMakeLists.txt between the tags",
            backend=backend_of(context.owners.owners, files[0]), related_path=files[0],
            diff=text_diff(before, after, cmake, cmake), details={"flagtree_files": sorted(files)}))
    return findings


def output_clash_findings(context: DriftContext) -> list[Finding]:
    """generated-output-clash: the upgraded branch's CMake file adds two custom rules for one output of its
    directory (mlir_tablegen, add_custom_command OUTPUT) in branches of no `if` that keeps them apart, one
    from FlagTree's version of the file and one from upstream's new one: CMake stops at configure ("already has
    a custom rule") in every build that runs both (3.2 -> 3.4: FlagTree generates OpInterfaces.h.inc from a
    backend's own .td where one exists, and 3.4 generates it from its new TritonOpInterfaces.td). Lines are the
    branch's; a file in conflict is the replay's to report."""
    branch = context.target
    if branch is None:
        return []
    findings = []
    for path in sorted(fork_added_lines(context.upstream_old, context.fork)):
        text = read_text(branch, path) if is_cmake(path) else None
        if text is None or in_conflict(text):
            continue
        ours = {rule.output for rule in generated_rules(read_text(context.fork, path) or "")}
        theirs = generated_rules(read_text(context.upstream_new, path) or "")
        by_output: dict[str, list[Rule]] = {}
        for rule in generated_rules(text):
            if rule.output in ours and any(other.output == rule.output for other in theirs):
                by_output.setdefault(rule.output, []).append(rule)
        clashes = []  # (output, the first pair that runs together, every rule of the output)
        for output, rules in sorted(by_output.items()):
            pairs = [(a, b) for a, b in combinations(rules, 2) if not a.excludes(b)]
            upstreams = [rule for rule in theirs if rule.output == output]
            if pairs and not any(not a.excludes(b) for a, b in combinations(upstreams, 2)):
                clashes.append((output, pairs[0], rules))  # (upstream's own file having both is not FlagTree's)
        if not clashes:
            continue
        outputs = [output for output, _, _ in clashes]
        shown = ", ".join(f"{output} (lines {first.line} and {second.line})" for output, (first, second), _ in clashes)
        findings.append(Finding(
            "generated-output-clash", path,
            f"two rules of {path} each generate {shown}: one from FlagTree's version of the file, one from "
            "upstream's new one, and no `if` keeps them apart: CMake stops at configure in every build that runs "
            "both (a second custom rule for one output)",
            line=min(second.line for _, (_, second), _ in clashes), backend=backend_of(context.owners.owners, path),
            details={"outputs": outputs, "declaration": outputs[0],
                     "sites": sorted({f"{path}:{rule.line}" for _, _, rules in clashes for rule in rules})}))
    return findings
