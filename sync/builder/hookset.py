"""The hook-set patcher of the FlagTree triton build: applies patches/hooks.toml to an upstream triton package with libcst.

Structural edits instead of line-context patches: "after the docstring", "after the last
import", "at the end", "after def f" hold on the next Triton tag even when lines move.
Only libcst and the standard library are imported here: the build uses this module too.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from sync.errors import SyncError
from sync.records.tomlfiles import Table, Text, TomlFileError, load_toml

HOOK_KINDS = ("spec_path", "spec", "spec_func", "spec_key")
HOOK_SET_SCHEMA = Table(fields={"triton": Text(required=False)}, arrays={"hook": Table(fields={
    "kind": Text(), "file": Text(), "call": Text(required=False), "name": Text(required=False)})})
IMPORT_LINE = "from triton.flagtree_spec import {name}\n"


@dataclass(frozen=True)
class Hook:
    kind: str
    file: str  # relative to the triton package
    call: str = ""  # for spec: the call statement
    name: str = ""  # for spec_func: the function name

    @property
    def statement(self) -> str:
        if self.kind == "spec_path":
            return "spec_path(__path__)"
        if self.kind == "spec":
            return self.call
        if self.kind == "spec_key":
            return f"{self.name} = spec_key({self.name})"
        return f'{self.name} = spec_func("{self.name}", {self.name})' if self.wraps else \
            f'{self.name} = spec_func("{self.name}")'

    wraps: bool = False  # spec_func of a function trunk defines: trunk's is the default


@dataclass(frozen=True)
class HookSet:
    triton: str
    hooks: tuple[Hook, ...]


def load_hook_set(path: Path) -> HookSet:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SyncError(f"cannot read hook set {path}: {exc}") from exc
    try:
        document = load_toml(text, str(path), HOOK_SET_SCHEMA)
    except TomlFileError as exc:
        raise TomlFileError(exc.where, exc.line, f"cannot read hook set: {exc.problem}") from exc
    hooks = []
    for index, entry in enumerate(document.data.get("hook", [])):
        kind, label = entry["kind"], f"[[hook]] entry {index + 1}"
        if kind not in HOOK_KINDS:
            raise document.error(f"{label} needs kind, one of {', '.join(HOOK_KINDS)}, not {kind!r}", "hook", index,
                                 "kind")
        if kind == "spec" and not entry.get("call"):
            raise document.error(f"{label} needs call", "hook", index, "call")
        if kind in ("spec_func", "spec_key") and not entry.get("name", "").isidentifier():
            raise document.error(f"{label} needs name, a Python identifier", "hook", index, "name")
        hooks.append(Hook(kind, entry["file"], entry.get("call", ""), entry.get("name", "")))
    return HookSet(document.data.get("triton", ""), tuple(hooks))


class HookError(SyncError):
    """A hook that no longer applies to this Triton."""


def _is_docstring_or_future(statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
        return True
    return isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and \
        small.module.value == "__future__"


def _is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def _statement(code: str, comment: str | None = None) -> cst.SimpleStatementLine | cst.BaseCompoundStatement:
    parsed = cst.parse_statement(code + "\n")
    if comment:
        parsed = parsed.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine(comment=cst.Comment(comment))])
    return parsed


def _bare(module: cst.Module, statement: cst.BaseStatement) -> str:
    """A statement's code without the comments and blank lines above it."""
    return module.code_for_node(statement.with_changes(leading_lines=())).strip()


def apply_hook(source: str, hook: Hook) -> str:
    """The source with the hook inserted; unchanged when it is already there."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise HookError(f"{hook.file}: cannot parse ({exc.message})") from exc
    hook_name = hook.kind
    if hook.kind == "spec_func":
        defined = {s.name.value for s in module.body if isinstance(s, cst.FunctionDef)}
        hook = Hook(hook.kind, hook.file, hook.call, hook.name, wraps=hook.name in defined)
    if hook.kind == "spec_key" and hook.name not in {s.name.value for s in module.body if isinstance(s, cst.FunctionDef)}:
        raise HookError(f"{hook.file}: spec_key needs a top-level def {hook.name or '(no name given)'} to wrap")
    present = {_bare(module, statement) for statement in module.body}
    if hook.statement in present:
        return source
    body: list[cst.SimpleStatementLine | cst.BaseCompoundStatement] = list(module.body)
    head = 0
    while head < len(body) and _is_docstring_or_future(body[head]):
        head += 1
    has_import = IMPORT_LINE.format(name=hook_name).strip() in present
    label = {"spec_path": "path ", "spec_func": "func ", "spec_key": "kernel cache key "}.get(hook.kind, "")
    call = _statement(hook.statement, f"# flagtree backend {label}specialization")
    if hook.kind == "spec_path":
        body[head:head] = [_statement(IMPORT_LINE.format(name=hook_name).strip()), call]
    else:
        if hook.kind == "spec":
            imports = [index for index, statement in enumerate(body) if _is_import(statement)]
            if not imports:
                raise HookError(f"{hook.file}: no import to place {hook.statement} after")
            body.insert(imports[-1] + 1, call)
        else:
            body.append(call)
        if not has_import:
            body.insert(head, _statement(IMPORT_LINE.format(name=hook_name).strip()))
    return module.with_changes(body=body).code


def apply_hook_set(package: Path, hook_set: HookSet) -> list[str]:
    """Apply every hook in place under a triton package directory; returns the files changed."""
    changed = []
    for hook in hook_set.hooks:
        target = package / hook.file
        if not target.is_file():
            raise HookError(f"hook {hook.kind} no longer applies: {hook.file} does not exist in {package}")
        before = target.read_text(encoding="utf-8")
        after = apply_hook(before, hook)
        if after != before:
            target.write_text(after, encoding="utf-8")
            changed.append(hook.file)
    return changed


def check_hook_set(package: Path, hook_set: HookSet) -> list[tuple[Hook, str | None]]:
    """Each hook with None when it applies to this package, else why not (nothing is written)."""
    results: list[tuple[Hook, str | None]] = []
    for hook in hook_set.hooks:
        target = package / hook.file
        if not target.is_file():
            results.append((hook, f"{hook.file} does not exist"))
            continue
        try:
            apply_hook(target.read_text(encoding="utf-8"), hook)
            results.append((hook, None))
        except HookError as exc:
            results.append((hook, str(exc)))
    return results
