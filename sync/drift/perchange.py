"""One finding per upstream change (issue 33, item 3): after every analysis has run, the findings of one kind
and one backend that stand on the same upstream change -- the same commits, counted by PR number where the
subject ends in one -- fold into one finding, so that a maintainer reads the PR once and fixes every site.

The analyses already give one finding per changed declaration and backend, naming the commit(s) that made the
change (details.commits, details.prs: sync/facts/upstreamlog.py); the CTA -> CGA rename (#8850) changed three
builders and two pybind methods, one finding each. Folded, the finding lists each declaration it covers with
its sites and its own message (details.declarations), the union of the sites (details.sites, its own place
first), the commits and the PRs. Kinds never fold into each other (an error stays apart from a warning);
a finding whose commits are unknown (no range, or none found) stays as it is, and so does a change with one
declaration. Suppressions review a folded finding declaration by declaration (sync/records/suppressions.py).
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from sync.facts.upstreamlog import pr_of
from sync.records.suppressions import subject_of
from sync.model import Finding

# What upstream did to the declarations of a kind, and what FlagTree does with them, for the message.
_VERBS: dict[str, tuple[str, ...]] = {
    "symbol-removed": ("removed or renamed", "uses", " (will not build or import as is)"),
    "call-no-overload": ("changed the overloads of", "calls", " (will not build as is)"),
    "call-signature": ("changed the parameters of", "calls", ""),
    "op-verifier-changed": ("changed the verifiers of", "creates", ""),
    "decorated-keyword-missing": ("changed the keyword the functions take under", "decorates functions with",
                                  " (will not run as is)"),
    "build-file": ("deleted or renamed", "names in its build files", " (will not build as is)", "files"),
}
SHOWN_DECLARATIONS = 12  # in the message; details.declarations keeps every one
SHOWN_SITES = 5
# Details a folded finding merges from its members (lists: their union; the replacements: one table).
_UNION = ("symbols", "owners")
_OWN = ("sites", "commits", "prs", "commits_more")  # the change's and the sites': not a member's own detail


def change_key(finding: Finding) -> tuple[str, ...] | None:
    """The upstream change a finding stands on: each commit's PR number (its short id when the subject ends
    in none), sorted, and how many more commits changed it than it lists; None when no commit is known."""
    commits = finding.details.get("commits")
    if not isinstance(commits, list) or not commits:
        return None
    ids = sorted({f"#{pr}" if (pr := pr_of(str(line))) else str(line).split(" ", 1)[0] for line in commits})
    return (*ids, f"+{finding.details.get('commits_more', 0)}")


def declaration_of(finding: Finding) -> str:
    """What a finding per declaration is about, as a reader looks it up: BlockedEncodingAttr::get,
    LoadOp::verify, TargetInfoBase::barrier, the pybind method make_..., the Python function f."""
    details = finding.details
    if finding.kind == "op-verifier-changed" and details.get("op"):
        return f"{details['op']}::verify"
    if finding.kind == "call-no-overload" and (details.get("class") or details.get("namespace")):
        return f"{details.get('class') or details['namespace']}::{details.get('declaration')}"
    if finding.kind == "call-signature":
        declared = str(details.get("declaration") or "")
        what, _, name = declared.partition(" ")
        if what in ("attr", "type") and name:
            return f"{name}::get"
        if what == "op" and name:
            return f"{name} builders"
        if details.get("resolved_by") == "pybind binding":
            return f"pybind {details.get('callee')}"
        if details.get("callee"):
            return str(details["callee"])
    return str(details.get("declaration") or details.get("op") or details.get("callee") or finding.path)


def _sites(finding: Finding) -> list[str]:
    sites = finding.details.get("sites")
    return [str(site) for site in sites] if isinstance(sites, list) and sites else [finding.location()]


def _site_order(site: str) -> tuple[str, int]:
    path, _, line = site.rpartition(":")
    return (path, int(line)) if path and line.isdigit() else (site, 0)


def _subjects(finding: Finding) -> list[str]:
    """The suppression subjects an entry may name the finding by (sync/records/suppressions.py)."""
    callees = finding.details.get("callees")
    spelled = [str(callee) for callee in callees] if isinstance(callees, list) else []
    return [subject for subject in dict.fromkeys([subject_of(finding), *spelled]) if subject]


def _change_label(details: dict[str, Any]) -> str:
    """#8850 (371b6445f "[NFC] Rename CTAEncoding as CGAEncoding"), or each commit's PR and id."""
    commits = [str(line) for line in details.get("commits") or []]
    parts = []
    for line in commits:
        short, _, subject = line.partition(" ")
        pr = pr_of(subject)
        if len(commits) == 1:
            title = subject[: -len(f"(#{pr})")].rstrip() if pr else subject
            parts.append(f"{f'#{pr} ' if pr else ''}({short} \"{title}\")")
        else:
            parts.append(f"#{pr} ({short})" if pr else short)
    more = details.get("commits_more")
    return ", ".join(parts) + (f" and {more} more commit(s)" if more else "")


