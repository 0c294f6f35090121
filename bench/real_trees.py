"""Score check, drift and describe on real FlagTree branches against bench/real_trees.toml.

The answer key was written by people reading each tree with git before any run of the tool. For every
expectation this prints hit or miss with the file, and for check it lists the findings no expectation
names (a reader decides whether each is a false positive). Not a test: it needs the fetched repositories.

    python bench/real_trees.py [--key bench/real_trees.toml] [--only ID] [--no-upgrade]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sync.facts.owners import OwnerIndex  # noqa: E402
from sync.check.policy import check_tree  # noqa: E402
from sync.errors import SyncError  # noqa: E402
from sync.git import GitTree, open_repo  # noqa: E402
from sync.jobs import DriftOptions, ReplayChoices, UpgradeOptions, run_drift, run_upgrade  # noqa: E402
from sync.jobs.describe import describe_tree  # noqa: E402

POLICY_RULES = {"root-hijack": {"FT001"}, "parent-child": {"FT003"}, "root-file": {"FT018"},
                "spec-path-not-allowed": {"FT001", "FT002"}, "redundant-overlay": {"FT005"},
                "overlay-contained-in-trunk": {"FT006"}, "relative-import-in-spec-module": {"FT009"},
                "trunk-backend-selection": {"FT010"}, "init-in-overlay-dir": {"FT007"},
                "subpackage-unreachable": {"FT019"}, "setup-copy": {"FT022"}, "package-copy": {"FT023"},
                "renamed-copy": {"FT024"}}


def judge(expect: dict[str, Any], model: dict[str, Any], findings: list, context: dict[str, Any]) -> tuple[bool, str]:
    kind, path, backend = expect["kind"], expect.get("path", ""), expect.get("backend", "")
    data = model["backends"].get(backend, {})
    files = data.get("files", {})
    if kind == "hijack":
        if not path:
            return not model["hijacked"], f"hijacked: {model['hijacked'] or 'none'}"
        return path in model["hijacked"], ""
    if kind in ("overlay", "new-module", "spec-module", "td-overlay"):
        role = files.get(path, "not a spec file")
        shape = data.get("unreachable_shape", {}).get(path)
        if role == "unreachable" and shape == kind:
            return True, f"tool: {kind}, and unreachable (FT019)"
        if kind == "spec-module" and role == "entry":
            return True, "tool: the spec entry module"
        return role == kind, f"tool: {role}"
    if kind == "backend":
        found = data.get("mechanisms", [])
        return sorted(found) == sorted(expect["mechanisms"]), f"tool: {found or 'none'}"
    if kind in ("setup-copy", "package-copy", "renamed-copy"):
        role, counterpart = files.get(path, "not a spec file"), data.get("copies", {}).get(path)
        return role == kind and counterpart == expect["trunk"], f"tool: {role} of {counterpart}"
    if kind == "package-new":  # no trunk file at the upstream base; FlagTree's trunk may have one of its own
        role = files.get(path, "not a spec file")
        base = context.get("base")
        own = role == "package-copy" and base is not None and not base.exists(data["copies"].get(path, ""))
        return role == "new-module" or own, f"tool: {role}"
    if kind == "not-copy":
        return files.get(path) != "renamed-copy", f"tool: {files.get(path, 'not a spec file')}"
    if kind == "path-owner":
        owners = context["owners"].owners(path)
        return backend in owners, f"tool: {owners}"
    if kind == "root-spec-file":
        wanted = {"spec-module"} if expect.get("role") == "spec-module" else {"root-file", "direct-edit"}
        return files.get(path) in wanted, f"tool: {files.get(path, 'not a spec file')}"
    if kind == "spec-function":
        return expect["name"] in data.get("exports", {}), ""
    if kind == "call-site":
        if expect.get("defined") is False:
            return expect["name"] in model["unimplemented"], "tool: implemented" if expect["name"] not in \
                model["unimplemented"] else ""
        sites = [s for s in data.get("call_sites", []) if s["name"] == expect["name"] and s["path"] == path]
        return bool(sites), ""
    if kind == "cpp-macro":
        where = data.get("macros", {}).get(expect["name"], "")
        stray = data.get("unincluded_macros", {}).get(expect["name"], "")
        if not where and stray.startswith(path):
            return True, "tool: defined in a header flagtree_spec.h does not include (guard-macro-unreachable)"
        return where.startswith(path), f"tool: {where or 'not found'}"
    if kind == "cpp-guard":
        guards = data.get("guards", {}).get(expect["name"], [])
        return any(g["path"] == path and g["line"] == expect.get("line") for g in guards), \
            f"tool: {[(g['path'], g['line']) for g in guards][:2]}"
    if kind == "cpp-spec-impl":
        return any(path in paths for paths in data.get("library", {}).values()), ""
    if kind == "parent-child-pair":
        return any(f.code == "FT003" and f.path == expect["child"] and f.related_path == path for f in findings), ""
    if kind == "policy":
        rule = expect.get("rule", "")
        if rule == "dead-hook":
            return expect.get("name") in model["unimplemented"], ""
        codes = POLICY_RULES.get(rule)
        if codes is None:
            return False, f"no tool rule for {rule}"
        return any(f.code in codes and (f.path == path or f.related_path == path) for f in findings), ""
    if kind == "layout":
        if backend in ("", "*"):
            return bool(model["backends"]), f"backends found: {sorted(model['backends'])}"
        return backend in model["backends"] and bool(files), f"backends found: {sorted(model['backends'])}"
    if kind == "not-ancestor":
        outcome = context["not_ancestor"].get(expect["from"])
        return outcome == "refused", f"tool: {outcome}"
    if kind == "conflict-owner":
        report = context.get("upgrade")
        if report is None:
            return False, "upgrade not run"
        owners = {c.path: c.owners for commit in report.commits for c in commit.conflicts}
        verdicts = {g.name: g.verdict for g in report.groups}
        wanted = backend if backend in verdicts else None
        ok = path in owners and (wanted is None or (backend in owners[path] and verdicts[backend] != "clean"))
        return ok, f"owners {owners.get(path)}, verdict {verdicts.get(backend)}"
    return False, f"unknown kind {kind}"


def not_ancestor_outcomes(mirror: str, branch: dict[str, Any]) -> dict[str, str]:
    out = {}
    for expect in branch["expect"]:
        if expect["kind"] == "not-ancestor":
            try:
                run_drift(mirror, old=expect["from"], onto=expect["from"], source=branch["tip"], options=DriftOptions())
                out[expect["from"]] = "accepted"
            except SyncError as exc:
                out[expect["from"]] = "refused" if "is not an ancestor" in str(exc) else f"error: {exc}"
    return out


def upgrade_report(mirror: str, branch: dict[str, Any]):
    with tempfile.TemporaryDirectory(prefix="real-trees-") as scratch:
        clone = Path(scratch) / "clone.git"
        subprocess.run(["git", "clone", "-q", "--bare", "--shared", mirror, str(clone)], check=True)
        return run_upgrade(str(clone), old=branch["range_old"], onto=branch["onto"],
                           source_branch=branch["range_source"],
                           options=UpgradeOptions(replay=ReplayChoices(target_branch="sync/bench")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--key", default=str(REPO / "bench" / "real_trees.toml"))
    parser.add_argument("--only")
    parser.add_argument("--no-upgrade", action="store_true")
    args = parser.parse_args()
    key = tomllib.loads(Path(args.key).read_text())
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for branch in key["branch"]:
        if args.only and branch["id"] != args.only:
            continue
        mirror = branch["mirror"]
        repo = open_repo(mirror)
        started = time.perf_counter()
        tree = GitTree.of_commit(repo, branch["tip"], branch["branch"])
        base = GitTree.of_commit(repo, branch["base"], "base") if branch.get("base") else None
        model = describe_tree(tree, base)
        findings = check_tree(tree)
        context: dict[str, Any] = {"not_ancestor": not_ancestor_outcomes(mirror, branch), "base": base,
                                   "owners": OwnerIndex(tree)}
        if branch.get("range_source") and not args.no_upgrade:
            context["upgrade"] = upgrade_report(mirror, branch)
        elapsed = time.perf_counter() - started
        print(f"## {branch['id']} ({branch['branch']} at {branch['tip'][:9]}): {elapsed:.1f} s")
        by_kind: dict[str, list[tuple[bool, dict[str, Any], str]]] = defaultdict(list)
        for expect in branch["expect"]:
            ok, why = judge(expect, model, findings, context)
            by_kind[expect["kind"]].append((ok, expect, why))
        for kind, results in sorted(by_kind.items()):
            hits = sum(ok for ok, _, _ in results)
            totals[kind][0] += hits
            totals[kind][1] += len(results)
            print(f"  {kind:<18} {hits}/{len(results)}")
            for ok, expect, why in results:
                if not ok:
                    label = expect.get("name") or expect.get("rule") or expect.get("from", "")[:9]
                    print(f"    miss {expect.get('path') or '-'} {label} (sure {expect.get('sure')}) {why}")
        named = {(e.get("path"), code) for e in branch["expect"] if e["kind"] in ("policy", "parent-child-pair")
                 for code in POLICY_RULES.get(e.get("rule", ""), {"FT003"} if e["kind"] == "parent-child-pair" else set())}
        named |= {(e.get("path"), "FT018") for e in branch["expect"] if e["kind"] == "root-spec-file"}
        unnamed = [f for f in findings if f.severity in ("error", "warning") and (f.path, f.code) not in named
                   and (f.related_path, f.code) not in named]
        print(f"  check findings no expectation names: {len(unnamed)}")
        for finding in unnamed[:12]:
            print(f"    {finding.code} {finding.location()}: {finding.message[:110]}")
        if len(unnamed) > 12:
            print(f"    ... and {len(unnamed) - 12} more")
    print("## totals")
    for kind, (hits, count) in sorted(totals.items()):
        print(f"  {kind:<18} {hits}/{count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
