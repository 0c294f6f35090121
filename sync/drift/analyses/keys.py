"""Key strings: FlagTree code reads a dictionary key, attribute or option name whose upstream producer
changed between the tags (heuristic, low confidence).

Readers are FlagTree's added Python lines: `x["k"]`, `x.get("k")`, `getattr(o, "k")`, `hasattr(o, "k")`
and attribute reads `x.k` (metadata and options objects are often dicts seen through attributes).
Producers are upstream Python code that writes the key as a string: `d["k"] = ...`, `{"k": ...}`,
`setattr(o, "k", ...)`. When the producing statements of a key FlagTree reads differ between the tags in
an upstream file, that file is reported, also when FlagTree never changed it, with the diff hunks that
mention the key.

A key is a generic word (`matmul`, `float32`), so the container must agree: the last name of the expression
read from (`metadata` in `kernel.metadata["k"]`) and of the one written to (`metadata` in `metadata["k"] =`,
`metadata = {"k": ...}`). Different names on both sides: a coincidence, nothing reported. Same name, and
upstream stopped producing the key or changed the kind of value (a tuple became a call, a list a dict):
`key-string` (warning), listing only the reads of that container, and only when one of them is in code the
build ships (a test or tutorial reading it: a review). Same name with only a different value of the same kind
(`x` -> `x or 0` keeps x's kind), or a side whose container cannot be named (a dict literal passed as an
argument): `key-string-review` (info).

The process environment (`os.environ`) is neither: its variables come from whoever runs the process, so an
upstream file that sets one (a CLI preparing a child's environment) produces nothing FlagTree's read of it
depends on, and a read of one is not a read of upstream's data."""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from sync.support.cache import memoized
from sync.git import Change, changes_with_renames
from sync.model import Finding
from sync.facts.trees import read_text
from sync.drift.context import DriftContext
from sync.facts.delta import PY, backend_of, fork_added_lines, hunks_with, text_diff
from sync.facts.pyblobs import Extractor, python_fact
from sync.facts.filekinds import is_built, is_test_file
from sync.facts.layout import backend_root
from sync.facts.names import significant_name
from sync.facts.astwalk import last_name, walk_levels
from sync.facts.parsing import Unparseable, parsed_ast
from sync.facts.pychunks import merge_levels, over_chunks

_READ_CALLS = {"get", "pop", "setdefault"}
_ENVIRONMENT = frozenset({"environ"})  # container names of the process environment (os.environ, environ)


def _produces_runtime_data(path: str) -> bool:
    return is_built(path) and not is_test_file(path)  # tests and examples feed no runtime data


def read_keys(text: str, lines: frozenset[int]) -> dict[str, int]:
    """Key -> first line it is read on, over the given lines."""
    return {key: reads[0][0] for key, reads in key_reads(text, lines).items()}


def key_reads(text: str, lines: frozenset[int]) -> dict[str, list[tuple[int, str | None]]]:
    """Key -> (line, container name) of every read over the given lines, in line order (from the blob's
    facts: one shared parse)."""
    found: dict[str, list[tuple[int, str | None]]] = {}
    for key, line, container in python_fact("key-reads", text):
        if line in lines:
            found.setdefault(key, []).append((line, container))
    return {key: sorted(reads, key=lambda read: read[0]) for key, reads in found.items()}


