"""Whether CMake compiles a file: a directory its parent's CMakeLists.txt names only in a commented-out
`add_subdirectory(...)` is left out of the build, with every file under it (sunrise's spec/lib/Conversion on the
3.4.x -> 3.5.1 move: `#add_subdirectory(TritonGPUToLLVM)`). Anything else counts as built: a C++ use claims no
build break only where the tree says plainly that the file is not compiled.

Below that, one build configuration followed through the root CMakeLists.txt (`configured`): which directories
it adds, which targets they may define, which links they certainly make. CMake is read by facts/cmake.py
(tree-sitter-cmake, one parse per blob); `file_commands` leaves out a file in conflict."""
from __future__ import annotations

import re
from dataclasses import dataclass
from posixpath import dirname, normpath
from typing import Any, Callable, Iterator, Mapping, Sequence

from sync.facts.cmake import ROOT_VARIABLES, Argument, Command, commands, commented, in_conflict, listing
from sync.facts.filekinds import is_cmake
from sync.git.readlog import TreeMemo
from sync.facts.trees import FileTree, read_text

__all__ = ["Argument", "Command", "cmake_directory", "commands", "configured", "defined_anywhere", "file_commands",
           "named_subdirectories", "unbuilt"]


def unbuilt(tree: FileTree, path: str) -> bool:
    """Whether a directory above path is one its parent's CMakeLists.txt adds only in comments, or the nearest
    CMakeLists.txt that names the file names it only in a commented-out target (tsingmicro's
    `# add_llvm_executable(tsingmicro-tensor-layout tsingmicro-tensor-layout.cpp ...)` on the 3.5.x -> 3.7 move)."""
    parts = path.split("/")[:-1]
    return any(_left_out(tree, "/".join(parts[:depth - 1]), parts[depth - 1]) for depth in range(1, len(parts) + 1)) \
        or _target_commented_out(tree, path)


def _target_commented_out(tree: FileTree, path: str) -> bool:
    """The nearest CMakeLists.txt above path that spells the file (its path from there) spells it only in
    comments, each inside a commented-out add_*( call; a file list it may take from a glob or a variable counts as
    built."""
    parts = path.split("/")
    for depth in range(len(parts) - 1, -1, -1):
        directory, rest = "/".join(parts[:depth]), "/".join(parts[depth:])
        text = read_text(tree, f"{directory}/CMakeLists.txt" if directory else "CMakeLists.txt")
        if not text or rest not in text:  # cheap: most CMake files never spell the file at all
            continue
        mention = re.compile(rf"(?<![\w./-]){re.escape(rest)}(?![\w.-])")  # the path inside a word
        read = listing(text)
        named = any(mention.search(argument.text) for command in read.commands for argument in command.args)
        remarks = [comment for comment in read.comments if mention.search(comment.text)]
        if not named and not remarks:
            continue
        if named or any(command.name == "file" and command.args and command.args[0].text.upper().startswith("GLOB")
                        for command in read.commands):
            return False  # an active command names it, or may list it
        targets = [command for command in commented(text) if command.name.startswith("add_")
                   and any(mention.search(argument.text) for argument in command.args)]
        return all(any(target.line <= comment.end_line and comment.line <= target.end_line for target in targets)
                   for comment in remarks)  # a comment outside a commented-out target is a remark: built
    return False


_memo: TreeMemo[frozenset[str]] = TreeMemo()  # per tree and directory, while the tree lives


def _left_out(tree: FileTree, parent: str, name: str) -> bool:
    return name in _memo.get(tree, parent, lambda: _commented_only(tree, parent))


def _commented_only(tree: FileTree, directory: str) -> frozenset[str]:
    """The subdirectories directory/CMakeLists.txt adds only in commented-out commands."""
    text = read_text(tree, f"{directory}/CMakeLists.txt" if directory else "CMakeLists.txt")
    if not text:
        return frozenset()
    active, left_out = _added(commands(text)), _added(commented(text))
    return frozenset(left_out - active - {""})


