"""The replay's picks, remembered in the fact cache (kind "pick"): the same upgrade again replays nothing.

A pick is a function of git content: merge(commit's parent tree, head tree, commit tree) with the policy
that settles conflicts and the label its markers name. The key holds the commit (its tree and its parent's),
the head tree, the policy and the label, and everything else the merge could depend on (sync/git/inputs.py:
this tool's code, the libraries, the git that merges, the repository's configuration and attribute files).
A hit counts only while the merged tree is still in the object store (a pick of a scratch repository, or a
tree gc removed, is picked again). FLAGTREE_SYNC_CACHE=off disables it with the fact cache.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from sync.git import Commit, Oid, Repository, Tree
from sync.git.inputs import code_fingerprint, git_version, repository_inputs
from sync.git.repo import fact_cache, has_object
from sync.support.cache import FactCache

KIND = "pick"
VERSION = 1

Picked = tuple[str | None, list[dict[str, Any]]]  # the merged tree (None: stopped), each conflict's JSON


class PickMemo:
    def __init__(self, repo: Repository, cache: FactCache, inputs: dict[str, Any], writes: bool = True) -> None:
        self.repo = repo  # where a remembered tree must be (a scratch repository reads repo's objects too)
        self.cache = cache
        self.writes = writes  # a scratch repository's picks are not kept: their trees go with it
        document = {"code": code_fingerprint(), "git": git_version(), "repository": inputs}
        self._inputs = hashlib.sha1(json.dumps(document, sort_keys=True).encode("utf-8")).hexdigest()

    @classmethod
    def of(cls, repo: Repository, scratch: Repository | None = None) -> "PickMemo | None":
        """The memo of repo's picks; None where the fact cache is off or the clone is partial (objects come
        and go). With scratch (a scratch repository over repo's objects), picks made there read it, never
        write it."""
        cache = fact_cache(repo)
        if cache is None:
            return None
        inputs = repository_inputs(repo)
        if inputs is None:
            return None
        return cls(repo, cache, inputs) if scratch is None else cls(scratch, cache, inputs, writes=False)

    def key(self, commit: Commit, head_tree: Tree, policy: str, label: str) -> str:
        parents = [str(oid) for oid in commit.parent_ids]
        document = [self._inputs, str(commit.id), parents, str(head_tree.id), policy, label]
        return hashlib.sha1(json.dumps(document).encode("utf-8")).hexdigest()

    def get(self, key: str) -> Picked | None:
        stored = self.cache.get(KIND, VERSION, key)
        if not isinstance(stored, dict) or not isinstance(stored.get("conflicts"), list):
            return None
        tree = stored.get("tree")
        if tree is not None and (not isinstance(tree, str) or not has_object(self.repo, tree)):
            return None
        return tree, stored["conflicts"]

    def put(self, key: str, tree: Oid | None, conflicts: list[dict[str, Any]]) -> None:
        if self.writes:
            self.cache.put(KIND, VERSION, key, {"tree": None if tree is None else str(tree),
                                                "conflicts": conflicts})

    def close(self) -> None:
        self.cache.close()
