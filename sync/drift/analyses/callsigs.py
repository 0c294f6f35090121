"""Call signatures: FlagTree-added calls whose callee's parameter list upstream changed between the tags.

The callee is resolved by scope, never by a bare name alone:
- C++ builders TableGen generates (`X::get(...)`, `create<Op>(...)`, `Op::create(...)`) resolve to a
  record of a .td file upstream changed, and only when the calling file includes (directly or through
  one header) a header of that .td's directory, and its backend keeps no copy of that directory under
  third_party/<b>/include/ (its build reads the copy, which upstream does not change);
- Python calls resolve through the file's imports to a function of an upstream module, unless the calling
  backend ships its own copy of that module under third_party/<b>/python/ (its build installs that copy);
- a Python call of a pybind method (`builder.name(...)`) resolves to the `.def("name", ...)` of a C++
  file of the branch; when that binding's body holds a call reported above whose parameters changed
  meaning (renamed, added, dropped), the Python call is reported too (the values it passes through the
  binding may carry the old meaning: the v3.6 fix of tle changed both) as binding-caller-review, an info: the
  call fits its binding and the break is in the C++ body; when only a type changed, the fix is where the C++
  value is built and the Python call is listed in that finding (python_callers).
A call is reported when its argument count fits an old overload and no new one (kind call-no-overload, an error:
a C++ call will not compile, a Python call raises TypeError each time it runs), or fits both but the parameters at
the positions it passes were renamed (call-signature, a warning); a parameter that only changed type breaks a call only
when FlagTree spells the argument with the old type (in the argument, or where the variable it passes is
declared or assigned): a value of a type upstream renamed along, from a getter or `auto`, still fits.

One finding per upstream change and backend (issue 33): every FlagTree call of one changed builder (or one
changed Python function, or one pybind method whose body is broken) in a backend's code is a site of one
finding (details.sites, path:line), at the first site, with the upstream commit(s) that changed the
declaration and their PR numbers when the tags are known: a rename upstream made once is read once."""
from __future__ import annotations

import ast
import re
from typing import Any, Callable, Hashable
from dataclasses import dataclass
from functools import lru_cache
from posixpath import dirname

from sync.git import GitTree, changes_with_renames
from sync.facts.cmakebuilt import unbuilt
from sync.facts.layout import third_party_owner
from sync.model import Finding
from sync.facts.trees import read_text
from sync.drift.context import DriftContext, cached_function_table
from sync.facts.cppcalls import (CppCall, builder_calls, builder_spellings, call_nodes, dialect_namespaces, file_aliases,
                                  include_dir, included_location_builders, names_op, qualifier, receiver_types,
                                  trunk_dialect_dirs)
from sync.facts.delta import CPP, PY, TD, backend_of, fork_added_lines, text_diff
from sync.facts.pyblobs import Extractor, python_fact
from sync.facts.pysource import FunctionFacts, Param
from sync.facts.tdsigs import Overload, Record, records
from sync.facts.upstreamlog import Commits, changing_commits, one_per_change


@dataclass(frozen=True)
class Broken:
    call_path: str
    line: int
    callee: str
    why: str
    upstream_path: str
    diff: str
    # Only a parameter's type changed (the argument is spelled with the old one): fixed where the C++ value is
    # built; a caller that passes values through a pybind binding is not concerned.
    retyped: bool = False
    declaration: str = ""  # the changed record, e.g. "attr CTAEncodingAttr": the upstream change it stands on
    new_upstream_path: str = ""  # the .td defining it at the new tag
    # Its argument count fits no builder at the new tag: the call will not compile (call-no-overload, error).
    fits_none: bool = False


@dataclass(frozen=True)
class RecordChange:
    old: Record
    new: Record


def changed_records(old: GitTree, new: GitTree) -> dict[str, list[RecordChange]]:
    """Records of upstream-changed .td files whose overloads differ between the tags, by C++ name."""
    changes: dict[str, list[RecordChange]] = {}
    for change in changes_with_renames(old, new):
        if not change.old_path.endswith(TD) or change.new_path is None or change.status == "added":
            continue
        before = {r.cpp_name: r for r in records(change.old_path, read_text(old, change.old_path) or "")}
        after = {r.cpp_name: r for r in records(change.new_path, read_text(new, change.new_path) or "")}
        for name, record in before.items():
            if name in after and after[name].overloads != record.overloads:
                changes.setdefault(name, []).append(RecordChange(record, after[name]))
    return changes


