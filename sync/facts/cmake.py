"""CMake read through tree-sitter-cmake, once per text: a file's commands in order, and what its comments hold.

A command is its name (lower case: CMake's names are case-insensitive) and its arguments as CMake passes them:
an unquoted word as written (escapes kept: `-DX=\\"${Y}\\"` quotes nothing), a quoted or bracket argument's
content (quoted=True), a nested parenthesis as an argument of its own (`if(A AND (B OR C))`). The grammar does
not know CMake's legacy unquoted form `-DX="a b"`: a quoted argument glued to the word before it is read back into
that word, as CMake reads it.

A syntax error costs only the command it breaks (with what tree-sitter's recovery folds into it: an unclosed
parenthesis takes the rest of the file); commands around it, and those of a block that never closes (an `if`
without `endif`), still count, as the line-based readers this replaced saw them. A text in conflict reads as its
two sides in turn, its markers' lines blank (`in_conflict` tells a reader that must not read it).

Commented-out commands (`# add_subdirectory(x)`, a bracket comment around a block) are read from the comments' text
with the same grammar (`commented`), for the readers that must tell a left-out directory or target from a built
one. Parses are kept per text for the run: every reader of a blob (the build configuration, the declaration
index, the drift analyses) shares one."""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter_cmake
from tree_sitter import Language, Node, Parser

from sync.support.parselimit import oversized
from sync.support.textmemo import TextMemo


@dataclass(frozen=True)
class Argument:
    text: str
    quoted: bool  # a quoted or bracket argument
    line: int = 0  # where it starts
    start: int = 0  # its span in the UTF-8 bytes of the text read (an edit rewrites it there)
    end: int = 0


@dataclass(frozen=True)
class Command:
    name: str  # lower case
    args: tuple[Argument, ...]
    line: int
    end_line: int = 0  # the line of its closing parenthesis


@dataclass(frozen=True)
class Comment:
    text: str  # without its '#' marks: a line comment's text after them, a bracket comment's content
    line: int  # where its text starts
    end_line: int
    bracket: bool
    alone: bool  # nothing but blanks before it on its line


@dataclass(frozen=True)
class Listing:
    commands: tuple[Command, ...]
    comments: tuple[Comment, ...]


@lru_cache(maxsize=1)
def parser() -> Parser:
    return Parser(Language(tree_sitter_cmake.language()))


# The listings of the run's texts, keyed by the text itself (Python keeps a string's hash, and a reader asks again
# with the same object: unbuilt() reads one CMakeLists.txt for every file below it, 3,230 asks on the 3.7 move,
# where hashing a blob id each time cost 0.15 s). Every CMake text of a tree is a few MB at most.
_LISTINGS: TextMemo[Listing] = TextMemo(32 * 1024 * 1024)
_COMMENTED: TextMemo[tuple[Command, ...]] = TextMemo(32 * 1024 * 1024)


def listing(text: str) -> Listing:
    """The commands and comments of a CMake text, parsed once per text for the run. A text in conflict reads as
    its sides one after the other, the markers' lines blank (a reader that must not read it checks in_conflict)."""
    return _LISTINGS.get(text, lambda text: _read(_MARKER_LINE.sub(_blank, text) if in_conflict(text) else text))


# Every line that looks like a marker is blanked, nested ones too (a file conflicted again over its own markers):
# git.merge.conflict_sections reads a marker out of place as text, and tree-sitter would stop on it.
_CONFLICT = re.compile(r"^<{7} .*^={7}$.*^>{7} ", re.MULTILINE | re.DOTALL)
_MARKER_LINE = re.compile(r"^(?:<{7} |\|{7}|>{7} |={7}$)[^\n]*", re.MULTILINE)


def _blank(marker: re.Match[str]) -> str:
    return " " * len(marker[0].encode("utf-8", errors="replace"))  # the same bytes: spans stay the text's


