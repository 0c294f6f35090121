"""Spec functions: does each function a backend exports still fit the trunk call site that uses it?"""
from __future__ import annotations

import difflib
from typing import Callable

from sync.model import Finding
from sync.facts.backends import BackendExports, ExportedFunction, backend_exports, entry_modules
from sync.drift.context import DriftContext
from sync.facts.callsites import TrunkHooks
from sync.facts.pysource import FunctionFacts, HookSite, Param
from sync.facts.layout import backend_dir

MODULE_SCOPE = "<module>"


def function_diff(old: FunctionFacts, new: FunctionFacts, old_path: str, new_path: str) -> str:
    """A unified diff of two definitions, line by line as written."""
    lines = difflib.unified_diff(_lines(old.source), _lines(new.source), f"a/{old_path}", f"b/{new_path}")
    return "".join(lines)


def _lines(text: str) -> list[str]:
    return [line if line.endswith("\n") else line + "\n" for line in text.splitlines(keepends=True)]


def _changed(old: FunctionFacts, new: FunctionFacts) -> list[str]:
    parts = []
    if old.signature != new.signature:
        parts.append(f"signature ({old.signature}) -> ({new.signature})")
    if old.body != new.body:
        parts.append("body")
    return parts


def call_mismatch(params: tuple[Param, ...], args: tuple[str, ...]) -> str | None:
    """Why a call passing these argument expressions cannot bind to these parameters, if it cannot."""
    if any(arg.startswith("*") for arg in args):
        return None  # *args / **kwargs at the call site: nothing can be proven statically
    positional = [arg for arg in args if not _keyword(arg)]
    keywords = [_keyword(arg) for arg in args if _keyword(arg)]
    slots = [p for p in params if p.kind in ("positional_only", "positional")]
    if len(positional) > len(slots) and not any(p.kind == "var_positional" for p in params):
        return f"the call passes {len(positional)} positional argument(s), the function takes {len(slots)}"
    names = {p.name for p in params if p.kind in ("positional", "keyword_only")}
    for keyword in keywords:
        if keyword not in names and not any(p.kind == "var_keyword" for p in params):
            return f"the call passes {keyword}=, the function has no such parameter"
    bound = {p.name for p in slots[:len(positional)]} | set(keywords)
    missing = [p.name for p in params if p.kind in ("positional_only", "positional", "keyword_only")
               and not p.has_default and p.name not in bound]
    if missing:
        return f"the call does not pass required parameter(s) {', '.join(missing)}"
    return None


def _keyword(arg: str) -> str | None:
    head, sep, _ = arg.partition("=")
    head = head.strip()
    return head if sep and head.isidentifier() and not arg.startswith("==") else None


def replacement_mismatch(backend: tuple[Param, ...], trunk: tuple[Param, ...]) -> str | None:
    """A spec_func replacement must accept every parameter the trunk function accepts."""
    names = {p.name for p in backend}
    open_kw = any(p.kind == "var_keyword" for p in backend)
    missing = [p.name for p in trunk if p.kind not in ("var_positional", "var_keyword")
               and p.name not in names and not open_kw]
    if missing:
        return f"the backend function does not accept {', '.join(missing)}"
    trunk_names = {p.name for p in trunk}
    extra = [p.name for p in backend if not p.has_default and p.kind not in ("var_positional", "var_keyword")
             and p.name not in trunk_names]
    if extra:
        return f"the backend function requires {', '.join(extra)}, which trunk callers never pass"
    return None