def _key_reads_of(nodes: list[ast.AST]) -> list[tuple[str, int, str | None]]:
    """(key, line, container name) of every read among some nodes of the shared walk, in walk order."""
    found: list[tuple[str, int, str | None]] = []
    for node in nodes:
        line = getattr(node, "lineno", 0)
        key, container = None, None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _string(node.slice):
            key, container = _string(node.slice), last_name(node.value)
        elif isinstance(node, ast.Call) and node.args and _string(node.args[0]) and (
                isinstance(node.func, ast.Attribute) and node.func.attr in _READ_CALLS):
            key, container = _string(node.args[0]), last_name(node.func.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") \
                and len(node.args) >= 2 and _string(node.args[1]):
            key, container = _string(node.args[1]), last_name(node.args[0])
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            key, container = node.attr, last_name(node.value)
        if key and key.isidentifier() and significant_name(key) and container not in _ENVIRONMENT:
            found.append((key, line, container))
    return found


KEY_READS = Extractor("key-reads", 3, _key_reads_of, lambda reads: [] if reads is None else reads,
                      encode=lambda reads: [list(read) for read in reads],
                      decode=lambda stored: [(str(key), int(line), None if container is None else str(container))
                                             for key, line, container in stored],
                      reads=frozenset({ast.Subscript, ast.Call, ast.Attribute}))


def _key_writes(node: ast.AST) -> Iterator[tuple[str, ast.expr | None, ast.expr | None]]:
    """Each key a node writes as a string: (key, the expression written to, the value). A subscript assignment
    outside the environment (`d["k"] = v`), a dict literal's entry (written to: None), a `setattr(o, "k", v)`."""
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
            key = _string(target.slice) if isinstance(target, ast.Subscript) else None
            if key is not None and isinstance(target, ast.Subscript) and last_name(target.value) not in _ENVIRONMENT:
                yield key, target.value, node.value
    elif isinstance(node, ast.Dict):
        for key_node, value in zip(node.keys, node.values):
            key = _string(key_node) if key_node is not None else None
            if key is not None:
                yield key, None, value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
            and len(node.args) == 3:
        key = _string(node.args[1])
        if key is not None:
            yield key, node.args[0], node.args[2]


def _key_writes_of(nodes: list[ast.AST]) -> list[str]:
    """Every key written among some nodes of the shared walk, as `producers` finds them, for any key: a file's
    own writes, without a parse of its own for each set of keys asked about. A class body's fields count too
    (`cluster_dims: tuple = (1, 1, 1)` in an options dataclass): every instance carries the attribute, so a read
    of it resolves to the file's own class (issue 33, the 3.4.x -> 3.6.0 move: tsingmicro's options)."""
    return [key for node in nodes for key in (_fields(node) if isinstance(node, ast.ClassDef) else
                                              (key for key, _, _ in _key_writes(node)))
            if key.isidentifier()]  # only such keys are ever read (key_reads)


def _fields(klass: ast.ClassDef) -> list[str]:
    """The names a class body assigns (dataclass fields, class attributes)."""
    return [target.id for statement in klass.body if isinstance(statement, (ast.Assign, ast.AnnAssign))
            for target in (statement.targets if isinstance(statement, ast.Assign) else [statement.target])
            if isinstance(target, ast.Name)]


KEY_WRITES = Extractor("key-writes", 2, _key_writes_of, lambda keys: sorted(set(keys or [])),
                       encode=lambda keys: keys, decode=lambda stored: [str(key) for key in stored],
                       reads=frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Dict, ast.Call, ast.ClassDef}))


def written_keys(text: str, keys: set[str]) -> set[str]:
    """The keys asked about that a Python text writes (producers' keys, from the shared parse)."""
    return keys.intersection(python_fact("key-writes", text))


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


@dataclass(frozen=True)
class Production:
    container: str | None  # the last name written to; None for a dict literal that is not assigned
    kind: str  # what kind of value: the AST class of the expression, and the callee of a call


Producers = tuple[dict[str, list[str]], dict[str, list[Production]]]


def producers(text: str, keys: set[str]) -> Producers:
    """For the keys asked about: the producing statements/entries as written (sorted), and where
    (container) and what kind of value upstream writes; one parse, through the fact cache."""
    return memoized("key-producers", 4, text, lambda source: _producers(source, keys),
                    encode=lambda found: [found[0], {key: [[p.container, p.kind] for p in writes]
                                                     for key, writes in found[1].items()}],
                    decode=lambda stored: ({str(key): [str(v) for v in values] for key, values in stored[0].items()},
                                           {str(key): [Production(None if c is None else str(c), str(kind))
                                                       for c, kind in writes] for key, writes in stored[1].items()}),
                    extra="\0".join(sorted(keys)))


def _value_kind(value: ast.AST) -> str:
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        return _value_kind(value.values[0])  # `a or 0` is a's value wherever a is set: a default, not a new kind
    if isinstance(value, ast.Call):
        return f"call {ast.unparse(value.func)}"
    if isinstance(value, ast.Constant):
        return f"constant {type(value.value).__name__}"
    return type(value).__name__


def _producers(text: str, keys: set[str]) -> Producers:
    found = over_chunks(text, parsed_ast, lambda trees: _productions(trees, keys))  # guarded: deep nesting is a result
    return ({}, {}) if isinstance(found, Unparseable) else found


