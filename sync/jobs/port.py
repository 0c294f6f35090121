"""The port job: FlagTree's sites rewritten for upstream's mechanical changes, one commit per upstream change.

It reads the drift of the upgraded branch (run_drift with --target), takes each error finding of kind
symbol-removed that stands on one upstream commit, and asks port_rules whether that commit renamed the
declaration (rule `renamed-declaration`). For each upstream change with a certain rename, every site the findings
list is rewritten (port_edit: tree-sitter nodes in C++, libcst in Python) and the files are committed on the
branch, one commit per change, the oldest change first, each on the previous one. What is not certain stays a
finding and is listed with its reason.

Commits are written like drift --apply's: in memory, through sync.git.commit_files, the branch moved only while it
is still where the run read it. Unlike --apply, a branch checked out in any worktree is refused: port never
touches a work tree. A file that is a symbolic link, executable or not UTF-8 is never rewritten. With a gate
(--exec), each commit is checked out in a worktree of the tool's own (<git dir>/flagtree-sync/port-gate) and
the command run there; a commit whose gate fails is not put on the branch, and its change is left.
"""
from __future__ import annotations

import difflib
import re
import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from sync.errors import SyncError
from sync.model import Finding, GateRun, Report
from sync.git import GitError, GitTree, Repository, branch_exists, branch_head, commit_files, open_repo, tool_dir
from sync.facts.trees import read_text
from sync.facts.upstreamlog import pr_of
from sync.facts.pymodules import TRUNK_PACKAGE, module_of
from sync.support.progress import Progress
from sync.replay.engine import run_lock
from sync.replay.options import GATE_TIMEOUT
from sync.jobs.drift import DriftOptions, run_drift
from sync.jobs.port_edit import Edit, rename_cpp, rename_members_cpp, rename_python
from sync.jobs.port_rules import MEMBER_KIND, MEMBER_RULE, RULE, Refusal, Rename, certain_rename, member_rename
from sync.jobs.port_example import Example, upstream_example
from sync.jobs.port_cmake import TARGET_KIND, TARGET_RULE, certain_target_rename, rename_cmake
from sync.jobs.port_copies import CopyMerge, copy_findings, merge_copies, recorded
from sync.jobs.port_args import (ARGS_KIND, MovedArguments, Refused, argument_mapping, callee_name, is_cpp_site,
                                 is_python_site, move_arguments)
from sync.jobs.port_args_py import move_python_arguments, python_mapping
from sync.facts.delta import is_cmake
from sync.drift.analyses.accessors import KIND as MEMBER_FINDING
from sync.facts.filekinds import CPP_CODE, PY_SUFFIXES

__all__ = ["PortOptions", "PortResult", "PortedChange", "run_port"]

CPP = CPP_CODE
PY = PY_SUFFIXES
SUBJECT_LIMIT = 72
_TYPE_KINDS = ("attr", "type", "op", "class", "struct", "enum", "alias")


@dataclass(frozen=True, kw_only=True)
class PortOptions:
    target: str  # the upgraded branch: read, and committed on
    backends: frozenset[str] = frozenset()  # only the findings of these groups ([]: all)
    dry_run: bool = False  # print the patch; write nothing
    gate: str | None = None  # --exec: the command each commit must pass
    gate_timeout: float = GATE_TIMEOUT


@dataclass
class PortedChange:
    """One upstream change: what was rewritten and committed, and what was left with its reason."""
    label: str  # #8850 (371b6445f "[NFC] Rename CTAEncoding as CGAEncoding")
    commit_id: str  # upstream's commit
    pr: str | None = None
    renames: list[Rename] = field(default_factory=list)
    sites: list[str] = field(default_factory=list)  # path:line rewritten
    left: list[tuple[str, str]] = field(default_factory=list)  # (declaration or site, why it was left)
    findings: int = 0  # error findings that stand on the change
    stands_on: list[tuple[Finding, tuple[str, ...]]] = field(default_factory=list)  # each finding, its rename keys
    patch: str = ""
    committed: str | None = None  # the commit made on the branch
    gate: GateRun | None = None
    sites_of: dict[str, list[str]] = field(default_factory=dict)  # a rename's old name -> the findings' sites
    ported_sites: dict[str, list[str]] = field(default_factory=dict)  # a rename's old name -> the sites rewritten

    @property
    def short(self) -> str:
        """#8850, or the commit's short id, or what stands for the commits when there is not one."""
        return f"#{self.pr}" if self.pr else self.commit_id[:9] if self.commit_id else self.label

    @property
    def ported(self) -> bool:
        return bool(self.sites) and (self.gate is None or self.gate.passed)