@lru_cache(maxsize=4)
def gone_records(old: GitTree, new: GitTree) -> frozenset[str]:
    """C++ names of the records (attributes, types, ops) that upstream-changed .td files declared at the old tag
    and no changed or added .td file declares at the new one: types upstream removed or renamed."""
    before: set[str] = set()
    after: set[str] = set()
    for change in changes_with_renames(old, new):
        if change.old_path.endswith(TD) and change.status != "added":
            before |= {r.cpp_name for r in records(change.old_path, read_text(old, change.old_path) or "")}
        if change.new_path is not None and change.new_path.endswith(TD):
            after |= {r.cpp_name for r in records(change.new_path, read_text(new, change.new_path) or "")}
    return frozenset(before - after)


def _same_but_gone_types(old: tuple[tuple[str, str], ...], new: tuple[tuple[str, str], ...],
                         gone: frozenset[str]) -> bool:
    """Whether two parameter lists differ only at parameters whose old type is a record upstream took away
    (CTAEncodingAttr CTALayout -> CGAEncodingAttr CGALayout): such a parameter breaks no call by itself. A value
    of the old type is spelled, or returned by a declaration the same change took away, where the break is
    reported (symbol-removed, member-removed); a getter's value that upstream retyped along fits."""
    return len(old) == len(new) and any(was != now for was, now in zip(old, new)) and all(
        (_spelling(was[1]) == _spelling(now[1]) and builder_type(was[0]) == builder_type(now[0]))
        or not gone.isdisjoint(_CPP_WORD.findall(builder_type(was[0])))
        for was, now in zip(old, new))


def _verdict(overloads_old: tuple[Overload, ...], overloads_new: tuple[Overload, ...], call: CppCall,
             text: str, typed: bool = True, gone: frozenset[str] = frozenset()) -> tuple[str, bool, bool] | None:
    """Why the call no longer fits, whether only a parameter's type changed, and whether no overload at the new
    tag takes its argument count (it will not compile); None: it still fits.
    typed: an overload whose result Type the call fills with a Value does not take it (_value_as_type); off where
    FlagTree edited the record itself, whose merged builders the tag's records alone do not tell.
    gone: the records upstream took away; a parameter of one of those types is no finding of its own."""
    count = call.count
    takes = lambda o: o.fits(count) and not (typed and _value_as_type(o, call, text))
    fit_old = [o for o in overloads_old if takes(o)]
    blocked = [(o, _unconvertible_argument(fit_old, o, count)) for o in overloads_new if takes(o)]
    fit_new = [o for o, found in blocked if found is None]
    if not fit_old:
        return None  # the call did not fit before either: not a call this record describes
    if not fit_new and blocked:
        new, found = blocked[0]
        assert found is not None
        index, what = found
        kind, name = new.params[index - new.leading]
        return (f"{count} argument(s) fit {fit_old[0].text()} at the old tag; at the new tag argument {index + 1} "
                f"goes to {builder_type(kind)} {name}, which {what} converts to: "
                + "; ".join(o.text() for o in overloads_new)), False, True
    if not fit_new:
        return (f"{count} argument(s) fit {fit_old[0].text()} at the old tag and no overload at the new tag: "
                + "; ".join(o.text() for o in overloads_new)), False, True
    used = lambda o: o.params[:max(count - o.leading, 0)]
    # C++ passes arguments by position: a parameter renamed only in spelling (sizePerThread__ -> sizePerThread)
    # changes nothing a call passes; a new name of another meaning (unpacked -> colStride) does.
    names = lambda o: [_spelling(name) for _, name in used(o)]
    if any(names(n) == names(o) and [t for t, _ in used(n)] == [t for t, _ in used(o)] for n in fit_new for o in fit_old):
        return None
    if gone and any(_same_but_gone_types(used(o), used(n), gone) for n in fit_new for o in fit_old):
        return None  # only parameters of a type upstream took away changed: the break is where that type is
    retyped = [(o, n) for o in fit_old for n in fit_new if names(o) == names(n)]
    if retyped:
        # The same parameters with other types: a value of the type upstream renamed along (a getter's result,
        # `auto`) still fits; only an argument FlagTree spells with the old type is known not to.
        why = next((why for o, n in retyped for why in [_retyped_argument(o, n, used, call, text)] if why), None)
        return (why, True, False) if why else None
    before, after = used(fit_old[0]), used(fit_new[0])
    first = next(i for i in range(max(len(before), len(after)))
                 if i >= len(before) or i >= len(after) or before[i] != after[i])
    was = f"{before[first][0]} {before[first][1]}" if first < len(before) else "nothing"
    now = f"{after[first][0]} {after[first][1]}" if first < len(after) else "nothing"
    return f"argument {first + 1} was {was}, is {now} ({fit_old[0].text()} -> {fit_new[0].text()})", False, False


