"""The seed's directory policy is data (sync/facts/seed_policy.toml) that check and the classifier read: the
shipped file says what the seed says (tests/test_check.py holds every verdict on it), editing it changes the
verdicts, and a malformed file is exit 2 naming the key."""
from __future__ import annotations

from pathlib import Path

import pytest

from sync.check.policy import check_tree
from sync.facts import layout
from sync.facts.layout import POLICY_FILE, SeedPolicy, load_seed_policy, seed_policy
from sync.facts.trees import DiskTree
from sync.support.schema import TomlFileError
from tests.test_check import CLEAN, HOOK, write_tree


def test_the_shipped_policy_is_the_seeds() -> None:
    assert seed_policy() == SeedPolicy(
        spec_path_allowed=frozenset({"compiler", "language", "runtime", "tools", "experimental/gluon"}),
        spec_path_forbidden=frozenset({"", "backends", "experimental", "language/extra"}),
        spec_path_forbidden_below=("experimental/gluon", "language/extra", "backends"),
        no_specialization="experimental/tle",
        protected_files=frozenset({"flagtree_spec.py", "_flagtree_backend.py"}),
        direct_edit_files=frozenset({"knobs.py", "_internal_testing.py"}))


@pytest.fixture
def edited_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Point the checker at a copy of the policy file, edited by the test."""
    def edit(old: str, new: str) -> None:
        text = POLICY_FILE.read_text(encoding="utf-8")
        assert old in text
        (tmp_path / "policy.toml").write_text(text.replace(old, new), encoding="utf-8")
        monkeypatch.setattr(layout, "POLICY_FILE", tmp_path / "policy.toml")
        seed_policy.cache_clear()
    yield edit
    seed_policy.cache_clear()


def codes(root: Path) -> list[str]:
    return sorted(finding.code or "" for finding in check_tree(DiskTree(root)))


def test_editing_the_data_changes_a_verdict(tmp_path: Path, edited_policy) -> None:
    ops = {**CLEAN, "python/triton/ops/__init__.py": HOOK}
    root = write_tree(tmp_path / "tree", ops)
    assert codes(root) == ["FT002"]  # ops is in neither list: unlisted
    edited_policy('"tools", "experimental/gluon"]', '"tools", "experimental/gluon", "ops"]')
    assert codes(root) == []
    edited_policy('"backends", "experimental", "language/extra"]', '"backends", "experimental", "language/extra", '
                  '"ops"]')
    assert codes(root) == ["FT001"]


def test_a_protected_file_named_in_the_data_is_refused(tmp_path: Path, edited_policy) -> None:
    backend_file = "third_party/b/backend/spec/triton/mine.py"
    root = write_tree(tmp_path / "tree", {**CLEAN, "python/triton/mine.py": "def f():\n    return 0\n",
                                          backend_file: "def g():\n    return 1\n"})
    assert "FT011" not in codes(root)
    edited_policy('"_flagtree_backend.py"]', '"_flagtree_backend.py", "mine.py"]')
    assert "FT011" in codes(root)


def test_a_malformed_policy_is_an_error_naming_the_key(tmp_path: Path) -> None:
    text = POLICY_FILE.read_text(encoding="utf-8").replace('no_specialization = "experimental/tle"',
                                                           'no_specialization = ["experimental/tle"]')
    (tmp_path / "policy.toml").write_text(text, encoding="utf-8")
    with pytest.raises(TomlFileError) as raised:
        load_seed_policy(tmp_path / "policy.toml")
    line = text.splitlines().index('no_specialization = ["experimental/tle"]') + 1
    assert (raised.value.line, raised.value.problem) == (line, "no_specialization must be a string, not an array")


def test_the_policy_file_ships_with_the_package() -> None:
    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"sync.facts" = ["*.toml"]' in pyproject and POLICY_FILE.parent == Path(layout.__file__).parent