@dataclass
class PortResult:
    target: str
    changes: list[PortedChange]
    other_errors: int  # error findings of kinds port does not rewrite
    head: str  # the branch after the run (before it, on a dry run)
    dry_run: bool
    report: Report | None = None  # the drift read, the findings port left with upstream's worked example
    copies: list[CopyMerge] = field(default_factory=list)  # each backend's copies merged with upstream's change
    moves: list[MovedArguments] = field(default_factory=list)  # calls whose arguments upstream moved or dropped

    @property
    def left_any(self) -> bool:
        return (any(change.left or not change.ported for change in self.changes) or self.other_errors > 0
                or any(copy.left or (copy.merged and not copy.ported) for copy in self.copies)
                or any(move.left or (move.sites and not move.ported) for move in self.moves))


def run_port(repo_path: str, *, old: str | None, onto: str | None, source: str | None, options: PortOptions,
             progress: Progress | None = None, warn: Callable[[str], None] | None = None) -> PortResult:
    repo = open_repo(repo_path)
    if not branch_exists(repo, options.target):
        raise SyncError(f"port commits on a branch, and there is no branch {options.target}: pass the upgraded branch "
                        "(sync/<NEW>) as --target")
    ref = f"refs/heads/{options.target}"
    if not options.dry_run:
        from sync.git.worktree import branches_in_use
        checkout = branches_in_use(repo).get(ref)
        if checkout is not None:
            raise SyncError(f"{options.target} is checked out in {checkout}: port never touches a work tree; check "
                            "out another branch there (or pass --dry-run), then rerun")
    with run_lock(repo, "apply", "another drift --apply or port"):
        report = run_drift(repo_path, old=old, onto=onto, source=source,
                           options=DriftOptions(target=options.target, backends=options.backends),
                           progress=progress, warn=warn)
        head = branch_head(repo, options.target)
        assert head is not None  # branch_exists above, and the lock keeps another port away
        changes, other_errors = _changes(repo, report)
        start = str(head.id)
        files: dict[str, str] = {}  # what the dry run's earlier commits made of each file
        tip = _port_all(repo, ref, head, changes, options, files)
        moves = _argument_changes(repo, report)
        other_errors -= sum(move.findings for move in moves)
        tip = _move_all_arguments(repo, ref, tip, moves, options, files)
        copies = _merge_all_copies(repo, ref, report, tip, options, files)
    final = next((copy.committed for copy in reversed(copies) if copy.committed), tip)
    return PortResult(options.target, changes, other_errors, final if not options.dry_run else start,
                      options.dry_run, with_examples(repo, report, changes), copies, moves)


# --- the findings, by upstream change ---------------------------------------------------------------------------

@dataclass
class _Declaration:
    name: str
    path: str  # where it was declared (old tag)
    hint: str | None  # the replacement the analysis named from spelling
    sites: list[str]