_SCALAR = re.compile(r"(?:const\s+)?(?:std::)?(?:unsigned(?:\s+int)?|int|bool|float|double|size_t|u?int(?:8|16|32|64)_t)"
                     r"(?:\s*&)?")
# What an MLIRContext* converts to: itself, a pointer to void, bool.
_TAKES_A_CONTEXT = re.compile(r"(?:const\s+)?(?:(?:::)?(?:\w+::)*MLIRContext|void)\s*\*(?:\s*const)?|bool")
_ATTR_OR_TYPE_CLASS = re.compile(r"(?:const\s+)?(?:::)?(?:\w+::)*\w*(?:Attr|Attribute|Type)(?:\s*&)?")


def _unconvertible_argument(fit_old: list[Overload], new: Overload, count: int) -> tuple[int, str] | None:
    """The first argument (its index in the call) this new overload cannot take, and what it was, where every old
    overload the call fit took it as
    - a number or bool, and the new one as an MLIR attribute or type class: no number converts to one
      (TensorMemoryEncodingAttr::get's `unsigned CTASplitM` became `CGAEncodingAttr CGALayout` on the 3.7 move: a
      call of the old five arguments fits the new arity, and does not compile);
    - the MLIRContext* ODS puts first in a `get` it does not infer the context of, and the new one as a declared
      parameter a context pointer does not convert to (TensorDescType::get(ctx, blockTy, isSigned) on
      triton_v3.5.x onto 3.7, where every builder became TypeBuilderWithInferredContext).
    None: no such argument."""
    if new.leading == 0 and new.params and fit_old and all(old.leading > 0 for old in fit_old) \
            and not _TAKES_A_CONTEXT.fullmatch(builder_type(new.params[0][0])):
        return 0, "no MLIRContext*"
    for index in range(new.leading, min(count, new.leading + len(new.params))):
        now = builder_type(new.params[index - new.leading][0])
        if not _ATTR_OR_TYPE_CLASS.fullmatch(now):
            continue
        olds = [builder_type(old.params[index - old.leading][0]) for old in fit_old
                if old.leading <= index < old.leading + len(old.params)]
        if olds and len(olds) == len(fit_old) and all(_SCALAR.fullmatch(was) for was in olds):
            return index, "no number"
    return None


def _edited_by_flagtree(fork: GitTree, record: Record) -> bool:
    """Whether FlagTree's trunk holds the record with other builders than upstream's old tag (its own attribute
    added, as tle's flagtree_hints on tt.load): the upgraded record is FlagTree's merge of both."""
    mine = {r.cpp_name: r for r in _fork_records(fork, record.path)}.get(record.cpp_name)
    return mine is not None and mine.overloads != record.overloads


def _calls_flagtrees_own_builder(fork: GitTree, record: Record, call: CppCall, text: str) -> bool:
    """Whether the call passes, at a parameter that only FlagTree's own builders of the record declare (a name no
    builder of upstream's old record has), an argument spelled with that parameter's type (`getStringAttr("")`
    for tle's `StringAttr flagtree_hints` on tt.load): the call is of FlagTree's builder, which upstream never
    had, so what upstream did to its own builders says nothing about it (the record's merge is the question)."""
    mine = {r.cpp_name: r for r in _fork_records(fork, record.path)}.get(record.cpp_name)
    if mine is None or mine.overloads == record.overloads:
        return False
    upstream_names = {_spelling(name) for overload in record.overloads for _, name in overload.params}
    for overload in mine.overloads:
        if overload in record.overloads or not overload.fits(call.count):
            continue
        for position, (kind, name) in enumerate(overload.params):
            index = overload.leading + position
            if _spelling(name) in upstream_names or index >= min(call.count, len(call.arguments)):
                continue
            words = set(_CPP_WORD.findall(builder_type(kind))) - _NOT_A_TYPE_NAME
            argument = call.arguments[index]
            if any(re.search(rf"(?:\b|get){re.escape(word)}\b", argument) for word in words) \
                    or _spelled_with(argument, words, text, call.line):
                return True
    return False


@lru_cache(maxsize=64)
def _fork_records(fork: GitTree, path: str) -> list[Record]:
    return records(path, read_text(fork, path) or "")


