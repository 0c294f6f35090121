"""Feature gates: FlagTree trunk code of a component the fork gates behind a build macro, left ungated here.

The fork's build defines a macro upstream's build does not (CMake `add_definitions(-DM)` or
`add_compile_definitions(M)`), and FlagTree wraps code of one component in `#ifdef M` / `#if defined(M)`
in some C++ files. The component is what only that gated code names: `#include` roots, namespace
qualifiers (`X::`) and MLIR op-name prefixes (`"x.op"`, kept only when x is also a root or namespace of
the component), each absent from upstream's C++ at the old tag. FlagTree-added trunk lines outside every M
region that name the component where a build must resolve it (an include root, a qualifier; an op-name string
compiles without it) are reported once per file of upstream's (a file FlagTree added is the
component's own: its CMake decides whether it is built): they are built whatever M says, unlike the same
component elsewhere, so a build without M breaks there and the fork's gating is inconsistent. Nothing here
rests on an upstream change; the evidence is the fork's own gated use of the same names. A macro that a CMake
file reaching the file defines in every configuration (unconditional_definitions) has no build without it: no
finding (the 3.5.x -> 3.6.0 move: `add_definitions(-D__TLE__)` at the top of the root CMakeLists.txt)."""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Iterable

from sync.git import GitTree
from sync.model import Finding
from sync.facts.trees import read_text
from sync.drift.context import DriftContext
from sync.support.cache import memoized, memoized_by
from sync.facts.buildconfigs import every_configuration
from sync.facts.cmake import Command, commands
from sync.facts.cmakebuilt import cmake_directory, configured
from sync.facts.cpp import captures, include_lines, node_text
from sync.facts.delta import CPP, backend_of, fork_added_lines, hunks_with, is_cmake, text_diff
from sync.facts.layout import THIRD_PARTY, is_third_party

_DEFINE_FLAG = re.compile(r"-D([A-Za-z_]\w*)")  # inside an add_definitions argument
_DEFINITION = re.compile(r"(?:^|\s)([A-Za-z_]\w*)")  # an add_compile_definitions argument: M or M=V
_DIRECTIVE = re.compile(r"^\s*#\s*(ifdef|ifndef|if|elif|else|endif)\b(.*)")
_OP_NAME = re.compile(r"^([a-z_][a-z0-9_]*)\.[a-z_][\w.]*$")


def cmake_definitions(text: str) -> set[str]:
    """Macros a CMake text defines for every compile: add_definitions(-DM ...), add_compile_definitions(M ...)."""
    return _definitions(commands(text))


def _definitions(found: Iterable[Command]) -> set[str]:
    names: set[str] = set()
    for command in found:
        if command.name in ("add_definitions", "add_compile_definitions"):
            pattern = _DEFINE_FLAG if command.name == "add_definitions" else _DEFINITION
            names.update(name for argument in command.args for name in pattern.findall(argument.text))
    return names


_OPENS = {"if", "foreach", "while", "function", "macro"}
_CLOSES = {"endif", "endforeach", "endwhile", "endfunction", "endmacro"}
_ON = {"ON", "TRUE", "YES", "1"}


def unconditional_definitions(text: str) -> set[str]:
    """Macros a CMake text defines for every configuration: at the top level, or inside `if(V)` blocks whose V
    the text sets ON at the top level before (FlagTree's `set(FLAGTREE_TLE ON)` then `if(FLAGTREE_TLE)`). A
    definition under any other condition, an else branch, a loop or a function may be left out of a build."""
    always_on: set[str] = set()
    found: set[str] = set()
    stack: list[bool] = []  # per open block: whether it runs in every configuration
    for command in commands(text):
        name, args = command.name, command.args
        if name == "if":
            stack.append(len(args) == 1 and not args[0].quoted and args[0].text in always_on)
        elif name in _OPENS:
            stack.append(False)
        elif name in ("elseif", "else"):
            if stack:
                stack[-1] = False
        elif name in _CLOSES:
            if stack:
                stack.pop()
        elif all(stack):
            if not stack and name == "set" and len(args) == 2 and args[1].text.upper() in _ON:
                always_on.add(args[0].text)
            found |= _definitions([command])
    return found