def _changes(repo: Repository, report: Report) -> tuple[list[PortedChange], int]:
    """The upstream changes that symbol-removed errors stand on, oldest first, with their declarations (sites of
    every backend together); and how many error findings are of other kinds."""
    seen: set[tuple[str, str, int | None, str]] = set()
    by_commit: dict[str, tuple[PortedChange, dict[str, _Declaration]]] = {}
    other = 0
    for finding in report.findings:
        key = (finding.kind, finding.path, finding.line, finding.message)
        if finding.severity != "error" or key in seen:
            continue
        seen.add(key)
        commits = [str(line) for line in finding.details.get("commits") or []]
        if finding.kind == MEMBER_FINDING:
            _member_change(repo, finding, commits, by_commit)
            continue
        if finding.kind == "build-file" and _target_change(repo, report, finding, by_commit):
            continue
        if finding.kind != "symbol-removed":
            other += 1
            continue
        if len(commits) != 1 or finding.details.get("commits_more"):
            label = ", ".join(commits) or "no upstream commit known"
            change = by_commit.setdefault(label, (PortedChange(label, ""), {}))[0]
            change.findings += 1
            change.left.append((finding.details.get("declaration") or finding.path,
                                "not one known upstream commit: nothing to read the rename from"))
            continue
        short, _, subject = commits[0].partition(" ")
        commit_id = str(repo.revparse_single(short).id)
        change, declarations = by_commit.setdefault(
            commit_id, (PortedChange(_label(short, subject), commit_id, pr_of(subject)), {}))
        change.findings += 1
        change.stands_on.append((finding, tuple(name for name, _, _, _ in _declarations_of(finding))))
        for name, path, hint, sites in _declarations_of(finding):
            found = declarations.setdefault(f"{name}\0{path}", _Declaration(name, path, hint, []))
            found.sites += [site for site in sites if site not in found.sites]
    ordered = sorted(by_commit.values(), key=lambda item: _commit_time(repo, item[0].commit_id))
    for change, declarations in ordered:
        _rules(repo, change, list(declarations.values()))
    return [change for change, _ in ordered], other


def _member_change(repo: Repository, finding: Finding, commits: list[str],
                   by_commit: dict[str, tuple[PortedChange, dict[str, _Declaration]]]) -> None:
    """A member-removed finding: its sites under the rename the finding read from upstream's one commit, or the
    finding left with the reason it gives."""
    name = str(finding.details.get("declaration") or "")
    new = finding.details.get("renamed_to")
    if len(commits) == 1:
        short, _, subject = commits[0].partition(" ")
        commit_id = str(repo.revparse_single(short).id)
        change = by_commit.setdefault(commit_id, (PortedChange(_label(short, subject), commit_id, pr_of(subject)),
                                                  {}))[0]
    else:
        label = ", ".join(commits) or "no upstream commit known"
        change = by_commit.setdefault(label, (PortedChange(label, ""), {}))[0]
    change.findings += 1
    change.stands_on.append((finding, (f".{name}",)))
    if len(commits) != 1 or not new:
        change.left.append((f".{name}()", str(finding.details.get("not_certain") or "no certain rename")))
        return
    rename = next((found for found in change.renames if found.key == f".{name}"), None)
    if rename is None:
        rename = member_rename(repo, commit_id, name, str(new), finding.related_path or "")
        change.renames.insert(0, rename)  # before a declaration's rename of the same name: a line holding both
    sites = change.sites_of.setdefault(rename.key, [])
    sites += [str(site) for site in finding.details.get("sites") or [] if site not in sites]


def _target_change(repo: Repository, report: Report, finding: Finding,
                   by_commit: dict[str, tuple[PortedChange, dict[str, _Declaration]]]) -> bool:
    """A build-file finding whose entry is a CMake target the old tag defines: its sites under the rename upstream's
    commit made (rule renamed-target), or the finding left with the reason. False for another entry."""
    name = str(finding.details.get("entry") or "")
    found = certain_target_rename(repo, report.range.old.oid, report.range.onto.oid, name) if name else None
    if found is None:
        return False
    if found.new is None or found.commit is None:
        label = f"{found.commit[:9]} {found.subject}" if found.commit else "no upstream commit known"
        change = by_commit.setdefault(found.commit or label, (PortedChange(label, found.commit or ""), {}))[0]
        change.findings += 1
        change.left.append((name, found.why))
        change.stands_on.append((finding, (f"cmake:{name}",)))
        return True
    short = found.commit[:9]
    change = by_commit.setdefault(found.commit, (PortedChange(_label(short, found.subject), found.commit,
                                                               pr_of(found.subject)), {}))[0]
    change.findings += 1
    change.stands_on.append((finding, (f"cmake:{name}",)))
    rename = next((known for known in change.renames if known.key == f"cmake:{name}"), None)
    if rename is None:
        rename = member_rename(repo, found.commit, name, found.new, found.path, TARGET_KIND)
        change.renames.insert(0, rename)
    sites = change.sites_of.setdefault(rename.key, [])
    sites += [str(site) for site in finding.details.get("sites") or [finding.location()] if site not in sites]
    return True


