"""Markdown renderings of a Report: the release summary and one page per group.

Repository text (commit subjects, paths, messages, hunks) is untrusted: it goes into code spans
and fences that it cannot break out of, or is escaped, so a rendered page never runs its HTML.
"""
from __future__ import annotations

import hashlib
import re
from html import escape as html_escape
from typing import Any, Callable, Sequence

from sync.model import (Conflict, ConflictTally, FileConflict, Finding, GateResult, Group, Hunk, Report, Rev,
                        UpstreamChange, change_of, conflicts_by_file, open_errors, unnamed_findings,
                        upstream_changes)
from sync.model.kinds import kind_of
from sync.report.catalogue import report_link

# What could turn text into markup that matters: HTML, links and images, code spans, table cells.
# Emphasis characters stay readable: the worst they do is italicize.
_INLINE_SPECIAL = re.compile(r"([\\`\[\]<>&|])")


def text(value: str) -> str:
    """Plain text on one line, every Markdown and HTML special character escaped."""
    return _INLINE_SPECIAL.sub(r"\\\1", " ".join(value.split()))


def code(value: str) -> str:
    """An inline code span the value cannot close early; pipes escaped for tables."""
    value = " ".join(value.splitlines()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value.strip() else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def fence(value: str, language: str = "") -> list[str]:
    """A fenced code block, a line each, so that a caller can indent every line (inside a list item a line left
    at column 0 would end the block). CommonMark ends a line at a lone CR too: CRs become newlines here, so
    every line the renderer sees is one of ours, and the fence is longer than any backtick run at all."""
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [f"{ticks}{language}", *value.rstrip("\n").split("\n"), ticks]


def range_line(report: Report, literal: Callable[[str], str] = code) -> str:
    """The sentence that says what was replayed or compared; `literal` marks up each repository value."""
    rng = report.range
    if report.upgrade is not None:
        empty = sum(1 for commit in report.commits if commit.result is None)
        left_out = sum(1 for commit in report.commits if commit.upstream is not None)
        # upstream's own commits (in NEW's history, or the same patch as one there) are left out unpicked
        theirs = f", {left_out} of them upstream's own commits, not replayed" if left_out else ""
        return (f"Replayed {literal(rng.old.ref + '..' + rng.source.ref)} ({len(report.commits)} commits, {empty} "
                f"already upstream{theirs}) onto {_rev(rng.onto, literal)} as branch "
                f"{literal(report.upgrade.branch)} at {literal(report.upgrade.head[:9])} (policy "
                f"{literal(report.upgrade.policy)}).{_orphan_reverts(report, literal)}")
    target = report.drift.target if report.drift else "?"
    return (f"Drift of {literal(rng.source.ref)} from {_rev(rng.old, literal)} to {_rev(rng.onto, literal)}, "
            f"hooks judged on {literal(target)}.")


def _rev(rev: Rev, literal: Callable[[str], str]) -> str:
    """A revision as the user named it, and its commit where the name is not already that commit's id."""
    if rev.oid.startswith(rev.ref.lower()):
        return literal(rev.ref)
    return f"{literal(rev.ref)} ({literal(rev.short)})"


def _notes(report: Report) -> list[str]:
    """What looks wrong about the run's input but may be right, each a line under the range."""
    notes = report.upgrade.notes if report.upgrade is not None else ()
    return [line for note in notes for line in (f"**Note:** {text(note)}", "")]


def _orphan_reverts(report: Report, literal: Callable[[str], str]) -> str:
    """The reverts of commits the run does not replay (git rebase would replay them and conflict)."""
    reverts = [commit for commit in report.commits if commit.reverts is not None]
    if not reverts:
        return ""
    named = "; ".join(
        f"{literal(commit.source[:9])} reverts {literal(commit.reverts.commit[:9])}, "
        f"{'left out as upstream' if commit.reverts.why == 'left-out' else 'outside the range'}"
        f" ({'left out too' if commit.reverts.dropped else 'replayed'})"
        for commit in reverts if commit.reverts is not None)
    hint = "" if all(commit.reverts and commit.reverts.dropped for commit in reverts) else \
        " (upgrade --drop-orphan-reverts leaves them out)"
    return f" Reverts of commits not replayed: {named}{hint}."


def _releasable(report: Report) -> list[str]:
    if report.releasable:
        return []
    return [f"**Not releasable:** {text('; '.join(report.not_releasable_because))}.", ""]


def totals(report: Report) -> dict[str, int]:
    """The table's counts over all its groups, each conflict once: a conflict in a file several groups own
    is in the row of each of them, so the sum of the rows counts it more than once."""
    tally = ConflictTally.of(conflict for group in report.groups for conflict in group.conflicts)
    return {"conflicts": tally.open, **report.counts, "resolved": tally.resolved}


def shared_files(report: Report) -> list[tuple[str, list[str]]]:
    """Conflicted files that are in the rows of several groups, with those groups."""
    groups: dict[str, list[str]] = {}
    for group in report.groups:
        for path in sorted({conflict.path for conflict in group.conflicts}):
            groups.setdefault(path, []).append(group.name)
    return sorted((path, names) for path, names in groups.items() if len(names) > 1)


def shared_note(report: Report, literal: Callable[[str], str] = code, total: str = "the total row") -> str | None:
    """The sentence under the table that says which files count in more than one row; total names where
    they count once (the table's total row; the terminal's first line)."""
    shared = shared_files(report)
    if not shared:
        return None
    return ("A conflicted file owned by several groups counts in the row of each: "
            + "; ".join(f"{literal(path)} ({', '.join(literal(name) for name in names)})" for path, names in shared)
            + f". {total[:1].upper()}{total[1:]} counts each conflict once.")


def _table(report: Report) -> list[str]:
    lines = ["| group | kind | verdict | conflicts | errors | warnings | port | info | reviewed | resolved |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for group in report.groups:
        counts = group.counts
        lines.append(f"| [{text(group.name)}]({page_name(group.name)}) | {group.kind} | {group.verdict} | "
                     f"{counts['conflicts']} | {counts['error']} | {counts['warning']} | {counts['port']} | "
                     f"{counts['info']} | {counts['suppressed']} | {counts['resolved']} |")
    if len(report.groups) > 1:
        total = totals(report)
        lines.append(f"| total (each conflict once) | | | {total['conflicts']} | {total['error']} | "
                     f"{total['warning']} | {total['port']} | {total['info']} | {total['suppressed']} | "
                     f"{total['resolved']} |")
    note = shared_note(report)
    return lines + ["", SEVERITY_LEGEND, ""] + ([note, ""] if note else [])


# The summary's error list stays a screen per group: the group page has the rest, and every message whole.
MAX_ERRORS_PER_GROUP = 10
MAX_MESSAGE = 200
PR_TAIL = re.compile(r"\s*\(#\d+\)\s*$")


def short_message(message: str, most: int = MAX_MESSAGE) -> str:
    """A message cut at about `most` characters, at a word's end, before escaping (an escape is never cut in
    two); the group page and report.json keep the whole message."""
    if len(message) <= most:
        return message
    cut = message[:most - 1]
    at_space = cut.rfind(" ")
    return (cut[:at_space] if at_space > most // 2 else cut).rstrip(" ,;:") + "\u2026"


def counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def shown_errors(errors: list[Finding]) -> tuple[list[Finding], int]:
    """The first MAX_ERRORS_PER_GROUP errors of a group, and how many were left out."""
    return errors[:MAX_ERRORS_PER_GROUP], max(0, len(errors) - MAX_ERRORS_PER_GROUP)


def change_label(change: UpstreamChange, literal: Callable[[str], str] = code,
                 plain: Callable[[str], str] = text) -> str:
    """e.g. "#8850: `371b6445f` Rename CTAEncoding (and 1 more commit)": the PRs, then the first commit."""
    short, _, subject = change.commits[0].partition(" ")
    more = len(change.commits) - 1
    head = f"{plain(change.key)}: " if change.prs else ""
    return (f"{head}{literal(short)} {plain(PR_TAIL.sub('', subject) if change.prs else subject)}"
            + (f" (and {counted(more, 'more commit')})" if more else ""))


def unnamed_sentence(report: Report) -> str:
    return (f"Open findings that name no upstream change: {unnamed_findings(report)} "
            "(the group pages list them).")


def _errors(report: Report) -> list[str]:
    listed = open_errors(report)
    lines = [f"## Errors ({sum(len(errors) for _, errors in listed)})", ""]
    if not listed:
        return lines + ["None.", ""]
    for group, errors in listed:
        link = f"[{text(group.name)}]({page_name(group.name)})"
        shown, left_out = shown_errors(errors)
        lines += [f"**{link}** ({len(errors)}):", ""]
        for finding in shown:
            change = change_of(finding)
            lines.append(f"- [{code(finding.kind)}]({report_link(finding.spec.anchor)}) {code(finding.location())}"
                         + (f" (upstream {text(change)})" if change else "")
                         + f": {text(short_message(finding.message))}")
        if left_out:
            lines.append(f"- and {left_out} more on {link}")
        lines.append("")
    return lines


def _changes(report: Report) -> list[str]:
    changes = upstream_changes(report)
    lines = [f"## Upstream changes behind open findings ({len(changes)})", ""]
    if not changes:
        return lines + ["None." + (f" {unnamed_sentence(report)}" if unnamed_findings(report) else ""), ""]
    lines += ["| upstream change | worst | kinds | groups | sites |", "|---|---|---|---|---:|"]
    for change in changes:
        groups = ", ".join(f"[{text(share.name)}]({page_name(share.name)}) ({counted(share.findings, 'finding')}, "
                           f"{counted(share.sites, 'site')})" for share in change.groups)
        lines.append(f"| {change_label(change)} | {change.severity} | {', '.join(code(kind) for kind in change.kinds)} "
                     f"| {groups} | {change.sites} |")
    return lines + ["", unnamed_sentence(report), ""]


def _gate(gate: GateResult) -> list[str]:
    lines = ["## Test gate", "", f"Command {code(gate.command)} (at {gate.at}): {text(gate.verdict())}.", ""]
    if gate.blamed_groups:
        lines += ["Groups whose code the first failing commit changed: "
                  + ", ".join(code(name) for name in gate.blamed_groups) + ".", ""]
    for run in gate.runs:
        lines.append(f"- {code(run.commit[:9])} {text(run.label)}: {'passed' if run.passed else 'failed'} "
                     f"(exit status {run.status})")
    failed = gate.first_failure or next((run for run in gate.runs if not run.passed), None)
    if failed is not None and failed.output:
        lines += ["", f"Output of the run at {code(failed.commit[:9])} (tail):", "", *fence(failed.output)]
    return lines + [""]


def conflicted_heading(report: Report) -> str:
    tally = report.conflicts
    return f"Conflicted files ({tally.files}): {tally.open} open, {tally.resolved} resolved"


def _conflicted(report: Report) -> list[str]:
    lines = [f"## {conflicted_heading(report)}", ""]
    if not report.conflicted_files:
        return lines + ["None.", ""]
    for opened, title in ((True, "Open (resolve these):"), (False, "Resolved by hand:")):
        listed = [item for item in report.files_in_conflict if item.open is opened]
        if not listed:
            continue
        lines += [title, ""]
        for item in listed:  # a file once, with its commits (issue 48.1)
            commits = "; ".join(f"{code(c.commit[:9])} {text(c.summary)}" for c in item.conflicts)
            nested = f" Next: {text(item.next_step)}." if opened and len(item.conflicts) > 1 else ""
            lines.append(f"- {code(item.path)} ({', '.join(item.kinds)}; {item.state}) owned by "
                         + ", ".join(code(owner) for owner in item.owners) + f"; commits: {commits}.{nested}")
        lines.append("")
    return lines


def render_summary(report: Report) -> str:
    lines = ["# FlagTree upgrade summary", "", range_line(report), "", *_notes(report), *_releasable(report),
             *_table(report), *_errors(report)]
    if report.upgrade is not None or report.commits:  # open conflicts next to the errors: they block as errors do
        lines += _conflicted(report)
    lines += _changes(report)
    if report.gate is not None:
        lines += _gate(report.gate)
    if report.drift is not None and report.drift.applied_commit:
        lines += [f"Applied the clean overlay merges as {code(report.drift.applied_commit[:9])}.", ""]
    return "\n".join(lines)


# A page for a few findings must stay a page: a diff or a conflict side longer than this is cut, and the
# cut says where the whole text is (report.json keeps everything).
MAX_DIFF_LINES = 60
MAX_SIDE_LINES = 30
MAX_HUNKS = 4  # hunks shown per conflict or finding
FULL_TEXT = "report.json"


def capped(value: str, most: int) -> tuple[str, int]:
    """The first `most` lines of value, and how many lines were left out."""
    lines = value.splitlines(keepends=True)
    if len(lines) <= most:
        return value, 0
    return "".join(lines[:most]), len(lines) - most


def cut_note(left_out: int, where: str, what: str = "lines") -> str:
    return f"({left_out} more {what} left out here: the whole text is {where} in {FULL_TEXT})"


def shown_hunks(hunks: Sequence[Any]) -> tuple[list[Any], int]:
    """The first MAX_HUNKS hunks, and how many were left out."""
    return list(hunks[:MAX_HUNKS]), max(0, len(hunks) - MAX_HUNKS)


MAX_DECLARATIONS = 10  # declarations listed under a finding folded from several (details.declarations)
MAX_DECLARATION_SITES = 8  # sites listed per declaration


def folded_declarations(finding: Finding) -> tuple[list[tuple[str, int, list[str]]], int]:
    """A finding folded from several declarations: the first MAX_DECLARATIONS as (declaration, how many
    sites, the first MAX_DECLARATION_SITES of them), and how many declarations were left out."""
    parts = finding.details.get("declarations")
    if not isinstance(parts, list):
        return [], 0
    shown = []
    for part in parts[:MAX_DECLARATIONS]:
        sites = [str(site) for site in part.get("sites") or []]
        shown.append((str(part.get("declaration")), len(sites), sites[:MAX_DECLARATION_SITES]))
    return shown, max(0, len(parts) - MAX_DECLARATIONS)


def _declaration_lines(finding: Finding) -> list[str]:
    shown, left_out = folded_declarations(finding)
    if not shown:
        return []
    sites = finding.details.get("sites")
    lines = [f"  - {len(shown) + left_out} declarations, {len(sites) if isinstance(sites, list) else '?'} site(s):"]
    for declaration, count, first in shown:
        more = f" and {count - len(first)} more" if count > len(first) else ""
        lines.append(f"    - {code(declaration)} ({count}): {', '.join(code(site) for site in first)}{more}")
    if left_out:
        lines.append("    - " + cut_note(left_out, "under groups[].findings[].details.declarations", "declarations"))
    return lines


def _capped_fence(value: str, most: int, where: str, language: str = "") -> list[str]:
    shown, left_out = capped(value, most)
    return [*fence(shown, language), *([cut_note(left_out, where)] if left_out else [])]


def _hunk_lines(hunk: Hunk, where: str = "the conflict's hunk") -> list[str]:
    return ["Upgraded side:", *_capped_fence(hunk.ours, MAX_SIDE_LINES, where), "Base:",
            *(_capped_fence(hunk.base, MAX_SIDE_LINES, where) if hunk.base
              else ["(empty: the file did not have these lines)"]),
            "FlagTree side:", *_capped_fence(hunk.theirs, MAX_SIDE_LINES, where)]


def _file_conflict(item: FileConflict) -> list[str]:
    """A file once: its commits, and its hunks as the branch holds them (else as its last commit left them)."""
    commits = [f"- {code(c.commit[:9])} {text(c.summary)} ({c.kind}; {c.state})"
               + (f"; the file was {code(c.base_path)} before" if c.base_path else "") for c in item.conflicts]
    lines = [f"### {code(item.path)} ({', '.join(item.kinds)}; {item.state})", "",
             f"Commit{'s' if len(commits) > 1 else ''}:", "", *commits, "",
             f"Next step: {text(item.next_step)}.", ""]
    if item.hunks_note:
        lines += [text(item.hunks_note), ""]
    hunks, left_out = shown_hunks(item.hunks)
    for number, hunk in enumerate(hunks, start=1):
        lines += [f"Hunk {number} at line {hunk.line}:", "", *_hunk_lines(hunk, "under summary.files[].hunks"),
                  ""]
    if left_out:
        lines += [cut_note(left_out, "under summary.files[].hunks", "hunks"), ""]
    return lines


def _finding(finding: Finding) -> list[str]:
    mark = ""
    if finding.suppressed:
        mark = f" (reviewed for {code(finding.suppressed.reviewed_for)}: {text(finding.suppressed.reason)})"
    severity = "reviewed" if finding.suppressed else finding.severity  # a reviewed warning no longer asks
    lines = [f"- **{severity}** [{code(finding.kind)}]({report_link(finding.spec.anchor)}) "
             f"{code(finding.location())}: {text(finding.message)}{mark}"]
    if finding.expired:
        lines.append(f"  - review for {code(finding.expired.reviewed_for)} expired ({text(finding.expired.reason)}): "
                     "the trunk counterpart changed again")
    if finding.related_path:
        lines.append(f"  - trunk: {code(finding.related_path)}")
    if finding.next_step and not finding.suppressed:
        lines.append(f"  - action: {text(finding.next_step)}")
    lines += _declaration_lines(finding)
    where = "under groups[].findings[]"
    if finding.diff:
        lines += ["", "  Upstream change:", "",
                  *("  " + line for line in _capped_fence(finding.diff, MAX_DIFF_LINES, where + ".diff", "diff")), ""]
    hunks, left_out = shown_hunks(finding.details.get("hunks", []))
    for number, raw in enumerate(hunks, start=1):
        hunk = Hunk(**raw)
        lines += ["", f"  Merge conflict {number}:", "",
                  *("  " + line for line in _hunk_lines(hunk, where + ".details.hunks")), ""]
    if left_out:
        lines += ["  " + cut_note(left_out, where + ".details.hunks", "hunks"), ""]
    return lines


def _one_line(finding: Finding) -> str:
    review = finding.suppressed
    reviewed = f" (reviewed for {code(review.reviewed_for)}: {text(short_message(review.reason))})" if review else ""
    return f"- {code(finding.location())}: {text(short_message(finding.message))}{reviewed}"


def folded_by_kind(findings: Sequence[Finding]) -> list[str]:
    """What needs no action (info, reviewed), a collapsed list per kind with its count, a line per finding and no
    diff: a backend of 0 errors and 0 warnings got a 22,000-line page (issue 48.7); report.json has every text."""
    by_kind: dict[str, list[Finding]] = {}
    for finding in findings:
        by_kind.setdefault(finding.kind, []).append(finding)
    lines = []
    for kind, chosen in sorted(by_kind.items(), key=lambda item: (-len(item[1]), item[0])):
        lines += ["<details>", f"<summary>{html_escape(kind)}: {len(chosen)}</summary>", "",
                  f"[{code(kind)}]({report_link(kind_of(kind).anchor)}): {text(kind_of(kind).meaning)}", "",
                  *(_one_line(finding) for finding in chosen), "", "</details>", ""]
    return lines


SEVERITY_LEGEND = ("Errors break the build, the import or the replay; warnings likely break; port is upstream work "
                   "a backend's copy or replacement has not taken over (it still builds and loads); info asks "
                   "for nothing. Conflicts, errors, warnings and port work need a person.")
PORT_LEGEND = ("Port work: upstream changed what this backend copies or replaces. It still builds and loads as it "
               "is, without upstream's change; take the change over, or review the finding (`suppress`).")


def open_findings(group: Group) -> list[Finding]:
    """Errors, then warnings, then port work, that no review covers: what the group must do."""
    return [f for severity in ("error", "warning", "port") for f in group.findings if f.severity == severity
            and not f.suppressed]


def _open_table(group: Group) -> list[str]:
    """One compact table of everything open: conflicts, then errors, then warnings."""
    rows = [f"| conflict | [{code(f.last.kind)}]({report_link(kind_of(f.last.kind).anchor)}) | {code(f.path)} "
            f"(commit{'s' if len(f.conflicts) > 1 else ''} {', '.join(code(c.commit[:9]) for c in f.conflicts)}) | "
            f"{text(f.next_step)} |" for f in conflicts_by_file(group.open_conflicts)]
    rows += [f"| {f.severity} | [{code(f.kind)}]({report_link(f.spec.anchor)}) | {code(f.location())}: "
             f"{text(f.message)} | {text(f.next_step)} |" for f in open_findings(group)]
    if not rows:
        return []
    return [f"## Open ({len(rows)})", "", "| what | kind | file | action |", "|---|---|---|---|", *rows, ""]


def render_group(report: Report, group: Group) -> str:
    lines = [f"# {text(group.name)}: {group.verdict}", "", range_line(report), ""]
    if group.gate_failed and report.gate is not None:
        lines += [f"**Test gate:** {code(report.gate.command)} {text(report.gate.verdict())}; the failing "
                  "commit changed this group's code.", ""]
    lines += _open_table(group)
    if group.open_conflicts:
        lines += ["## Conflicts while replaying", ""]
        for item in report.by_file(group.open_conflicts):
            lines += _file_conflict(item)
    for title, severities in (("Findings to act on", ("error", "warning")), ("To port", ("port",))):
        chosen = [finding for finding in open_findings(group) if finding.severity in severities]
        if chosen:  # port work after what breaks: it builds and loads as it is
            lines += [f"## {title}" + (f" ({len(chosen)})" if severities == ("port",) else ""), ""]
            if severities == ("port",):
                lines += [PORT_LEGEND, ""]
            for finding in chosen:
                lines += _finding(finding)
            lines.append("")
    if group.resolutions:
        lines += ["## Conflict resolutions", ""]
        for item in report.by_file(group.resolutions):
            lines += _file_conflict(item)
    for title, chosen in (("Reviewed", [f for f in group.findings if f.suppressed]),
                          ("Info", [f for f in group.findings if f.severity == "info" and not f.suppressed])):
        if chosen:
            lines += [f"## {title} ({len(chosen)})", "", *folded_by_kind(chosen)]
    if not group.conflicts and not group.findings and not group.gate_failed:
        lines.append("Nothing to do.")
    return "\n".join(lines).rstrip("\n") + "\n"


_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
RESERVED_PAGES = frozenset({"summary", "index", "report", "kinds"})


def page_name(group: str) -> str:
    """The page of a group; names that could clash with a report file or escape the directory are mangled."""
    if _SAFE_NAME.match(group) and group not in RESERVED_PAGES:
        return f"{group}.md"
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", group)[:40]
    digest = hashlib.sha1(group.encode("utf-8", errors="surrogateescape")).hexdigest()[:8]
    return f"group-{safe}-{digest}.md"