def _value_as_type(overload: Overload, call: CppCall, text: str) -> bool:
    """Whether the call passes a variable declared as a Value where the overload takes a result Type (ODS's
    builders with explicit result types): an mlir::Value never converts to a Type, so the overload cannot take it."""
    for position, (kind, _) in enumerate(overload.params):
        index = overload.leading + position
        if not kind.startswith("result type") or index >= len(call.arguments):
            continue
        variable = call.arguments[index].strip().lstrip("&*").strip()
        if not variable.isidentifier():
            continue
        above = _text_above(text, call.line)
        if re.search(rf"\b(?:mlir::)?Value\s*&?\s*\b{re.escape(variable)}\s*[,)=;]", above):
            return True
    return False


def _text_above(text: str, line: int) -> str:
    """The text before the given line (1-based, as tree-sitter counts lines: by "\n")."""
    starts = _line_starts(text)
    return text[:starts[min(line, len(starts)) - 1]]


@lru_cache(maxsize=8)
def _line_starts(text: str) -> tuple[int, ...]:
    """The offset each line of the text starts at (one scan per text, not one per call asked about)."""
    return (0,) + tuple(match.end() for match in re.finditer("\n", text))


def _spelling(name: str) -> str:
    """A parameter name without the underscores and case that TableGen renames shuffle."""
    return name.replace("_", "").lower()


_CPP_WORD = re.compile(r"[A-Za-z_]\w*")
_NOT_A_TYPE_NAME = frozenset("const unsigned signed int long short char bool float double void auto struct class "
                             "typename mlir llvm triton gpu std".split())


_NOT_AN_OPERAND = re.compile(r"Attr|Prop|Param")


def builder_type(kind: str) -> str:
    """The C++ type a builder takes for one `ins` entry: a quoted type as written (the first argument of CArg
    and of a parameter wrapper: DefaultValuedParameter<"unsigned", "1">), and an op operand's type constraint
    (TT_Type, Optional<TT_Type>, AnyTypeOf<...>) as the Value the generated builder takes (ValueRange for
    Variadic<...>); attributes, properties and named parameter kinds stay as written (issue 33, the 3.5.x -> 3.7
    move: `Optional<TT_Type>:$other` was read as a retyped `Value`)."""
    kind = kind.strip()
    wrapper = re.match(r"(CArg|\w*Parameter)\s*<", kind)
    if wrapper and (quoted := re.search(r'"([^"]*)"', kind)):  # the C++ type is its first argument
        return f"ArrayRef<{quoted[1]}>" if wrapper[1] == "ArrayRefParameter" else quoted[1]
    if kind.startswith('"'):
        return kind.strip('"')
    if _NOT_AN_OPERAND.search(kind):
        return kind
    return "ValueRange" if kind.startswith("Variadic<") else "Value"


def _retyped_argument(old: Overload, new: Overload, used: Callable[[Overload], tuple[tuple[str, str], ...]],
                      call: CppCall, text: str) -> str | None:
    """Why the call breaks when an overload's parameters only changed type: the first retyped argument that
    the call's text, or the declaration of the variable it passes, spells with a type name the old
    parameter type has and the new one lacks; None when no argument does."""
    for position, ((was, name), (now, _)) in enumerate(zip(used(old), used(new))):
        was, now = builder_type(was), builder_type(now)
        gone = set(_CPP_WORD.findall(was)) - set(_CPP_WORD.findall(now)) - _NOT_A_TYPE_NAME
        index = old.leading + position
        if was == now or not gone or index >= len(call.arguments):
            continue
        argument = call.arguments[index]
        evidence = _spelled_with(argument, gone, text, call.line)
        if evidence:
            return (f"argument {position + 1} ({name}) is {evidence}, the parameter was {was} and is {now} "
                    f"({old.text()})")
    return None


def _spelled_with(argument: str, names: set[str], text: str, line: int) -> str | None:
    """Where the argument's type is spelled with one of names: in the argument itself, or in the last
    declaration or assignment of the variable it is, above the call."""
    spelled = next((type_name for type_name in sorted(names) if re.search(rf"\b{type_name}\b", argument)), None)
    if spelled:
        return f"written as a {spelled} ({argument.strip()})"
    variable = argument.strip().lstrip("&*").strip()
    if not variable.isidentifier():
        return None
    above = _text_above(text, line)
    for type_name in sorted(names):
        declared = list(re.finditer(rf"\b{type_name}\b[^;{{}}()]*?\b{variable}\s*[=;({{,)]"
                                    rf"|\b{variable}\s*=[^;=][^;]*?\b{type_name}\b", above))
        if declared:
            at = above.count("\n", 0, declared[-1].start()) + 1
            return f"a {type_name}: {variable} is declared as one at line {at}"
    return None