def _commit_time(repo: Repository, commit_id: str) -> int:
    return int(repo[commit_id].commit_time) if commit_id else 0  # type: ignore[attr-defined]


def _label(short: str, subject: str) -> str:
    pr = pr_of(subject)
    title = subject[: -len(f"(#{pr})")].rstrip() if pr else subject
    return f"{f'#{pr} ' if pr else ''}({short} \"{title}\")"


def _declarations_of(finding: Finding) -> list[tuple[str, str, str | None, list[str]]]:
    """(name, declaring path, spelled replacement, sites) of each declaration a finding (folded or not) covers."""
    parts = finding.details.get("declarations")
    if isinstance(parts, list) and parts:
        return [(str(part["declaration"]), str(part.get("related_path") or ""),
                 dict(part.get("details", {}).get("replacements") or {}).get(str(part["declaration"])),
                 [str(site) for site in part.get("sites") or []]) for part in parts]
    name = str(finding.details.get("declaration") or "")
    return [(name, finding.related_path or "", dict(finding.details.get("replacements") or {}).get(name),
             [str(site) for site in finding.details.get("sites") or [finding.location()]])]


def _rules(repo: Repository, change: PortedChange, declarations: list[_Declaration]) -> None:
    """change.renames: the certain ones; the others in change.left with their reason."""
    hints = {declaration.name: declaration.hint for declaration in declarations if declaration.hint}
    for declaration in declarations:
        if not declaration.name or not declaration.path:
            change.left.append((declaration.name or "?", "the finding names no declaring file"))
            continue
        found = certain_rename(repo, change.commit_id, declaration.name, declaration.path, declaration.hint, hints)
        if isinstance(found, Refusal):
            change.left.append((declaration.name, found.reason))
            continue
        change.renames.append(found)
        change.sites_of[found.key] = declaration.sites


# --- upstream's worked example on what is left -------------------------------------------------------------------

def with_examples(repo: Repository, report: Report, changes: list[PortedChange]) -> Report:
    """The report with upstream's own before/after attached to each finding port left of an upstream change
    (details.upstream_example, and the finding's diff where it has none): every other finding as it was."""
    attached: dict[int, Finding] = {}
    examples: dict[tuple[str, str], Example | None] = {}
    for change in changes:
        if not change.commit_id:
            continue
        left = _left_keys(change)
        news = {rename.key: rename.new for rename in change.renames}
        for finding, keys in change.stands_on:
            key = next((key for key in keys if key in left), None)
            if key is None or id(finding) in attached:
                continue
            if (change.commit_id, key) not in examples:
                old = key.removeprefix(".").removeprefix("cmake:")
                hint = news.get(key) or dict(finding.details.get("replacements") or {}).get(old)
                examples[(change.commit_id, key)] = upstream_example(repo, change.commit_id, old, hint,
                                                                     finding.related_path or "")
            example = examples[(change.commit_id, key)]
            if example is not None:
                attached[id(finding)] = replace(finding, details={**finding.details,
                                                                  "upstream_example": example.details()},
                                                diff=finding.diff or example.diff)
    if not attached:
        return report
    groups = tuple(replace(group, findings=tuple(attached.get(id(finding), finding) for finding in group.findings))
                   for group in report.groups)
    return replace(report, groups=groups)


def _left_keys(change: PortedChange) -> set[str]:
    """The rename keys of what the change left: a declaration refused, a site refused, or the whole change when
    its commit stayed off the branch."""
    if change.renames and not change.ported:
        return {key for _, keys in change.stands_on for key in keys}
    keys = set()
    for what, why in change.left:
        if re.search(r":\d+$", what):
            keys.add(why.split(": ", 1)[0])
        elif what.startswith(".") and what.endswith("()"):
            keys.add(what[:-2])
        else:
            keys |= {what, f"cmake:{what}"}
    return keys