def defined_macros(tree: GitTree) -> dict[str, str]:
    """Macro -> the first CMake file that defines it for every compile."""
    return {macro: paths[0] for macro, paths in macro_definitions(tree).items()}


def macro_definitions(tree: GitTree) -> dict[str, list[str]]:
    """Macro -> every CMake file that defines it, in path order."""
    found: dict[str, list[str]] = {}
    for path in sorted(tree.paths()):
        if is_cmake(path):
            for name in sorted(cmake_definitions(read_text(tree, path) or "")):
                found.setdefault(name, []).append(path)
    return found


def reaches(cmake_path: str, path: str) -> bool:
    """Whether a definition in this CMake file applies to the compile of path: add_definitions and
    add_compile_definitions hold for the file's directory and the directories below it, nowhere else
    (a backend's own CMakeLists.txt defines nothing for trunk code)."""
    directory = posixpath.dirname(cmake_path)
    return not directory or path.startswith(directory + "/")


def gated_lines(text: str, macros: set[str]) -> dict[int, set[str]]:
    """1-based line -> the macros whose positive branch (#ifdef M, #if defined(M), #else of #ifndef M)
    encloses it. Directive lines themselves are left out."""
    def named(condition: str) -> tuple[set[str], set[str]]:
        positive = {m for m in macros if re.search(rf"(?<!!)\b(?:defined\s*\(?\s*)?{re.escape(m)}\b", condition)}
        negative = {m for m in macros if re.search(rf"!\s*(?:defined\s*\(?\s*)?{re.escape(m)}\b", condition)}
        return positive - negative, negative
    stack: list[tuple[set[str], set[str]]] = []  # (macros gating the open branch, those gating its #else)
    out: dict[int, set[str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        directive = _DIRECTIVE.match(line)
        if directive is None:
            out[number] = set().union(*(now for now, _ in stack)) if stack else set()
            continue
        word, rest = directive[1], directive[2]
        subject = rest.split()[0] if rest.split() else ""
        if word == "ifdef":
            stack.append(({subject} & macros, set()))
        elif word == "ifndef":
            stack.append((set(), {subject} & macros))
        elif word == "if":
            stack.append(named(rest))
        elif word == "elif" and stack:
            stack[-1] = (named(rest)[0], set())
        elif word == "else" and stack:
            stack[-1] = (stack[-1][1], set())
        elif word == "endif" and stack:
            stack.pop()
    return out


def _string_body(node_text: str) -> str:
    return node_text[1:-1] if len(node_text) >= 2 and node_text[0] == node_text[-1] == '"' else ""


def component_names(text: str) -> dict[int, set[tuple[str, str]]]:
    """Per line: ("include", root), ("namespace", X) and ("op", prefix) names a component can be told by.
    Through the fact cache: a cold run reads every C++ file FlagTree changed."""
    return memoized("component-names", 1, text, _component_names,
                    encode=lambda found: [[line, sorted(map(list, names))] for line, names in sorted(found.items())],
                    decode=lambda stored: {int(line): {(str(kind), str(value)) for kind, value in names}
                                           for line, names in stored})


def _component_names(text: str) -> dict[int, set[tuple[str, str]]]:
    found: dict[int, set[tuple[str, str]]] = {}
    for number, name in include_lines(text):
        root = _include_root(name)
        if root is not None:
            found.setdefault(number, set()).add(("include", root))
    found_nodes = captures("(namespace_identifier) @namespace (string_literal) @string", text)
    for node in found_nodes.get("namespace", []):
        found.setdefault(node.start_point[0] + 1, set()).add(("namespace", node_text(node)))
    for node in found_nodes.get("string", []):
        if match := _OP_NAME.match(_string_body(node_text(node))):
            found.setdefault(node.start_point[0] + 1, set()).add(("op", match[1]))
    return found


def _include_root(name: str) -> str | None:
    """A header in a directory names its component by that directory, third_party/ left out; None for a header
    of no directory."""
    parts = [part for part in name.split("/") if part]
    if parts[:1] == [THIRD_PARTY]:
        parts = parts[1:]
    return parts[0] if len(parts) > 1 else None


def _upstream_form(kind: str, name: str) -> re.Pattern[str]:
    """How upstream's C++ would use the name: a header under the root, a qualifier, an op-name string."""
    word = re.escape(name)
    return re.compile({"include": rf'#\s*include\s*["<](?:third_party/)?{word}/', "namespace": rf"\b{word}::",
                       "op": rf'"{word}\.'}[kind])


def _uses(text: str, name: tuple[str, str], form: re.Pattern[str]) -> bool:
    """Whether text uses the name in its form. A qualifier and an op name are literals: found with str.find
    (a pattern that begins with \\b tries every position of the text); an include is read by the pattern."""
    kind, word = name
    if kind == "op":
        return f'"{word}.' in text
    if kind == "namespace":
        start = text.find(word + "::")
        while start >= 0:
            if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
                return True  # \b before a word character: none before it
            start = text.find(word + "::", start + 1)
        return False
    return f"{word}/" in text and form.search(text) is not None


def _upstream_names(tree: GitTree, names: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """Which of the names upstream's C++ already uses (then they tell no FlagTree component): a scan of every
    C++ file of the tree, kept in the fact cache by the tree's id and the names asked about."""
    if not names:
        return set()
    return memoized_by("upstream-component-names", 2, [str(tree.tree.id), *sorted("\1".join(name) for name in names)],
                       lambda: _scan_upstream_names(tree, names),
                       encode=lambda found: sorted(map(list, found)),
                       decode=lambda stored: {(str(kind), str(value)) for kind, value in stored},
                       keep=lambda: not tree.missing)  # a blob it could not read may hold a name


def _scan_upstream_names(tree: GitTree, names: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """A regular expression runs only on files that hold the name as a substring."""
    forms = {name: _upstream_form(*name) for name in names}
    left, seen = set(names), set()
    for path in tree.paths():
        if not left:
            break
        if path.endswith(CPP):
            text = read_text(tree, path) or ""
            # Every form spells the name itself: a substring test rules out most files at C speed.
            hit = {name for name in left if name[1] in text and _uses(text, name, forms[name])}
            seen |= hit
            left -= hit
    return seen


@dataclass(frozen=True)
class _Gate:
    macro: str
    names: frozenset[tuple[str, str]]  # the component, told by names only M-gated FlagTree code uses
    where: tuple[tuple[str, int], ...]  # gated FlagTree lines naming it (path, line), the evidence


def feature_gate_findings(context: DriftContext) -> list[Finding]:
    upstream_macros = defined_macros(context.upstream_old)
    definitions = {m: paths for m, paths in macro_definitions(context.fork).items() if m not in upstream_macros}
    macros = {m: paths[0] for m, paths in definitions.items()}
    if not macros:
        return []
    added = {path: lines for path, lines in fork_added_lines(context.upstream_old, context.fork).items()
             if path.endswith(CPP)}
    files: dict[str, tuple[str, dict[int, set[str]], dict[int, set[tuple[str, str]]] | None]] = {}
    gated: dict[str, dict[tuple[str, str], list[tuple[str, int]]]] = {}
    for path, lines in sorted(added.items()):
        text = read_text(context.fork, path) or ""
        if not any(m in text for m in macros):
            if not is_third_party(path):
                files[path] = (text, {}, None)  # no gated line here; its names are read once a gate is known
            continue  # a backend file without the macro gives no gate and is not judged
        regions, names = gated_lines(text, set(macros)), component_names(text)
        files[path] = (text, regions, names)
        for line in lines:
            for macro in regions.get(line, ()):
                for name in names.get(line, ()):
                    gated.setdefault(macro, {}).setdefault(name, []).append((path, line))
    gates = []
    upstream_uses = _upstream_names(context.upstream_old, {name for uses in gated.values() for name in uses})  # one scan
    for macro, uses in sorted(gated.items()):
        own = set(uses) - upstream_uses
        roots = {value for kind, value in own if kind != "op"}
        own = {(kind, value) for kind, value in own if kind != "op" or value in roots}
        if own:
            gates.append(_Gate(macro, frozenset(own), tuple(sorted({w for n in own for w in uses[n]}))))
    findings = []
    built_anyway: dict[str, bool] = {}
    always = {macro: [cmake for cmake in paths if macro in unconditional_definitions(read_text(context.fork, cmake) or "")]
              for macro, paths in definitions.items()}
    for path, (text, regions, known) in sorted(files.items()):
        if is_third_party(path) or not context.upstream_old.exists(path):
            continue  # a file FlagTree added is the component's own (its build decides), not trunk code
        if known is None and not any(value in text for gate in gates for _, value in gate.names):
            continue  # every name of a component is spelled in the text that uses it: none is used here
        names = known if known is not None else component_names(text)
        for gate in gates:
            if not any(reaches(cmake, path) for cmake in definitions[gate.macro]):
                continue  # the build never defines the macro for this file: its #ifdef cannot be the gate here
            if any(reaches(cmake, path) for cmake in always[gate.macro]):
                continue  # every configuration defines it for this file: no build leaves the gate out
            ungated = [(line, sorted(names[line] & gate.names)) for line in sorted(added[path])
                       if gate.macro not in regions.get(line, set()) and _compiled(names.get(line, set()) & gate.names)]
            if ungated and gate.macro not in built_anyway:
                built_anyway[gate.macro] = _built_in_every_configuration(context, gate)
            if ungated and not built_anyway[gate.macro]:
                findings.append(_finding(context, path, text, macro_file=macros[gate.macro], gate=gate,
                                         ungated=ungated))
    return findings


def _built_in_every_configuration(context: DriftContext, gate: _Gate) -> bool:
    """Whether every build adds, for certain, the directory of each header the gated code includes of the
    component (facts/cmakebuilt.configured): then no build lacks the component, whatever the macro, and code
    outside the gate compiles in each (triton_v3.5.x onto 3.7: the root CMake adds third_party/tle in every
    configuration, while only some define __TLE__)."""
    roots = {value for kind, value in gate.names if kind == "include"}
    spelled: set[str] = set()
    for path in sorted({path for path, _ in gate.where}):
        lines = {line for where, line in gate.where if where == path}
        spelled |= {name for number, name in include_lines(read_text(context.fork, path) or "")
                    if number in lines and _include_root(name) in roots}
    configurations = every_configuration(context.fork, context.upstream_old) if spelled else None
    if not configurations:
        return False
    paths = context.fork.paths()
    needed = []
    for name in sorted(spelled):
        files = [path for path in paths if path == name or path.endswith("/" + name)]
        if not files:
            return False  # a header outside the tree (generated, installed): where it comes from is not read here
        needed.append({cmake_directory(context.fork, path) for path in files})
    return all(all(directories & made.directories for directories in needed)
               for made in (configured(context.fork, item.cache, item.env) for item in configurations))


def _compiled(names: set[tuple[str, str]]) -> bool:
    """Whether a line's names of the component need it built: an include or a qualifier does; an op-name string
    compiles without it (seen on triton_v3.5.x onto 3.7: `name == "tle.local_pointers"` in Alias.cpp)."""
    return any(kind != "op" for kind, _ in names)


def _finding(context: DriftContext, path: str, text: str, macro_file: str, gate: _Gate,
             ungated: list[tuple[int, list[tuple[str, str]]]]) -> Finding:
    lines = text.splitlines()
    first, named = ungated[0]
    elsewhere = [(p, n) for p, n in gate.where if p != path]
    example = f"{elsewhere[0][0]}:{elsewhere[0][1]}" if elsewhere else f"{gate.where[0][0]}:{gate.where[0][1]}"
    files = len({p for p, _ in gate.where})
    what = ", ".join(f"{kind} {value}" for kind, value in named)
    diff = hunks_with(text_diff(read_text(context.upstream_old, path) or "", text, path, path, context=1),
                      lines[first - 1].strip()) if first <= len(lines) else ""
    return Finding(
        "feature-ungated", path,
        f"FlagTree code here names the component the fork gates with {gate.macro} ({what}; line {first}"
        f"{f' and {len(ungated) - 1} more line(s)' if len(ungated) > 1 else ''}) outside #ifdef {gate.macro}, "
        f"while the fork gates it in {files} file(s) (e.g. {example}) and its build defines {gate.macro} "
        f"({macro_file})",
        line=first, backend=backend_of(context.owners.owners, path),
        related_path=elsewhere[0][0] if elsewhere else None,
        diff=diff or None,
        details={"macro": gate.macro, "lines": [line for line, _ in ungated],
                 "component": sorted(f"{kind}:{value}" for kind, value in gate.names)})