def _added(found: Sequence[Command]) -> set[str]:
    """The first directory of each add_subdirectory's argument; '' for a deeper one: add_subdirectory(a/b) adds
    a's subtree b, not all of a."""
    added = set()
    for command in found:
        if command.name == "add_subdirectory" and command.args:
            argument = command.args[0].text.strip("/")
            added.add(argument if "/" not in argument else "")
    return added


# --- What one build configuration defines and links ---------------------------------------------------------
#
# A configuration is what a build passes to CMake (cache variables `-DX=V`, environment variables); configured()
# follows the root CMakeLists.txt under it: every `if` decided where its condition can be (three-valued: a
# condition on something the tree does not say, a platform or a found package, is unknown), `foreach` over known
# lists, `add_subdirectory` and `include` of the tree's own files. It answers which directories the build adds,
# which targets they may define (under a true or an unknown condition) and which links they surely make (under
# true conditions only): a link found missing is one the build certainly makes, a definition counted is one the
# build may make, so an unknown condition never makes a finding.

_SOURCE = "/@source@"  # the root source directory in expanded paths (EXISTS reads the tree below it)
_TARGET_COMMANDS_NOT = frozenset({
    "add_subdirectory", "add_definitions", "add_compile_definitions", "add_compile_options", "add_link_options",
    "add_dependencies", "add_custom_command", "add_test", "add_mlir_doc"})
_LINK_SECTIONS = frozenset({"DEPENDS", "LINK_LIBS", "PUBLIC", "PRIVATE", "INTERFACE"})
_OTHER_SECTIONS = frozenset({"LINK_COMPONENTS", "ADDITIONAL_HEADER_DIRS", "SOURCES", "OUTPUTS", "COMMAND",
                             "ARGS", "WORKING_DIRECTORY", "COMMENT", "BYPRODUCTS", "ENTITLEMENTS", "BUNDLE_PATH"})
_TRUE = frozenset({"1", "ON", "YES", "TRUE", "Y"})
_FALSE = frozenset({"0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND", ""})
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_REFERENCE = re.compile(r"\$\{([A-Za-z0-9_./+-]+)\}|\$ENV\{([A-Za-z0-9_]+)\}")


def file_commands(tree: FileTree, path: str) -> tuple[Command, ...] | None:
    """The commands of a CMake file of the tree, read once per blob; None where the tree has no such file, or
    the file holds a conflict's markers (its two sides are no build)."""
    text = read_text(tree, path)
    if text is None or in_conflict(text):
        return None
    return commands(text)


@dataclass(frozen=True)
class Link:
    """A target a CMake command makes another depend on: `owner` links or depends on `name`."""
    path: str
    line: int
    owner: str
    name: str


@dataclass(frozen=True)
class Configured:
    """What a build configuration makes of a tree."""
    directories: frozenset[str]  # added for certain ('' is the root)
    defined: frozenset[str]  # targets defined under true or unknown conditions
    links: tuple[Link, ...]  # made under true conditions, in directories added for certain
    unread: tuple[str, ...]  # files the build certainly reads that the tree lacks (a submodule) or holds in conflict
    reached: frozenset[str] = frozenset()  # directories added under true or unknown conditions
    elsewhere: bool = False  # an add_subdirectory whose directory is not known (a plugin directory from outside)


def defined_anywhere(tree: FileTree) -> dict[str, str]:
    """Every target a CMake file of the tree may define, whatever the configuration -> the first file (in path
    order) that defines it."""
    names: dict[str, str] = {}
    for path in sorted(tree.paths()):
        if is_cmake(path):
            for command in file_commands(tree, path) or ():
                for name in _defines(command, lambda argument: [argument.text] if "$" not in argument.text else []):
                    names.setdefault(name, path)
    return names


