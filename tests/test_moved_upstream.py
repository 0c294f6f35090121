"""A file FlagTree changed that upstream moved: git's cherry-pick compares FlagTree's version, often too changed to
follow the rename, and calls it deleted upstream; the report names where upstream's own diff moved it (issue 45:
the 3.3.x -> 3.4.0 move's python/setup.py, moved to the root by #6381)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pygit2

from sync.jobs.revs import upstream_moves
from sync.model import Conflict, Range, ReplayedCommit, Rev, UpgradeInfo, build_report
from sync.report.document import render_json
from sync.report.markdown import render_group
from tests.upstream_fixture import commit

SETUP = "".join(f"setting_{number} = {number}\n" for number in range(40))


def test_a_file_deleted_upstream_names_where_upstream_moved_it(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    old = commit(tmp_path, {"python/setup.py": SETUP, "python/gone.py": "x = 1\n"}, "old")
    new = commit(tmp_path, {"setup.py": SETUP + "extra = 1\n"}, "new",
                 remove=("python/setup.py", "python/gone.py"))
    rng = Range(Rev("v1", old), Rev("v2", new), Rev("flagtree", new))
    source = "d" * 40
    conflicts = (Conflict(source, "Patch setup", "python/setup.py", "deleted-upstream", "markers", ("flagtree-core",)),
                 Conflict(source, "Patch setup", "python/gone.py", "deleted-upstream", "markers", ("flagtree-core",)))
    commits = (ReplayedCommit(source, "Patch setup", "e" * 40, conflicts),)
    moves = upstream_moves(pygit2.Repository(str(tmp_path)), rng, commits)
    assert moves == {"python/setup.py": "setup.py"}  # gone.py went nowhere
    report = build_report(rng, [], [], commits, UpgradeInfo("sync/v2", new, "markers"), moves=moves)
    listed = json.loads(render_json(report))["commits"][0]["conflicts"]
    assert [(c["path"], c.get("moved_to")) for c in listed] == [("python/setup.py", "setup.py"), ("python/gone.py", None)]
    assert listed[0]["action"].startswith("port the FlagTree change to setup.py")
    core = next(group for group in report.groups if group.name == "flagtree-core")
    assert "port the FlagTree change to setup.py" in render_group(report, core)