# --- the edits and the commits ----------------------------------------------------------------------------------

def _port_all(repo: Repository, ref: str, head: object, changes: list[PortedChange], options: PortOptions,
              files: dict[str, str]) -> str:
    """Each change with a certain rename: its edits on the previous change's result, and (not on a dry run) its
    commit on the branch. The tip reached."""
    current = head
    for change in changes:
        if not change.renames:
            continue
        tree = GitTree.of_commit(repo, current.id, "port")  # type: ignore[attr-defined]
        edited = _edit_change(tree, change, files)
        if not edited:
            continue
        change.patch, data = _staged(edited, files, options)
        if data is None:
            continue
        change.gate, change.committed = _commit_gated(repo, ref, current, data, _message(change), change.label,
                                                      options)
        if change.committed is None:
            assert change.gate is not None
            change.left.append((change.label, f"the gate failed on the port commit (status {change.gate.status})"))
            continue
        current = repo[change.committed]
    return str(current.id)  # type: ignore[attr-defined]


def _staged(edited: dict[str, tuple[str, str]], files: dict[str, str], options: PortOptions
            ) -> tuple[str, dict[str, bytes] | None]:
    """A rule's edits (path -> text before, after) as its patch and the files its commit writes; on a dry run no
    files: the edits go into files, where the next rule reads them."""
    patch = "".join(_patch(path, before, after) for path, (before, after) in sorted(edited.items()))
    if options.dry_run:
        files.update({path: after for path, (_, after) in edited.items()})
        return patch, None
    return patch, {path: after.encode("utf-8") for path, (_, after) in edited.items()}


def _commit_gated(repo: Repository, ref: str, current: object, data: dict[str, bytes], message: str, label: str,
                  options: PortOptions) -> tuple[GateRun | None, str | None]:
    """One rule's port commit on current: made off the branch, run through the --exec gate where one is given,
    and then made on the branch. (the gate's run or None, the commit on the branch or None where the gate failed)."""
    made = commit_files(repo, current, data, message)  # type: ignore[arg-type]
    gate = None
    if options.gate is not None:
        gate = _gate(repo, tool_dir(repo) / "port-gate", str(made), label, options)
        if not gate.passed:
            return gate, None
    return gate, _moved(repo, ref, current, data, message)


def _moved(repo: Repository, ref: str, current: object, data: dict[str, bytes], message: str) -> str:
    """The commit made on the branch; libgit2 moves the ref only while it is still at current: a commit made
    meanwhile loses nothing."""
    try:
        return str(commit_files(repo, current, data, message, ref))  # type: ignore[arg-type]
    except GitError as exc:
        raise SyncError(f"{ref.removeprefix('refs/heads/')} moved while port ran ({str(exc).strip()}); the "
                        "changes ported before it stay committed: run port again") from exc


def _argument_changes(repo: Repository, report: Report) -> list[MovedArguments]:
    """The call-no-overload errors by upstream change, each callee's mapping read (rule moved-arguments) or the
    finding left with the reason, oldest change first."""
    seen: set[tuple[str, int | None, str]] = set()
    by_commit: dict[str, MovedArguments] = {}
    for finding in report.findings:
        key = (finding.path, finding.line, finding.message)
        if finding.kind != ARGS_KIND or finding.severity != "error" or key in seen:
            continue
        seen.add(key)
        commits = [str(line) for line in finding.details.get("commits") or []]
        short, _, subject = commits[0].partition(" ") if len(commits) == 1 else ("", "", "")
        commit_id = str(repo.revparse_single(short).id) if short else ", ".join(commits) or "no upstream commit"
        move = by_commit.setdefault(commit_id, MovedArguments(_label(short, subject) if short else commit_id,
                                                              commit_id if short else "", pr_of(subject)))
        move.findings += 1
        for what, name, declared_in, sites in _callees_of(finding):
            why = ("not one known upstream commit: nothing to read the move from" if not short
                   else "a generated builder or a template call: not this rule's" if name is None
                   else "declared outside C++ and Python: not this rule's"
                   if not declared_in.endswith(CPP) and not declared_in.endswith(PY) else "")
            if not why and name not in move.mappings:
                read = python_mapping if declared_in.endswith(PY) else argument_mapping
                found = read(repo, commit_id, str(name), declared_in)
                if isinstance(found, Refused):
                    why = found.reason
                else:
                    move.mappings[str(name)] = found
            if why:
                move.left.append((what, why))
                continue
            known = move.sites_of.setdefault(str(name), [])
            known += [site for site in sites if site not in known]
    return sorted(by_commit.values(), key=lambda move: _commit_time(repo, move.commit_id))