def _defines(command: Command, expand: Callable[[Argument], list[str] | None]) -> list[str]:
    """The targets a command defines: the first argument of add_<x>(...) commands (libraries, executables, custom
    and TableGen targets, FlagTree's and Triton's own add_<x>_library wrappers), and MLIR<name>IncGen of
    add_mlir_dialect / add_mlir_interface."""
    if not command.name.startswith("add_") or command.name in _TARGET_COMMANDS_NOT or not command.args:
        return []
    names = expand(command.args[0]) or []
    if command.name in ("add_mlir_dialect", "add_mlir_interface"):
        return [*names, *(f"MLIR{name}IncGen" for name in names)]
    return names[:1]


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()  # a variable's value the tree does not decide
Tri = bool | None  # three-valued: None is unknown


def _and(a: Tri, b: Tri) -> Tri:
    return False if a is False or b is False else None if a is None or b is None else True


def _or(a: Tri, b: Tri) -> Tri:
    return True if a is True or b is True else None if a is None or b is None else False


def _not(a: Tri) -> Tri:
    return None if a is None else not a


class _Evaluation:
    def __init__(self, tree: FileTree, cache: Mapping[str, str], env: Mapping[str, str]) -> None:
        self.tree, self.cache, self.env = tree, dict(cache), dict(env)
        self.directories: set[str] = set()
        self.visited: set[str] = set()
        self.defined: set[str] = set()
        self.links: list[Link] = []
        self.unread: list[str] = []
        self.elsewhere = False

    # values
    def lookup(self, scope: dict[str, Any], name: str) -> Any:
        if name in scope:
            return scope[name]
        if name in self.cache:
            return self.cache[name]
        return UNKNOWN

    def expand_text(self, scope: dict[str, Any], text: str) -> str | None:
        unknown = False
        def replace(match: re.Match[str]) -> str:
            nonlocal unknown
            value = self.lookup(scope, match[1]) if match[1] else self.env.get(match[2], UNKNOWN)
            if value is UNKNOWN:
                unknown = True
                return ""
            return str(value)
        for _ in range(4):  # nested references: ${a_${b}}
            expanded = _REFERENCE.sub(replace, text)
            if expanded == text:
                break
            text = expanded
        return None if unknown or "$<" in text or "${" in text else text

    def expand(self, scope: dict[str, Any], argument: Argument) -> list[str] | None:
        """An argument's words: a quoted one is one word, an unquoted one a list split at ';'."""
        text = self.expand_text(scope, argument.text)
        if text is None:
            return None
        return [text] if argument.quoted else [word for word in text.split(";") if word]

    def expanded(self, scope: dict[str, Any], args: Sequence[Argument]) -> list[str] | None:
        out: list[str] = []
        for argument in args:
            words = self.expand(scope, argument)
            if words is None:
                return None
            out.extend(words)
        return out

    # conditions
    def truth(self, scope: dict[str, Any], word: str, quoted: bool) -> Tri:
        upper = word.upper()
        if upper in _TRUE or re.fullmatch(r"-?[0-9]*[1-9][0-9]*(\.[0-9]+)?", word):
            return True
        if upper in _FALSE or upper.endswith("-NOTFOUND"):
            return False
        if quoted or not _IDENTIFIER.match(word):
            return False
        value = self.lookup(scope, word)
        if value is UNKNOWN:
            return None
        upper = str(value).upper()
        return not (upper in _FALSE or upper.endswith("-NOTFOUND"))

    def value_of(self, scope: dict[str, Any], word: str, quoted: bool) -> str | None:
        if quoted or not _IDENTIFIER.match(word):
            return word
        value = self.lookup(scope, word)
        if value is UNKNOWN:
            return None if not (word.upper() in _TRUE or word.upper() in _FALSE) else word
        return str(value)

    def condition(self, scope: dict[str, Any], args: Sequence[Argument]) -> Tri:
        words: list[tuple[str, bool]] = []
        for argument in args:
            text = self.expand_text(scope, argument.text)
            if text is None:
                words.append(("\0unknown", True))
            else:
                words.append((text, argument.quoted))
        try:
            value, rest = self._or(scope, words)
        except (IndexError, re.error):
            return None
        return value if not rest else None

    def _or(self, scope: dict[str, Any], words: list[tuple[str, bool]]) -> tuple[Tri, list[tuple[str, bool]]]:
        value, words = self._and(scope, words)
        while words and words[0] == ("OR", False):
            right, words = self._and(scope, words[1:])
            value = _or(value, right)
        return value, words

    def _and(self, scope: dict[str, Any], words: list[tuple[str, bool]]) -> tuple[Tri, list[tuple[str, bool]]]:
        value, words = self._unary(scope, words)
        while words and words[0] == ("AND", False):
            right, words = self._unary(scope, words[1:])
            value = _and(value, right)
        return value, words

    def _unary(self, scope: dict[str, Any], words: list[tuple[str, bool]]) -> tuple[Tri, list[tuple[str, bool]]]:
        word, quoted = words[0]
        if (word, quoted) == ("NOT", False):
            value, rest = self._unary(scope, words[1:])
            return _not(value), rest
        if (word, quoted) == ("(", False):  # the reader gives a nested parenthesis as an argument of its own
            value, rest = self._or(scope, words[1:])
            if rest and rest[0] == (")", False):
                return value, rest[1:]
            raise IndexError
        if not quoted and word in ("EXISTS", "DEFINED", "COMMAND", "TARGET", "POLICY", "IS_DIRECTORY", "TEST",
                                   "IS_ABSOLUTE", "IS_SYMLINK"):
            subject, subject_quoted = words[1]
            return self._predicate(scope, word, subject, subject_quoted), words[2:]
        if len(words) >= 3 and not words[1][1] and words[1][0] in _BINARY:
            return self._binary(scope, words[0], words[1][0], words[2]), words[3:]
        if word == "\0unknown":
            return None, words[1:]
        return self.truth(scope, word, quoted), words[1:]

    def _predicate(self, scope: dict[str, Any], word: str, subject: str, quoted: bool) -> Tri:
        if subject == "\0unknown":
            return None
        if word == "DEFINED":
            name = subject[4:-1] if subject.startswith("ENV{") else subject
            if subject.startswith("ENV{"):
                return True if name in self.env else None
            return True if name in scope or name in self.cache else None
        if word in ("EXISTS", "IS_DIRECTORY") and subject.startswith(_SOURCE):
            path = subject[len(_SOURCE):].strip("/")
            directory = path + "/"
            return (not path) or self.tree.exists(path) or any(p.startswith(directory) for p in self.tree.paths())
        return None

    def _binary(self, scope: dict[str, Any], left: tuple[str, bool], operator: str, right: tuple[str, bool]) -> Tri:
        if "\0unknown" in (left[0], right[0]):
            return None
        if operator == "IN_LIST":
            listed = self.lookup(scope, right[0])
            value = self.value_of(scope, *left)
            if listed is UNKNOWN or value is None:
                return None
            return value in str(listed).split(";")
        a, b = self.value_of(scope, *left), self.value_of(scope, *right) if operator != "MATCHES" else right[0]
        if a is None or b is None:
            return None
        if operator == "STREQUAL":
            return a == b
        if operator == "MATCHES":
            return re.search(b, a) is not None
        return None

    # commands
    def run_directory(self, directory: str, scope: dict[str, Any], active: Tri) -> None:
        if directory in self.visited:
            return
        path = f"{directory}/CMakeLists.txt" if directory else "CMakeLists.txt"
        body = file_commands(self.tree, path)
        if body is None:
            if active is True:
                self.unread.append(path)
            return
        self.visited.add(directory)
        if active is True:
            self.directories.add(directory)
        source = f"{_SOURCE}/{directory}" if directory else _SOURCE
        scope = {**scope, "CMAKE_CURRENT_SOURCE_DIR": source, "CMAKE_CURRENT_LIST_DIR": source}
        self.run(body, 0, len(body), path, directory, scope, active)

    def run(self, body: Sequence[Command], start: int, end: int, path: str, directory: str, scope: dict[str, Any],
            active: Tri) -> None:
        index = start
        while index < end:
            command = body[index]
            name = command.name
            if name in ("function", "macro", "while", "foreach", "if"):
                close = _matching(body, index, end)
                if name == "if":
                    self.run_if(body, index, close, path, directory, scope, active)
                elif name == "foreach":
                    self.run_foreach(body, index, close, path, directory, scope, active)
                elif name == "while":
                    self.run(body, index + 1, close, path, directory, scope, _and(active, None))
                index = close + 1
                continue
            if active is not False:
                self.step(command, path, directory, scope, active)
            index += 1

    def run_if(self, body: Sequence[Command], start: int, close: int, path: str, directory: str,
               scope: dict[str, Any], active: Tri) -> None:
        branches = [start] + [i for i in _branches(body, start, close)] + [close]
        done: Tri = False
        for here, after in zip(branches, branches[1:]):
            command = body[here]
            taken = True if command.name == "else" else self.condition(scope, command.args)
            branch = _and(_not(done), taken)
            if branch is not False:
                self.run(body, here + 1, after, path, directory, scope, _and(active, branch))
            done = _or(done, taken)

    def run_foreach(self, body: Sequence[Command], start: int, close: int, path: str, directory: str,
                    scope: dict[str, Any], active: Tri) -> None:
        args = body[start].args
        if not args:
            return
        variable = args[0].text
        rest = list(args[1:])
        items: list[str] | None
        if rest and not rest[0].quoted and rest[0].text == "IN":
            rest = rest[1:]
            items, mode = [], "ITEMS"
            for argument in rest:
                if not argument.quoted and argument.text in ("LISTS", "ITEMS"):
                    mode = argument.text
                    continue
                if mode == "LISTS":
                    value = self.lookup(scope, argument.text)
                    if value is UNKNOWN:
                        items = None
                        break
                    items.extend(word for word in str(value).split(";") if word)
                else:
                    words = self.expand(scope, argument)
                    if words is None:
                        items = None
                        break
                    items.extend(words)
        else:
            items = self.expanded(scope, rest)
        if items is None:
            scope[variable] = UNKNOWN
            self.run(body, start + 1, close, path, directory, scope, _and(active, None))
            return
        for item in items:
            scope[variable] = item
            self.run(body, start + 1, close, path, directory, scope, active)

    def step(self, command: Command, path: str, directory: str, scope: dict[str, Any], active: Tri) -> None:
        name, args = command.name, command.args
        if name == "set" and args:
            self.set(scope, args, active)
        elif name == "option" and args:
            if args[0].text not in self.cache and args[0].text not in scope:
                value = args[2].text if len(args) > 2 else "OFF"
                scope[args[0].text] = value if active is True else UNKNOWN
        elif name == "list" and len(args) >= 2:
            self.list_command(scope, args, active)
        elif name == "add_subdirectory" and args:
            words = self.expand(scope, args[0])
            if words and len(words) == 1:
                self.run_directory(_join(directory, words[0]), dict(scope), active)
            else:
                self.elsewhere = True
        elif name == "include" and args:
            self.include(scope, args[0], path, directory, active)
        else:
            self.record(command, path, scope, active)
            if name in _SETTERS:  # string(...), file(...), find_package(...): what they set is not read here
                for argument in args:
                    if not argument.quoted and _IDENTIFIER.match(argument.text):
                        scope[argument.text] = UNKNOWN

    def set(self, scope: dict[str, Any], args: Sequence[Argument], active: Tri) -> None:
        variable = self.expand_text(scope, args[0].text)
        if variable is None or variable.startswith("ENV{"):
            if variable and variable.startswith("ENV{"):
                value = self.expanded(scope, args[1:])
                self.env[variable[4:-1]] = ";".join(value) if value is not None and active is True else UNKNOWN
            return
        values = list(args[1:])
        if any(not a.quoted and a.text == "CACHE" for a in values):
            if variable in self.cache or variable in scope:
                return  # a cache entry the build passed, or set before, wins
            values = values[:[a.text for a in values].index("CACHE")]
        if values and not values[-1].quoted and values[-1].text == "PARENT_SCOPE":
            return  # the parent's scope is not this one's
        words = self.expanded(scope, values)
        scope[variable] = ";".join(words) if words is not None and active is True else UNKNOWN

    def list_command(self, scope: dict[str, Any], args: Sequence[Argument], active: Tri) -> None:
        operation, variable = args[0].text.upper(), args[1].text
        current = self.lookup(scope, variable)
        words = self.expanded(scope, args[2:])
        if operation in ("APPEND", "PREPEND", "REMOVE_ITEM") and current is not UNKNOWN and words is not None \
                and active is True:
            items = [word for word in str(current).split(";") if word]
            items = items + words if operation == "APPEND" else words + items if operation == "PREPEND" \
                else [item for item in items if item not in words]
            scope[variable] = ";".join(items)
        elif operation in ("APPEND", "PREPEND", "REMOVE_ITEM", "INSERT", "REMOVE_AT", "REMOVE_DUPLICATES",
                           "FILTER", "TRANSFORM", "SORT", "REVERSE", "POP_BACK", "POP_FRONT"):
            scope[variable] = UNKNOWN
        else:
            scope[args[-1].text] = UNKNOWN  # LENGTH, GET, FIND, JOIN, SUBLIST: the output variable last

    def include(self, scope: dict[str, Any], argument: Argument, path: str, directory: str, active: Tri) -> None:
        words = self.expand(scope, argument)
        if not words or len(words) != 1:
            return
        word = words[0]
        candidates = [word[len(_SOURCE):].strip("/")] if word.startswith(_SOURCE) else \
            [_join(directory, word), f"cmake/{word}.cmake", _join(directory, f"{word}.cmake")]
        for candidate in candidates:
            body = file_commands(self.tree, candidate) if candidate.endswith(".cmake") else None
            if body is None and active is True and candidate.endswith(".cmake") and self.tree.exists(candidate):
                self.unread.append(candidate)  # in conflict
                return
            if body is not None and candidate not in self.visited:
                self.visited.add(candidate)
                self.run(body, 0, len(body), candidate, directory, scope, active)
                return

    def record(self, command: Command, path: str, scope: dict[str, Any], active: Tri) -> None:
        expand = lambda argument: self.expand(scope, argument)
        defined = _defines(command, expand)
        self.defined.update(defined)
        if active is not True:
            return
        name, args = command.name, command.args
        if name in ("target_link_libraries", "add_dependencies") and args:
            owners, section = expand(args[0]) or [], True
            linked = args[1:]
        elif defined:
            owners, section, linked = defined[:1], False, args[1:]
        else:
            return
        for argument in linked:
            if not argument.quoted and argument.text in _LINK_SECTIONS:
                section = True
                continue
            if not argument.quoted and (argument.text in _OTHER_SECTIONS or argument.text in _KINDS):
                section = section and argument.text in _KINDS
                continue
            if section:
                for word in expand(argument) or []:
                    self.links.extend(Link(path, argument.line or command.line, owner, word) for owner in owners)