def _productions(trees: Iterator[ast.Module], keys: set[str]) -> Producers:
    written: dict[str, list[str]] = defaultdict(list)
    parts: list[list[list[tuple[str, Production]]]] = []  # per chunk, per depth of the walk
    for tree in trees:
        dict_owner: dict[int, str | None] = {}  # by id(): one chunk's nodes (ids are reused once its tree is gone)
        levels: list[list[tuple[str, Production]]] = []
        # One walk: breadth first, an assignment comes before the dict literal it assigns.
        for level in walk_levels(tree):
            productions: list[tuple[str, Production]] = []
            levels.append(productions)
            for node in level:
                if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
                    owner = node.targets[0] if isinstance(node, ast.Assign) else node.target
                    dict_owner[id(node.value)] = last_name(owner)
                for key, container, value in _key_writes(node):
                    if key not in keys:
                        continue
                    if container is None and value is not None:  # a dict literal's entry, as written
                        written[key].append(f"{key!r}: {ast.unparse(value)}")
                    else:
                        written[key].append(ast.unparse(node))
                    if value is not None:  # a dict literal writes to what it is assigned to
                        written_to = dict_owner.get(id(node)) if container is None else last_name(container)
                        productions.append((key, Production(written_to, _value_kind(value))))
        parts.append(levels)
        del tree
    out: dict[str, list[Production]] = defaultdict(list)
    for key, production in merge_levels(parts):  # in the order of a walk of the whole module
        out[key].append(production)
    return {key: sorted(values) for key, values in written.items()}, dict(out)


def grade(reads: list[tuple[int, str | None]], before: list[Production], after: list[Production]) -> str | None:
    """`warning`, `review` or None (a name coincidence) for one key's reads against its upstream producers."""
    read_names = {name for _, name in reads}
    written = {production.container for production in before}
    if None not in read_names and None not in written and not read_names & written:
        return None  # FlagTree reads it from something else than upstream writes it to
    matched = read_names & written - {None}
    kinds_before = {p.kind for p in before if p.container in matched}
    kinds_after = {p.kind for p in after if p.container in matched}
    if matched and (not kinds_after or kinds_before != kinds_after):
        return "warning"  # stopped producing it there, or produces another kind of value
    return "review"


_WORD = re.compile(r"\w+")
_QUOTED_WORD = re.compile(r"""(?=(['"])(\w+)\1)""")  # every 'word' / "word", overlapping ones too


def _mentions_quoted(text: str, word_keys: set[str], other_keys: set[str]) -> bool:
    """Whether 'key' or "key" occurs in text for some key: one scan for the keys made of word characters
    (a quoted key is the whole word run after its quote), a substring test for any other."""
    if word_keys and not word_keys.isdisjoint(word for _, word in _QUOTED_WORD.findall(text)):
        return True
    return any(f"'{key}'" in text or f'"{key}"' in text for key in other_keys)


def key_string_findings(context: DriftContext) -> list[Finding]:
    return key_string_join(context, [key_string_part(context, 0, 1)])


def key_string_part(context: DriftContext, part: int, parts: int) -> list[tuple[int, list[Finding]]]:
    """The findings of every parts-th upstream change, from the part-th: (the change's place, its findings)."""
    readers: dict[str, list[tuple[str, int, str | None]]] = defaultdict(list)
    for path, lines in sorted(fork_added_lines(context.upstream_old, context.fork).items()):
        if path.endswith(PY):
            for key, reads in key_reads(read_text(context.fork, path) or "", lines).items():
                readers[key].extend((path, line, container) for line, container in reads)
    readers = _reading_upstream(context, readers)
    if not readers:
        return []
    word_keys = {key for key in readers if _WORD.fullmatch(key)}
    found = []
    for number, change in enumerate(changes_with_renames(context.upstream_old, context.upstream_new)):
        if number % parts == part:
            findings = _change_findings(context, change, readers, word_keys)
            if findings:
                found.append((number, findings))
    return found


def _reading_upstream(context: DriftContext, readers: dict[str, list[tuple[str, int, str | None]]]
                      ) -> dict[str, list[tuple[str, int, str | None]]]:
    """The reads that can only mean upstream's production. A key the reading file writes itself, or that
    FlagTree's own code of the reader's backend (third_party/<b>/) writes, resolves to that write, the
    nearest one, as a name resolves to the nearest declaration: an example reading its own config dict, a
    backend driver reading the metadata its own compiler makes (issue 33: 14 of 14 such on the 3.7 move)."""
    keys_by_file: dict[str, set[str]] = defaultdict(set)
    for key, reads in readers.items():
        for path, _, _ in reads:
            keys_by_file[path].add(key)
    own: dict[str, set[str]] = {}  # reader file or backend dir -> keys it produces
    for path, keys in keys_by_file.items():
        own[path] = written_keys(read_text(context.fork, path) or "", keys)
    by_backend: dict[str, set[str]] = defaultdict(set)
    for path, keys in keys_by_file.items():
        backend = backend_root(path)
        if backend is not None:
            by_backend[backend] |= keys
    if by_backend:
        for path in sorted(fork_added_lines(context.upstream_old, context.fork)):
            backend = backend_root(path)
            if backend in by_backend and path.endswith(PY):
                keys = by_backend[backend]
                text = read_text(context.fork, path) or ""
                if any(key in text for key in keys):  # cheap: a write spells the key (quoted, or a class's field)
                    own[backend] = own.get(backend, set()) | written_keys(text, keys)
    out: dict[str, list[tuple[str, int, str | None]]] = {}
    for key, reads in readers.items():
        kept = [read for read in reads if key not in own.get(read[0], set())
                and key not in own.get(backend_root(read[0]) or "", set())]
        if kept:
            out[key] = kept
    return out


