"""Accuracy of the upgrade report over the real upgrade moves of bench/corpus.toml (issue 12).

    .venv/bin/python bench/accuracy.py [--move ID]

Per move: a throw-away `git clone --shared` of the mirror under /tmp (deleted afterwards), the full
upgrade through sync.jobs.run_upgrade, then the trunk files the report names (conflicts, and the path
of every open error/warning finding) scored against the move's `expected` files: per finding kind the
files flagged, hits, precision; misses with their reason class; recall over all expected files and over
the upstream-related ones; and the evidence of every hit (message and diff head), so that a reader can
tell a name coincidence. A single-commit move (`method` says so) replays only that commit (base: its
parent). Nothing here knows an expected answer: the corpus is read, never written.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sync.jobs.upgrade import ReplayChoices, UpgradeOptions, run_upgrade  # noqa: E402

CORPUS = Path(__file__).with_name("corpus.toml")
NOT_TRUNK = ("third_party/", ".github/", "docs/", "dockerfiles/", "python/tutorials/", "test/", "python/test/",
             "unittest/")


def is_trunk(path: str) -> bool:
    return not path.startswith(NOT_TRUNK) and not path.endswith(".md") and "/test/" not in path


def flagged(report, levels: tuple[str, ...] = ("error", "warning", "port")) -> dict[str, list[tuple[str, str]]]:
    """Trunk file -> (kind, evidence) for each reason the report names it at these severities."""
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for commit in report.commits:
        for conflict in commit.conflicts:
            out[conflict.path].append(("conflict:" + conflict.kind, f"conflict replaying {commit.source[:9]}"))
    for finding in [*report.findings, *report.notes]:
        if finding.severity in levels and finding.suppressed is None:
            head = "\n      ".join((finding.diff or "").splitlines()[2:6])
            # a finding per upstream change flags the file of each of its sites, as one per site did
            for path in dict.fromkeys(path for path, _ in sites_of(finding)):
                out[path].append((finding.kind, finding.message[:300] + (f"\n      {head}" if head else "")))
    return {path: reasons for path, reasons in out.items() if is_trunk(path)}


def score(move: dict, found: dict[str, list[tuple[str, str]]]) -> None:
    if not move["expected"]:  # a move keyed by breaks and a judged sample only (see score_breaks)
        return
    expected = {item["path"]: item for item in move["expected"]}
    related = {path for path, item in expected.items() if item["upstream_related"]}
    hits = set(found) & set(expected)
    print(f"trunk files flagged {len(found)}, expected {len(expected)} ({len(related)} upstream-related)")
    precision = len(hits) / len(found) if found else 0.0
    print(f"all expected:        hits {len(hits)}  precision {precision:.2f}  recall {len(hits) / len(expected):.2f}")
    rel_hits = hits & related
    print(f"upstream-related:    hits {len(rel_hits)}  recall {len(rel_hits) / len(related):.2f}" if related else "")
    by_kind: dict[str, set[str]] = defaultdict(set)
    for path, reasons in found.items():
        for kind, _ in reasons:
            by_kind[kind].add(path)
    print("per kind (files flagged / hits / precision):")
    for kind, paths in sorted(by_kind.items()):
        kind_hits = paths & set(expected)
        print(f"  {kind:28} {len(paths):3} {len(kind_hits):3}  {len(kind_hits) / len(paths):.2f}")
    print("misses:")
    for path in sorted(set(expected) - hits):
        item = expected[path]
        print(f"  {item['class']:22} {path}  ({item['sure']})")
    print("false positives (flagged, not expected):")
    for path in sorted(set(found) - set(expected)):
        print(f"  {path}: {', '.join(sorted({kind for kind, _ in found[path]}))}")
    print("evidence of every hit:")
    for path in sorted(hits):
        print(f"  {path}  [expected {expected[path]['class']}]")
        for kind, evidence in found[path]:
            print(f"    {kind}: {evidence}")


def sites_of(finding) -> list[tuple[str, int | None]]:
    """Every FlagTree site a finding stands for: its own place and, for a grouped finding, details["sites"]."""
    out: list[tuple[str, int | None]] = [(finding.path, finding.line)]
    for site in finding.details.get("sites", []):
        path, _, line = str(site).rpartition(":")
        out.append((path, int(line)) if line.isdigit() else (str(site), None))
    return out


def said(finding) -> list[tuple[str, list[tuple[str, int | None]], str]]:
    """(text, sites, severity) of what a finding says: its message and sites, or, for a finding folded from
    several declarations (details.declarations), each declaration's own message and sites, as the finding of
    that declaration said them."""
    parts = finding.details.get("declarations")
    if not parts:
        return [(finding.message, sites_of(finding), finding.severity)]
    return [(f"{part['declaration']}: {part['message']}",
             [(path, int(line)) for path, _, line in (str(site).rpartition(":") for site in part["sites"])],
             finding.severity) for part in parts]


_REGEX_WORDS = {"loc", "rewriter", "true", "false"}


def break_names(item: dict) -> set[str]:
    """The declaration names a break is about, read from its pattern (identifiers of 4+ characters)."""
    import re
    pattern = re.sub(r"\\[A-Za-z]", " ", item["pattern"])  # \b, \s: escapes, not names
    return {word for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", pattern)} - _REGEX_WORDS


def score_breaks(move: dict, report) -> None:
    """Recall on the move's hand-found build breaks and precision per kind on its judged sample."""
    findings = [f for f in [*report.findings, *report.notes] if f.suppressed is None]
    if move.get("breaks"):
        hit_any = hit_error = sites_total = sites_hit = 0
        for item in move["breaks"]:
            names = break_names(item)
            naming = [unit for f in findings if f.severity in ("error", "warning", "port") for unit in said(f)
                      if any(n in unit[0] for n in names)]
            covered = {(path, line) for _, places, _ in naming for path, line in places}
            covered_paths = {path for path, _ in covered}
            sites = [(path, int(line)) for path, _, line in (s.rpartition(":") for s in item["sites"])]
            hit = [site for site in sites if site in covered or site[0] in covered_paths]
            errors = [unit for unit in naming if unit[2] == "error"
                      and any(p in {s[0] for s in sites} for p, _ in unit[1])]
            sites_total += len(sites)
            sites_hit += len(hit)
            hit_any += bool(hit)
            hit_error += bool(errors)
            print(f"  break {item['id']:28} sites {len(hit):3}/{len(sites):3} reported"
                  f"{'  as error' if errors else ('  as warning or port' if hit else '  MISSED')}")
        count = len(move["breaks"])
        print(f"breaks reported: {hit_any}/{count}, as errors: {hit_error}/{count} ({hit_error / count:.2f}); "
              f"sites in a reported file: {sites_hit}/{sites_total}")
    if move.get("sample"):
        judged: dict[tuple[str, str, int], str] = {(s["kind"], s["path"], s["line"]): s["verdict"] for s in move["sample"]}
        # A copy in a backend that builds against trunk drifts as copy-stale (issue 33): the entries judged under
        # the overlay kind it had count for it too.
        judged.update({("copy-stale", path, line): verdict for (kind, path, line), verdict in list(judged.items())
                       if kind in ("overlay-conflicting", "overlay-auto-mergeable", "overlay-orphan")})
        # A judged entry is one FlagTree site (a finding per site, or the first site of a finding per file or per
        # upstream change). It counts as reported when a reported finding of its kind has it among its sites,
        # or (the line moved) when its file holds exactly one reported site of the kind and one judged entry,
        # or (a finding per upstream change none of whose sites was judged) when it has a site in its file.
        reported: dict[tuple[str, str, int], str] = {}
        unjudged: dict[str, int] = defaultdict(int)
        site_lines: dict[tuple[str, str], set[int]] = defaultdict(set)
        judged_in_file: dict[tuple[str, str], list[tuple[str, str, int]]] = defaultdict(list)
        for key in judged:
            judged_in_file[key[:2]].append(key)
        shown = [f for f in findings if f.severity in ("error", "warning", "port")]
        for f in shown:
            for path, line in sites_of(f):
                site_lines[(f.kind, path)].add(line or 0)
        for f in shown:
            places = list(dict.fromkeys((f.kind, path, line or 0) for path, line in sites_of(f)))
            keys = [place for place in places if place in judged]
            for kind, path, _ in places:
                only = judged_in_file.get((kind, path), [])
                if len(only) == 1 and only[0] not in keys and len(site_lines[(kind, path)]) == 1 \
                        and only[0][2] not in site_lines[(kind, path)]:
                    keys.append(only[0])
            if not keys and f.details.get("sites"):  # as before: the judged entries of the files under its sites
                keys = [key for key in judged if key[0] == f.kind and key[1] in {path for _, path, _ in places}]
            for key in keys:
                reported[key] = judged[key]
            if not keys:
                unjudged[f.kind] += 1
        by_kind: dict[str, list[str]] = defaultdict(list)
        for (kind, _, _), verdict in sorted(reported.items()):
            by_kind[kind].append(verdict)
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for f in shown:
            counts[f"{f.kind} ({f.severity})"][0] += 1
            counts[f"{f.kind} ({f.severity})"][1] += len(set(sites_of(f)))
        print("errors and warnings per kind (findings / FlagTree sites under them):")
        for kind, (number, sites) in sorted(counts.items()):
            print(f"  {kind:40} {number:4} / {sites:4}")
        print("sample precision per kind (judged sites a reported finding holds: true / weak / false; precision "
              "counts true+weak):")
        for kind in sorted(set(by_kind) | {s["kind"] for s in move["sample"]}):
            v = by_kind.get(kind, [])
            good = sum(x in ("true", "weak") for x in v)
            total = len(v)
            judged_total = sum(1 for s in move["sample"] if s["kind"] == kind)
            print(f"  {kind:28} reported {total:3} of {judged_total:3} judged  true {v.count('true'):3}  weak "
                  f"{v.count('weak'):3}  false {v.count('false'):3}  precision "
                  f"{(good / total) if total else float('nan'):.2f}  (unjudged reported: {unjudged.get(kind, 0)})")
        for kind, n in sorted(unjudged.items()):
            if kind not in by_kind and all(s["kind"] != kind for s in move["sample"]):
                print(f"  {kind:28} unjudged reported: {n}")
        # Copies that replace nothing of trunk's became info kinds of their own (issue 33); entries judged under
        # the overlay kind they had are matched by their new kind, to show what moved to info.
        renamed = {"copy-conflicting": "overlay-conflicting", "copy-mergeable": "overlay-auto-mergeable",
                   "copy-orphan": "overlay-orphan"}
        moved: dict[str, list[str]] = defaultdict(list)
        for f in findings:
            if f.severity == "info" and f.kind in renamed:
                for path, line in sites_of(f):
                    verdict = judged.get((renamed[f.kind], path, line or 0))
                    if verdict is not None:
                        moved[f.kind].append(verdict)
        for kind, verdicts in sorted(moved.items()):
            print(f"  {kind:28} (info) holds {len(verdicts):3} judged as {renamed[kind]}: true "
                  f"{verdicts.count('true'):3}  weak {verdicts.count('weak'):3}  false {verdicts.count('false'):3}")
        severities: dict[str, int] = defaultdict(int)
        for f in findings:
            severities[f.severity] += 1
        print("findings by severity: " + ", ".join(f"{k} {v}" for k, v in sorted(severities.items())))