_BINARY = frozenset({"STREQUAL", "MATCHES", "IN_LIST", "EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL",
                     "STRLESS", "STRGREATER", "STRLESS_EQUAL", "STRGREATER_EQUAL", "VERSION_EQUAL", "VERSION_LESS",
                     "VERSION_GREATER", "VERSION_LESS_EQUAL", "VERSION_GREATER_EQUAL", "PATH_EQUAL"})
_KINDS = frozenset({"STATIC", "SHARED", "OBJECT", "MODULE", "EXCLUDE_FROM_ALL", "EXCLUDE_FROM_LIBMLIR",
                    "DISABLE_INSTALL", "PARTIAL_SOURCES_INTENDED", "INTERFACE_", "ALIAS", "IMPORTED", "GLOBAL"})
_SETTERS = frozenset({"string", "file", "find_package", "find_program", "find_library", "find_path", "find_file",
                      "get_property", "get_target_property", "get_filename_component", "get_directory_property",
                      "cmake_path", "math", "separate_arguments", "execute_process", "configure_file",
                      "cmake_parse_arguments", "llvm_map_components_to_libnames"})


def _join(directory: str, word: str) -> str:
    if word.startswith(_SOURCE):
        return word[len(_SOURCE):].strip("/")
    return normpath(f"{directory}/{word}" if directory else word).strip("/") if not word.startswith("/") else word