def in_conflict(text: str) -> bool:
    """Whether the text holds a merge conflict's markers (its two sides are no build)."""
    return _CONFLICT.search(text) is not None


def commands(text: str) -> tuple[Command, ...]:
    return listing(text).commands


@dataclass(frozen=True)
class Rule:
    """A custom rule a CMake file adds: the file it generates in the directory's build tree, and the `if`
    branches around it ((block, branch) pairs, outermost first)."""
    output: str
    line: int
    branches: tuple[tuple[int, int], ...]

    def excludes(self, other: "Rule") -> bool:
        """Whether the two lie in different branches of one `if`: no run makes both."""
        mine = dict(self.branches)
        return any(block in mine and mine[block] != branch for block, branch in other.branches)


_NOT_RUN_HERE = {"function": "endfunction", "macro": "endmacro", "foreach": "endforeach", "while": "endwhile"}


def generated_rules(text: str) -> list[Rule]:
    """The rules a CMake text adds where it runs once: mlir_tablegen's output (its first argument) and
    add_custom_command's OUTPUT files, spelled without variables; none inside a function, macro or loop."""
    found: list[Rule] = []
    stack: list[tuple[int, int]] = []
    skipping: list[str] = []  # the closing commands of the bodies being passed over
    blocks = 0
    for command in commands(text):
        name, outputs = command.name, []
        if skipping:
            if name in _NOT_RUN_HERE:
                skipping.append(_NOT_RUN_HERE[name])
            elif name == skipping[-1]:
                skipping.pop()
            continue
        if name in _NOT_RUN_HERE:
            skipping.append(_NOT_RUN_HERE[name])
        elif name == "if":
            blocks += 1
            stack.append((blocks, 0))
        elif name in ("elseif", "else") and stack:
            stack[-1] = (stack[-1][0], stack[-1][1] + 1)
        elif name == "endif" and stack:
            stack.pop()
        elif name == "mlir_tablegen" and command.args:
            outputs = [command.args[0].text]
        elif name == "add_custom_command":
            words = [argument.text for argument in command.args]
            at = words.index("OUTPUT") + 1 if "OUTPUT" in words else len(words)
            for word in words[at:]:
                if word.isupper() and word.isalpha():
                    break  # the next keyword (COMMAND, DEPENDS, ...)
                outputs.append(word)
        found += [Rule(output, command.line, tuple(stack)) for output in outputs if "$" not in output]
    return found


_KEYWORD_COMMANDS = frozenset({
    "if_command", "elseif_command", "else_command", "endif_command", "foreach_command", "endforeach_command",
    "while_command", "endwhile_command", "function_command", "endfunction_command", "macro_command",
    "endmacro_command", "block_command", "endblock_command"})
_COMMENTS = frozenset({"line_comment", "bracket_comment"})


def _read(text: str, first_line: int = 1) -> Listing:
    source = b"" if oversized(text) else text.encode("utf-8", errors="replace")
    root = parser().parse(source).root_node
    found: list[Command] = []
    comments: list[Comment] = []
    offset = first_line - 1

    def visit(node: Node) -> None:
        for child in node.children:
            kind = child.type
            if kind == "normal_command" or kind in _KEYWORD_COMMANDS:
                if not child.has_error:  # a broken command is no command, nor what the parser folded into it
                    found.append(_command(child, source, offset))
            elif kind in _COMMENTS:
                comments.append(_comment(child, source, offset))
            elif child.child_count:
                visit(child)  # blocks, and ERROR nodes: an unclosed block's commands are whole
    visit(root)
    return Listing(tuple(found), tuple(comments))


_BLOCKS = frozenset({"if_condition", "foreach_loop", "while_loop", "function_def", "macro_def", "block_def"})


