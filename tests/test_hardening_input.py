"""Input that once misled the tool: file names with a newline belong to their backend like any other."""
from __future__ import annotations

import pytest

from sync.facts.layout import parse_spec_file
from tests.conftest import commit_files as shared_commit_files, invoke
from tests.plant import plant
from tests.drift_helpers import drift_of

A = "third_party/alpha/backend/spec/triton/"
ODD = A + "runtime/odd\nname.py"
RANGE = ["--from", "v3.5.0", "--onto", "v3.6.0"]


def commit_files(world, files, message: str = "odd files") -> None:
    shared_commit_files(world, files, message)


def test_a_spec_path_with_a_newline_belongs_to_its_backend() -> None:
    spec_file = parse_spec_file(ODD)
    assert spec_file is not None and spec_file.backend == "alpha" and spec_file.rel == "runtime/odd\nname.py"
    assert parse_spec_file(A + "x.py\n").rel == "x.py\n"


def test_a_conflict_in_a_file_named_with_a_newline_is_the_backends(world) -> None:
    commit_files(world, {ODD: b"X = 1\n"})
    owners = drift_of(world).owners
    assert owners.owners(ODD) == ["alpha"]  # not shared-trunk
    assert "alpha" in owners.backends


@pytest.mark.parametrize("component", ["..", ".git", "."])
def test_a_path_git_refuses_is_exit_2_for_drift_as_for_upgrade(world, component: str) -> None:
    """Issue 31.9: a '..' or '.git' component, committed with plumbing, made drift crash (exit 3)."""
    plant(world.fork, [*A.rstrip("/").split("/"), component, "evil.py"], "X = 1\n")
    for command in (["drift", *RANGE], ["upgrade", "-q", *RANGE], ["describe"]):
        result = invoke(*command, "--repo", str(world.fork))
        assert result.exit_code == 2, result.output
        assert result.output.startswith("flagtree-sync: error: ") and result.output.count("\n") == 1, result.output
        assert f"/{component}/evil.py" in result.output or f"entry - {component}:" in result.output
