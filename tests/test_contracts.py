"""Issue 45, class 2 in Python: what trunk expects back from code a backend provides changed upstream, and
FlagTree's side keeps the old form (result-shape-changed, field-renamed)."""
from __future__ import annotations

from pathlib import Path

from sync.drift.analyses.contracts import contract_findings
from tests.upstream_fixture import context_of

CALLER = "python/triton/compiler/compiler.py"
LAUNCH = ("from triton.runtime.driver import driver\n\n\nclass CompiledKernel:\n\n    def _init_handles(self):\n"
          "        {targets} = driver.active.utils.load_binary(\n            self.name, self.kernel, 0, 0)\n")
OLD_TARGETS = "self.module, self.function, self.n_regs, self.n_spills"
NEW_TARGETS = OLD_TARGETS + ", self.n_max_threads"
DRIVER = "third_party/acme/backend/driver.py"
ACME_DRIVER = ("class AcmeUtils:\n\n    def load_binary(self, name, kernel, shared, device):\n"
               "        if not kernel:\n            return (None, None, 0, 0)\n"
               "        return (name, kernel, 0, 0)\n")


def test_a_backend_method_whose_result_trunk_now_unpacks_into_more_names_is_an_error(tmp_path: Path) -> None:
    """The 3.3.x -> 3.4.0 move: the compiler unpacks load_binary into five names; tsingmicro's returns four."""
    old = {CALLER: LAUNCH.replace("{targets}", OLD_TARGETS)}
    new = {CALLER: LAUNCH.replace("{targets}", NEW_TARGETS)}
    found = contract_findings(context_of(tmp_path, old, new, {**old, DRIVER: ACME_DRIVER}))
    assert [(f.kind, f.severity, f.path, f.line, f.backend) for f in found] == [
        ("result-shape-changed", "error", DRIVER, 3, "acme")]
    assert "returns 4 values" in found[0].message and "into 5" in found[0].message
    assert found[0].details["sites"] == [f"{DRIVER}:5", f"{DRIVER}:6"]


def test_no_shape_claim_without_a_changed_unpacking_or_where_the_returns_are_not_the_old_count(tmp_path: Path) -> None:
    old = {CALLER: LAUNCH.replace("{targets}", OLD_TARGETS)}
    new = {CALLER: LAUNCH.replace("{targets}", NEW_TARGETS)}
    five = ACME_DRIVER.replace("0, 0)", "0, 0, 1024)")
    built = ACME_DRIVER.replace("        return (name, kernel, 0, 0)\n", "        return make(name)\n")
    nested = ("class AcmeUtils:\n\n    def load_binary(self, name, kernel, shared, device):\n"
              "        def inner():\n            return (1, 2, 3, 4)\n        self.handles = inner()\n")
    cases = {"unchanged": (old, {**old, "python/triton/other.py": "x = 1\n"}, ACME_DRIVER), "already five": (old, new, five),
             "not a tuple": (old, new, built), "nested": (old, new, nested)}
    for name, (before, after, driver) in cases.items():
        assert contract_findings(context_of(tmp_path / name.replace(" ", "-"), before, after,
                                            {**before, DRIVER: driver})) == [], name
    # two trunk files that disagree on the new count: no single contract to claim
    other = "python/triton/runtime/other.py"
    disagree = {**new, other: LAUNCH.replace("{targets}", "a, b, c")}
    assert contract_findings(context_of(tmp_path / "disagree", {**old, other: LAUNCH.replace("{targets}", "a, b")},
                                        disagree, {**old, DRIVER: ACME_DRIVER})) == []


OPTIONS = ("from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass {name}:\n"
           "    num_warps: int = 4\n    num_stages: int = 3\n    debug: bool = False\n"
           "    {field}: tuple = ()\n    arch: str = None\n")
