"""How a feature-gate rule would score on the moves of bench/corpus.toml, before and without a replay.

    .venv/bin/python bench/feature_gates.py

Per move, on the FlagTree source tree against its old upstream tag (read-only, from the mirror), two rules
over trunk C++ files, each scored against the move's expected files (what the fixes touched):

- broad: any FlagTree-added code line (not blank, comment or preprocessor) outside the positive branch of
  a macro the fork's CMake defines (and upstream's does not) that gates FlagTree-added lines somewhere;
- feature-ungated: the rule of sync/drift/analyses/featuregates.py (only lines naming the gated component).

Nothing is written; the numbers are what docs/accuracy.md quotes for the choice between the two.
"""
from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pygit2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sync.drift.context import DriftContext  # noqa: E402
from sync.facts.delta import CPP, fork_added_lines  # noqa: E402
from sync.drift.analyses.featuregates import defined_macros, feature_gate_findings, gated_lines  # noqa: E402
from sync.git import GitTree  # noqa: E402
from sync.facts.trees import read_text  # noqa: E402

from accuracy import CORPUS, is_trunk  # noqa: E402


def _code(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith(("//", "/*", "*", "#"))


def broad_rule(context: DriftContext) -> set[str]:
    macros = set(defined_macros(context.fork)) - set(defined_macros(context.upstream_old))
    added = {p: lines for p, lines in fork_added_lines(context.upstream_old, context.fork).items() if p.endswith(CPP)}
    regions = {p: gated_lines(read_text(context.fork, p) or "", macros) for p in added}
    gating = {m for p, lines in added.items() for line in lines for m in regions[p].get(line, ())}
    flagged = set()
    for path, lines in added.items():
        if not is_trunk(path) or path.startswith("third_party/"):
            continue
        text = (read_text(context.fork, path) or "").splitlines()
        if any(_code(text[line - 1]) and not gating <= regions[path].get(line, set()) for line in lines
               if line <= len(text)):
            flagged.add(path)
    return flagged if gating else set()


def main() -> int:
    for move in tomllib.loads(CORPUS.read_text())["move"]:
        repo = pygit2.Repository(move["mirror"])
        old = move["old"]
        if "single-commit" in move.get("method", ""):
            old = str(repo.revparse_single(move["source"]).peel(pygit2.Commit).parents[0].id)
        tree = lambda rev, label: GitTree(repo, repo.revparse_single(rev).peel(pygit2.Commit).tree, label)
        context = DriftContext(repo, tree(old, "old"), tree(move["onto"], "new"), tree(move["source"], "fork"), None)
        expected = {item["path"] for item in move["expected"]}
        print(f"=== move {move['id']}")
        rules = {"broad": broad_rule(context),
                 "feature-ungated": {f.path for f in feature_gate_findings(context)}}
        for name, flagged in rules.items():
            hits = flagged & expected
            precision = f"{len(hits) / len(flagged):.2f}" if flagged else "-"
            print(f"  {name:16} trunk files {len(flagged):3}  expected {len(hits):3}  precision {precision}")
            for path in sorted(flagged):
                print(f"    {'hit' if path in expected else 'fp '}  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