def cpp_broken_calls(context: DriftContext, path: str, lines: frozenset[int] | None,
                     changes: dict[str, list[RecordChange]]) -> list[Broken]:
    """Calls in a fork C++ file (on the given lines; all lines when None) to changed builders."""
    text = read_text(context.fork, path) or ""
    named = [name for name in changes if name in text]  # cheap: a call only resolves to a name it spells
    if not named or unbuilt(context.fork, path):
        return []  # no changed builder spelled, or a file the build leaves out
    included_dirs = trunk_dialect_dirs(context.fork, path)
    if not any(include_dir(change.old.path) in included_dirs or dirname(path) == dirname(change.old.path)
               for name in named for change in changes[name]):
        return []  # no changed builder is in scope here: parsing could not find a call to report
    if builder_spellings(text).isdisjoint(named):
        return []  # no `X::get(`, `X::create(` or `create<X>(` spelling: _parse_calls could find no call of X
    calls = [call for call in builder_calls(text) if call.callee in changes and (lines is None or call.line in lines)]
    if not calls:
        return []
    suppliers = included_location_builders(context.fork, path, text) if any(call.dropped for call in calls) \
        else frozenset()
    if suppliers:
        # `self.create<Op>(...)` on a TritonOpBuilder: the builder supplies the Location, every argument is the op's
        calls = [call.with_location_supplied() if call.dropped and receiver_types(call, text) & suppliers else call
                 for call in calls]
    namespaces = dialect_namespaces(context.upstream_old)
    aliases = file_aliases(context.fork, text)
    broken = []
    for call in calls:
        for change in changes[call.callee]:
            if (third_party_owner(path), change.old.path) in context.replaced_by_backend:
                continue  # the backend builds its own version of that .td (a TableGen overlay): its builders stand
            if include_dir(change.old.path) not in included_dirs and dirname(path) != dirname(change.old.path):
                continue  # not in scope: the file never sees that dialect's headers
            if not names_op(qualifier(call), namespaces.get(include_dir(change.old.path), frozenset()), aliases):
                continue  # `gcu::LoadOp` is the backend's own op, not upstream's tt.load: another declaration
            verdict = _verdict(change.old.overloads, change.new.overloads, call, text,
                               typed=not _edited_by_flagtree(context.fork, change.old),
                               gone=gone_records(context.upstream_old, context.upstream_new))
            if verdict and not verdict[2] and _calls_flagtrees_own_builder(context.fork, change.old, call, text):
                continue  # FlagTree's own builder (a parameter upstream never had): not upstream drift
            if verdict:
                why, retyped, fits_none = verdict
                broken.append(Broken(path, call.line, f"{call.written} ({change.old.kind} {call.callee})", why,
                                     change.old.path, text_diff(change.old.source, change.new.source,
                                                                change.old.path, change.new.path), retyped,
                                     f"{change.old.kind} {call.callee}", change.new.path, fits_none))
    return broken


# --- Python -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PyCall:
    target: str  # dotted name of the callee as resolved through imports, e.g. triton.language.semantic.f
    attribute: str | None  # for x.name(...) calls: name (pybind candidates)
    line: int
    positional: int
    keywords: tuple[str, ...]
    starred: bool


def _py_calls(text: str, lines: frozenset[int]) -> list[PyCall]:
    """The calls on the given lines (from the blob's facts: one shared parse, cached by blob id)."""
    return [call for call in python_fact("calls", text) if call.line in lines]