def _command(node: Node, source: bytes, offset: int) -> Command:
    head = node.children[0]
    name = _text(source, head).lower()
    args: list[Argument] = []
    glued_to = -1  # the end byte of the last unquoted word: a quoted argument starting there is part of it
    # an end command's argument (`endforeach(X)`) stands in the command, not in an argument_list
    items = [item for part in node.children[1:]
             for item in (part.children if part.type == "argument_list" else [part] if part.type == "argument" else [])]
    for item in items:
        if item.type in ("(", ")"):
            args.append(Argument(item.type, False, item.start_point[0] + 1 + offset, item.start_byte, item.end_byte))
            glued_to = -1
            continue
        if item.type != "argument" or not item.children:
            continue
        inner = item.children[0]
        line = item.start_point[0] + 1 + offset
        if inner.type == "unquoted_argument" or (inner.start_byte == glued_to and args):
            raw = _text(source, item)
            if item.start_byte == glued_to and args:
                previous = args.pop()
                args.append(Argument(previous.text + raw, False, previous.line, previous.start, item.end_byte))
            else:
                args.append(Argument(raw, False, line, item.start_byte, item.end_byte))
            glued_to = item.end_byte
        elif inner.type == "quoted_argument":
            args.append(Argument(_unescape(source[inner.start_byte + 1:inner.end_byte - 1].decode(
                "utf-8", errors="replace")), True, line, item.start_byte, item.end_byte))
            glued_to = -1
        else:  # bracket_argument
            content = [c for c in inner.children if c.type == "bracket_argument_content"]
            args.append(Argument(_text(source, content[0]) if content else "", True, line, item.start_byte,
                                 item.end_byte))
            glued_to = -1
    return Command(name, tuple(args), head.start_point[0] + 1 + offset, node.end_point[0] + 1 + offset)


_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _unescape(content: str) -> str:
    """A quoted argument's `\\"` and `\\\\` read as the character; other escapes are kept as written."""
    return _ESCAPE.sub(lambda escape: escape[1] if escape[1] in '"\\' else escape[0], content)


def _comment(node: Node, source: bytes, offset: int) -> Comment:
    line_start = source.rfind(b"\n", 0, node.start_byte) + 1
    alone = not source[line_start:node.start_byte].strip()
    if node.type == "bracket_comment":
        content = [c for c in node.children if c.type == "bracket_comment_content"]
        text = _text(source, content[0]) if content else ""
        start = (content[0] if content else node).start_point[0] + 1 + offset
        return Comment(text, start, node.end_point[0] + 1 + offset, True, alone)
    line = node.start_point[0] + 1 + offset
    return Comment(_text(source, node).lstrip("#"), line, line, False, alone)


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def commented(text: str) -> tuple[Command, ...]:
    """The commands a CMake text's comments hold: a bracket comment's content, and commands that start a
    comment alone on its line and go on, where they span lines, in the comment lines right below it
    (`#add_triton_library(Tools` / `#  a.cpp` / `#)`). Prose in a comment is no command."""
    return _COMMENTED.get(text, lambda text: tuple(_commented_commands(listing(text).comments, text.split("\n"))))


def _blank_between(lines: list[str], after: int, before: int) -> bool:
    """Whether the lines strictly between two line numbers (1-based) are all blank: a commented-out command may
    keep the blank lines it had."""
    return all(not line.strip() for line in lines[after:before - 1])


def _commented_commands(comments: tuple[Comment, ...], lines: list[str]) -> list[Command]:
    out: list[Command] = []
    for index, comment in enumerate(comments):
        if "(" not in comment.text:
            continue  # prose, a rule, a license line: no command starts here (one parse a comment saved)
        if comment.bracket:
            out.extend(_read(comment.text, comment.line).commands)
            continue
        first = _read(comment.text, comment.line).commands
        if first and first[0].line == comment.line:
            out.append(first[0])
            continue
        if not comment.alone or not _opens_command(comment.text):
            continue
        # the command goes on below: the run of whole-line comments that follows
        run, line = [comment.text], comment.line
        for below in comments[index + 1:]:
            if below.bracket or not below.alone or not _blank_between(lines, line, below.line):
                break
            run += [""] * (below.line - line - 1) + [below.text]  # blank lines kept: lines stay numbered
            line = below.line
            read = _read("\n".join(run), comment.line).commands
            if read and read[0].line == comment.line:
                out.append(read[0])
                break
    return out


