"""Breaks found against the answer keys of bench/keys/ (issue 45): one command per development move.

    .venv/bin/python bench/breaks.py [--key bench/keys/ID.toml ...] [--show-errors]

Each key was written from git alone before the tool ran on its move (bench/keys/README.md). Per move: a throw-away
`git clone --shared` of the key's mirror under /tmp (deleted afterwards), the full upgrade (sync.jobs.run_upgrade),
then each key break scored: reported as an error when the replay conflicted on its path (or the report says
upstream moved the conflicted file there) or an open error names its path among its sites and names its
declaration: one of its identifiers (of a path in it, the last part), or a path it spells, in any case; as a
warning (or port work) likewise. A key names the hand port's paths: where the person who ported moved a file
(git's renames source..hand), the report's path counts as the hand port's. Breaks of a kind no rule was written
for (`new_kind = true`) are counted apart. --show-errors lists every open error and warning, for judging.
Nothing here knows a verdict: the keys are read, never written.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sync.jobs.upgrade import UpgradeOptions, run_upgrade  # noqa: E402
from sync.replay.options import ReplayChoices  # noqa: E402
from sync.report.document import render_json  # noqa: E402

KEYS = Path(__file__).with_name("keys")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{5,}")
_GENERIC = frozenset({"triton", "header", "module", "backend", "target", "removed", "renamed", "source", "method",
                      "python", "options", "library", "function", "include", "abstract",
                      # words of the prose a key's declaration is written in, which any finding may spell too
                      "upstream", "tablegen", "declared", "defines", "default", "changed", "called", "argument",
                      "arguments", "parameter", "parameters", "signature", "global", "headers", "targets", "sources",
                      "generated", "output", "instead", "longer", "through", "because", "replaced"})


def decl_words(decl: str) -> set[str]:
    """The identifiers of a key's declaration, one of which a finding must spell to name it; of a path only its
    last part (`include/triton/Dialect/Triton/IR/TritonInterfaces.td` gives TritonInterfaces, not Dialect: a
    directory on the way names no declaration, and every finding on that tree spells it)."""
    spelled = " ".join(_last_named(token) if "/" in token else token for token in decl.split())
    return set(_WORD.findall(spelled)) - _GENERIC


def decl_paths(decl: str) -> set[str]:
    """The paths a key's declaration spells (without a trailing `...`), lower-cased: a finding that spells one, in
    any case, names it (upstream's `proton/dialect` -> `proton/Dialect` is a move of that path)."""
    return {path.rstrip("/").lower() for token in decl.split() if "/" in token
            for path in [token.strip("()[],;:`'\"").split("...")[0]] if path.count("/") >= 2}


def _names(finding: dict[str, Any], words: set[str], paths: set[str]) -> bool:
    spelled = json.dumps(finding)
    return any(word in spelled for word in words) or any(path in spelled.lower() for path in paths)


def _last_named(path: str) -> str:
    parts = [part for part in path.split("/") if part.strip(".")]
    return parts[-1].split(".")[0] if parts else ""


def _sites(finding: dict[str, Any], moved: dict[str, str]) -> set[str]:
    sites = finding.get("details", {}).get("sites") or []
    paths = {site.rpartition(":")[0] or site for site in sites} | {finding["path"]}
    return paths | {moved[path] for path in paths if path in moved}


def hand_renames(key: dict[str, Any]) -> dict[str, str]:
    """Source path -> the hand port's path, where the person who ported moved a file (git's rename detection of
    source..hand): a key names the hand port's paths, the report the replayed branch's, which keeps the source's."""
    if not key.get("hand"):
        return {}
    out = subprocess.run(["git", "-C", key["mirror"], "diff", "-M", "--name-status", "--diff-filter=R", key["source"],
                          key["hand"]], check=True, capture_output=True, text=True).stdout
    # a move keeps the file's name (git pairs empty files of any two names: not a move)
    return {fields[1]: fields[2] for line in out.splitlines() if len(fields := line.split("\t")) == 3
            and fields[1].rpartition("/")[2] == fields[2].rpartition("/")[2]}


def score(key: dict[str, Any], document: dict[str, Any], show_errors: bool) -> None:
    moved = hand_renames(key)
    findings = [f for group in document["groups"] for f in group.get("findings", [])
                if f["severity"] in ("error", "warning", "port") and not f.get("suppressed")]
    # a file deleted upstream counts where the report says upstream moved it (the user ports the change there)
    conflicted = {path for commit in document.get("commits", []) for c in commit.get("conflicts", [])
                  for path in (c["path"], c.get("moved_to"), moved.get(c["path"])) if path}
    counts = {"error": 0, "warning": 0, "port": 0, "missed": 0}
    new_kind = {"error": 0, "warning": 0, "port": 0, "missed": 0}
    for item in key.get("break", []):
        words, paths = decl_words(item["decl"]), decl_paths(item["decl"])
        named = [f for f in findings if item["path"] in _sites(f, moved) and _names(f, words, paths)]
        how = "error" if item["path"] in conflicted or any(f["severity"] == "error" for f in named) \
            else "warning" if any(f["severity"] == "warning" for f in named) else "port" if named else "missed"
        counts[how] += 1
        if item.get("new_kind"):
            new_kind[how] += 1
        shown = "conflict" if item["path"] in conflicted else ", ".join(sorted({f["kind"] for f in named})) or "-"
        print(f"  {how:<7} {item['class']:<18} {'new ' if item.get('new_kind') else '    '}{item['id']:<36} {shown}")
    total = len(key.get("break", []))
    total_new = sum(1 for item in key.get("break", []) if item.get("new_kind"))
    print(f"breaks as errors {counts['error']}/{total}, as warnings {counts['warning']}, as port work "
          f"{counts['port']}, missed {counts['missed']}; "
          f"of a new kind: as errors {new_kind['error']}/{total_new}")
    errors = [f for f in findings if f["severity"] == "error"]
    ported = sum(f["severity"] == "port" for f in findings)
    print(f"open errors {len(errors)}, warnings {len(findings) - len(errors) - ported}, port {ported}, "
          f"conflicted files {len(conflicted)}")
    if show_errors:  # errors, then warnings: what a judge reads finding by finding (port work is counted above)
        for finding in errors + [f for f in findings if f["severity"] == "warning"]:
            print(f"  {finding['severity']} {finding['kind']} {finding['path']}:{finding.get('line')} "
                  f"{finding['message'][:160]}")


def run_move(path: Path, show_errors: bool) -> None:
    key = tomllib.loads(path.read_text())
    print(f"\n=== {key['id']} ({path.name})")
    with tempfile.TemporaryDirectory(prefix="ft-breaks-") as scratch:
        clone = Path(scratch) / "r"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", key["mirror"], str(clone)], check=True)
        started = time.monotonic()
        report = run_upgrade(str(clone), old=key["old"], onto=key["onto"], source_branch=key["source"],
                             options=UpgradeOptions(replay=ReplayChoices(target_branch="breaks/run"), force=True))
        print(f"upgrade: {time.monotonic() - started:.0f} s")
        score(key, json.loads(render_json(report)), show_errors)
        shutil.rmtree(clone, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", type=Path, action="append", help="a key file (default: every bench/keys/*.toml)")
    parser.add_argument("--show-errors", action="store_true", help="list every open error and warning, for judging")
    args = parser.parse_args()
    for path in args.key or sorted(KEYS.glob("*.toml")):
        run_move(path, args.show_errors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