class SpecFunctionAnalysis:
    def __init__(self, context: DriftContext) -> None:
        self.context = context
        self._judged: dict[str, BackendExports] | None = None

    def _trunk_function(self, new_tag: bool, path: str, qualname: str) -> FunctionFacts | None:
        tree = self.context.upstream_new if new_tag else self.context.upstream_old
        table = self.context.function_table(tree, path)
        return table.get(qualname) if table is not None else None

    def findings(self) -> list[Finding]:
        found: list[Finding] = []
        fork_sites = self.context.fork_hooks.by_name()
        target_hooks = self.context.target_hooks
        target_sites = target_hooks.by_name() if target_hooks is not None else None
        for backend, exports in self._exports().items():
            for error in exports.errors:
                path, _, message = error.partition(": ")
                found.append(Finding("spec-module-unparsable", path, f"cannot parse: {message}",
                                     "fix the syntax error", backend=backend))
            for name, exported in sorted(exports.functions.items()):
                sites = fork_sites.get(name, [])
                if not sites:
                    found.append(Finding("spec-unused", exported.module_path or exports.entry,
                                         f"{name} is exported but no trunk hook calls it", "", exported.line,
                                         backend, details={"function": name}))
                for site in sites:
                    now = target_sites.get(name, []) if target_sites is not None else None
                    found.extend(self._site_findings(backend, exported, site, now))
        if not self.context.filtered:  # "no backend implements it" needs every backend's exports
            found.extend(self._unimplemented(target_hooks or self.context.fork_hooks))
        return found

    def _site_findings(self, backend: str, exported: ExportedFunction, site: HookSite,
                       now: list[HookSite] | None) -> list[Finding]:
        context = self.context
        name = exported.name
        where = exported.module_path or backend_dir(backend)
        out: list[Finding] = []

        def add(kind: str, message: str, action: str, diff: str | None = None,
                related: str | None = site.path, line: int | None = exported.facts.line if exported.facts else None,
                **details: object) -> None:
            out.append(Finding(kind, where, message, action, line, backend, related_path=related,
                               diff=diff, details={"function": name, "hook": site.kind,
                                                   "call_site": f"{site.path}:{site.line}", "scope": site.scope,
                                                   **details}))

        new_path = context.new_path(site.path)
        if new_path is None:
            add("spec-dead", f'{name}: its call site {site.path}:{site.line} is in a file deleted upstream',
                "find where upstream moved this code and hook it there, or drop the spec function")
            return out
        if now is not None and self._unparsable_on_target(new_path):
            now = None  # conflict markers: the upgrade reports that file; judge by upstream alone
        if now is not None and not now:
            add("spec-dead", f"{name}: no trunk call site left on the upgraded tree",
                "restore the hook or drop the spec function")
            return out
        current = now[0] if now else site
        if new_path != site.path or (now and current.path != site.path):
            moved_to = current.path if now else new_path
            add("spec-call-site-moved", f"{name}: call site moved {site.path} -> {moved_to}",
                "check the hook still runs where the backend expects", related=moved_to, moved_to=moved_to)
        if now and current.args != site.args:
            add("spec-call-args-changed", f"{name}: the call site now passes ({', '.join(current.args)}) instead of ({', '.join(site.args)})",
                "update the backend function to the new arguments")
        if site.scope != MODULE_SCOPE:
            old_fn = self._trunk_function(False, site.path, site.scope)
            new_fn = self._trunk_function(True, new_path, site.scope)
            if old_fn is not None and new_fn is None:
                add("spec-enclosing-removed", f"{name}: enclosing trunk function {site.scope} "
                    f"is gone from {new_path}", "re-hook the call in the code that replaced it")
            elif old_fn is not None and new_fn is not None and _changed(old_fn, new_fn):
                add("spec-enclosing-changed", f"{name}: enclosing trunk function {site.scope} changed "
                    f"upstream ({', '.join(_changed(old_fn, new_fn))})", "review the backend function against it",
                    diff=function_diff(old_fn, new_fn, site.path, new_path))
        if exported.facts is not None and site.kind == "spec":
            reason = call_mismatch(exported.facts.params, current.args)
            if reason:
                add("spec-signature-mismatch", f"{name}({exported.facts.signature}): {reason}",
                    "change the backend signature to match the call site")
        if site.kind == "spec_func":
            self._replaced_function(add, exported, site, new_path)
        return out

    def _exports(self) -> dict[str, BackendExports]:
        """The backends' functions as the upgraded branch has them when one was given: a function dropped or
        fixed there is judged as it is now; else the FlagTree branch's."""
        if self._judged is None:
            tree = self.context.backend_files
            self._judged = self.context.exports if tree is self.context.fork else {
                backend: backend_exports(tree, backend) if entry_modules(tree, backend)
                else BackendExports(backend, exports.entry)  # the branch dropped the whole spec tree
                for backend, exports in self.context.exports.items()}
        return self._judged

    def _unparsable_on_target(self, path: str) -> bool:
        target = self.context.target
        facts = self.context.module_facts(target, path) if target is not None else None
        return facts is not None and facts.error is not None

    def _replaced_function(self, add: Callable[..., None], exported: ExportedFunction, site: HookSite,
                           new_path: str) -> None:
        """spec_func("f", f) or @spec_func on def f: the backend replaces trunk's own f."""
        replaces = site.decorator or exported.name in site.args
        old_fn = self._trunk_function(False, site.path, exported.name) if replaces else None
        new_fn = self._trunk_function(True, new_path, exported.name) if replaces else None
        if old_fn is None or new_fn is None:
            return
        changes = _changed(old_fn, new_fn)
        if changes:
            add("spec-replaced-function-changed", f"{exported.name}: the trunk function it replaces "
                f"changed upstream ({', '.join(changes)})", "port the upstream change into the backend function",
                diff=function_diff(old_fn, new_fn, site.path, new_path))
        if exported.facts is not None:
            reason = replacement_mismatch(exported.facts.params, new_fn.params)
            if reason:
                add("spec-signature-mismatch", f"{exported.name}({exported.facts.signature}) no longer "
                    f"fits trunk {exported.name}({new_fn.signature}): {reason}",
                    "accept the trunk function's parameters")

    def _unimplemented(self, hooks: TrunkHooks) -> list[Finding]:
        implemented = {name for exports in self._exports().values() for name in exports.functions}
        found = []
        for name, sites in sorted(hooks.by_name().items()):
            if name not in implemented:
                site = sites[0]
                found.append(Finding("spec-unimplemented", site.path,
                                     f'{site.kind}("{name}") has no implementation in any backend', "",
                                     site.line, None, details={"scope": site.scope}))
        return found


def spec_function_findings(context: DriftContext) -> list[Finding]:
    return SpecFunctionAnalysis(context).findings()