def _callees_of(finding: Finding) -> list[tuple[str, str | None, str, list[str]]]:
    """(what is called, the function's own name or None, declaring file, sites) of each declaration a
    call-no-overload finding (folded or not) covers."""
    parts = finding.details.get("declarations")
    if not isinstance(parts, list) or not parts:
        parts = [{"declaration": finding.details.get("callee") or finding.details.get("declaration"),
                  "related_path": finding.related_path, "sites": finding.details.get("sites") or [finding.location()],
                  "details": finding.details}]
    found = []
    for part in parts:
        what = str(part.get("declaration") or finding.location())
        own = str(dict(part.get("details") or {}).get("declaration") or "")
        name = own if re.fullmatch(r"[A-Za-z_]\w*", own) else callee_name(str(dict(part.get("details") or {})
                                                                              .get("callee") or what))
        found.append((what, name, str(part.get("related_path") or ""), [str(site) for site in part.get("sites") or []]))
    return found


def _move_all_arguments(repo: Repository, ref: str, tip: str, moves: list[MovedArguments], options: PortOptions,
                        files: dict[str, str]) -> str:
    """Each change's argument moves: its edits, and (not on a dry run) its commit on the previous one."""
    current = repo[tip]
    for move in moves:
        tree = GitTree.of_commit(repo, current.id, "port")
        edited: dict[str, tuple[str, str]] = {}
        for name, mapping in sorted(move.mappings.items()):
            lines_by_path: dict[str, set[int]] = {}
            for site in move.sites_of.get(name, []):
                path, _, line = site.rpartition(":")
                if not (is_python_site(site) if mapping.params else is_cpp_site(site)):
                    move.left.append((site, f"{name}: a site in another language than the declaration: not ported"))
                elif line.isdigit():
                    lines_by_path.setdefault(path, set()).add(int(line))
            for path, lines in sorted(lines_by_path.items()):
                text = edited[path][1] if path in edited else files.get(path) or _readable_site(tree, path, lines,
                                                                                                 move.left)
                if text is None:
                    continue
                edit = (move_python_arguments if mapping.params else move_arguments)(text, mapping, lines)
                move.left += [(f"{path}:{number}", f"{name}: {why}") for number, why in sorted(edit.refused.items())]
                if edit.changed and edit.text != text:
                    edited[path] = (edited[path][0] if path in edited else text, edit.text)
                    move.sites += [f"{path}:{number}" for number in edit.changed]
        if not edited:
            continue
        move.patch, data = _staged(edited, files, options)
        if data is None:
            continue
        move.gate, move.committed = _commit_gated(repo, ref, current, data, move.message(), move.label, options)
        if move.committed is None:
            continue
        current = repo[move.committed]
    return str(current.id)


def _readable_site(tree: GitTree, path: str, lines: set[int], left: list[tuple[str, str]]) -> str | None:
    why = ("the file is not on the branch" if not tree.exists(path)
           else "a symbolic link or an executable file: never rewritten" if not tree.is_regular_file(path) else "")
    if not why:
        try:
            return (tree.read(path) or b"").decode("utf-8")
        except UnicodeDecodeError:
            why = "the file is not UTF-8"
    left += [(f"{path}:{line}", why) for line in sorted(lines)]
    return None


