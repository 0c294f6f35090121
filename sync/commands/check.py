"""`check`: the seed's directory policy on a tree laid out like FlagTree."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..analyzers.policy import RULES, check_tree
from ..errors import SyncError
from ..findings import count_by_severity, sort_findings
from ..layout import TRUNK, backend_names
from ..trees import DiskTree

SCHEMA = "flagtree-sync/check/1"


def run_check(path: Path, backends: tuple[str, ...], output_format: str, allow_markers: tuple[str, ...] = ()) -> int:
    if not path.is_dir():
        raise SyncError(f"{path} is not a directory")
    if not (path / TRUNK).is_dir():
        raise SyncError(f"{path} has no {TRUNK}/: not a FlagTree tree")
    tree = DiskTree(path)
    unknown = sorted(set(backends) - set(backend_names(tree)))
    if unknown:
        raise SyncError(f"no spec tree for backend(s) {', '.join(unknown)} under {path}/third_party")
    findings = sort_findings(check_tree(tree, set(backends) or None, allow_markers))
    errors = count_by_severity(findings)["error"]
    if output_format == "json":
        click.echo(json.dumps({
            "schema": SCHEMA,
            "root": str(path),
            "counts": count_by_severity(findings),
            "findings": [finding.to_json() for finding in findings],
        }, indent=2, ensure_ascii=False))
    else:
        for finding in findings:
            click.echo(f"{finding.location()}: {finding.code} {finding.severity}: {finding.message}"
                       f"  [fix: {finding.action}]")
        counts = count_by_severity(findings)
        click.echo(f"{len(findings)} finding(s): {counts['error']} error, {counts['warning']} warning, "
                   f"{counts['info']} info")
    return 1 if errors else 0


def rules_table() -> str:
    return "\n".join(f"{code}  {slug:32} {severity:8} {hint}" for code, (slug, severity, hint) in RULES.items())