def _matching(body: Sequence[Command], start: int, end: int) -> int:
    """The index of the command closing the block body[start] opens (end when it never closes)."""
    opener = body[start].name
    closer = "end" + opener
    depth = 0
    for index in range(start, end):
        if body[index].name == opener:
            depth += 1
        elif body[index].name == closer:
            depth -= 1
            if depth == 0:
                return index
    return end


def _branches(body: Sequence[Command], start: int, close: int) -> Iterator[int]:
    """The elseif/else commands of the if block body[start]..body[close], not those of nested blocks."""
    depth = 0
    for index in range(start + 1, close):
        name = body[index].name
        if name == "if":
            depth += 1
        elif name == "endif":
            depth -= 1
        elif name in ("elseif", "else") and depth == 0:
            yield index


def configured(tree: FileTree, cache: Mapping[str, str], env: Mapping[str, str]) -> Configured:
    """What a build with these cache variables (`-DX=V`) and environment makes of the tree's root CMakeLists.txt."""
    evaluation = _Evaluation(tree, cache, env)
    scope: dict[str, Any] = {**dict.fromkeys(ROOT_VARIABLES, _SOURCE), "CMAKE_CURRENT_SOURCE_DIR": _SOURCE}
    evaluation.run_directory("", scope, True)
    reached = frozenset(directory for directory in evaluation.visited if not directory.endswith(".cmake"))
    return Configured(frozenset(evaluation.directories), frozenset(evaluation.defined), tuple(evaluation.links),
                      tuple(evaluation.unread), reached, evaluation.elsewhere)


def cmake_directory(tree: FileTree, path: str) -> str:
    """The directory of the nearest CMakeLists.txt above a file ('' for the root): the one whose adding builds it."""
    directory = dirname(path)
    while directory and not tree.exists(f"{directory}/CMakeLists.txt"):
        directory = dirname(directory)
    return directory


_named: TreeMemo[frozenset[str]] = TreeMemo()  # per tree, while the tree lives


def named_subdirectories(tree: FileTree) -> frozenset[str]:
    """Every directory a CMake file of the tree adds by a literal add_subdirectory(...), whatever the condition:
    where the tree adds a directory itself, no directory named from outside it (an unknown one) stands for it.
    Read once per tree: a build's every configuration asks."""
    return _named.get(tree, None, lambda: _named_subdirectories(tree))


def _named_subdirectories(tree: FileTree) -> frozenset[str]:
    named: set[str] = set()
    for path in sorted(tree.paths()):
        if path.endswith("CMakeLists.txt"):
            for command in file_commands(tree, path) or ():
                word = command.args[0].text.replace("${CMAKE_CURRENT_SOURCE_DIR}", ".") if command.args else "$"
                if command.name == "add_subdirectory" and "$" not in word:
                    named.add(_join(dirname(path), word))
    return frozenset(named)