def _merge_all_copies(repo: Repository, ref: str, report: Report, tip: str, options: PortOptions,
                      files: dict[str, str]) -> list[CopyMerge]:
    """Rule merged-copy, after the renames (a copy's sites are renamed at the lines drift read, and the merge
    then runs on the renamed copy): each backend's clean copy merges, one commit each on the previous one."""
    copies = []
    current = repo[tip]
    for backend, findings in copy_findings(report).items():
        tree = GitTree.of_commit(repo, current.id, "port")
        copy = merge_copies(repo, report, tree, files, backend, findings)
        copies.append(copy)
        if not copy.merged:
            continue
        copy.patch = "".join(_patch(path, files.get(path) or (tree.read(path) or b"").decode("utf-8", "replace"),
                                    data.decode("utf-8", "replace")) for path, data in sorted(copy.merged.items()))
        if options.dry_run:
            files.update({path: data.decode("utf-8", "replace") for path, data in copy.merged.items()})
            continue
        data = {**copy.merged, **recorded(repo, report, tree, set(copy.merged))}
        copy.gate, copy.committed = _commit_gated(repo, ref, current, data, copy.message(),
                                                  f"merge into {backend}'s copies", options)
        if copy.committed is None:
            continue
        current = repo[copy.committed]
    return copies


def _edit_change(tree: GitTree, change: PortedChange, files: dict[str, str]) -> dict[str, tuple[str, str]]:
    """path -> (text before, text after) of every file the change's renames rewrite; the sites refused go to
    change.left."""
    edited: dict[str, tuple[str, str]] = {}
    for rename in change.renames:
        lines_by_path: dict[str, set[int]] = {}
        for site in change.sites_of[rename.key]:
            path, _, line = site.rpartition(":")
            if path and line.isdigit():
                lines_by_path.setdefault(path, set()).add(int(line))
        for path, lines in sorted(lines_by_path.items()):
            text = edited[path][1] if path in edited else files.get(path) or _readable(tree, path, change, lines)
            if text is None:
                continue
            edit = _rename_in(path, text, rename, lines)
            for number, why in sorted(edit.refused.items()):
                change.left.append((f"{path}:{number}", f"{rename.key}: {why}"))
            if edit.changed and edit.text != text:
                edited[path] = (edited[path][0] if path in edited else text, edit.text)
                done = [f"{path}:{number}" for number in edit.changed]
                change.ported_sites.setdefault(rename.key, []).extend(done)
                change.sites += [site for site in done if site not in change.sites]
    return edited


def _readable(tree: GitTree, path: str, change: PortedChange, lines: set[int]) -> str | None:
    """The file's text on the branch, or None (its sites left) when port may not rewrite it."""
    why = None
    if not tree.exists(path):
        why = "the file is not on the branch"
    elif not tree.is_regular_file(path):
        why = "a symbolic link or an executable file: never rewritten"
    else:
        data = tree.read(path) or b""
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            why = "the file is not UTF-8"
    change.left += [(f"{path}:{line}", why) for line in sorted(lines)]
    return None


def _rename_in(path: str, text: str, rename: Rename, lines: set[int]) -> Edit:
    if rename.kind == TARGET_KIND:
        if is_cmake(path):
            return rename_cmake(text, rename.old, rename.new, lines)
        return Edit(text, refused={line: "a target named outside a CMake file: not ported" for line in lines})
    if rename.kind == MEMBER_KIND:
        if path.endswith(CPP):
            return rename_members_cpp(text, rename.old, rename.new, lines)
        return Edit(text, refused={line: "a member call outside C++: not ported" for line in lines})
    if path.endswith(CPP) and not rename.path.endswith(PY):
        return rename_cpp(text, rename.old, rename.new, lines, set(rename.scopes))
    if path.endswith(PY) and rename.path.endswith(PY):
        if rename.path.startswith(TRUNK_PACKAGE) and not rename.scope:
            return rename_python(text, rename.old, rename.new, lines, module_of(rename.path))
        return Edit(text, refused={line: "a method or a name outside trunk's package: its uses are not tied to "
                                         "its module" for line in lines})
    return Edit(text, refused={line: "a site in another language than its declaration: not ported" for line in lines})


