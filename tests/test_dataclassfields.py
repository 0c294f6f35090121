"""Issue 33: a key FlagTree puts into a mapping passed to a trunk dataclass (`C(**args)`) after upstream removed
that field: each call raises TypeError (call-no-overload, Python)."""
from __future__ import annotations

from pathlib import Path

from sync.drift.analyses.dataclassfields import dataclass_field_findings
from tests.upstream_fixture import context_of

OPTIONS = ("from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass CUDAOptions:\n"
           "    num_warps: int = 4\n    cluster_dims: tuple = (1, 1, 1)\n    debug: bool = False\n\n\n")
PARSE = ("class Backend:\n\n    def parse_options(self, opts):\n"
         "        args = {k: opts[k] for k in CUDAOptions.__dataclass_fields__ if k in opts}\n"
         "{added}        return CUDAOptions(**args)\n")
FLAGTREE = ("        args[\"cluster_dims\"] = tuple(opts.get(\"cluster_dims\", (1, 1, 1)))\n"
            "        args[\"debug\"] = True\n")
PATH = "third_party/nvidia/backend/compiler.py"


def test_a_key_written_for_a_removed_dataclass_field_is_an_error(tmp_path: Path) -> None:
    """The 3.5.x -> 3.7 move: FlagTree's parse_options writes args["cluster_dims"], then CUDAOptions(**args);
    d0b16ab3b removed the field. A key that is still a field claims nothing."""
    old = {PATH: OPTIONS + PARSE.replace("{added}", "")}
    new = {PATH: OPTIONS.replace("    cluster_dims: tuple = (1, 1, 1)\n", "") + PARSE.replace("{added}", "")}
    fork = {PATH: OPTIONS + PARSE.replace("{added}", FLAGTREE)}
    found = dataclass_field_findings(context_of(tmp_path, old, new, fork))
    assert [(f.kind, f.severity, f.path, f.line, f.details["declaration"]) for f in found] == [
        ("call-no-overload", "error", PATH, 15, "cluster_dims")]
    assert "CUDAOptions(**args)" in found[0].message and "TypeError" in found[0].message


def test_no_claim_where_the_key_is_rebound_away_written_after_or_kept_by_flagtree(tmp_path: Path) -> None:
    old = {PATH: OPTIONS + PARSE.replace("{added}", "")}
    new = {PATH: OPTIONS.replace("    cluster_dims: tuple = (1, 1, 1)\n", "") + PARSE.replace("{added}", "")}
    rebound = FLAGTREE + "        args = {k: v for k, v in args.items() if k != \"cluster_dims\"}\n"
    after = PARSE.replace("{added}", "").replace("        return CUDAOptions(**args)\n",
                                                 "        options = CUDAOptions(**args)\n" + FLAGTREE
                                                 + "        return options\n")
    kept = OPTIONS.replace("    cluster_dims: tuple = (1, 1, 1)\n", "    cluster_dims: tuple = (2, 1, 1)\n")
    for name, fork_text in [("rebound", OPTIONS + PARSE.replace("{added}", rebound)), ("after", OPTIONS + after),
                            ("kept", kept + PARSE.replace("{added}", FLAGTREE))]:
        assert dataclass_field_findings(context_of(tmp_path / name, old, new, {PATH: fork_text})) == [], name
    # the field moved to a base class the new one derives from: the key still has a field to go to
    derived = OPTIONS.replace("from dataclasses import dataclass\n\n\n", "").replace(
        "class CUDAOptions:", "class CUDAOptions(Base):").replace("    cluster_dims: tuple = (1, 1, 1)\n", "")
    moved = {PATH: ("from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass Base:\n"
                    "    cluster_dims: tuple = (1, 1, 1)\n\n\n" + derived + PARSE.replace("{added}", ""))}
    fork = {PATH: OPTIONS + PARSE.replace("{added}", FLAGTREE)}
    assert dataclass_field_findings(context_of(tmp_path / "moved", old, moved, fork)) == []
