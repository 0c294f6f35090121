"""The trunk hook call-site index: every spec/spec_func/spec_path call in python/triton, and the hijacked packages."""
from __future__ import annotations

from dataclasses import dataclass, field
from posixpath import dirname

from sync.facts.layout import SpecFile, package_of, trunk_rel
from sync.facts.trees import FileTree, read_text
from sync.facts.pyfacts import parse_module_facts
from sync.facts.pysource import HookSite, ModuleFacts, mentions_hooks


@dataclass
class TrunkHooks:
    """Hook call sites in python/triton of one tree."""

    sites: list[HookSite] = field(default_factory=list)
    facts: dict[str, ModuleFacts] = field(default_factory=dict)  # only files that mention hooks
    hijacked: set[str] = field(default_factory=set)  # package dirs (relative to python/triton)

    def by_name(self) -> dict[str, list[HookSite]]:
        named: dict[str, list[HookSite]] = {}
        for site in self.sites:
            if site.name:
                named.setdefault(site.name, []).append(site)
        return named

    def is_overlay(self, spec_file: SpecFile) -> bool:
        """An overlay shadows a trunk module because its package calls spec_path."""
        return spec_file.is_python and package_of(spec_file.rel) in self.hijacked


def index_trunk_hooks(tree: FileTree) -> TrunkHooks:
    hooks = TrunkHooks()
    for path in tree.paths():
        if not path.endswith(".py") or trunk_rel(path) is None:
            continue  # outside trunk, or a backend's spec tree kept under python/triton/spec/
        text = read_text(tree, path)
        if text is None or not mentions_hooks(text):
            continue
        facts = parse_module_facts(path, text)
        hooks.facts[path] = facts
        hooks.sites.extend(facts.hooks)
        if path.endswith("/__init__.py") and any(site.kind == "spec_path" for site in facts.hooks):
            hooks.hijacked.add(dirname(trunk_rel(path) or ""))
    return hooks