def key_string_join(context: DriftContext, shares: list[list[tuple[int, list[Finding]]]]) -> list[Finding]:
    """The findings of all parts, in the order of the changes."""
    return [finding for _, findings in sorted(item for share in shares for item in share) for finding in findings]


def _change_findings(context: DriftContext, change: Change, readers: dict[str, list[tuple[str, int, str | None]]],
                     word_keys: set[str]) -> list[Finding]:
    """What one upstream change did to the keys FlagTree's lines read (word_keys: those that are one word)."""
    if not change.old_path.endswith(PY) or change.status == "added" or not _produces_runtime_data(change.old_path):
        return []
    keys = set(readers)
    before = read_text(context.upstream_old, change.old_path) or ""
    if not _mentions_quoted(before, word_keys, keys - word_keys):
        return []  # cheap: no key FlagTree reads is written as a string here
    old_producers, old_writes = producers(before, keys)
    if not old_producers:
        return []  # only a key upstream produced at the old tag can be reported: no need to parse after
    after = read_text(context.upstream_new, change.new_path) or "" if change.new_path else ""
    new_producers, new_writes = producers(after, keys)
    findings = []
    for key in sorted(set(old_producers) | set(new_producers)):
        if old_producers.get(key) == new_producers.get(key) or key not in old_producers:
            continue  # unchanged, or a producer upstream only added (nothing FlagTree relied on)
        reads = [(line, container) for _, line, container in readers[key]]
        level = grade(reads, old_writes.get(key, []), new_writes.get(key, []))
        if level is None:
            continue
        found = readers[key]
        if level == "warning":
            found, level = _reading_what_upstream_wrote(found, old_writes.get(key, []))
        findings.append(_finding(context, change.old_path, change.new_path or change.old_path, before, after, key,
                                 found, old_producers[key], new_producers.get(key, []), level))
    return findings


def _reading_what_upstream_wrote(readers: list[tuple[str, int, str | None]], before: list[Production]
                                 ) -> tuple[list[tuple[str, int, str | None]], str]:
    """The reads of a key that the warning stands on, and its level: only reads from the container upstream
    wrote the key to (a read of `options.k` is not a read of `metadata["k"]`), and a warning only when one of
    them is in code the build ships (a test or tutorial reading it is no break of FlagTree's compiled or
    imported code: a review)."""
    written = {production.container for production in before}
    kept = [read for read in readers if read[2] is None or read[2] in written] or readers
    shipped = any(_produces_runtime_data(path) for path, _, _ in kept)
    return kept, "warning" if shipped else "review"


def _finding(context: DriftContext, old_path: str, path: str, before: str, after: str, key: str,
             readers: list[tuple[str, int, str | None]], old: list[str], new: list[str], level: str) -> Finding:
    reader, line, _ = readers[0]
    files = list(dict.fromkeys(f"{p}:{n}" for p, n, _ in _first_per_file(readers)))
    stopped = not new
    what = "no longer produces it here" if stopped else "changed how it produces it"
    more = f" and {len(files) - 1} more file(s)" if len(files) > 1 else ""
    why = ("read from the same name upstream writes it to" if level == "warning" else
           "same kind of value, or a container that cannot be named: review")
    return Finding(
        "key-string" if level == "warning" else "key-string-review", path,
        f"FlagTree reads {key!r} ({reader}:{line}{more}); upstream {what}: {'; '.join(old)[:160]} -> "
        f"{'; '.join(new)[:160] or 'nothing'} ({why})",
        backend=backend_of(context.owners.owners, reader), related_path=reader,
        diff=hunks_with(text_diff(before, after, old_path, path), key),
        details={"key": key, "readers": files[:10],
                 "read_from": sorted({c for _, _, c in readers if c}),
                 "upstream": "stopped" if stopped else "changed",
                 "confidence": "medium" if level == "warning" and stopped else "low"})


def _first_per_file(readers: list[tuple[str, int, str | None]]) -> list[tuple[str, int, str | None]]:
    seen: dict[str, tuple[str, int, str | None]] = {}
    for reader in readers:
        seen.setdefault(reader[0], reader)
    return list(seen.values())
