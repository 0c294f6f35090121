"""Issue 45: an entry script upstream moved to another directory, and FlagTree code it runs that still resolves
names from the old one (entry-script-moved): the 3.3.x -> 3.4.0 move's python/setup.py, moved to the root."""
from __future__ import annotations

from pathlib import Path

from sync.drift.analyses.entryscripts import entry_script_findings
from tests.upstream_fixture import context_of

SETUP = "import os\nfrom build_helpers import get_base_dir\n" + "".join(f"option_{n} = {n}\n" for n in range(30))
OLD = {"python/setup.py": SETUP, "python/build_helpers.py": "def get_base_dir():\n    return '.'\n"}
NEW = {"setup.py": SETUP.replace("from build_helpers", "from python.build_helpers"),
       "python/build_helpers.py": OLD["python/build_helpers.py"], "shared.py": "x = 1\n"}
TOOLS = ("import os\nfrom build_helpers import get_base_dir\nimport shared\n"
         "base = f\"../third_party/{os.environ['B']}/python\"\nplain = '../third_party'\nhere = 'third_party'\n")
FORK = {**OLD, "python/setup.py": SETUP + "from setup_tools import setup_helper\n",
        "python/setup_tools/__init__.py": "", "python/setup_tools/setup_helper.py": "from . import utils\n",
        "python/setup_tools/utils/__init__.py": "from . import tools\n", "python/setup_tools/utils/tools.py": TOOLS,
        "python/shared.py": "x = 1\n"}


def test_code_a_moved_setup_runs_that_resolves_from_its_old_directory_is_an_error(tmp_path: Path) -> None:
    found = entry_script_findings(context_of(tmp_path, OLD, NEW, FORK, removed_upstream=("python/setup.py",)))
    assert [(f.kind, f.severity, f.path, f.line, f.details["declaration"]) for f in found] == [
        ("entry-script-moved", "error", "python/setup.py", 33, "setup_tools"),
        ("entry-script-moved", "error", "python/setup_tools/utils/tools.py", 2, "build_helpers"),
        ("entry-script-moved", "error", "python/setup_tools/utils/tools.py", 4,
         "f\"../third_party/{os.environ['B']}/python\""),
        ("entry-script-moved", "error", "python/setup_tools/utils/tools.py", 5, "'../third_party'")]
    # `import shared`: beside the new script too; upstream's own unchanged import line is not FlagTree's


def test_no_claim_where_the_script_stays_or_nothing_runs_the_code(tmp_path: Path) -> None:
    stays = {**OLD, "python/setup.py": SETUP + "extra = 1\n"}
    assert entry_script_findings(context_of(tmp_path / "stays", OLD, stays, FORK)) == []
    unreached = {**FORK, "python/setup.py": SETUP}  # FlagTree's setup.py no longer imports its tools
    assert entry_script_findings(context_of(tmp_path / "unreached", OLD, NEW, unreached,
                                            removed_upstream=("python/setup.py",))) == []