def review_only(move: dict, found: dict, with_reviews: dict) -> None:
    """What review-level (info) findings of the issue-12 kinds would add: not counted as flagged above."""
    expected = set(item["path"] for item in move["expected"])
    extra = {path: sorted({kind for kind, _ in reasons if kind.endswith("-review")})
             for path, reasons in with_reviews.items() if path not in found}
    extra = {path: kinds for path, kinds in extra.items() if kinds}
    print(f"review-level only (info, not counted as flagged): {len(extra)} file(s), "
          f"{len(set(extra) & expected)} of them expected")
    for path, kinds in sorted(extra.items()):
        print(f"  {path}: {', '.join(kinds)}{'  [expected]' if path in expected else ''}")


def run_move(move: dict) -> None:
    print(f"\n=== move {move['id']}")
    clone = Path(tempfile.mkdtemp(prefix="flagtree-acc-", dir="/tmp"))
    try:
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", move["mirror"], str(clone / "r")],
                       check=True)
        old = move["old"]
        if "single-commit" in move.get("method", ""):
            old = subprocess.run(["git", "-C", str(clone / "r"), "rev-parse", move["source"] + "^"], check=True,
                                 capture_output=True, text=True).stdout.strip()
            print(f"single-commit move: replay base {old[:9]} (the source's parent)")
        start = time.perf_counter()
        report = run_upgrade(str(clone / "r"), old=old, onto=move["onto"], source_branch=move["source"],
                             options=UpgradeOptions(replay=ReplayChoices(target_branch="accuracy/run"), force=True))
        print(f"upgrade: {time.perf_counter() - start:.0f} s")
        score(move, flagged(report))
        score_breaks(move, report)
        if not move["expected"]:
            return
        review_only(move, flagged(report), flagged(report, ("error", "warning", "port", "info")))
    finally:
        shutil.rmtree(clone, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--move", help="only this move id")
    args = parser.parse_args()
    moves = tomllib.loads(CORPUS.read_text())["move"]
    for move in moves:
        if args.move is None or move["id"] == args.move:
            run_move(move)
    return 0


if __name__ == "__main__":
    sys.exit(main())