def _patch(path: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}"))


def _message(change: PortedChange) -> str:
    tail = f" (#{change.pr})" if change.pr else f" ({change.commit_id[:9]})"
    # the subject names a type the change renamed before a function, then the rename with the most sites
    first = min(change.renames, key=lambda rename: (rename.kind not in _TYPE_KINDS,
                                                    -len(change.ported_sites.get(rename.key, [])), rename.key))
    more = f" and {len(change.renames) - 1} more" if len(change.renames) > 1 else ""
    subject = f"port: {first.old} -> {first.new}{more}{tail}"
    if len(subject) > SUBJECT_LIMIT:
        subject = f"port: {len(change.renames)} upstream rename(s){tail}"
    body = [_wrapped(f"Upstream change {change.label} renamed {len(change.renames)} declaration(s) that "
                     "FlagTree's code uses; flagtree-sync port rewrote each site on the exact identifier."), "",
            *_rules_said(change.renames)]
    for rename in change.renames:
        dropped, added = rename.upstream_uses
        where = rename.path if rename.path == rename.new_path else f"{rename.path} -> {rename.new_path}"
        what = {MEMBER_KIND: "member calls, declared in", TARGET_KIND: "CMake target of"}.get(rename.kind,
                                                                                           f"{rename.kind} in")
        body.append(_wrapped(f"{rename.old} -> {rename.new} ({what} {where}; upstream's own code in the "
                             f"commit: {dropped} use(s) of the old name dropped, {added} of the new added):"))
        body += [f"  {site}" for site in change.ported_sites.get(rename.key, [])] or ["  (no site rewritten)"]
        prefix = f"{rename.key}:"
        left = [f"  {site}: {why.removeprefix(prefix).strip()}" for site, why in change.left if why.startswith(prefix)]
        if left:
            body += ["left for a person:", *left]
    return subject + "\n\n" + "\n".join(body) + "\n"


def _rules_said(renames: list[Rename]) -> list[str]:
    said = []
    if any(rename.kind != MEMBER_KIND for rename in renames):
        said += [_wrapped(f"Rule: {RULE}: the commit removed each declaration and added one of the same kind, "
                          "scope and signature in its place (read from the declarations of the commit's parent "
                          "and of the commit, not from the spelling)."), ""]
    if any(rename.kind == TARGET_KIND for rename in renames):
        said += [_wrapped(f"Rule: {TARGET_RULE}: no CMake file defines the target at the new tag, and the commit "
                          "that removed its one definition defined exactly one new target in its place (same "
                          "file, same add_* command): each unquoted use is renamed."), ""]
    if any(rename.kind == MEMBER_KIND for rename in renames):
        said += [_wrapped(f"Rule: {MEMBER_RULE}: the member name is declared nowhere in upstream's new tree nor "
                          "by FlagTree where the call sees it, and the commit renamed every declaration of it (ODS "
                          "accessors, interface methods, C++ methods) to the one new name: each `x.old()` and "
                          "`x->old()` is renamed, whatever the receiver."), ""]
    return said


def _wrapped(text: str) -> str:
    return textwrap.fill(text, SUBJECT_LIMIT, break_long_words=False, break_on_hyphens=False)


def _gate(repo: Repository, where: Path, commit: str, label: str, options: PortOptions) -> GateRun:
    from sync.git.worktree import detached_worktree
    from sync.replay.gate import run_command
    assert options.gate is not None
    with detached_worktree(repo, where, commit) as worktree:
        status, output = run_command(options.gate, worktree.path, options.gate_timeout)
    return GateRun(commit, f"port {label}", status == 0, status, output[-8000:])


def read_branch_text(repo: Repository, branch: str, path: str) -> str | None:
    """A file of the branch's tip (for the command's summary and tests)."""
    head = branch_head(repo, branch)
    return None if head is None else read_text(GitTree.of_commit(repo, head.id, branch), path)