def _opens_command(text: str) -> bool:
    """Whether a comment's text starts a command it does not close: a name, then `(`."""
    root = parser().parse(text.encode("utf-8", errors="replace")).root_node
    head = root.children[0] if root.children else None
    while head is not None and head.type in _BLOCKS | {"ERROR"} and head.children:
        head = head.children[0]
    if head is None or not (head.type == "normal_command" or head.type in _KEYWORD_COMMANDS):
        return False
    parts = head.children
    return len(parts) >= 2 and parts[1].type == "(" and not parts[0].has_error


# --- build trees a CMake file configures by hand ------------------------------------------------------------------

# The variables that name the repository's root in every CMake file of a build of it (Triton's own included).
ROOT_VARIABLES = ("CMAKE_SOURCE_DIR", "PROJECT_SOURCE_DIR", "TRITON_ROOT_DIR")
_ROOT_DIR = re.compile(rf"^\$\{{(?:{'|'.join(ROOT_VARIABLES)})\}}(?:/(?P<rest>.*))?$")
_LIST_DIR = re.compile(r"^\$\{CMAKE_CURRENT_LIST_DIR\}(?:/(?P<rest>.*))?$")


def configured_sources(files: dict[str, str]) -> dict[str, str | None]:
    """The build trees a set of CMake files configures with `cmake -S SRC -B BIN` (a custom command, an
    execute_process): `${BIN}` as spelled -> the repository path SRC names ('' for the root), through the files'
    `set()` of SRC's variable; None where SRC is not known, or set to different places. An object file named in
    such a build tree (`${BIN}/lib/X/CMakeFiles/T.dir/Y.cpp.o`) is compiled from SRC's copy of lib/X/Y.cpp."""
    values: dict[str, set[str | None]] = {}
    pairs: list[tuple[str, str]] = []
    for path, text in sorted(files.items()):
        for command in commands(text):
            words = [argument.text for argument in command.args]
            if command.name == "set" and len(words) >= 2:
                values.setdefault(f"${{{words[0]}}}", set()).add(_repository_dir(path, words[1]))
            for index, word in enumerate(words[:-1]):
                if word == "-S":
                    built = _paired_build_dir(words, index)
                    if built is not None:
                        pairs.append((words[index + 1], built))
    found: dict[str, str | None] = {}
    for source, built in pairs:
        places = values.get(source, {None})
        place = next(iter(places)) if len(places) == 1 else None
        found[built] = place if found.get(built, place) == place else None
    return found


def _paired_build_dir(words: list[str], source_at: int) -> str | None:
    """The -B of the `cmake` invocation whose -S stands at source_at (within one COMMAND)."""
    start = source_at
    while start > 0 and words[start - 1] not in ("COMMAND", "cmake"):
        start -= 1
    end = source_at
    while end < len(words) and (end == source_at or words[end] not in ("COMMAND", "cmake")):
        end += 1
    invocation = words[start:end]
    return next((invocation[i + 1] for i in range(len(invocation) - 1) if invocation[i] == "-B"), None)


def _repository_dir(cmake_path: str, value: str) -> str | None:
    """A `set()` value as a repository directory: below the root's variables, or the CMake file's own
    directory; None for anything else (the binary dir, an environment value, another variable)."""
    value = value.strip().rstrip("/")
    if (root := _ROOT_DIR.match(value)) is not None:
        rest = root["rest"] or ""
        return None if "$" in rest else posixpath.normpath(rest) if rest else ""
    if (here := _LIST_DIR.match(value)) is not None:
        rest = here["rest"] or ""
        if "$" in rest:
            return None
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(cmake_path), rest))
        return None if joined.startswith("..") else "" if joined == "." else joined
    return None