NVIDIA = "third_party/nvidia/backend/compiler.py"
READER = "python/triton/language/semantic.py"
READS = "def dot(builder, lhs):\n    if lhs in builder.options.{field}:\n        warn()\n"
ACME = "third_party/acme/backend/compiler.py"
IMPORTER = "third_party/acme/backend/__init__.py"  # a backend module nothing imports claims nothing


def _rename_world(old_field: str, new_field: str, reader_field: str, acme: str) -> tuple[dict, dict, dict]:
    old = {NVIDIA: OPTIONS.format(name="CUDAOptions", field=old_field), READER: READS.format(field=old_field)}
    new = {NVIDIA: OPTIONS.format(name="CUDAOptions", field=new_field), READER: READS.format(field=reader_field)}
    return old, new, {**old, ACME: acme, IMPORTER: "from .compiler import *\n"}


def test_a_field_upstream_renamed_in_its_classes_and_reads_by_the_new_name_is_an_error(tmp_path: Path) -> None:
    """The 3.3.x -> 3.4.0 move: deprecated_fp8_dtypes -> deprecated_fp8_dot_operand_dtypes in the backends'
    options and the frontend's read; tsingmicro's options keep the old name."""
    old_field, new_field = "deprecated_fp8_dtypes", "deprecated_fp8_dot_operand_dtypes"
    acme = OPTIONS.format(name="AcmeOptions", field=old_field)
    found = contract_findings(context_of(tmp_path, *_rename_world(old_field, new_field, new_field, acme)))
    assert [(f.kind, f.severity, f.path, f.line, f.details["replacement"]) for f in found] == [
        ("field-renamed", "error", ACME, 9, new_field)]
    assert "CUDAOptions" in found[0].message and READER in found[0].message


def test_no_rename_claim_for_an_unrelated_class_a_field_still_read_or_a_class_with_both(tmp_path: Path) -> None:
    old_field, new_field = "deprecated_fp8_dtypes", "deprecated_fp8_dot_operand_dtypes"
    unrelated = ("class Cache:\n    path: str = ''\n    size: int = 0\n    owner: str = ''\n"
                 f"    {old_field}: tuple = ()\n")
    both = OPTIONS.format(name="AcmeOptions", field=old_field) + f"    {new_field}: tuple = ()\n"
    acme = OPTIONS.format(name="AcmeOptions", field=old_field)
    cases = {"unrelated": (new_field, unrelated), "both": (new_field, both), "not read": ("arch", acme),
             "old still read": (f"{old_field} or builder.options.{new_field}", acme)}
    for name, (reader_field, fork_text) in cases.items():
        world = _rename_world(old_field, new_field, reader_field, fork_text)
        assert contract_findings(context_of(tmp_path / name.replace(" ", "-"), *world)) == [], name
    old, new, fork = _rename_world(old_field, new_field, new_field, acme)
    assert contract_findings(context_of(tmp_path / "unloaded", old, new, {**fork, IMPORTER: "\n"})) == []
    # a different annotation is a new field beside a removed one, not a rename
    retyped = {NVIDIA: OPTIONS.format(name="CUDAOptions", field=new_field).replace(f"{new_field}: tuple",
                                                                                   f"{new_field}: str"),
               READER: READS.format(field=new_field)}
    old, _, fork = _rename_world(old_field, new_field, new_field, acme)
    assert contract_findings(context_of(tmp_path / "retyped", old, retyped, fork)) == []


def test_a_long_line_of_names_is_read_in_one_pass() -> None:
    """Upstream's lines are read as given: the first version's pattern backtracked exponentially on a long run of
    `, name` without an `=` (it never returned on the 3.5.x -> 3.6.0 move)."""
    from sync.drift.analyses.contracts import _tuple_target
    assert not _tuple_target("a" + ", b" * 3000 + " c d")
    assert _tuple_target("    self.module, self.function,\n") and _tuple_target("a[1], b = 2, 3\n")
    assert not _tuple_target("x = f(a, b)\n") and not _tuple_target("if a == b, c:\n")