def _folded(kind: str, members: list[Finding]) -> Finding:
    parts = []
    for member in members:
        own = {name: value for name, value in member.details.items() if name not in _OWN}
        part: dict[str, Any] = {"declaration": declaration_of(member), "sites": _sites(member),
                                "message": member.message, "related_path": member.related_path}
        if subjects := _subjects(member):
            part["subjects"] = subjects
        part["details"] = own
        parts.append(part)
    parts.sort(key=lambda part: (-len(part["sites"]), part["declaration"]))
    sites = sorted(dict.fromkeys(site for part in parts for site in part["sites"]), key=_site_order)
    first_site = sites[0]
    first = next(member for member in members if first_site in _sites(member))
    path, line = _site_order(first_site)
    details: dict[str, Any] = {"declarations": parts, "sites": sites}
    for name in _UNION:
        merged = [item for member in members for item in member.details.get(name) or []]
        if merged:
            details[name] = list(dict.fromkeys(merged))
    replacements = {key: value for member in members for key, value in dict(member.details.get("replacements") or {}).items()}
    if any("replacements" in member.details for member in members):
        details["replacements"] = replacements
    for name in ("commits", "prs"):
        details[name] = list(dict.fromkeys(item for member in members for item in member.details.get(name) or []))
    if first.details.get("commits_more"):
        details["commits_more"] = first.details["commits_more"]
    verb, uses, consequence, *noun = _VERBS.get(kind, ("changed", "uses", ""))
    if kind == "call-no-overload" and all(member.path.endswith(".py") for member in members):
        consequence = " (will not run as is)"  # Python calls: a TypeError when they run, not a build error
    files = len({_site_order(site)[0] for site in sites})
    named = ", ".join(f"{part['declaration']} ({len(part['sites'])})" for part in parts[:SHOWN_DECLARATIONS])
    named += f" and {len(parts) - SHOWN_DECLARATIONS} more" if len(parts) > SHOWN_DECLARATIONS else ""
    shown = ", ".join(sites[:SHOWN_SITES]) + (f" and {len(sites) - SHOWN_SITES} more" if len(sites) > SHOWN_SITES else "")
    message = (f"upstream change {_change_label(details)} {verb} {len(parts)} {noun[0] if noun else 'declarations'} "
               f"FlagTree {uses} at "
               f"{len(sites)} site(s) in {files} file(s){consequence}: {named}; sites: {shown}")
    diffs = list(dict.fromkeys(member.diff for member in sorted(members, key=lambda m: _site_order(_sites(m)[0]))
                               if member.diff))
    return replace(first, path=path, line=line or first.line, message=message,
                   diff="\n".join(diff.rstrip("\n") for diff in diffs) + "\n" if diffs else None, details=details)


def one_per_upstream_change(findings: list[Finding]) -> list[Finding]:
    """The findings with those of one kind and backend that stand on the same upstream change folded into one
    (in the place of the first of them); every other finding as it was, in its order."""
    groups: dict[tuple[str, str | None, tuple[str, ...]], list[int]] = {}
    for index, finding in enumerate(findings):
        key = change_key(finding)
        if key is not None:
            groups.setdefault((finding.kind, finding.backend, key), []).append(index)
    folded: dict[int, Finding] = {}
    dropped: set[int] = set()
    for (kind, _, _), indexes in groups.items():
        if len(indexes) < 2:
            continue
        folded[indexes[0]] = _folded(kind, [findings[index] for index in indexes])
        dropped.update(indexes[1:])
    return [folded.get(index, finding) for index, finding in enumerate(findings) if index not in dropped]


_WORDS = re.compile(r"[A-Za-z_]\w{2,}")


def _declared_names(finding: Finding) -> set[str]:
    """The names a finding is about: its declaration's last part and each symbol it lists (`name:what:path`)."""
    names = {declaration_of(finding).replace("::", ".").rsplit(".", 1)[-1]}
    names |= {str(symbol).split(":", 1)[0] for symbol in finding.details.get("symbols") or []}
    return {name for name in names if _WORDS.fullmatch(name)}


_UNTYPED = frozenset({"attribute-removed"})  # errors read from a name alone, without the receiver's type


def into_errors(findings: list[Finding]) -> list[Finding]:
    """A warning whose every site is a site of one error, about a declaration that error names, is the same break
    told twice (3.3 -> 3.4: symbol-drift on extern_elementwise at the line where call-no-overload already says
    the call fits no overload): it folds into that error, which lists it under details.also. So does an error of a
    kind that knows no receiver type (attribute-removed) where an error that resolved the use through the file's
    imports already tells it (3.5 -> 3.7: symbol-removed on ascend's `backend.get_arg_specialization`)."""
    errors = [index for index, finding in enumerate(findings)
              if finding.severity == "error" and finding.kind not in _UNTYPED]
    sites_of = {index: set(_sites(findings[index])) for index in errors}
    words_of = {index: set(_WORDS.findall(findings[index].message)) for index in errors}
    also: dict[int, list[dict[str, str]]] = {}
    dropped: set[int] = set()
    for index, finding in enumerate(findings):
        if (finding.severity != "warning" and finding.kind not in _UNTYPED) or finding.suppressed is not None:
            continue
        sites, names = set(_sites(finding)), _declared_names(finding)
        host = next((error for error in errors if sites <= sites_of[error] and names & words_of[error]), None)
        if host is not None:
            also.setdefault(host, []).append({"kind": finding.kind, "message": finding.message})
            dropped.add(index)
    return [replace(finding, details={**finding.details, "also": [*finding.details.get("also", []), *also[index]]})
            if index in also else finding for index, finding in enumerate(findings) if index not in dropped]
