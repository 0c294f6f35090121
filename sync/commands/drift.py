"""`drift`: which overlays and spec functions of each backend drifted between two upstream tags."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..drift import DriftResult, analyse_drift
from ..errors import SyncError
from ..report.model import build_report, exit_status
from ..report.write import write_report
from ..git import Repository, branch_exists, branch_head, commit_files, current_branch, open_repo, resolve_commit


def apply_merges(repo: Repository, branch: str, result: DriftResult) -> str | None:
    """Commit the clean merges on top of the target branch (in memory: no checkout)."""
    if not result.merged:
        return None
    ref = f"refs/heads/{branch}"
    head = branch_head(repo, branch)
    assert head is not None  # the command checked the branch exists
    message = "Auto-merge drifted overlays\n\n" + "\n".join(f"- {m.path}" for m in result.merged) + "\n"
    commit = commit_files(repo, head, {m.path: m.data for m in result.merged}, message, ref)
    return None if commit == head.id else str(commit)  # the merges were already on the branch


def run_drift_command(repo_path: str, old: str, onto: str, src: str | None, target: str | None,
                      backends: tuple[str, ...], out: Path | None, apply: bool, as_json: bool,
                      symbols: bool = False) -> int:
    repo = open_repo(repo_path)
    src = src or current_branch(repo)
    old_commit, onto_commit, src_commit = (resolve_commit(repo, ref) for ref in (old, onto, src))
    target_id = str(resolve_commit(repo, target).id) if target else None
    if apply and (not target or not branch_exists(repo, target)):
        raise SyncError("--apply commits the clean merges on a branch: pass that branch as --target")
    result = analyse_drift(repo, str(old_commit.id), str(onto_commit.id), str(src_commit.id), target_id,
                           set(backends) or None, symbols)
    document = build_report(None, result.owners, result.findings, {
        "from": old, "onto": onto, "branch": src, "target": target or "(replayed in memory)"}, set(backends) or None)
    if apply and target:
        applied = apply_merges(repo, target, result)
        document["drift"]["applied_commit"] = applied
        if applied:
            click.echo(f"committed {len(result.merged)} merged overlay(s) on {target} as {applied[:9]}", err=True)
    if out is not None:
        write_report(out, document)
    if as_json:
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return exit_status(document)
    for group in document["groups"]:
        click.echo(f"{group['name']}: {group['verdict']}")
        for finding in group["findings"]:
            where = f"{finding['path']}:{finding['line']}" if finding.get("line") else finding["path"]
            click.echo(f"  {finding['severity']:<7} {finding['kind']:<30} {where}  {finding['message']}")
    return exit_status(document)