def _py_call_items(nodes: list[ast.AST]) -> list[tuple]:
    """The import aliases ("alias", local, target) and calls ("call", dotted callee, attribute, line,
    positional, keywords, starred) among some nodes of the shared walk, in walk order."""
    items: list[tuple] = []
    for node in nodes:
        if isinstance(node, ast.Call):
            attribute = node.func.attr if isinstance(node.func, ast.Attribute) else None
            starred = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
            items.append(("call", _dotted(node.func), attribute, node.lineno, len(node.args),
                          tuple(k.arg for k in node.keywords if k.arg), starred))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                items.append(("alias", alias.asname or alias.name, f"{node.module}.{alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                head = alias.name.split(".")[0]
                items.append(("alias", alias.asname or head, alias.name if alias.asname else head))
    return items


def _all_py_calls(items: list[tuple] | None) -> list[PyCall]:
    """Every call, its callee resolved through the module's imports: all of them, the last one of a name
    in walk order winning, before any call is resolved (an import may follow the call it serves)."""
    if items is None:
        return []
    aliases = {item[1]: item[2] for item in items if item[0] == "alias"}
    calls = []
    for kind, dotted, attribute, line, positional, keywords, starred in (i for i in items if i[0] == "call"):
        target = ""
        if dotted:
            head, _, rest = dotted.partition(".")
            if head in aliases:
                target = aliases[head] + ("." + rest if rest else "")
        calls.append(PyCall(target, attribute, line, positional, keywords, starred))
    return calls


CALLS = Extractor("calls", 1, _py_call_items, _all_py_calls,
                  encode=lambda calls: [[c.target, c.attribute, c.line, c.positional, list(c.keywords), c.starred]
                                        for c in calls],
                  decode=lambda stored: [PyCall(str(t), None if a is None else str(a), int(n), int(p),
                                                tuple(map(str, k)), bool(s)) for t, a, n, p, k, s in stored],
                  reads=frozenset({ast.Call, ast.ImportFrom, ast.Import}))


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _module_files(dotted: str) -> list[tuple[str, str]]:
    """(file, qualname in it) candidates for a dotted callee such as triton.language.semantic.f."""
    parts = dotted.split(".")
    out = []
    for cut in range(len(parts) - 1, 0, -1):
        base = "python/" + "/".join(parts[:cut])
        qualname = ".".join(parts[cut:])
        out += [(base + ".py", qualname), (base + "/__init__.py", qualname)]
    return out


def _fits(params: tuple[Param, ...], call: PyCall) -> bool:
    if call.starred:
        return True
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    positional = [p for p in params if p.kind in ("positional_only", "positional")]
    if len(positional) < call.positional and not any(p.kind == "var_positional" for p in params):
        return False
    named = {p.name for p in params if p.kind in ("positional", "keyword_only")}
    if any(k not in named for k in call.keywords) and not any(p.kind == "var_keyword" for p in params):
        return False
    given = {p.name for p in positional[:call.positional]} | set(call.keywords)
    return all(p.has_default or p.name in given for p in params
               if p.kind in ("positional_only", "positional", "keyword_only"))


@dataclass
class _BrokenCallee:
    """A callee whose parameters changed, and the lines of a file whose calls of it no longer fit."""
    target: str
    module_path: str
    new_path: str | None
    before: FunctionFacts
    after: FunctionFacts
    lines: list[int]


Sited = tuple[tuple[str, ...], list[str], Finding]  # the upstream change a finding stands on, its sites, the finding


def _python_findings(context: DriftContext, path: str, lines: frozenset[int], bindings: dict[str, list[Broken]],
                     callers: dict[str, list[str]]) -> list[Sited]:
    """One finding per changed callee and file (a file calls one function from many lines: xpu's libdevice
    calls extern_elementwise 198 times), at its first call that no longer fits, listing the others; each with
    the upstream change it stands on and its sites (path:line), for one_per_change."""
    findings: list[Sited] = []
    broken: dict[str, _BrokenCallee | None] = {}  # target -> its change, None: unchanged or not upstream's
    for call in _py_calls(read_text(context.fork, path) or "", lines):
        if call.target:
            if call.target not in broken:
                broken[call.target] = _changed_callee(context, path, call.target)
            callee = broken[call.target]
            if callee is not None and _fits(callee.before.params, call) and not _fits(callee.after.params, call):
                callee.lines.append(call.line)
        elif call.attribute in bindings and (chain := _visible(bindings[call.attribute], path)):
            first = next((item for item in chain if not item.retyped), None)
            if first is None:
                # Only types changed behind the binding: its C++ body is fixed where the value is built, and
                # the Python call needs no change; the C++ finding lists it.
                callers.setdefault(call.attribute, []).append(f"{path}:{call.line}")
                continue
            change = ("builder", first.upstream_path, first.new_upstream_path, first.declaration,
                      f"pybind {call.attribute} {first.call_path}:{first.line}")
            # info: the call fits the binding, and the break is in the binding's C++ body, reported there;
            # judged on three moves, none of these calls broke (what they pass follows how the body is fixed)
            findings.append((change, [f"{path}:{call.line}"], Finding(
                "binding-caller-review", path,
                f"FlagTree calls the pybind method {call.attribute}, bound in {first.call_path}, whose body calls "
                f"{first.callee}: {first.why}; what the call passes may carry the parameter's old meaning",
                line=call.line, backend=backend_of(context.owners.owners, path), related_path=first.upstream_path,
                diff=first.diff, details={"callee": call.attribute, "resolved_by": "pybind binding",
                                          "binding": f"{first.call_path}:{first.line}"})))
    for callee in broken.values():
        if callee is None or not callee.lines:
            continue
        more = len(callee.lines) - 1
        also = f" (and {more} more call(s) here: line(s) {', '.join(map(str, callee.lines[1:6]))}" \
               f"{', ...' if more > 5 else ''})" if more else ""
        change = ("python", callee.module_path, callee.new_path or callee.module_path, callee.before.qualname, "")
        findings.append((change, [f"{path}:{line}" for line in callee.lines], Finding(
            "call-no-overload", path,
            f"FlagTree calls {callee.target} ({callee.module_path}); its parameters changed upstream: "
            f"({callee.before.signature}) -> ({callee.after.signature}) and the call no longer fits{also}: each "
            "call raises TypeError (will not run as is)",
            line=callee.lines[0], backend=backend_of(context.owners.owners, path), related_path=callee.new_path,
            diff=text_diff(callee.before.source, callee.after.source, callee.module_path,
                           callee.new_path or callee.module_path),
            details={"callee": callee.target, "resolved_by": "import", "lines": callee.lines})))
    return sorted(findings, key=lambda sited: sited[2].line or 0)


def _changed_callee(context: DriftContext, path: str, target: str) -> _BrokenCallee | None:
    """The upstream function a dotted callee resolves to, when its parameters changed between the tags."""
    for module_path, qualname in _module_files(target):
        if context.own_copy(path, module_path):
            return None  # the backend's build installs its own copy of the module, which upstream does not change
        old_table = context.function_table(context.upstream_old, module_path)
        if old_table is None or qualname not in old_table and qualname + ".__init__" not in old_table:
            continue
        key = qualname if qualname in old_table else qualname + ".__init__"
        new_path = context.new_path(module_path)
        new_table = context.function_table(context.upstream_new, new_path) if new_path else None
        after = (new_table or {}).get(key)
        before = old_table[key]
        if after is None or after.params == before.params:
            return None
        return _BrokenCallee(target, module_path, new_path, before, after, [])
    return None


def _visible(chain: list[Broken], path: str) -> list[Broken]:
    """The broken calls of a binding that a Python file can reach: a backend's Python runs with its own
    backend's bindings or trunk's (cambricon's semantic.py never calls a method iluvatar's ir.cc binds);
    trunk Python runs with any backend's."""
    own = third_party_owner(path)
    return chain if own is None else [item for item in chain if third_party_owner(item.call_path) in (None, own)]


def _binding_spans(text: str) -> list[tuple[str, int, int]]:
    """`.def("name", ...)` pybind calls: (name, first line, last line)."""
    spans = []
    for node, function, arguments in call_nodes(text):
        if function.type != "field_expression":
            continue
        field = function.child_by_field_name("field")
        first = arguments.named_children[0] if arguments.named_children else None
        if field is not None and field.text in (b"def", b"def_static") and first is not None \
                and first.type == "string_literal":
            name = (first.text or b"").decode("utf-8", errors="replace").strip('"')
            # the argument list, not the call: chained .def(...).def(...) calls nest inside each other
            spans.append((name, arguments.start_point[0] + 1, arguments.end_point[0] + 1))
    return spans


def call_signature_findings(context: DriftContext) -> list[Finding]:
    return call_signature_join(context, [call_signature_part(context, 0, 1)])


def call_signature_part(context: DriftContext, part: int, parts: int) -> list[tuple[str, list[Broken]]]:
    """The broken builder calls on FlagTree's lines of every parts-th fork C++ file, from the part-th."""
    changes = changed_records(context.upstream_old, context.upstream_new)
    if not changes:
        return []
    added = fork_added_lines(context.upstream_old, context.fork)
    cpp_files = [path for path in sorted(added) if path.endswith(CPP)]
    return [(path, broken) for path in cpp_files[part::parts]
            if (broken := cpp_broken_calls(context, path, added[path], changes))]


def call_signature_join(context: DriftContext, shares: list[list[tuple[str, list[Broken]]]]) -> list[Finding]:
    """The findings from every part's broken C++ calls, and FlagTree's Python calls (of pybind methods whose
    bodies make those calls, or of upstream functions whose parameters changed)."""
    added = fork_added_lines(context.upstream_old, context.fork)
    broken_by_path = dict(sorted(item for share in shares for item in share))
    bindings: dict[str, list[Broken]] = {}
    for path, broken in broken_by_path.items():
        if ".def(" in (read_text(context.fork, path) or ""):
            for name, start, end in _binding_spans(read_text(context.fork, path) or ""):
                inside = [item for item in broken if start <= item.line <= end]
                if inside:
                    bindings.setdefault(name, []).extend(inside)
    findings: list[Sited] = []
    callers: dict[str, list[str]] = {}  # pybind method -> the Python calls of it on FlagTree's lines
    python = [finding for path, lines in sorted(added.items()) if path.endswith(PY)
              for finding in _python_findings(context, path, lines, bindings, callers)]
    for path, broken in broken_by_path.items():
        for item in broken:
            reached = {name: callers[name] for name, chain in bindings.items() if item in chain and name in callers}
            via = "".join(f"; Python reaches it through the pybind method {name} ({len(calls)} call(s), e.g. "
                          f"{calls[0]}), and those calls need no change" for name, calls in sorted(reached.items()))
            details: dict[str, object] = {"callee": item.callee, "resolved_by": "includes",
                                          "declaration": item.declaration, "reason": item.why}
            if reached:
                details["python_callers"] = {name: calls for name, calls in sorted(reached.items())}
            kind = "call-no-overload" if item.fits_none else "call-signature"
            built = " (will not build as is)" if item.fits_none else ""
            # the kind is part of the change's key: sites that will not build fold apart from those that still do
            findings.append((("builder", item.upstream_path, item.new_upstream_path, item.declaration, "", kind),
                             [f"{path}:{item.line}"], Finding(
                kind, path, f"FlagTree calls {item.callee}, whose builders changed upstream: {item.why}{built}{via}",
                line=item.line, backend=backend_of(context.owners.owners, path), related_path=item.upstream_path,
                diff=item.diff, details=details)))
    return one_per_change(findings + python, _changing_commits(context), _merged_details)


def _merged_details(findings: list[Finding], sites: list[str]) -> dict[str, Any]:
    """What the per-site findings of one change add to the first one's details: the callee as each site spells
    it, each site's reason when they differ, and every Python caller of a binding that only a type broke."""
    out: dict[str, Any] = {}
    callees = sorted({str(finding.details.get("callee")) for finding in findings})
    if len(callees) > 1:
        out["callees"] = callees
    reasons = {f"{finding.path}:{finding.line}": str(finding.details["reason"]) for finding in findings
               if "reason" in finding.details}
    if len(set(reasons.values())) > 1:
        out["reasons"] = reasons
    callers: dict[str, list[str]] = {}
    for finding in findings:
        for name, calls in dict(finding.details.get("python_callers") or {}).items():
            callers.setdefault(name, [])
            callers[name] += [call for call in calls if call not in callers[name]]
    if callers:
        out["python_callers"] = dict(sorted(callers.items()))
    return out


def _changing_commits(context: DriftContext) -> Commits | None:
    """The upstream commits that changed a call-signature finding's declaration (its parameters), with the
    tags' commits; None when the tags are not known (drift of two trees)."""
    if context.range is None:
        return None
    old, new = context.range.old.oid, context.range.onto.oid
    memo: dict[tuple[str, ...], tuple[list[tuple[str, str]], int]] = {}
    # The declarations of one .td file read the same versions of it: each version's records are read once.
    builders: dict[tuple[str, str], dict[str, tuple[tuple[Overload, ...], ...]]] = {}

    def overloads(path: str, text: str) -> dict[str, tuple[tuple[Overload, ...], ...]]:
        if (path, text) not in builders:
            found: dict[str, list[tuple[Overload, ...]]] = {}
            for record in records(path, text):
                found.setdefault(record.cpp_name, []).append(record.overloads)
            builders[path, text] = {name: tuple(each) for name, each in found.items()}
        return builders[path, text]

    def of(change: tuple[str, ...]) -> tuple[list[tuple[str, str]], int]:
        kind, old_path, new_path, name = change[:4]
        key = (kind, old_path, new_path, name)
        if key not in memo:
            if kind == "builder":
                cpp_name = name.rsplit(" ", 1)[-1]
                read: Callable[[str], Hashable] = lambda text: overloads(old_path, text).get(cpp_name, ())
            else:
                read = lambda text: getattr((cached_function_table(text) or {}).get(name), "params", None)
            memo[key] = changing_commits(context.repo, old, new, (old_path, new_path), read)
        return memo[key]
    return of
